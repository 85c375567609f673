/**
 * How a doc body is drawn, shared by the editor (editor.ts) and the places
 * that show a doc read-only without a sync binding: a version in the
 * history, a comparison of two versions, the doc by author. Everything here
 * draws the body exactly as the editor does (task items with a checkbox,
 * suggestions in their author's colour, the `prose` styles), so a version
 * looks like the doc it was.
 */
import type { Mark, Node as PMNode } from 'prosemirror-model';
import { EditorState } from 'prosemirror-state';
import { DecorationSet, EditorView, type NodeView } from 'prosemirror-view';
import { docSchema } from '../../../src/model/doc/schema';
import { colorFor } from '../lib/format';

/** Task items: a real checkbox before the content; ticking is for an editable view, and only when `mayTick` says so. */
export class TaskItemView implements NodeView {
  dom: HTMLLIElement;
  contentDOM: HTMLElement;
  private checkbox: HTMLInputElement;

  constructor(
    private node: PMNode,
    private view: EditorView,
    private getPos: () => number | undefined,
    private mayTick: () => boolean,
  ) {
    this.dom = document.createElement('li');
    this.dom.dataset.type = 'taskItem';
    const label = document.createElement('label');
    label.contentEditable = 'false';
    this.checkbox = document.createElement('input');
    this.checkbox.type = 'checkbox';
    this.checkbox.setAttribute('aria-label', 'Done');
    this.checkbox.addEventListener('mousedown', (event) => event.preventDefault());
    this.checkbox.addEventListener('change', () => {
      const pos = this.getPos();
      if (!this.view.editable || pos === undefined || !this.mayTick()) {
        this.checkbox.checked = this.node.attrs.checked;
        return;
      }
      this.view.dispatch(this.view.state.tr.setNodeMarkup(pos, undefined, { ...this.node.attrs, checked: this.checkbox.checked }));
    });
    label.append(this.checkbox);
    this.contentDOM = document.createElement('div');
    this.dom.append(label, this.contentDOM);
    this.render();
  }

  private render() {
    this.checkbox.checked = Boolean(this.node.attrs.checked);
    this.dom.dataset.checked = String(Boolean(this.node.attrs.checked));
  }

  update(node: PMNode): boolean {
    if (node.type !== this.node.type) return false;
    this.node = node;
    this.render();
    return true;
  }

  ignoreMutation(mutation: MutationRecord | { type: 'selection' }): boolean {
    return mutation.type !== 'selection' && !this.contentDOM.contains(mutation.target as Node);
  }
}

/** Suggested text drawn with its author's colour and name (the marks' own DOM is in the shared schema). */
export function suggestionMarkView(kind: 'insert' | 'delete') {
  return (mark: Mark) => {
    const dom = document.createElement(kind === 'insert' ? 'ins' : 'del');
    const attrs = mark.attrs as { id: string; authorType: string; authorId: string; authorName: string; at: string | null };
    dom.className = `suggestion suggestion-${kind}`;
    dom.dataset.suggestion = kind;
    dom.dataset.suggestionId = attrs.id;
    dom.dataset.authorType = attrs.authorType;
    dom.dataset.authorId = attrs.authorId;
    dom.style.setProperty('--author-color', colorFor(attrs.authorId ?? ''));
    const when = attrs.at ? new Date(attrs.at) : null;
    dom.title = `Suggested by ${attrs.authorName || 'someone'}${attrs.authorType === 'agent' ? ' (agent)' : ''}${when && !Number.isNaN(when.getTime()) ? `, ${when.toLocaleString()}` : ''}`;
    return { dom };
  };
}

export const docMarkViews = { suggestInsert: suggestionMarkView('insert'), suggestDelete: suggestionMarkView('delete') };

/**
 * A doc body shown read-only, drawn as the editor draws it, with optional
 * decorations (who wrote what, what changed). `show` replaces what it shows.
 */
export function readOnlyDocView(mount: HTMLElement, label: string) {
  let decorations = DecorationSet.empty;
  const view = new EditorView(mount, {
    state: EditorState.create({ schema: docSchema }),
    editable: () => false,
    decorations: () => decorations,
    nodeViews: { taskItem: (node, view, getPos) => new TaskItemView(node, view, getPos as () => number | undefined, () => false) },
    markViews: docMarkViews,
    attributes: { class: 'prose', 'aria-label': label, 'aria-readonly': 'true' },
  });
  return {
    view,
    show(doc: PMNode, decorate?: (doc: PMNode) => DecorationSet) {
      decorations = decorate?.(doc) ?? DecorationSet.empty;
      view.updateState(EditorState.create({ schema: docSchema, doc }));
    },
    destroy() {
      view.destroy();
    },
  };
}
