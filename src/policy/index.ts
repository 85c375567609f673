import { ApiError, errors } from '../errors';
import type { DocumentKind } from '../model/document-names';
import type { Role, Visibility } from '../model/roles';
import {
  keyAllowsOrg,
  lowerRole,
  OAUTH_SCOPES,
  orgRoleCan,
  roleAtLeast,
  roleCan,
  scopeAllows,
  suggestOnlyAllows,
  type KeyRole,
  type OAuthScope,
  type OrgAction,
  type WorkspaceAction,
} from '../model/permissions';
import type { Actor } from './actor';

export * from '../model/permissions';

/**
 * Who may do what on a workspace. Callers load facts (memberships, org
 * role, key) and this module decides, purely, so REST, sync, SSE and MCP get
 * the same answer and the whole matrix can be tested cell by cell.
 */

export type WorkspaceFacts = {
  id: string;
  orgId: string;
  visibility: Visibility;
  archivedAt: Date | null;
  commentsOnPublicShare: boolean;
};

export type UserFacts = { membershipRole: Role | null; orgRole: Role | null };

export type CallerFacts =
  | { kind: 'anonymous' }
  /** `scopes`: an OAuth token acting for the user, capped by what its grant allows. */
  | ({ kind: 'user'; scopes?: readonly OAuthScope[] } & UserFacts)
  | {
      kind: 'agent';
      keyRole: KeyRole;
      /** The key reads, comments and suggests, and nothing else (docs/SUGGESTIONS.md). */
      suggestOnly?: boolean;
      keyScopeWorkspaceId: string | null;
      membershipRole: Role | null;
      /** The owning user's standing in this workspace: unscoped keys inherit through it. */
      owner: UserFacts;
    };

/**
 * Where access comes from. `member`: a membership row. `org`: a virtual
 * editor through org visibility. `inherited`: an agent reaching through its
 * owner. `public`: anyone's read of a public or unlisted workspace.
 */
export type Basis = 'member' | 'org' | 'inherited' | 'public' | 'none';
export type WorkspaceAccess = { role: Role | null; basis: Basis; scopes?: readonly OAuthScope[]; suggestOnly?: true };

const NO_ACCESS: WorkspaceAccess = { role: null, basis: 'none' };

function publicRead(workspace: WorkspaceFacts): WorkspaceAccess {
  const open = workspace.visibility === 'public' || workspace.visibility === 'unlisted';
  return open && !workspace.archivedAt ? { role: 'viewer', basis: 'public' } : NO_ACCESS;
}

function userAccess(user: UserFacts, workspace: WorkspaceFacts): WorkspaceAccess {
  if (user.membershipRole) return { role: user.membershipRole, basis: 'member' };
  if (workspace.visibility === 'org' && user.orgRole) return { role: 'editor', basis: 'org' };
  return publicRead(workspace);
}

export function workspaceAccess(caller: CallerFacts, workspace: WorkspaceFacts): WorkspaceAccess {
  switch (caller.kind) {
    case 'anonymous':
      return publicRead(workspace);
    case 'user': {
      const access = userAccess(caller, workspace);
      return caller.scopes && access.basis !== 'none' ? { ...access, scopes: caller.scopes } : access;
    }
    case 'agent': {
      const access = agentAccess(caller, workspace);
      return caller.suggestOnly && access.basis !== 'none' && access.basis !== 'public' ? { ...access, suggestOnly: true } : access;
    }
  }
}

function agentAccess(caller: Extract<CallerFacts, { kind: 'agent' }>, workspace: WorkspaceFacts): WorkspaceAccess {
  if (caller.keyScopeWorkspaceId && caller.keyScopeWorkspaceId !== workspace.id) return NO_ACCESS;
  let inherited: Role | null = null;
  if (!caller.keyScopeWorkspaceId) {
    const owner = userAccess(caller.owner, workspace);
    if (owner.basis === 'member' || owner.basis === 'org') inherited = lowerRole(owner.role!, caller.keyRole);
  }
  if (caller.membershipRole) {
    // The agent's own row (a scoped key's enrolment) never lowers what an
    // unscoped key reaches through its owner: removing the row would
    // otherwise raise the key. The row still makes it a member (pins).
    const own = lowerRole(caller.membershipRole, caller.keyRole);
    return { role: inherited && !roleAtLeast(own, inherited) ? inherited : own, basis: 'member' };
  }
  if (inherited) return { role: inherited, basis: 'inherited' };
  return publicRead(workspace);
}

/** Actions a non-member may take on a public or unlisted workspace. */
function publicCan(action: WorkspaceAction, workspace: WorkspaceFacts): boolean {
  if (action === 'read') return true;
  if (action === 'read_comments') return workspace.commentsOnPublicShare;
  return false;
}

export function can(access: WorkspaceAccess, action: WorkspaceAction, workspace: WorkspaceFacts): boolean {
  if (access.basis === 'none' || !access.role) return false;
  if (access.scopes && !scopeAllows(access.scopes, { workspace: action })) return false;
  if (access.suggestOnly && !suggestOnlyAllows(action)) return false;
  if (access.basis === 'public') return publicCan(action, workspace);
  // Pins are stored on the membership row; virtual members have none.
  if (action === 'pin' && access.basis !== 'member') return false;
  return roleCan(access.role, action);
}

const READS: ReadonlySet<WorkspaceAction> = new Set(['read', 'read_comments', 'read_files', 'read_versions']);

/**
 * The one gate every workspace route calls. Invisible workspaces are 404 so
 * existence is not revealed; visible but not permitted is 403; a write to an
 * archived workspace is 409 until it is unarchived.
 */
