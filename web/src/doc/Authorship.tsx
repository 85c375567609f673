/**
 * The doc as authorship (docs/ATTRIBUTION.md): read-only and formatted as
 * the editor shows it (headings, lists, bold...), each span tinted by the
 * principal whose update inserted it, from `GET /doc?attribution=1`.
 * People and agents are told apart (an agent's spans are underlined and its
 * legend entry says whose agent it is). While open, it reads again shortly
 * after the document changes.
 */
import type { Node as PMNode } from 'prosemirror-model';
import { Decoration, DecorationSet } from 'prosemirror-view';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type * as Y from 'yjs';
import { readDocBody } from '../../../src/model/doc/body';
import { withSuggestionsRejected } from '../../../src/model/doc/suggestion-rules';
import { docTextPositions } from '../../../src/model/doc/text';
import { readOnlyDocView } from './doc-view';
import { api, workspacePath } from '../lib/api';
import { Icon } from '../ui/icons';
import { Spinner } from '../ui/primitives';
import { showError } from '../ui/toast';
import type { WorkspaceContext } from '../workspace-context/context';
import type { AttributedPrincipal, DocAttribution } from '../../../src/model/schemas/attribution';

/** How the app names a principal: an agent with its owner. */
export function principalLabel(principal: AttributedPrincipal | null): string {
  if (!principal) return 'Unknown or system';
  return principal.owner ? `${principal.name} (agent of ${principal.owner.name})` : principal.name;
}

// Warm hues for people, cool ones for agents, so the two read apart before the legend is read.
const PERSON_HUES = [28, 352, 48, 320, 8, 290];
const AGENT_HUES = [190, 150, 215, 170, 240, 130];

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return Math.abs(h);
}

/** The tint of a principal: the same in every doc and for every reader. */
export function principalColor(principal: AttributedPrincipal | null): string {
  if (!principal) return 'hsl(0 0% 88%)';
  const hues = principal.principalType === 'agent' ? AGENT_HUES : PERSON_HUES;
  return `hsl(${hues[hash(principal.id) % hues.length]} 80% 86%)`;
}

const REREAD_MS = 1_000;

export function AuthorshipView(props: { context: WorkspaceContext; surfaceId: string; doc: Y.Doc | null }) {
  const { context, surfaceId, doc } = props;
  const [read, setRead] = useState<DocAttribution | null>(null);
  const [changed, setChanged] = useState(0);
  const mount = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!doc) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onUpdate = () => {
      clearTimeout(timer);
      timer = setTimeout(() => setChanged((n) => n + 1), REREAD_MS);
    };
    doc.on('update', onUpdate);
    return () => {
      clearTimeout(timer);
      doc.off('update', onUpdate);
    };
  }, [doc]);

  useEffect(() => {
    let live = true;
    const { workspace } = context;
    api<DocAttribution>('GET', workspacePath(workspace.org.slug, workspace.slug, `/doc?attribution=1&surfaceId=${encodeURIComponent(surfaceId)}`))
      .then((answer) => live && setRead(answer))
      .catch((error) => live && showError(error));
    return () => {
      live = false;
    };
  }, [surfaceId, changed]);

  // The doc as the text read reads it (open suggestions rejected), drawn as the editor draws it, each span tinted by its author.
  const shown = useRef<ReturnType<typeof readOnlyDocView> | null>(null);
  useLayoutEffect(() => {
    if (!read || !doc || !mount.current) return;
    shown.current ??= readOnlyDocView(mount.current, 'The doc by author');
    const body = withSuggestionsRejected(readDocBody(doc));
    shown.current.show(body, (drawn) => authorshipDecorations(drawn, read.spans));
  }, [read]);
  useEffect(() => () => shown.current?.destroy(), []);

  const legend = new Map<string, AttributedPrincipal | null>();
  for (const span of read?.spans ?? []) legend.set(span.principal ? `${span.principal.principalType}:${span.principal.id}` : 'unknown', span.principal);
  return (
    <div class="authorship">
      {!read && <Spinner label="Reading who wrote what…" />}
      {read && (
        <ul class="authorship-legend" aria-label="Authors">
          {[...legend.values()].map((principal) => (
            <li key={principal?.id ?? 'unknown'} class={principal?.principalType === 'agent' ? 'is-agent' : 'is-person'}>
              <span class="authorship-swatch" style={{ background: principalColor(principal) }} />
              {principal?.principalType === 'agent' && <Icon name="agent" size={14} />}
              <span>{principalLabel(principal)}</span>
            </li>
          ))}
        </ul>
      )}
      <div class="authorship-text" ref={mount} />
    </div>
  );
}

/**
 * The spans (the text read, cut by author) as decorations on the doc. The
 * doc is this device's copy: when it holds something the server has not
 * read yet, the text differs, and only the stretches before and after the
 * difference are tinted until the next read.
 */
function authorshipDecorations(doc: PMNode, spans: DocAttribution['spans']): DecorationSet {
  const { text, positions } = docTextPositions(doc);
  const served = spans.map((span) => span.text).join('');
  let same = 0;
  while (same < text.length && same < served.length && text[same] === served[same]) same++;
  let sameEnd = 0;
  while (sameEnd < text.length - same && sameEnd < served.length - same && text[text.length - 1 - sameEnd] === served[served.length - 1 - sameEnd]) sameEnd++;
  /** The position in the doc of the served text's character `i`, or -1. */
  const positionOf = (i: number) => (i < same ? positions[i]! : i >= served.length - sameEnd ? positions[i - served.length + text.length]! : -1);

  const decorations: Decoration[] = [];
  let at = 0;
  for (const span of spans) {
    const attrs = {
      class: `authorship-span ${span.principal?.principalType === 'agent' ? 'is-agent' : ''}`,
      style: `background: ${principalColor(span.principal)}`,
      title: principalLabel(span.principal),
      'data-author': principalLabel(span.principal),
    };
    let from = -1;
    let to = -1;
    const flush = () => {
      if (from >= 0 && to > from) decorations.push(Decoration.inline(from, to, attrs));
      from = to = -1;
    };
    for (let i = at; i < at + span.text.length; i++) {
      const pos = positionOf(i);
      if (pos < 0) continue;
      // A mention's characters all name its one position.
      if (pos === to - 1) continue;
      if (pos !== to) flush();
      if (from < 0) from = pos;
      to = pos + 1;
    }
    flush();
    at += span.text.length;
  }
  return DecorationSet.create(doc, decorations);
}
