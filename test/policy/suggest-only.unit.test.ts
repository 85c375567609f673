import { describe, expect, it } from 'vitest';
import { authorize, authorizeOrg, can, ORG_ACTIONS, syncRights, WORKSPACE_ACTIONS, workspaceAccess, type CallerFacts, type WorkspaceFacts } from '../../src/policy/index';
import { ApiError } from '../../src/errors';

/**
 * A suggest-only key (issue 25) reads, comments and suggests, and nothing
 * else (issue 33): its rights are a list, written here from
 * docs/SUGGESTIONS.md, so an action the policy learns later is refused to
 * it until someone adds it to the list.
 */

const MAY = ['read', 'read_comments', 'read_files', 'read_versions', 'comment', 'suggest', 'start_runs'];

const workspace: WorkspaceFacts = { id: 'ws_1', orgId: 'org_1', visibility: 'private', archivedAt: null, commentsOnPublicShare: false };

function agent(suggestOnly: boolean): CallerFacts {
  return { kind: 'agent', keyRole: 'editor', keyScopeWorkspaceId: 'ws_1', suggestOnly, membershipRole: 'editor', owner: { membershipRole: 'owner', orgRole: 'owner' } };
}

function refusal(decide: () => unknown): ApiError {
  try {
    decide();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a refusal');
}

describe('a suggest-only key', () => {
  it('may take, of what its role allows, only the actions of its list', () => {
    const access = workspaceAccess(agent(true), workspace);
    const plain = workspaceAccess(agent(false), workspace);
    for (const action of WORKSPACE_ACTIONS) {
      expect(can(access, action, workspace), action).toBe(can(plain, action, workspace) && MAY.includes(action));
    }
    // An editor key without the restriction shares, manages webhooks and pins; this one does none of it.
    for (const action of ['share', 'manage_webhooks', 'update_settings', 'write_files', 'archive', 'pin'] as const) {
      expect(can(plain, action, workspace), action).toBe(true);
      expect(can(access, action, workspace), action).toBe(false);
    }
    // Runs (issue 35): a suggest-only key's suggestions join runs of its own, and it reverts none.
    expect(can(access, 'start_runs', workspace)).toBe(true);
    expect(can(access, 'revert_runs', workspace)).toBe(false);
  });

  it('is refused with 403: a content write names `mode: "suggest"`, anything else says what the key may do', () => {
    const write = refusal(() => authorize(agent(true), workspace, 'edit_doc'));
    expect(write.statusCode).toBe(403);
    expect(write.message).toContain('mode: "suggest"');
    const share = refusal(() => authorize(agent(true), workspace, 'share'));
    expect(share.statusCode).toBe(403);
    expect(share.message).toContain('may only read, comment and suggest');
  });

  it('in its owner’s organisation it reads, and nothing else', () => {
    const key = { role: 'editor' as const, scoped: false, suggestOnly: true };
    for (const action of ORG_ACTIONS) {
      if (action === 'read_org') expect(authorizeOrg({ orgRole: 'owner', key }, action)).toBe('editor');
      else expect(refusal(() => authorizeOrg({ orgRole: 'owner', key }, action)).statusCode, action).toBe(403);
    }
  });

  it('over sync (the connection gate asks `syncRights`): suggestions only on tables and docs, read-only on html pages and archived workspaces', () => {
    const access = workspaceAccess(agent(true), workspace);
    expect(syncRights(access, workspace, 'tables')).toEqual({ read: true, write: false, suggest: true });
    expect(syncRights(access, workspace, 'doc')).toEqual({ read: true, write: false, suggest: true });
    expect(syncRights(access, workspace, 'html')).toEqual({ read: true, write: false, suggest: false });
    const archived = { ...workspace, archivedAt: new Date('2025-01-01T00:00:00Z') };
    expect(syncRights(workspaceAccess(agent(true), archived), archived, 'doc')).toEqual({ read: true, write: false, suggest: false });
    // The same key without the restriction writes.
    expect(syncRights(workspaceAccess(agent(false), workspace), workspace, 'tables')).toEqual({ read: true, write: true, suggest: false });
  });

  it('does not reach a workspace its key does not (suggesting is no way in)', () => {
    const other = { ...workspace, id: 'ws_2' };
    expect(workspaceAccess(agent(true), other).basis).toBe('none');
  });
});
