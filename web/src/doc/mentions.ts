/**
 * `@` mentions: typing `@` and a few letters lists the workspace's members
 * and agents; picking one inserts a `mention` node (`kind`, `id`, `label`),
 * which the server turns into `doc.mention_added` (and wakes a mentioned agent).
 */
import { Plugin, PluginKey, type EditorState } from 'prosemirror-state';
import type { EditorView } from 'prosemirror-view';
import { docSchema } from '../../../src/model/doc/schema';
import { colorFor, initialsOf } from '../lib/format';
import { mentionQueryAt, rankCandidates, type MentionCandidate } from '../workspace-context/mention-candidates';

interface MentionState {
  from: number;
  to: number;
  query: string;
}

const key = new PluginKey<MentionState | null>('mentions');

function findTrigger(state: EditorState): MentionState | null {
  const { selection } = state;
  if (!selection.empty) return null;
  const $from = selection.$from;
  if (!$from.parent.isTextblock || $from.parent.type.spec.code) return null;
  const before = $from.parent.textBetween(Math.max(0, $from.parentOffset - 48), $from.parentOffset, undefined, '\ufffc');
  const query = mentionQueryAt(before);
  if (query === null) return null;
  return { from: $from.pos - query.length - 1, to: $from.pos, query };
}

export function mentionPlugin(candidates: () => MentionCandidate[]): Plugin {
  let popup: MentionPopup | null = null;
  let dismissedAt: number | null = null;
  return new Plugin<MentionState | null>({
    key,
    state: {
      init: () => null,
      apply(tr, _value, _old, state) {
        if (tr.getMeta(key) === 'dismiss') dismissedAt = findTrigger(state)?.from ?? null;
        const found = findTrigger(state);
        if (!found || found.from === dismissedAt) return null;
        dismissedAt = null;
        return found;
      },
    },
    view(view) {
      popup = new MentionPopup(view, candidates);
      return {
        update: (updated) => popup!.update(key.getState(updated.state) ?? null),
        destroy: () => popup!.destroy(),
      };
    },
    props: {
      handleKeyDown(view, event) {
        const state = key.getState(view.state);
        if (!state || !popup?.isOpen()) return false;
        if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
          popup.move(event.key === 'ArrowDown' ? 1 : -1);
          return true;
        }
        if (event.key === 'Enter' || event.key === 'Tab') return popup.pick();
        if (event.key === 'Escape') {
          view.dispatch(view.state.tr.setMeta(key, 'dismiss'));
          return true;
        }
        return false;
      },
    },
  });
}

/** Lists the candidates again in an open `@` list: the members changed (someone joined) while it was open. */
export function refreshMentionCandidates(view: EditorView) {
  if (key.getState(view.state)) view.dispatch(view.state.tr.setMeta(key, 'refresh'));
}

export function insertMention(view: EditorView, range: { from: number; to: number }, candidate: MentionCandidate) {
  const node = docSchema.nodes.mention!.create({ kind: candidate.kind, id: candidate.id, label: candidate.label });
  const tr = view.state.tr.replaceWith(range.from, range.to, [node, docSchema.text(' ')]);
  view.dispatch(tr.scrollIntoView());
  view.focus();
}

class MentionPopup {
  private element: HTMLDivElement;
  private state: MentionState | null = null;
  private shown: MentionCandidate[] = [];
  private active = 0;

  constructor(
    private view: EditorView,
    private candidates: () => MentionCandidate[],
  ) {
    this.element = document.createElement('div');
    this.element.className = 'mention-popup';
    this.element.setAttribute('role', 'listbox');
    this.element.setAttribute('aria-label', 'Mention someone');
    this.element.hidden = true;
    document.body.append(this.element);
  }

  isOpen() {
    return !this.element.hidden && this.shown.length > 0;
  }

  update(state: MentionState | null) {
    if (!state || !this.view.editable) {
      this.state = null;
      this.element.hidden = true;
      return;
    }
    const queryChanged = this.state?.query !== state.query;
    this.state = state;
    this.shown = rankCandidates(this.candidates(), state.query);
    if (queryChanged) this.active = 0;
    this.render();
  }

  move(delta: number) {
    if (this.shown.length === 0) return;
    this.active = (this.active + delta + this.shown.length) % this.shown.length;
    this.render();
  }

  pick(index = this.active): boolean {
    const candidate = this.shown[index];
    if (!candidate || !this.state) return false;
    insertMention(this.view, this.state, candidate);
    return true;
  }

  private render() {
    this.element.replaceChildren();
    if (this.shown.length === 0) {
      const empty = document.createElement('div');
      empty.className = 'mention-empty';
      empty.textContent = 'No member or agent matches';
      this.element.append(empty);
    }
    this.shown.forEach((candidate, i) => {
      const item = document.createElement('div');
      item.className = `mention-item ${i === this.active ? 'is-active' : ''}`;
      item.setAttribute('role', 'option');
      item.setAttribute('aria-selected', String(i === this.active));
      const avatar = document.createElement('span');
      avatar.className = 'avatar';
      avatar.style.cssText = `width:22px;height:22px;font-size:9px;background:${colorFor(candidate.id)}`;
      avatar.textContent = initialsOf(candidate.label);
      const label = document.createElement('span');
      label.className = 'mention-label';
      label.textContent = candidate.label;
      const detail = document.createElement('span');
      detail.className = 'mention-detail';
      detail.textContent = candidate.kind === 'agent' ? 'agent' : (candidate.detail ?? '');
      const text = document.createElement('span');
      text.className = 'mention-text';
      text.append(label, detail);
      item.append(avatar, text);
      item.addEventListener('mousedown', (event) => {
        event.preventDefault();
        this.pick(i);
      });
      this.element.append(item);
    });
    const coords = this.view.coordsAtPos(this.state!.from);
    this.element.hidden = false;
    const width = 260;
    this.element.style.left = `${Math.min(coords.left, window.innerWidth - width - 12)}px`;
    this.element.style.top = `${coords.bottom + 6}px`;
  }

  destroy() {
    this.element.remove();
  }
}
