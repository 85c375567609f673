import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { timeAgo } from '../lib/format';
import { session } from '../session';
import { Avatar, EmptyState, IconButton, Spinner } from '../ui/primitives';
import { showError } from '../ui/toast';
import type { WorkspaceContext } from '../workspace-context/context';
import type { Surface } from '../workspace-context/types';
import { useWorkspaceEvents } from '../workspace-context/workspace-events';
import type { Suggestion } from '../../../src/model/schemas/suggestions';
import type { SuggestionTarget } from './editor';
import type { SuggestingAuthor } from './suggesting';

/**
 * The web side of doc suggestions (docs/SUGGESTIONS.md): the editing ⇄
 * suggesting switch, the popover on a suggestion, and the panel listing a
 * doc's open suggestions with Accept / Reject for those who may decide.
 */

export type DocMode = 'editing' | 'suggesting';

const modeKey = (surfaceId: string) => `trellis.doc-mode.${surfaceId}`;

/**
 * The doc's mode for this person: an editor chooses (remembered per doc
 * surface in localStorage); a commenter may only suggest.
 */
export function useDocMode(surfaceId: string, abilities: { edit: boolean; suggest?: boolean; comment: boolean }) {
  const canSuggest = abilities.suggest ?? abilities.comment;
  const forced = !abilities.edit && canSuggest;
  const [chosen, setChosen] = useState<DocMode>(() => readMode(surfaceId));
  useEffect(() => setChosen(readMode(surfaceId)), [surfaceId]);
  const mode: DocMode = forced ? 'suggesting' : chosen;
  const setMode = (next: DocMode) => {
    setChosen(next);
    try {
      localStorage.setItem(modeKey(surfaceId), next);
    } catch {
      // Storage can be off (private windows): the choice lasts for the page.
    }
  };
  return { mode, setMode, forced, writable: abilities.edit || canSuggest };
}

function readMode(surfaceId: string): DocMode {
  try {
    return localStorage.getItem(modeKey(surfaceId)) === 'suggesting' ? 'suggesting' : 'editing';
  } catch {
    return 'editing';
  }
}

/** The signed-in principal, as the stamp of the suggestions they make. */
export function currentAuthor(): SuggestingAuthor | null {
  const state = session.get();
  if (state.status !== 'signed-in') return null;
  const { principalType, id, name } = state.me.principal;
  return { principalType, id, name };
}

/** The toolbar's switch; a commenter sees the mode they are in. */
export function ModeSwitch(props: { mode: DocMode; forced: boolean; onChange: (mode: DocMode) => void }) {
  if (props.forced) {
    return (
      <span class="doc-mode is-suggesting" title="You can suggest changes; an editor accepts or rejects them.">
        Suggesting
      </span>
    );
  }
  const suggesting = props.mode === 'suggesting';
  return (
    <button
      type="button"
      class={`doc-mode doc-mode-toggle ${suggesting ? 'is-suggesting' : ''}`}
      aria-pressed={suggesting}
      title={suggesting ? 'Your edits are suggestions that an editor accepts or rejects. Click to edit directly.' : 'Edit directly. Click to suggest changes instead.'}
      onClick={() => props.onChange(suggesting ? 'editing' : 'suggesting')}
    >
      <span class="doc-mode-dot" />
      {suggesting ? 'Suggesting' : 'Editing'}
    </button>
  );
}

type Decision = 'accept' | 'reject';

async function decide(id: string, decision: Decision): Promise<boolean> {
  try {
    await api('POST', `/api/suggestions/${encodeURIComponent(id)}/${decision}`);
    return true;
  } catch (error) {
    showError(error);
    return false;
  }
}

/**
 * The open suggestions of one doc surface, fetched from the server and
 * fetched again when a suggestion is made or decided (SSE) or the doc
 * changes (`refreshKey`).
 */
