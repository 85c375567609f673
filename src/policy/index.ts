import { ApiError, errors } from '../errors';
import type { Role, Visibility } from '../model/roles';
import {
  lowerRole,
  OAUTH_SCOPES,
  orgRoleCan,
  roleAtLeast,
  roleCan,
  scopeAllows,
  type OAuthScope,
  type OrgAction,
  type WorkspaceAction,
} from '../model/permissions';

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

export type KeyRole = Exclude<Role, 'owner'>;

export type UserFacts = { membershipRole: Role | null; orgRole: Role | null };

export type CallerFacts =
  | { kind: 'anonymous' }
  /** `scopes`: an OAuth token acting for the user, capped by what its grant allows. */
  | ({ kind: 'user'; scopes?: readonly OAuthScope[] } & UserFacts)
  | {
      kind: 'agent';
      keyRole: KeyRole;
      /** The key may only suggest changes to docs and rows (docs/SUGGESTIONS.md). */
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

/**
 * What a suggest-only key may not do although its role may: change content
 * or structure directly. It proposes instead (`suggest`), and someone with
 * the editor role decides.
 */
export const SUGGEST_ONLY_DENIED: ReadonlySet<WorkspaceAction> = new Set([
  'write_rows',
  'edit_columns',
  'write_views',
  'edit_doc',
  'manage_surfaces',
  'write_versions',
  'decide_suggestions',
  'revert_runs',
]);

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
  if (access.suggestOnly && SUGGEST_ONLY_DENIED.has(action)) return false;
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
  if (access.suggestOnly && SUGGEST_ONLY_DENIED.has(action)) {
    return errors.forbidden(`This key may only suggest changes (suggestOnly), not take this action (${action}): send the write with \`mode: "suggest"\` and an editor will accept or reject it.`);
  }
  if (action === 'pin' && access.basis !== 'member') {
    return errors.forbidden('Only members with a membership row can pin; access through org visibility or an owner does not pin.');
  }
  if (access.basis === 'public' && action === 'read_files') {
    return errors.forbidden('Files are visible to members of this workspace only; share a file with a share link instead.');
  }
  if (access.basis === 'public') return errors.forbidden('Writes need membership in this workspace.');
  return errors.forbidden(`Your role (${access.role}) does not allow this action (${action}).`);
}

/** `scopes`: the caller's OAuth scopes (`actor.oauth?.scopes`); absent for sessions and keys. */
export function authorizeOrg(orgRole: Role | null, action: OrgAction, scopes?: readonly OAuthScope[]): Role {
  if (!orgRole) throw errors.notFound('Organisation');
  if (!orgRoleCan(orgRole, action)) throw errors.forbidden(`Your organisation role (${orgRole}) does not allow this action (${action}).`);
  if (scopes && !scopeAllows(scopes, { org: action })) throw scopeForbidden(scopes, { org: action });
  return orgRole;
}

function scopeForbidden(scopes: readonly OAuthScope[], action: { workspace: WorkspaceAction } | { org: OrgAction }): ApiError {
  const needed = OAUTH_SCOPES.find((scope) => scopeAllows([scope], action));
  const name = 'workspace' in action ? action.workspace : action.org;
  return errors.forbidden(`This token's scope (${scopes.join(' ')}) does not allow this action (${name}); it needs the "${needed}" scope.`);
}
