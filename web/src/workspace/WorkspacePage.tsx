import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf, workspacePath } from '../lib/api';
import { useNewestRequest } from '../lib/newest-request';
import { surfaceBySlug } from '../../../src/model/surface-slugs';
import { Link, navigate, useLocation } from '../lib/router';
import { useStore } from '../lib/store';
import { session } from '../session';
import { useOpenDocument } from '../sync/use-document';
import { useRefusal } from '../sync/refusal';
import { discardLocalDocument } from '../sync/connection';
import { Icon } from '../ui/icons';
import { Button, EmptyState, IconButton, Menu, Spinner, useMenu, type MenuItem } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import { LiveMentions } from '../inbox/Inbox';
import { Presence } from './Presence';
import { RenameDialog } from '../ui/RenameDialog';
import { ShareDialog } from './ShareDialog';
import { ImportWorkspaceDialog } from './ImportWorkspaceDialog';
import { TimeZoneDialog } from './TimeZoneDialog';
import { downloadFrom } from '../lib/download';
import { lazy } from '../ui/lazy';
import type { PanelRequest, WorkspaceContext } from '../workspace-context/context';
import { SURFACE_VIEWS } from './surface-views';
import { abilitiesOf, firstSurface, type Member, type Surface, type WorkspaceDetail } from '../workspace-context/types';
import { archiveWorkspace, renameWorkspace, setPinned, unarchiveWorkspace } from './workspace-actions';
import { confirmDialog, promptDialog } from '../ui/dialogs';
import { OfflineNotice } from '../offline/OfflineNotice';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import type { MemberList } from '../../../src/model/schemas/members';

/** Comments, history and activity: fetched when the panel first opens. */
const SidePanel = lazy(() => import('./SidePanel').then((module) => module.SidePanel), 'The side panel');

