import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { timeAgo } from '../lib/format';
import { Link, navigate } from '../lib/router';
import { useStore } from '../lib/store';
import { Icon } from '../ui/icons';
import { Button, EmptyState, IconButton, Menu, Spinner, useMenu, type MenuItem } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import { CreateWorkspaceDialog } from '../workspace/CreateWorkspaceDialog';
import { ImportWorkspaceDialog } from '../workspace/ImportWorkspaceDialog';
import { RenameDialog } from '../ui/RenameDialog';
import type { Workspace } from '../workspace-context/types';
import { archiveWorkspace, renameWorkspace, setPinned, unarchiveWorkspace } from '../workspace/workspace-actions';
import { sortWorkspaces, workspaceList } from '../workspace-context/workspaces-store';
import type { WorkspaceList } from '../../../src/model/schemas/workspaces';

/**
 * An organisation's workspaces as the person reaches them: pinned first, and
 * the archived ones in their own view. For an organisation the person does
 * not belong to, only what is shared with them, and said so.
 */
export function HomePage(props: { orgSlug: string }) {
  const list = useStore(workspaceList);
  const org = list.orgs.find((candidate) => candidate.slug === props.orgSlug);
  const sharedOnly = org?.role === null;
  const [view, setView] = useState<'active' | 'archived'>('active');
  const [archived, setArchived] = useState<Workspace[] | null>(null);
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState(false);
  const [renaming, setRenaming] = useState<Workspace | null>(null);
  const [filter, setFilter] = useState('');

  const loadArchived = () =>
    api<WorkspaceList>('GET', '/api/workspaces?archived=1').then(
      ({ workspaces }) => setArchived(workspaces),
      (error) => {
        setArchived([]);
        showError(error);
      },
    );

  useEffect(() => {
    if (view === 'archived') void loadArchived();
  }, [view]);

  const source = view === 'active' ? list.items : (archived ?? []);
  const needle = filter.trim().toLowerCase();
  const items = sortWorkspaces(source.filter((workspace) => workspace.org.slug === props.orgSlug && (!needle || workspace.name.toLowerCase().includes(needle))));
  const loading = view === 'active' ? !list.loaded : archived === null;

  const act = async (action: () => Promise<unknown>, done?: string) => {
    try {
      await action();
      if (done) showToast(done, 'success');
      if (view === 'archived') await loadArchived();
    } catch (error) {
      showError(error);
    }
  };

  return (
    <div class="page">
      <header class="page-header">
        <div>
          <p class="page-eyebrow">{org?.name ?? props.orgSlug}</p>
          <h1>{sharedOnly ? 'Shared with you' : 'Workspaces'}</h1>
          <p class="muted">
            {sharedOnly
              ? `Workspaces of ${org!.name} that were shared with you. You are not a member of this organisation.`
              : 'Tables and docs shared with your team and your agents.'}
          </p>
        </div>
        {/* New workspaces go to the person's own organisation (the API's), so making or importing one is offered there only. */}
        {org?.primary && (
          <div class="page-header-actions">
            <Button icon="upload" onClick={() => setImporting(true)} data-testid="import-workspace">
              Import
            </Button>
            <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>
              New workspace
            </Button>
          </div>
        )}
      </header>
      <div class="toolbar">
        <div class="segmented" role="tablist" aria-label="Which workspaces">
          <button role="tab" aria-selected={view === 'active'} class={view === 'active' ? 'is-selected' : ''} onClick={() => setView('active')}>
            Active
          </button>
          <button role="tab" aria-selected={view === 'archived'} class={view === 'archived' ? 'is-selected' : ''} onClick={() => setView('archived')}>
            Archived
          </button>
        </div>
        <label class="search-box">
          <Icon name="search" />
          <input type="search" placeholder="Filter by name" aria-label="Filter workspaces by name" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      {list.error && view === 'active' && <p class="form-error">{list.error}</p>}
      {loading ? (
        <Spinner />
      ) : items.length === 0 ? (
        view === 'archived' ? (
          <EmptyState icon="archive" title="Nothing archived">
            Archived workspaces keep their rows, docs and members. You can bring them back from here.
          </EmptyState>
        ) : (
          <EmptyState
            icon="table2"
            title={needle ? 'No workspace matches' : 'Create your first workspace'}
            action={
              !needle &&
              org?.primary && (
                <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>
                  New workspace
                </Button>
              )
            }
          >
            {needle ? 'Try another name.' : 'A workspace holds tables and docs that people and agents edit together.'}
          </EmptyState>
        )
      ) : (
        <ul class="workspace-list" aria-label={view === 'active' ? 'Active workspaces' : 'Archived workspaces'}>
          {items.map((workspace) => (
            <WorkspaceRow
              key={workspace.id}
              workspace={workspace}
              archivedView={view === 'archived'}
              onPin={(pinned) => act(() => setPinned(workspace, pinned))}
              onRename={() => setRenaming(workspace)}
              onArchive={() => act(() => archiveWorkspace(workspace), `Archived ${workspace.name}.`)}
              onUnarchive={() => act(() => unarchiveWorkspace(workspace), `Restored ${workspace.name}.`)}
            />
          ))}
        </ul>
      )}
      {creating && <CreateWorkspaceDialog onClose={() => setCreating(false)} />}
      {importing && <ImportWorkspaceDialog orgSlug={props.orgSlug} onClose={() => setImporting(false)} />}
      {renaming && (
        <RenameDialog
          title="Rename workspace"
          initial={renaming.name}
          onClose={() => setRenaming(null)}
          onSubmit={(name) => renameWorkspace(renaming, name).then(() => undefined)}
        />
      )}
    </div>
  );
}

