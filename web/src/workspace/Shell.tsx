import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Link, navigate } from '../lib/router';
import { useStore } from '../lib/store';
import { session, signOut } from '../session';
import { Icon } from '../ui/icons';
import { Avatar, Menu, useMenu } from '../ui/primitives';
import { InboxButton, InboxDialog, useInboxRefresh } from '../inbox/Inbox';
import { SearchDialog } from '../search/SearchDialog';
import { SupportDialog } from '../support/SupportDialog';
import { CreateWorkspaceDialog } from './CreateWorkspaceDialog';
import { SyncIndicator } from './SyncIndicator';
import { refreshWorkspaces, sortWorkspaces, workspaceList } from '../workspace-context/workspaces-store';

/** The signed-in frame: the sidebar with the organisation's workspaces, and the page. */
export function Shell(props: { orgSlug?: string; workspaceSlug?: string; children: ComponentChildren }) {
  const state = useStore(session);
  const list = useStore(workspaceList);
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<'search' | 'inbox' | 'help' | null>(null);
  const account = useMenu();
  const me = state.status === 'signed-in' ? state.me : null;
  const orgSlug = props.orgSlug ?? me?.org?.slug ?? '';

  useEffect(() => {
    void refreshWorkspaces();
  }, []);
  useInboxRefresh(me?.principal.id ?? null);

  // `/` opens search from anywhere but a text field (where it is a character).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.closest('[role="dialog"], [role="menu"]'))) return;
      event.preventDefault();
      setOpen('search');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const inOrg = sortWorkspaces(list.items.filter((workspace) => workspace.org.slug === orgSlug));
  const elsewhere = sortWorkspaces(list.items.filter((workspace) => workspace.org.slug !== orgSlug));
  const pinned = inOrg.filter((workspace) => workspace.pinnedAt);
  const others = inOrg.filter((workspace) => !workspace.pinnedAt);

  const item = (workspace: (typeof list.items)[number]) => (
    <li key={workspace.id}>
      <Link
        href={`/${workspace.org.slug}/${workspace.slug}`}
        class={`nav-item ${workspace.slug === props.workspaceSlug && workspace.org.slug === orgSlug ? 'is-current' : ''}`}
        aria-current={workspace.slug === props.workspaceSlug && workspace.org.slug === orgSlug ? 'page' : undefined}
      >
        <Icon name={workspace.mode === 'doc' ? 'doc' : 'table'} />
        <span class="nav-label">{workspace.name}</span>
      </Link>
    </li>
  );

  return (
    <div class="shell">
      <nav class="sidebar" aria-label="Workspaces">
        <div class="sidebar-top">
          <Link href={`/${orgSlug}`} class="brand">
            <span class="brand-mark" aria-hidden="true" />
            <span>Trellis</span>
          </Link>
          <SyncIndicator />
        </div>
        <button class="nav-item nav-action" onClick={() => setOpen('search')} aria-keyshortcuts="/">
          <Icon name="search" />
          <span class="nav-label">Search</span>
          <kbd class="nav-kbd">/</kbd>
        </button>
        <InboxButton onOpen={() => setOpen('inbox')} />
        <Link href={`/${orgSlug}`} class={`nav-item ${!props.workspaceSlug && props.orgSlug ? 'is-current' : ''}`}>
          <Icon name="table2" />
          <span class="nav-label">All workspaces</span>
        </Link>
        <button class="nav-item nav-action" onClick={() => setCreating(true)}>
          <Icon name="plus" />
          <span class="nav-label">New workspace</span>
        </button>
        <div class="sidebar-scroll">
          {pinned.length > 0 && (
            <>
              <h2 class="nav-heading">Pinned</h2>
              <ul class="nav-list">{pinned.map(item)}</ul>
            </>
          )}
          <h2 class="nav-heading">Workspaces</h2>
          {list.loaded && others.length === 0 && pinned.length === 0 ? <p class="nav-empty">No workspaces yet.</p> : <ul class="nav-list">{others.map(item)}</ul>}
          {elsewhere.length > 0 && (
            <>
              <h2 class="nav-heading">Shared with you</h2>
              <ul class="nav-list">{elsewhere.map(item)}</ul>
            </>
          )}
        </div>
        {me && (
          <div class="sidebar-bottom">
            <button class="nav-item nav-action" onClick={() => setOpen('help')}>
              <Icon name="help" />
              <span class="nav-label">Help</span>
            </button>
            <button class="account-button" onClick={account.open} aria-haspopup="menu">
              <Avatar id={me.principal.id} name={me.principal.name} url={me.principal.avatarUrl} size={26} />
              <span class="account-text">
                <span class="account-name">{me.principal.name}</span>
                <span class="account-org">{me.org?.name}</span>
              </span>
              <Icon name="chevronDown" />
            </button>
            {account.anchor && (
              <Menu
                anchor={account.anchor}
                onClose={account.close}
                items={[
                  { label: 'Account and API keys', icon: 'key', onSelect: () => navigate('/settings') },
                  { label: 'Organisation settings', icon: 'building', onSelect: () => navigate('/settings/billing') },
                  { label: 'Sign out', icon: 'signOut', onSelect: () => void signOut().then(() => navigate('/signin')) },
                ]}
              />
            )}
          </div>
        )}
      </nav>
      <div class="main">{props.children}</div>
      {creating && <CreateWorkspaceDialog onClose={() => setCreating(false)} />}
      {open === 'search' && <SearchDialog onClose={() => setOpen(null)} />}
      {open === 'inbox' && me && <InboxDialog me={me.principal.id} onClose={() => setOpen(null)} />}
      {open === 'help' && <SupportDialog onClose={() => setOpen(null)} />}
    </div>
  );
}