/** A workspace: its surfaces as tabs, the open surface, and the side panel. */
export function WorkspacePage(props: { orgSlug: string; slug: string; surfaceSlug?: string }) {
  const [workspace, setWorkspace] = useState<WorkspaceDetail | null>(null);
  const [members, setMembers] = useState<Member[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [panel, setPanel] = useState<PanelRequest | null>(null);
  const [dialog, setDialog] = useState<'share' | 'rename' | null>(null);
  const me = useStore(session);

  // Only the newest load may show: the workspace left a moment ago can answer after the one opened.
  const workspaceRequest = useNewestRequest();
  const load = useCallback(async () => {
    const ticket = workspaceRequest.start();
    try {
      const [detail, memberList] = await Promise.all([
        api<WorkspaceDetail>('GET', workspacePath(props.orgSlug, props.slug)),
        api<MemberList>('GET', workspacePath(props.orgSlug, props.slug, '/members')).catch(() => ({ members: [] as Member[] })),
      ]);
      if (!workspaceRequest.isNewest(ticket)) return;
      setWorkspace(detail);
      setMembers(memberList.members);
      setError(null);
    } catch (failure) {
      if (workspaceRequest.isNewest(ticket)) setError(failure instanceof ApiError ? failure : new ApiError(0, 'error', messageOf(failure)));
    }
  }, [props.orgSlug, props.slug]);

  useEffect(() => {
    void load();
  }, [load]);

  // The member list follows joins, leaves and role changes as they happen, so a new teammate (or agent) can be mentioned at once.
  const membersRequest = useNewestRequest();
  const loadMembers = useCallback(async () => {
    const ticket = membersRequest.start();
    const memberList = await api<MemberList>('GET', workspacePath(props.orgSlug, props.slug, '/members')).catch(() => null);
    if (memberList && membersRequest.isNewest(ticket)) setMembers(memberList.members);
  }, [props.orgSlug, props.slug]);

  const surfaces = workspace ? [...workspace.surfaces].sort((a, b) => a.position - b.position) : [];
  // An address a surface had before a rename still opens it (and the effect below puts its current one in the URL).
  const active = workspace ? (surfaceBySlug(surfaces, props.surfaceSlug) ?? firstSurface(workspace)) : undefined;
  const document = useOpenDocument(active?.syncDocument ?? null);
  const refusal = useRefusal(document);

  // An inbox entry links to `?comment={id}`: the comments panel opens on that thread.
  const linkedComment = new URLSearchParams(useLocation().search).get('comment');
  useEffect(() => {
    if (linkedComment) setPanel({ kind: 'comments', highlight: linkedComment });
  }, [linkedComment]);

  useEffect(() => {
    // A former slug in the address gives way to the current one (a link into a row or a section keeps its `?row=` or `#section-`); an unknown one falls back to the first tab.
    if (workspace && props.surfaceSlug && active && active.slug !== props.surfaceSlug) navigate(`/${props.orgSlug}/${props.slug}/${active.slug}${window.location.search}${window.location.hash}`, { replace: true });
  }, [workspace, props.surfaceSlug, active?.slug]);

  if (error?.isNetwork) {
    return (
      <OfflineNotice
        what="This workspace has not been opened on this device yet, so there is no copy of it here."
        onRetry={load}
        action={
          <Button variant="ghost" onClick={() => navigate(`/${props.orgSlug}`)}>
            All workspaces
          </Button>
        }
      />
    );
  }
  if (error) {
    return (
      <div class="page">
        <EmptyState icon="search" title={error.status === 404 ? 'Workspace not found' : 'This workspace could not be opened'} action={<Button onClick={() => navigate(`/${props.orgSlug}`)}>All workspaces</Button>}>
          {error.status === 404 ? 'It does not exist, or you have no access to it.' : error.message}
        </EmptyState>
      </div>
    );
  }
  if (!workspace) return <Spinner />;

  const abilities = abilitiesOf(workspace.role, Boolean(workspace.archivedAt));
  const context: WorkspaceContext = { workspace, members, abilities, surface: active, openPanel: setPanel, reload: load };
  const View = active ? SURFACE_VIEWS[active.kind] : null;
  const myId = me.status === 'signed-in' ? me.me.principal.id : '';

  return (
    <div class={`workspace ${panel ? 'with-panel' : ''}`}>
      <header class="workspace-header">
        <div class="workspace-title">
          <Link href={`/${props.orgSlug}`} class="crumb">
            {workspace.org.name ?? props.orgSlug}
          </Link>
          <Icon name="chevronRight" size={14} class="crumb-sep" />
          <h1>{workspace.name}</h1>
          {workspace.role !== 'owner' && workspace.role !== 'editor' && <span class="badge badge-muted">{workspace.role === 'viewer' ? 'View only' : 'Can comment'}</span>}
          <WorkspaceMenu
            context={context}
            onRename={() => setDialog('rename')}
            onArchived={() => navigate(`/${props.orgSlug}`)}
          />
        </div>
        <div class="workspace-actions">
          <Presence document={document} />
          {active && active.kind !== 'files' && (workspace.role === 'owner' || workspace.role === 'editor') && (
            <IconButton
              icon="history"
              label="History"
              active={panel?.kind === 'history'}
              onClick={() => setPanel(panel?.kind === 'history' ? null : { kind: 'history', surface: active })}
            />
          )}
          <IconButton icon="comment" label="Comments" active={panel?.kind === 'comments'} onClick={() => setPanel(panel?.kind === 'comments' ? null : { kind: 'comments' })} />
          <IconButton icon="activity" label="Activity" active={panel?.kind === 'activity'} onClick={() => setPanel(panel?.kind === 'activity' ? null : { kind: 'activity' })} />
          <Button icon="users" onClick={() => setDialog('share')}>
            Share
          </Button>
        </div>
      </header>
      {workspace.archivedAt && (
        <div class="banner" role="note">
          This workspace is archived: everything is kept, and nothing can be changed until it is restored.
          {(workspace.role === 'owner' || workspace.role === 'editor') && (
            <Button variant="ghost" onClick={() => unarchiveWorkspace(workspace).then(load, showError)}>
              Restore
            </Button>
          )}
        </div>
      )}
      {refusal && (
        <div class="banner" role="alert" data-testid="sync-refusal">
          {refusal.message}
          {refusal.discardable && document && (
            <Button variant="ghost" icon="undo" onClick={() => void discardUnsaved(document.name)}>
              Discard unsaved changes
            </Button>
          )}
        </div>
      )}
      <SurfaceTabs context={context} surfaces={surfaces} active={active} />
      <div class="workspace-body">
        <section class="surface" aria-label={active?.name ?? 'Surface'}>
          {View && active ? (
            <View key={active.id} context={context} surface={active} surfaces={surfaces} document={document} myId={myId} />
          ) : (
            <EmptyState icon="table2" title="Nothing here yet">
              Add a table or a doc to start.
            </EmptyState>
          )}
        </section>
        {panel && <SidePanel request={panel} context={context} onClose={() => setPanel(null)} />}
        {myId && <LiveMentions workspace={workspace} me={myId} />}
        <FollowMembers workspace={workspace} reload={loadMembers} />
      </div>
      {dialog === 'share' && <ShareDialog context={context} onClose={() => setDialog(null)} />}
      {dialog === 'rename' && (
        <RenameDialog title="Rename workspace" initial={workspace.name} onClose={() => setDialog(null)} onSubmit={(name) => renameWorkspace(workspace, name).then(load)} />
      )}
    </div>
  );
}

/** Events that change who is a member (or which agents act for one): the member list is read again when they come (renders nothing). */
function FollowMembers(props: { workspace: WorkspaceDetail; reload: () => Promise<void> }) {
  useReloadOnEvents(props.workspace, (name) => name.startsWith('member.') || name.startsWith('key.'), props.reload, { quietMs: 100 });
  return null;
}

function WorkspaceMenu(props: { context: WorkspaceContext; onRename: () => void; onArchived: () => void }) {
  const menu = useMenu();
  const { workspace, abilities } = props.context;
  const canManage = workspace.role === 'owner' || workspace.role === 'editor';
  const [importing, setImporting] = useState(false);
  const [choosingZone, setChoosingZone] = useState(false);
  const items: MenuItem[] = [
    { label: workspace.pinnedAt ? 'Unpin' : 'Pin to top', icon: 'pin', onSelect: () => setPinned(workspace, !workspace.pinnedAt).then(props.context.reload, showError) },
    { label: 'Rename…', icon: 'edit', onSelect: props.onRename, disabled: !abilities.manage },
    { label: `Time zone: ${workspace.timeZone}…`, icon: 'clock', onSelect: () => setChoosingZone(true), disabled: !abilities.manage },
    { separator: true, label: '' },
    { label: 'Export as a folder (.zip)', icon: 'download', onSelect: () => downloadFrom(workspacePath(workspace.org.slug, workspace.slug, '/export.zip'), `${workspace.slug}.zip`) },
    { label: 'Import a workspace…', icon: 'upload', onSelect: () => setImporting(true) },
    { separator: true, label: '' },
    {
      label: 'Archive workspace',
      icon: 'archive',
      danger: true,
      disabled: !canManage || Boolean(workspace.archivedAt),
      onSelect: () =>
        archiveWorkspace(workspace).then(() => {
          showToast(`Archived ${workspace.name}.`, 'success');
          props.onArchived();
        }, showError),
    },
  ];
  return (
    <>
      <IconButton icon="more" label="Workspace options" onClick={menu.open} aria-haspopup="menu" />
      {menu.anchor && <Menu anchor={menu.anchor} items={items} onClose={menu.close} />}
      {importing && <ImportWorkspaceDialog orgSlug={workspace.org.slug} onClose={() => setImporting(false)} />}
      {choosingZone && <TimeZoneDialog workspace={workspace} onClose={() => setChoosingZone(false)} onSaved={props.context.reload} />}
    </>
  );
}

const KIND_ICONS: Record<string, string> = { table: 'table', doc: 'doc', html: 'html', files: 'files' };

function SurfaceTabs(props: { context: WorkspaceContext; surfaces: Surface[]; active: Surface | undefined }) {
  const { workspace, abilities } = props.context;
  const addMenu = useMenu();
  const tabMenu = useMenu();
  const [menuFor, setMenuFor] = useState<Surface | null>(null);
  const [renaming, setRenaming] = useState<Surface | null>(null);
  const base = `/${workspace.org.slug}/${workspace.slug}`;

  /** A new surface is named as it is made (the suggestion is selected, so typing replaces it); the server makes its address from the name. */
  const addSurface = async (kind: 'table' | 'doc' | 'files') => {
    const taken = new Set(props.surfaces.map((surface) => surface.name));
    const stem = { table: 'Table', doc: 'Doc', files: 'Files' }[kind];
    let n = props.surfaces.filter((surface) => surface.kind === kind).length + 1;
    // A workspace's first drive is just "Files"; tables and docs are numbered from the start.
    const nameFor = (i: number) => (kind === 'files' && i === 1 ? stem : `${stem} ${i}`);
    while (taken.has(nameFor(n))) n++;
    const name = await promptDialog({ title: `New ${kind}`, label: 'Name', initial: nameFor(n), selectInitial: true, submitLabel: 'Create' });
    if (name === null) return;
    try {
      const created = await api<Surface>('POST', workspacePath(workspace.org.slug, workspace.slug, '/surfaces'), { kind, name });
      await props.context.reload();
      navigate(`${base}/${created.slug}`);
    } catch (error) {
      showError(error);
    }
  };

  const deleteSurface = async (surface: Surface) => {
    const confirmed = await confirmDialog({ title: `Delete ${surface.name}?`, message: `“${surface.name}” and everything in it will be deleted. This cannot be undone.`, confirmLabel: 'Delete', danger: true });
    if (!confirmed) return;
    try {
      await api('DELETE', workspacePath(workspace.org.slug, workspace.slug, `/surfaces/${encodeURIComponent(surface.slug)}?force=1`));
      await props.context.reload();
      navigate(base, { replace: true });
    } catch (error) {
      showError(error);
    }
  };

  const onTabKey = (event: KeyboardEvent, index: number) => {
    const next = event.key === 'ArrowRight' ? index + 1 : event.key === 'ArrowLeft' ? index - 1 : null;
    if (next === null) return;
    const surface = props.surfaces[(next + props.surfaces.length) % props.surfaces.length];
    if (!surface) return;
    event.preventDefault();
    navigate(`${base}/${surface.slug}`);
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-surface-tab="${surface.slug}"]`)?.focus());
  };

  return (
    <div class="tabs-bar">
      <div class="tabs" role="tablist" aria-label="Surfaces">
        {props.surfaces.map((surface, index) => {
          const selected = surface.id === props.active?.id;
          return (
            <div key={surface.id} class={`tab ${selected ? 'is-selected' : ''}`}>
              <a
                role="tab"
                href={`${base}/${surface.slug}`}
                aria-selected={selected}
                tabIndex={selected ? 0 : -1}
                data-surface-tab={surface.slug}
                onKeyDown={(event) => onTabKey(event, index)}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(`${base}/${surface.slug}`);
                }}
              >
                <Icon name={KIND_ICONS[surface.kind] ?? 'doc'} />
                <span>{surface.name}</span>
              </a>
              {selected && abilities.manage && (
                <button
                  class="tab-menu"
                  aria-label={`Options for ${surface.name}`}
                  onClick={(event) => {
                    setMenuFor(surface);
                    tabMenu.open(event);
                  }}
                >
                  <Icon name="chevronDown" size={12} />
                </button>
              )}
            </div>
          );
        })}
        {abilities.manage && (
          <button class="tab-add" aria-label="Add a surface" title="Add a table, doc or files" onClick={addMenu.open}>
            <Icon name="plus" />
          </button>
        )}
      </div>
      {addMenu.anchor && (
        <Menu
          anchor={addMenu.anchor}
          onClose={addMenu.close}
          items={[
            { label: 'New table', icon: 'table', onSelect: () => void addSurface('table') },
            { label: 'New doc', icon: 'doc', onSelect: () => void addSurface('doc') },
            { label: 'New files', icon: 'files', onSelect: () => void addSurface('files') },
          ]}
        />
      )}
      {tabMenu.anchor && menuFor && (
        <Menu
          anchor={tabMenu.anchor}
          onClose={tabMenu.close}
          items={[
            { label: 'Rename…', icon: 'edit', onSelect: () => setRenaming(menuFor) },
            { label: 'Delete', icon: 'trash', danger: true, onSelect: () => void deleteSurface(menuFor), disabled: props.surfaces.length <= 1 },
          ]}
        />
      )}
      {renaming && (
        <RenameDialog
          title={`Rename ${renaming.kind}`}
          initial={renaming.name}
          onClose={() => setRenaming(null)}
          onSubmit={async (name) => {
            // The address follows the name: the page reloads the surfaces and the URL moves to the new slug (the old one still leads here).
            await api('PATCH', workspacePath(workspace.org.slug, workspace.slug, `/surfaces/${encodeURIComponent(renaming.slug)}`), { name });
            await props.context.reload();
          }}
        />
      )}
    </div>
  );
}

/** After a refused change: the person confirms, this device's copy goes, and the page opens the document as the server has it. */
async function discardUnsaved(documentName: string) {
  const confirmed = await confirmDialog({
    title: 'Discard unsaved changes?',
    message: 'The changes on this device that the server has not saved are removed, and the document opens as the server has it. This cannot be undone.',
    confirmLabel: 'Discard',
    danger: true,
  });
  if (!confirmed) return;
  await discardLocalDocument(documentName);
  location.reload();
}