function WorkspaceRow(props: {
  workspace: Workspace;
  archivedView: boolean;
  onPin: (pinned: boolean) => void;
  onRename: () => void;
  onArchive: () => void;
  onUnarchive: () => void;
}) {
  const { workspace } = props;
  const menu = useMenu();
  const canManage = workspace.role === 'owner' || workspace.role === 'editor';
  const items: MenuItem[] = props.archivedView
    ? [{ label: 'Restore', icon: 'archive', onSelect: props.onUnarchive, disabled: !canManage }]
    : [
        { label: workspace.pinnedAt ? 'Unpin' : 'Pin to top', icon: 'pin', onSelect: () => props.onPin(!workspace.pinnedAt) },
        { label: 'Rename…', icon: 'edit', onSelect: props.onRename, disabled: !canManage },
        { separator: true, label: '' },
        { label: 'Archive', icon: 'archive', danger: true, onSelect: props.onArchive, disabled: !canManage },
      ];
  const href = `/${workspace.org.slug}/${workspace.slug}`;
  return (
    <li class="workspace-row">
      <span class={`workspace-icon kind-${workspace.mode}`}>
        <Icon name={workspace.mode === 'doc' ? 'doc' : 'table'} />
      </span>
      <div class="workspace-main">
        {props.archivedView ? <span class="workspace-name">{workspace.name}</span> : <Link href={href} class="workspace-name">{workspace.name}</Link>}
        <span class="workspace-meta">
          {workspace.visibility} · {workspace.role}
          {workspace.createdBy ? ` · created by ${workspace.createdBy.name}` : ''} · {props.archivedView ? `archived ${timeAgo(workspace.archivedAt)}` : timeAgo(workspace.createdAt)}
        </span>
      </div>
      {workspace.pinnedAt && !props.archivedView && <span class="badge" title="Pinned"><Icon name="pin" size={12} /> Pinned</span>}
      {!props.archivedView && (
        <IconButton icon="pin" label={workspace.pinnedAt ? `Unpin ${workspace.name}` : `Pin ${workspace.name}`} active={Boolean(workspace.pinnedAt)} onClick={() => props.onPin(!workspace.pinnedAt)} />
      )}
      <IconButton icon="more" label={`More for ${workspace.name}`} onClick={menu.open} aria-haspopup="menu" />
      {menu.anchor && <Menu anchor={menu.anchor} items={items} onClose={menu.close} align="right" />}
      {!props.archivedView && <button class="row-open" aria-hidden="true" tabIndex={-1} onClick={() => navigate(href)} />}
    </li>
  );
}
