import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import { authorize, authorizeOrg, can, ORG_ACTIONS, roleCan, orgRoleCan, WORKSPACE_ACTIONS, workspaceAccess, type OAuthScope, type WorkspaceFacts } from '../../src/policy/index';
import type { Role } from '../../src/persistence/schema';

/**
 * OAuth scopes cap a token's user, cell by cell: every role × every set of
 * granted scopes × every action, against the rules of docs/OAUTH.md written
 * out independently here.
 */

const ROLES: Role[] = ['owner', 'editor', 'commenter', 'viewer'];
const SCOPE_SETS: OAuthScope[][] = [['read'], ['read', 'write'], ['read', 'write', 'admin'], ['admin'], ['write']];

const READ_ACTIONS = new Set(['read', 'read_comments', 'read_files', 'read_versions']);
const WRITE_ACTIONS = new Set([
  ...READ_ACTIONS,
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
  // Runs (docs/RUNS.md): starting one's own and reverting are writes a `write` token makes for its user.
  'start_runs',
  'revert_runs',
]);

function scopeOpens(scopes: OAuthScope[], action: string): boolean {
  if (scopes.includes('admin')) return true;
  if (scopes.includes('write')) return WRITE_ACTIONS.has(action);
  return READ_ACTIONS.has(action);
}

function orgScopeOpens(scopes: OAuthScope[], action: string): boolean {
  if (scopes.includes('admin')) return true;
  // Asking support is open to a read-scoped token, as reading the organisation was all it needed before it was its own action.
  if (scopes.includes('write')) return action === 'read_org' || action === 'contact_support' || action === 'create_workspaces';
  return action === 'read_org' || action === 'contact_support';
}

const workspace: WorkspaceFacts = { id: 'ws', orgId: 'org', visibility: 'private', archivedAt: null, commentsOnPublicShare: false };

describe('OAuth scopes in the permission matrix', () => {
  for (const role of ROLES) {
    for (const scopes of SCOPE_SETS) {
      it(`a ${role} through a token scoped "${scopes.join(' ')}"`, () => {
        for (const action of WORKSPACE_ACTIONS) {
          const facts = { kind: 'user' as const, membershipRole: role, orgRole: null, scopes };
          const expected = roleCan(role, action) && scopeOpens(scopes, action);
          expect(can(workspaceAccess(facts, workspace), action, workspace), `${action}`).toBe(expected);
          if (!expected) {
            expect(() => authorize(facts, workspace, action)).toThrow(ApiError);
            if (roleCan(role, action)) expect(() => authorize(facts, workspace, action)).toThrow(/scope/);
          }
        }
        for (const action of ORG_ACTIONS) {
          const expected = orgRoleCan(role, action) && orgScopeOpens(scopes, action);
          const decide = () => authorizeOrg({ orgRole: role, scopes }, action);
          if (expected) expect(decide(), action).toBe(role);
          else expect(decide, action).toThrow(ApiError);
        }
      });
    }
  }

  it('a token never reaches what its user does not: no membership is still 404', () => {
    const facts = { kind: 'user' as const, membershipRole: null, orgRole: null, scopes: ['read', 'write', 'admin'] as OAuthScope[] };
    expect(() => authorize(facts, workspace, 'read')).toThrow(/not found/);
  });

  it('public workspaces read the same with or without a token', () => {
    const open = { ...workspace, visibility: 'public' as const };
    const facts = { kind: 'user' as const, membershipRole: null, orgRole: null, scopes: ['read'] as OAuthScope[] };
    expect(can(workspaceAccess(facts, open), 'read', open)).toBe(true);
    expect(can(workspaceAccess(facts, open), 'write_rows', open)).toBe(false);
  });
});
