import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { useNewestRequest } from '../lib/newest-request';
import { timeAgo } from '../lib/format';
import { Avatar, Button, EmptyState, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { ShownVersion, Version, VersionList } from '../../../src/model/schemas/versions';
import type { Surface } from '../workspace-context/types';
import type { WorkspaceContext } from '../workspace-context/context';

/** A shown version of a sheet (`GET .../versions/{id}` on a table surface). */
type ShownSheet = Extract<ShownVersion, { rows: unknown }>;

/** What the preview shows: a doc as Markdown, an html page's source, or a page of a sheet's rows. */
type Preview = { kind: 'text'; text: string } | { kind: 'html'; html: string } | { kind: 'sheet'; columns: ShownSheet['columns']; rows: ShownSheet['rows']; more: boolean };

const PREVIEW_ROWS = 50;

/**
 * The open surface's version history: the list (newest first), a preview of
 * the selected version, naming the current state and restoring a version.
 * Restoring is a new change on top, so the open editor shows it at once.
 */
export function HistoryPanel(props: { context: WorkspaceContext; surface: Surface }) {
  const { workspace, abilities } = props.context;
  const base = workspacePath(workspace.org.slug, workspace.slug, `/surfaces/${encodeURIComponent(props.surface.slug)}/versions`);
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<Version | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);

  // Only the newest listing may show: the previous surface's can answer after this one's.
  const listingRequest = useNewestRequest();
  const load = () => {
    const ticket = listingRequest.start();
    return api<VersionList>('GET', `${base}?limit=100`).then(
      (page) => listingRequest.isNewest(ticket) && setVersions(page.versions),
      (failure) => listingRequest.isNewest(ticket) && setError(failure.message),
    );
  };

  useEffect(() => {
    setVersions(null);
    setSelected(null);
    void load();
  }, [base]);

  useEffect(() => {
    setPreview(null);
    if (!selected) return;
    let closed = false;
    const query = props.surface.kind === 'doc' ? '?format=markdown' : props.surface.kind === 'table' ? `?limit=${PREVIEW_ROWS}` : '';
    api<ShownVersion>('GET', `${base}/${selected.id}${query}`).then((shown) => {
      if (closed) return;
      if ('markdown' in shown) setPreview({ kind: 'text', text: shown.markdown });
      else if ('html' in shown) setPreview({ kind: 'html', html: shown.html });
      else if ('rows' in shown) setPreview({ kind: 'sheet', columns: shown.columns, rows: shown.rows, more: shown.nextCursor !== null });
    }, showError);
    return () => {
      closed = true;
    };
  }, [selected?.id]);

  const nameCurrent = async (event: Event) => {
    event.preventDefault();
    if (!name.trim()) return;
    setBusy(true);
    try {
      await api('POST', base, { name: name.trim() });
      setName('');
      showToast('Version named');
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  const restore = async (version: Version) => {
    if (!confirm(`Restore the ${props.surface.kind === 'table' ? 'table' : 'page'} as it was ${timeAgo(version.createdAt)}? Later changes stay in the history.`)) return;
    setBusy(true);
    try {
      await api('POST', `${base}/${version.id}/restore`);
      showToast('Version restored');
      setSelected(null);
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (error) return <p class="form-error">{error}</p>;
  if (!versions) return <Spinner />;
  return (
    <div class="history">
      {abilities.edit && (
        <form class="history-name" onSubmit={nameCurrent}>
          <input aria-label="Version name" placeholder="Name the current version" maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <Button type="submit" busy={busy} disabled={!name.trim()}>
            Save
          </Button>
        </form>
      )}
      {versions.length === 0 ? (
        <EmptyState icon="history" title="No history yet">
          Versions appear here as people and agents edit.
        </EmptyState>
      ) : (
        <ol class="history-list">
          {versions.map((version) => (
            <li key={version.id} class={selected?.id === version.id ? 'selected' : ''}>
              <button type="button" class="history-item" onClick={() => setSelected(selected?.id === version.id ? null : version)} aria-expanded={selected?.id === version.id}>
                <Avatar id={version.createdBy.id} name={version.createdBy.name} size={22} />
                <span>
                  <strong>{version.name ?? (version.editors.map((e) => e.principal.name).join(', ') || version.createdBy.name)}</strong>
                  <span class="history-meta">
                    <time dateTime={version.createdAt} title={new Date(version.createdAt).toLocaleString()}>
                      {timeAgo(version.createdAt)}
                    </time>{' '}
                    · {summary(version)}
                  </span>
                </span>
              </button>
              {selected?.id === version.id && (
                <div class="history-preview" aria-label="Preview">
                  {!preview ? <Spinner /> : <PreviewView preview={preview} />}
                  {abilities.edit && (
                    <Button icon="undo" busy={busy} onClick={() => restore(version)}>
                      Restore this version
                    </Button>
                  )}
                </div>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function summary(version: Version): string {
  if (version.kind === 'named') return `named by ${version.createdBy.name}`;
  const { unit, added, removed, changed, columnsChanged } = version.changes;
  const parts = [added && `${added} added`, removed && `${removed} removed`, changed && `${changed} changed`].filter(Boolean);
  if (columnsChanged) parts.push('columns changed');
  return parts.length > 0 ? `${unit}: ${parts.join(', ')}` : 'no changes';
}

function PreviewView(props: { preview: Preview }) {
  const { preview } = props;
  if (preview.kind === 'text') return <pre class="history-text">{preview.text}</pre>;
  // Sanitised by the server; shown without scripts.
  if (preview.kind === 'html') return <iframe class="history-html" sandbox="" srcdoc={preview.html} title="Page as it was" />;
  return (
    <div class="history-sheet">
      <table>
        <thead>
          <tr>
            {preview.columns.map((column) => (
              <th key={column.key}>{column.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.rows.map((row) => (
            <tr key={row.id}>
              {preview.columns.map((column) => (
                <td key={column.key}>{formatCell(row.data[column.key])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {preview.more && <p class="history-meta">First {PREVIEW_ROWS} rows</p>}
    </div>
  );
}

function formatCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