export function useDocSuggestions(context: WorkspaceContext, surface: Surface, refreshKey: unknown) {
  const { workspace } = context;
  const [suggestions, setSuggestions] = useState<Suggestion[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const path = workspacePath(workspace.org.slug, workspace.slug, `/suggestions?surfaceId=${encodeURIComponent(surface.id)}`);
  useEffect(() => {
    let closed = false;
    // Typing in suggesting mode changes the doc at every key: ask once it settles.
    const timer = setTimeout(() => {
      api<{ suggestions: Suggestion[] }>('GET', path).then(
        (answer) => {
          if (closed) return;
          setSuggestions(answer.suggestions.filter((s) => s.target === 'doc' && s.status === 'open'));
          setError(null);
        },
        (failure) => !closed && setError(failure.message),
      );
    }, suggestions === null ? 0 : 400);
    return () => {
      closed = true;
      clearTimeout(timer);
    };
  }, [path, refreshKey, tick]);
  useWorkspaceEvents(workspace, (name) => name.startsWith('suggestion.'), (event) => {
    if (event.data?.surfaceId === undefined || event.data.surfaceId === surface.id) setTick((n) => n + 1);
  });
  return { suggestions, error, refresh: () => setTick((n) => n + 1) };
}

/** The side panel of a doc's open suggestions. */
export function SuggestionsPanel(props: {
  context: WorkspaceContext;
  surface: Surface;
  suggestions: Suggestion[] | null;
  error: string | null;
  canDecide: boolean;
  onDecided: () => void;
  onShow: (id: string) => void;
  onClose: () => void;
}) {
  const { suggestions, canDecide } = props;
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await work();
    } finally {
      setBusy(false);
      props.onDecided();
    }
  };
  const all = (decision: Decision) =>
    run(async () => {
      const { workspace } = props.context;
      try {
        await api('POST', workspacePath(workspace.org.slug, workspace.slug, `/suggestions/${decision}-all?surfaceId=${encodeURIComponent(props.surface.id)}`));
      } catch (error) {
        showError(error);
      }
    });
  return (
    <aside class="doc-suggestions" aria-label="Suggestions">
      <header class="doc-suggestions-header">
        <h2>Suggestions</h2>
        <IconButton icon="x" label="Close suggestions" onClick={props.onClose} />
      </header>
      {canDecide && suggestions && suggestions.length > 1 && (
        <div class="doc-suggestions-all">
          <button type="button" class="button button-small" disabled={busy} onClick={() => all('accept')}>
            Accept all
          </button>
          <button type="button" class="button button-small" disabled={busy} onClick={() => all('reject')}>
            Reject all
          </button>
        </div>
      )}
      <div class="doc-suggestions-body">
        {props.error && <p class="form-error">{props.error}</p>}
        {!suggestions && !props.error && <Spinner />}
        {suggestions && suggestions.length === 0 && (
          <EmptyState icon="edit" title="No open suggestions">
            Changes suggested by people and agents show up here for an editor to accept or reject.
          </EmptyState>
        )}
        {suggestions && suggestions.length > 0 && (
          <ol class="doc-suggestion-list">
            {suggestions.map((suggestion) => (
              <li key={suggestion.id} class="doc-suggestion" data-suggestion-id={suggestion.id}>
                <div class="doc-suggestion-author">
                  <Avatar id={suggestion.author.id} name={suggestion.author.name} url={suggestion.author.avatarUrl} size={22} />
                  <strong>{suggestion.author.name}</strong>
                  {suggestion.author.principalType === 'agent' && <span class="badge badge-agent">agent</span>}
                  <time dateTime={suggestion.createdAt} title={new Date(suggestion.createdAt).toLocaleString()}>
                    {timeAgo(suggestion.createdAt)}
                  </time>
                </div>
                <button type="button" class="doc-suggestion-change" onClick={() => props.onShow(suggestion.id)} title="Show in the doc">
                  <SuggestionChange suggestion={suggestion} />
                </button>
                {canDecide && (
                  <div class="suggestion-buttons">
                    <button
                      type="button"
                      class="suggestion-accept"
                      disabled={busy}
                      aria-label={`Accept the suggestion of ${suggestion.author.name}`}
                      onClick={() => run(() => decide(suggestion.id, 'accept'))}
                    >
                      Accept
                    </button>
                    <button
                      type="button"
                      class="suggestion-reject"
                      disabled={busy}
                      aria-label={`Reject the suggestion of ${suggestion.author.name}`}
                      onClick={() => run(() => decide(suggestion.id, 'reject'))}
                    >
                      Reject
                    </button>
                  </div>
                )}
              </li>
            ))}
          </ol>
        )}
      </div>
    </aside>
  );
}

