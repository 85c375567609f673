import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { useNewestRequest } from '../lib/newest-request';
import { formatDate, timeAgo } from '../lib/format';
import { Icon } from '../ui/icons';
import { Avatar, Button, EmptyState, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { Version, VersionList } from '../../../src/model/schemas/versions';
import type { Surface } from '../workspace-context/types';
import type { WorkspaceContext } from '../workspace-context/context';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import { VersionDialog } from './VersionDialog';

/**
 * The open surface's version history: the list (newest first), with a
 * restore listed as one, naming the current state, and a version opened in
 * a dialog to see it, compare it with any other and restore it. The list
 * follows the surface's changes (new automatic versions, someone's restore).
 */
export function HistoryPanel(props: { context: WorkspaceContext; surface: Surface }) {
  const { workspace, abilities } = props.context;
  const base = workspacePath(workspace.org.slug, workspace.slug, `/surfaces/${encodeURIComponent(props.surface.slug)}/versions`);
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [opened, setOpened] = useState<Version | null>(null);
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
    setOpened(null);
    void load();
  }, [base]);

  // A change of this surface's content (an edit, a restore, a name) may add or move a version.
  useReloadOnEvents(workspace, (name) => /^(version|doc|row|columns)\./.test(name), load, { quietMs: 1_000, concerns: (event) => event.surface?.id === props.surface.id || event.data?.surfaceId === props.surface.id });

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
        <>
          <p class="history-hint">Open a version to see it, compare it with another or restore it.</p>
          <ol class="history-list">
            {versions.map((version) => (
              <li key={version.id} class={`${opened?.id === version.id ? 'selected' : ''} ${version.restoredFrom ? 'is-restore' : ''}`} data-version-id={version.id}>
                <button type="button" class="history-item" onClick={() => setOpened(version)} aria-haspopup="dialog">
                  <Avatar id={version.createdBy.id} name={version.createdBy.name} url={version.createdBy.avatarUrl} size={22} />
                  <span>
                    <strong>{title(version)}</strong>
                    <span class="history-meta">
                      <time dateTime={version.createdAt} title={new Date(version.createdAt).toLocaleString()}>
                        {timeAgo(version.createdAt)}
                      </time>
                      {!version.restoredFrom && ` · ${summary(version)}`}
                    </span>
                    {version.restoredFrom && <RestoredFrom restoredFrom={version.restoredFrom} />}
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </>
      )}
      {opened && (
        <VersionDialog
          context={props.context}
          surface={props.surface}
          base={base}
          versions={versions}
          version={opened}
          onClose={() => setOpened(null)}
          onRestored={() => {
            setOpened(null);
            void load();
          }}
        />
      )}
    </div>
  );
}

function title(version: Version): string {
  if (version.name) return version.name;
  if (version.restoredFrom) return version.createdBy.name;
  return version.editors.map((e) => e.principal.name).join(', ') || version.createdBy.name;
}

/** A restore says which version it brought back. */
function RestoredFrom(props: { restoredFrom: NonNullable<Version['restoredFrom']> }) {
  const { name, createdAt } = props.restoredFrom;
  return (
    <span class="history-restore">
      <Icon name="undo" size={12} />
      <span>Restored {name ? `“${name}”` : `version from ${formatDate(createdAt)}`}</span>
    </span>
  );
}

/** What an edit or a name changed. */
function summary(version: Version): string {
  if (version.kind === 'named') return `named by ${version.createdBy.name}`;
  const { unit, added, removed, changed, columnsChanged } = version.changes;
  const parts = [added && `${added} added`, removed && `${removed} removed`, changed && `${changed} changed`].filter(Boolean);
  if (columnsChanged) parts.push('columns changed');
  return parts.length > 0 ? `${unit}: ${parts.join(', ')}` : 'no changes';
}
