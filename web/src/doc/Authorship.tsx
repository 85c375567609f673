/**
 * The doc as authorship (docs/ATTRIBUTION.md): read-only, each span tinted
 * by the principal whose update inserted it, from `GET /doc?attribution=1`.
 * People and agents are told apart (an agent's spans are underlined and its
 * legend entry says whose agent it is). While open, it reads again shortly
 * after the document changes.
 */
import { useEffect, useState } from 'preact/hooks';
import type * as Y from 'yjs';
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

  if (!read) return <Spinner label="Reading who wrote what…" />;
  const legend = new Map<string, AttributedPrincipal | null>();
  for (const span of read.spans) legend.set(span.principal ? `${span.principal.principalType}:${span.principal.id}` : 'unknown', span.principal);
  return (
    <div class="authorship">
      <ul class="authorship-legend" aria-label="Authors">
        {[...legend.values()].map((principal) => (
          <li key={principal?.id ?? 'unknown'} class={principal?.principalType === 'agent' ? 'is-agent' : 'is-person'}>
            <span class="authorship-swatch" style={{ background: principalColor(principal) }} />
            {principal?.principalType === 'agent' && <Icon name="agent" size={14} />}
            <span>{principalLabel(principal)}</span>
          </li>
        ))}
      </ul>
      <div class="authorship-text" aria-label="The doc by author">
        {read.spans.map((span, i) => (
          <span
            key={i}
            class={`authorship-span ${span.principal?.principalType === 'agent' ? 'is-agent' : ''}`}
            style={{ background: principalColor(span.principal) }}
            title={principalLabel(span.principal)}
            data-author={principalLabel(span.principal)}
          >
            {span.text}
          </span>
        ))}
      </div>
    </div>
  );
}
