import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Link, navigate } from '../lib/router';
import { useStore } from '../lib/store';
import { session, signOut } from '../session';
import { Icon } from '../ui/icons';
import { Avatar, Menu, useMenu } from '../ui/primitives';
import { InboxButton, InboxDialog, useInboxRefresh } from '../inbox/Inbox';
import { lazy } from '../ui/lazy';
import { CreateWorkspaceDialog } from './CreateWorkspaceDialog';
import { SyncIndicator } from './SyncIndicator';
import { currentOrgOf, refreshWorkspaces, sortWorkspaces, workspaceList, type CallerOrg } from '../workspace-context/workspaces-store';

const SearchDialog = lazy(() => import('../search/SearchDialog').then((module) => module.SearchDialog), 'Search');
const SupportDialog = lazy(() => import('../support/SupportDialog').then((module) => module.SupportDialog), 'Help');

/** The last organisation of the person's own they had open: a workspace shared from elsewhere keeps the sidebar on it. */
let lastOrgSlug: string | null = null;

/**
 * The signed-in frame: the sidebar (the person's organisation, with a
 * switcher when they belong to several, its workspaces, and the workspaces
 * of other organisations shared with them) and the page.
 */
export function Shell(props: { orgSlug?: string; workspaceSlug?: string; children: ComponentChildren }) {
  const state = useStore(session);
  const list = useStore(workspaceList);
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<'search' | 'inbox' | 'help' | null>(null);
  const account = useMenu();
  const me = state.status === 'signed-in' ? state.me : null;
  const currentOrg = currentOrgOf(list.orgs, props.orgSlug, lastOrgSlug);
  if (currentOrg) lastOrgSlug = currentOrg.slug;
  const orgSlug = currentOrg?.slug ?? me?.org?.slug ?? '';
  // Workspaces the person reaches in an organisation they do not belong to are shared with them.
  const sharedFrom = new Map(list.orgs.filter((org) => org.role === null).map((org) => [org.slug, org]));

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
  const shared = sortWorkspaces(list.items.filter((workspace) => sharedFrom.has(workspace.org.slug)));
  const pinned = inOrg.filter((workspace) => workspace.pinnedAt);
  const others = inOrg.filter((workspace) => !workspace.pinnedAt);

  const item = (workspace: (typeof list.items)[number]) => {
    const current = workspace.slug === props.workspaceSlug && workspace.org.slug === props.orgSlug;
    const from = sharedFrom.get(workspace.org.slug);
    return (
      <li key={workspace.id}>
        <Link
          href={`/${workspace.org.slug}/${workspace.slug}`}
          class={`nav-item ${current ? 'is-current' : ''} ${from ? 'has-detail' : ''}`}
          aria-current={current ? 'page' : undefined}
          title={from ? `${workspace.name}, shared with you from ${from.name}` : undefined}
        >
          <Icon name={workspace.mode === 'doc' ? 'doc' : 'table'} />
          <span class="nav-text">
            <span class="nav-label">{workspace.name}</span>
            {from && <span class="nav-detail">{from.name}</span>}
          </span>
        </Link>
      </li>
    );
  };

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
        {currentOrg && <OrgSwitcher current={currentOrg} orgs={list.orgs} />}
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
        {/* New workspaces go to the person's own organisation (the API's); elsewhere the button would mislead. */}
        {(!currentOrg || currentOrg.primary) && (
          <button class="nav-item nav-action" onClick={() => setCreating(true)}>
            <Icon name="plus" />
            <span class="nav-label">New workspace</span>
          </button>
        )}
        <div class="sidebar-scroll">
          {pinned.length > 0 && (
            <>
              <h2 class="nav-heading" id="nav-pinned">Pinned</h2>
              <ul class="nav-list" aria-labelledby="nav-pinned">{pinned.map(item)}</ul>
            </>
          )}
          <h2 class="nav-heading" id="nav-workspaces">Workspaces</h2>
          {list.loaded && others.length === 0 && pinned.length === 0 ? (
            <p class="nav-empty">No workspaces yet.</p>
          ) : (
            <ul class="nav-list" aria-labelledby="nav-workspaces">{others.map(item)}</ul>
          )}
          {shared.length > 0 && (
            <>
              <h2 class="nav-heading" id="nav-shared">Shared with you</h2>
              <ul class="nav-list" aria-labelledby="nav-shared">{shared.map(item)}</ul>
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

/**
 * The organisation the sidebar shows, and the others the person belongs to,
 * one pick away (each opens that organisation's workspaces). Organisations
 * they only have workspaces shared from are not theirs to switch to.
 */
function OrgSwitcher(props: { current: CallerOrg; orgs: CallerOrg[] }) {
  const menu = useMenu();
  const mine = props.orgs.filter((org) => org.role !== null);
  return (
    <>
      <button
        class="org-switcher"
        onClick={(event) => {
          // An organisation joined since the list was read (an invite accepted elsewhere) is listed too.
          const button = event.currentTarget;
          void refreshWorkspaces().then(() => menu.openAt(button));
        }} aria-haspopup="menu" aria-label={`Organisation: ${props.current.name}`} title={mine.length > 1 ? 'Switch organisation' : props.current.name}>
        <span class="org-mark" aria-hidden="true">
          {props.current.name.slice(0, 1).toUpperCase()}
        </span>
        <span class="org-name">{props.current.name}</span>
        <Icon name="chevronDown" />
      </button>
      {menu.anchor && (
        <Menu
          anchor={menu.anchor}
          onClose={menu.close}
          items={mine.map((org) => ({ label: org.name, hint: org.primary ? 'yours' : undefined, checked: org.slug === props.current.slug, onSelect: () => navigate(`/${org.slug}`) }))}
        />
      )}
    </>
  );
}