function SuggestionChange(props: { suggestion: Suggestion }) {
  const { suggestion } = props;
  if (suggestion.inserted === undefined && suggestion.removed === undefined) return <span class="doc-suggestion-summary">{suggestion.summary}</span>;
  return (
    <span class="doc-suggestion-summary">
      {suggestion.context?.before && <span class="doc-suggestion-context">…{suggestion.context.before.slice(-30)}</span>}
      {suggestion.removed && <del class="suggestion suggestion-delete">{suggestion.removed}</del>}
      {suggestion.inserted && <ins class="suggestion suggestion-insert">{suggestion.inserted}</ins>}
      {suggestion.context?.after && <span class="doc-suggestion-context">{suggestion.context.after.slice(0, 30)}…</span>}
    </span>
  );
}

/** What a suggestion changes as the doc on screen shows it, until the server's listing has it. */
function changeInView(target: SuggestionTarget): Suggestion {
  const root = target.element.closest('.ProseMirror') ?? target.element;
  const parts = { insert: [] as string[], delete: [] as string[] };
  root.querySelectorAll<HTMLElement>(`[data-suggestion-id="${CSS.escape(target.id)}"]`).forEach((element) => {
    // Without other people's carets (a widget with their name) that may sit inside.
    const copy = element.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('.ProseMirror-yjs-cursor').forEach((cursor) => cursor.remove());
    parts[element.dataset.suggestion === 'delete' ? 'delete' : 'insert'].push(copy.textContent ?? '');
  });
  const inserted = parts.insert.join(' … ');
  const removed = parts.delete.join(' … ');
  return { inserted, removed, summary: '' } as Suggestion;
}

/** The popover by a suggestion clicked in the doc: who suggested it, what it changes, and Accept / Reject. */
export function SuggestionPopover(props: {
  target: SuggestionTarget;
  scroller: HTMLElement;
  suggestion: Suggestion | undefined;
  canDecide: boolean;
  onDone: () => void;
}) {
  const { target } = props;
  const box = useRef<HTMLDivElement>(null);
  const [busy, setBusy] = useState(false);
  const [place, setPlace] = useState({ top: 0, left: 0 });
  useLayoutEffect(() => {
    const rect = target.element.getBoundingClientRect();
    const frame = props.scroller.getBoundingClientRect();
    setPlace({ top: rect.bottom - frame.top + props.scroller.scrollTop + 6, left: Math.max(8, rect.left - frame.left) });
  }, [target]);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && props.onDone();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  // The mark's own stamp: shown at once, even before the server lists the suggestion.
  const data = target.element.dataset;
  const name = props.suggestion?.author.name ?? (target.element.title.replace(/^Suggested by /, '').replace(/(?: \(agent\))?(?:, .*)?$/, '') || 'someone');
  const agent = (props.suggestion?.author.principalType ?? data.authorType) === 'agent';
  const choose = async (decision: Decision) => {
    setBusy(true);
    const done = await decide(target.id, decision);
    setBusy(false);
    if (done) props.onDone();
  };
  return (
    <div class="suggestion-popover" ref={box} role="dialog" aria-label={`Suggestion by ${name}`} style={{ top: `${place.top}px`, left: `${place.left}px` }} onMouseDown={(event) => event.preventDefault()}>
      <p class="suggestion-popover-who">
        Suggested by <strong>{name}</strong>
        {agent && <span class="badge badge-agent">agent</span>}
        {props.suggestion && <time dateTime={props.suggestion.createdAt}> · {timeAgo(props.suggestion.createdAt)}</time>}
      </p>
      <p class="suggestion-popover-change">
        <SuggestionChange suggestion={props.suggestion ? { ...props.suggestion, context: undefined } : changeInView(target)} />
      </p>
      {props.canDecide ? (
        <div class="suggestion-buttons">
          <button type="button" class="suggestion-accept" disabled={busy} onClick={() => choose('accept')}>
            Accept
          </button>
          <button type="button" class="suggestion-reject" disabled={busy} onClick={() => choose('reject')}>
            Reject
          </button>
        </div>
      ) : (
        <p class="suggestion-popover-note">An editor accepts or rejects it.</p>
      )}
    </div>
  );
}
