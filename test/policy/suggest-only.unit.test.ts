import { describe, expect, it } from 'vitest';
import { authorize, can, SUGGEST_ONLY_DENIED, WORKSPACE_ACTIONS, workspaceAccess, type CallerFacts, type WorkspaceFacts } from '../../src/policy/index';
import { ApiError } from '../../src/errors';

/** A suggest-only key (issue 25): its role's reads and suggestions, none of its direct content writes. */

const workspace: WorkspaceFacts = { id: 'ws_1', orgId: 'org_1', visibility: 'private', archivedAt: null, commentsOnPublicShare: false };

function agent(suggestOnly: boolean): CallerFacts {
  return { kind: 'agent', keyRole: 'editor', keyScopeWorkspaceId: 'ws_1', suggestOnly, membershipRole: 'editor', owner: { membershipRole: 'owner', orgRole: 'owner' } };
}

describe('a suggest-only key', () => {
  it('may do what its role allows except write content directly; it may suggest', () => {
    const access = workspaceAccess(agent(true), workspace);
    const plain = workspaceAccess(agent(false), workspace);
    for (const action of WORKSPACE_ACTIONS) {
      const expected = can(plain, action, workspace) && !SUGGEST_ONLY_DENIED.has(action);
      expect(can(access, action, workspace), action).toBe(expected);
    }
    expect(can(access, 'suggest', workspace)).toBe(true);
    expect(can(access, 'read', workspace)).toBe(true);
    expect(can(access, 'edit_doc', workspace)).toBe(false);
    expect(can(access, 'write_rows', workspace)).toBe(false);
    expect(can(access, 'decide_suggestions', workspace)).toBe(false);
    // Runs (issue 35): a suggest-only key's suggestions join runs of its own, and it reverts none.
    expect(can(access, 'start_runs', workspace)).toBe(true);
    expect(can(access, 'revert_runs', workspace)).toBe(false);
  });

  it('is refused with 403 forbidden naming suggestions', () => {
    let error: unknown;
    try {
      authorize(agent(true), workspace, 'edit_doc');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(403);
    expect((error as ApiError).message).toContain('mode: "suggest"');
  });

  it('does not reach a workspace its key does not (suggesting is no way in)', () => {
    const other = { ...workspace, id: 'ws_2' };
    expect(workspaceAccess(agent(true), other).basis).toBe('none');
  });
});
