/**
 * The permission table: which role may do what, as plain data. Every entry
 * point (REST, sync, SSE, MCP) asks `roleCan(role, action)` through
 * `policy/index.ts`; nothing compares role names anywhere else. Plain data
 * and browser-safe: the web app offers only what this table allows.
 */

/** A member's role, in a workspace or an organisation, lowest last (persistence stores it, the API schemas and the web app read it). */
export const ROLES = ['owner', 'editor', 'commenter', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** An API key's role: keys are never owners. */
export type KeyRole = Exclude<Role, 'owner'>;

export const WORKSPACE_ACTIONS = [
  'read', // workspace detail, rows, columns, doc, html, members, audit log, live events
  'read_comments',
  'read_files', // files and folders: members only (SPEC "Files"), never public readers
  'comment', // add comments and replies, react, resolve
  'suggest', // propose doc and row changes that an editor accepts or rejects (docs/SUGGESTIONS.md)
  'write_rows',
  'edit_columns',
  'write_views', // saved views of a sheet (create, change, delete); reading them is `read`
  'edit_doc',
  'write_files',
  'manage_surfaces',
  'update_settings', // name, mode
  'share', // visibility, commentsOnPublicShare, e-mail invites
  'manage_members', // change roles, remove members
  'archive', // archive and unarchive
  'pin',
  'manage_webhooks',
  'read_versions', // version history of docs, html pages and sheets
  'write_versions', // name and restore versions
  'decide_suggestions', // accept or reject suggestions
  'start_runs', // start and end one's own runs (docs/RUNS.md); reading runs is `read`
  'revert_runs', // revert anyone's run (with write access to every surface it touched); one's own needs only `start_runs`
] as const;
export type WorkspaceAction = (typeof WORKSPACE_ACTIONS)[number];

const READ_ONLY = ['read', 'read_comments', 'read_files'] as const satisfies readonly WorkspaceAction[];
const COMMENTING = [...READ_ONLY, 'comment', 'suggest', 'pin', 'start_runs'] as const satisfies readonly WorkspaceAction[];
const EDITING = [
  ...COMMENTING,
  'write_rows',
  'edit_columns',
  'write_views',
  'edit_doc',
  'write_files',
  'manage_surfaces',
  'update_settings',
  'share',
  'archive',
  'manage_webhooks',
  'read_versions',
  'write_versions',
  'decide_suggestions',
  'revert_runs',
] as const satisfies readonly WorkspaceAction[];

export const WORKSPACE_PERMISSIONS = {
  owner: [...EDITING, 'manage_members'],
  editor: EDITING,
  commenter: COMMENTING,
  viewer: [...READ_ONLY, 'pin'],
} as const satisfies Record<Role, readonly WorkspaceAction[]>;

export const ORG_ACTIONS = [
  'read_org',
  'update_org', // name, default visibility
  'invite_members',
  'remove_members',
  'mint_keys',
  'manage_webhooks',
  'manage_billing',
  'create_workspaces',
  'contact_support', // support tickets and their screenshots, requests for a higher limit
] as const;
export type OrgAction = (typeof ORG_ACTIONS)[number];

export const ORG_PERMISSIONS = {
  owner: [...ORG_ACTIONS],
  editor: ['read_org', 'invite_members', 'mint_keys', 'manage_webhooks', 'create_workspaces', 'contact_support'],
  commenter: ['read_org', 'mint_keys', 'create_workspaces', 'contact_support'],
  viewer: ['read_org', 'mint_keys', 'create_workspaces', 'contact_support'],
} as const satisfies Record<Role, readonly OrgAction[]>;

/**
 * What an API key may do at most, whatever its role and its owner's
 * standing, as allowlists: a key's request takes an action only when its
 * role allows it (the tables above, capped by its owner's) and the key's
 * lists name it. An action added to the tables later is refused to keys
 * until someone adds it here (docs/ACCESS.md).
 */
export const KEY_ORG_PERMISSIONS = {
  // Never `mint_keys`: people mint keys, in a session.
  editor: ['read_org', 'invite_members', 'manage_webhooks', 'create_workspaces', 'contact_support'],
  commenter: ['read_org', 'contact_support'],
  viewer: ['read_org', 'contact_support'],
} as const satisfies Record<KeyRole, readonly OrgAction[]>;

/** A key scoped to one workspace acts there only: its organisation is invisible to it. */
export const SCOPED_KEY_ORG_PERMISSIONS = [] as const satisfies readonly OrgAction[];

/**
 * A suggest-only key (docs/SUGGESTIONS.md) reads, comments and suggests:
 * nothing it does takes effect without a person's decision, and it opens
 * the workspace to no one. Within what its role allows.
 */
export const SUGGEST_ONLY_PERMISSIONS = {
  // start_runs: its suggestions may join a run of its own (docs/RUNS.md); it never reverts one.
  workspace: ['read', 'read_comments', 'read_files', 'read_versions', 'comment', 'suggest', 'start_runs'],
  org: ['read_org'],
} as const satisfies { workspace: readonly WorkspaceAction[]; org: readonly OrgAction[] };

/** Whether a key's lists name an organisation action. */
export function keyAllowsOrg(key: { role: KeyRole; scoped: boolean; suggestOnly: boolean }, action: OrgAction): boolean {
  const lists: Array<readonly OrgAction[]> = [KEY_ORG_PERMISSIONS[key.role]];
  if (key.scoped) lists.push(SCOPED_KEY_ORG_PERMISSIONS);
  if (key.suggestOnly) lists.push(SUGGEST_ONLY_PERMISSIONS.org);
  return lists.every((list) => list.includes(action));
}

export function suggestOnlyAllows(action: WorkspaceAction): boolean {
  return (SUGGEST_ONLY_PERMISSIONS.workspace as readonly WorkspaceAction[]).includes(action);
}

/**
 * OAuth scopes cap what a token may do on behalf of its user (who keeps
 * their own role: a scope never grants what the role does not). Each scope
 * lists the actions it opens; a token may take an action when one of its
 * scopes lists it. `write` includes reading, `admin` includes writing.
 */
export const OAUTH_SCOPES = ['read', 'write', 'admin'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

// Asking support for help was open to every reader of the organisation before it was its own action, and stays so.
const SCOPE_READ = { workspace: [...READ_ONLY, 'read_versions'], org: ['read_org', 'contact_support'] } as const;
const SCOPE_WRITE = {
  // Naming and restoring a version is editing the surface (a restore is one more change, itself undoable).
  workspace: [
    ...SCOPE_READ.workspace,
    'comment',
    'suggest',
    'pin',
    'write_rows',
    'edit_columns',
    'write_views',
    'edit_doc',
    'write_files',
    'manage_surfaces',
    'update_settings',
    'write_versions',
    'decide_suggestions',
    'start_runs',
    'revert_runs',
  ],
  org: [...SCOPE_READ.org, 'create_workspaces'],
} as const;

export const OAUTH_SCOPE_PERMISSIONS = {
  read: SCOPE_READ,
  write: SCOPE_WRITE,
  admin: { workspace: [...WORKSPACE_ACTIONS], org: [...ORG_ACTIONS] },
} as const satisfies Record<OAuthScope, { workspace: readonly WorkspaceAction[]; org: readonly OrgAction[] }>;

export function scopeAllows(scopes: readonly OAuthScope[], action: { workspace: WorkspaceAction } | { org: OrgAction }): boolean {
  return scopes.some((scope) => {
    const allowed = OAUTH_SCOPE_PERMISSIONS[scope];
    return 'workspace' in action
      ? (allowed.workspace as readonly WorkspaceAction[]).includes(action.workspace)
      : (allowed.org as readonly OrgAction[]).includes(action.org);
  });
}

export const ROLE_RANK: Record<Role, number> = { viewer: 0, commenter: 1, editor: 2, owner: 3 };

export function roleCan(role: Role, action: WorkspaceAction): boolean {
  return (WORKSPACE_PERMISSIONS[role] as readonly WorkspaceAction[]).includes(action);
}

export function orgRoleCan(role: Role, action: OrgAction): boolean {
  return (ORG_PERMISSIONS[role] as readonly OrgAction[]).includes(action);
}

/** The lower of two roles: an agent never exceeds its key or its owner. */
export function lowerRole(a: Role, b: Role): Role {
  return ROLE_RANK[a] <= ROLE_RANK[b] ? a : b;
}

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[minimum];
}

/** Known scopes of a stored space-separated list, in canonical order. */
export function parseScopes(scopes: string): OAuthScope[] {
  const given = new Set(scopes.split(' '));
  return OAUTH_SCOPES.filter((scope) => given.has(scope));
}
