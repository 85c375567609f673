import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { Spinner } from '../ui/primitives';
import type { SurfaceViewProps } from '../workspace-context/context';
import type { HtmlPage } from '../../../src/model/schemas/workspaces';

/**
 * An html surface, rendered from the server's sanitised copy in a sandboxed
 * frame with no scripts and its own origin: the raw Y.Text is untrusted.
 */
export function HtmlSurface(props: SurfaceViewProps) {
  const { workspace } = props.context;
  const [html, setHtml] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<HtmlPage>('GET', workspacePath(workspace.org.slug, workspace.slug, `/surfaces/${encodeURIComponent(props.surface.slug)}/html`)).then(
      (page) => setHtml(page.html),
      (failure) => setError(failure.message),
    );
  }, [props.surface.id]);
  if (error) return <p class="form-error">{error}</p>;
  if (html === null) return <Spinner />;
  return <iframe class="html-frame" title={props.surface.name} sandbox="" srcdoc={html} />;
}