export function authorize(caller: CallerFacts, workspace: WorkspaceFacts, action: WorkspaceAction): WorkspaceAccess {
  const access = workspaceAccess(caller, workspace);
  if (access.basis === 'none') throw errors.notFound('Workspace');
  if (!can(access, action, workspace)) throw forbiddenFor(action, access);
  if (workspace.archivedAt && !READS.has(action) && action !== 'archive') {
    throw errors.conflict('This workspace is archived; unarchive it before changing it.');
  }
  return access;
}

function forbiddenFor(action: WorkspaceAction, access: WorkspaceAccess): ApiError {
  if (access.scopes && !scopeAllows(access.scopes, { workspace: action })) return scopeForbidden(access.scopes, { workspace: action });
  if (access.suggestOnly && !suggestOnlyAllows(action)) return suggestOnlyForbidden(action);
  if (action === 'pin' && access.basis !== 'member') {
    return errors.forbidden('Only members with a membership row can pin; access through org visibility or an owner does not pin.');
  }
  if (access.basis === 'public' && action === 'read_files') {
    return errors.forbidden('Files are visible to members of this workspace only; share a file with a share link instead.');
  }
  if (access.basis === 'public') return errors.forbidden('Writes need membership in this workspace.');
  return errors.forbidden(`Your role (${access.role}) does not allow this action (${action}).`);
}

/** Writes a suggest-only key sends with `mode: "suggest"` instead (docs/SUGGESTIONS.md). */
const SUGGESTIBLE: ReadonlySet<WorkspaceAction> = new Set(['write_rows', 'edit_doc']);

function suggestOnlyForbidden(action: WorkspaceAction | OrgAction): ApiError {
  const instead = SUGGESTIBLE.has(action as WorkspaceAction)
    ? ': send the write with `mode: "suggest"` and an editor will accept or reject it'
    : '; a person with the right role can';
  return errors.forbidden(`This key may only read, comment and suggest changes (suggestOnly), not take this action (${action})${instead}.`);
}

/**
 * A caller's facts for one organisation: the person's org role (for a key,
 * its owner's), and the key or OAuth token it calls with.
 */
export type OrgCallerFacts = {
  orgRole: Role | null;
  key?: { role: KeyRole; scoped: boolean; suggestOnly: boolean };
  scopes?: readonly OAuthScope[];
};

/** `orgRole`: the org role of the person behind `actor` (the user, or the key's owner). */
export function orgCallerFacts(actor: Actor, orgRole: Role | null): OrgCallerFacts {
  const key = actor.key && { role: actor.key.role, scoped: actor.key.scopeWorkspaceId !== null, suggestOnly: actor.key.suggestOnly };
  return { orgRole, ...(key ? { key } : {}), ...(actor.oauth ? { scopes: actor.oauth.scopes } : {}) };
}

/** The role a caller acts with in an organisation: a key its owner's capped by its own; none for a key scoped to one workspace. */
export function orgRoleOf(caller: OrgCallerFacts): Role | null {
  if (!caller.key) return caller.orgRole;
  if (caller.key.scoped || !caller.orgRole) return null;
  return lowerRole(caller.orgRole, caller.key.role);
}

/**
 * The one gate of organisation routes: no standing is 404 (existence is not
 * revealed), then the role's table, the key's lists and the token's scopes
 * must each allow the action (403).
 */
export function authorizeOrg(caller: OrgCallerFacts, action: OrgAction): Role {
  const role = orgRoleOf(caller);
  if (!role) throw errors.notFound('Organisation');
  if (!orgRoleCan(role, action)) throw errors.forbidden(`Your organisation role (${role}) does not allow this action (${action}).`);
  if (caller.key && !keyAllowsOrg(caller.key, action)) {
    if (caller.key.suggestOnly) throw suggestOnlyForbidden(action);
    throw errors.forbidden(`This key's role (${caller.key.role}) does not allow this organisation action (${action}).`);
  }
  if (caller.scopes && !scopeAllows(caller.scopes, { org: action })) throw scopeForbidden(caller.scopes, { org: action });
  return role;
}

/**
 * Creating a workspace acts in the caller's own organisation, which a key
 * scoped to one workspace knows of: it is refused (403) rather than hidden.
 */
export function authorizeWorkspaceCreation(caller: OrgCallerFacts): Role {
  if (caller.key?.scoped) throw errors.forbidden('A key scoped to one workspace cannot create workspaces.');
  return authorizeOrg(caller, 'create_workspaces');
}

/** What a sync connection may send to one document: nothing (read-only), any change its role allows, or suggestions only (each update checked). */
export type SyncRights = { read: boolean; write: boolean; suggest: boolean };

/**
 * The sync connection gate's question, answered by the same `can` as REST:
 * writing a table document is `write_rows`, a doc or html page `edit_doc`;
 * a connection that may suggest but not write sends suggestions only (html
 * pages have none: a suggester reads them). Archived workspaces are read.
 */
export function syncRights(access: WorkspaceAccess, workspace: WorkspaceFacts, kind: DocumentKind): SyncRights {
  const read = can(access, 'read', workspace);
  const open = read && !workspace.archivedAt;
  const write = open && can(access, kind === 'tables' ? 'write_rows' : 'edit_doc', workspace);
  const suggest = open && !write && kind !== 'html' && can(access, 'suggest', workspace);
  return { read, write, suggest };
}

function scopeForbidden(scopes: readonly OAuthScope[], action: { workspace: WorkspaceAction } | { org: OrgAction }): ApiError {
  const needed = OAUTH_SCOPES.find((scope) => scopeAllows([scope], action));
  const name = 'workspace' in action ? action.workspace : action.org;
  return errors.forbidden(`This token's scope (${scopes.join(' ')}) does not allow this action (${name}); it needs the "${needed}" scope.`);
}
