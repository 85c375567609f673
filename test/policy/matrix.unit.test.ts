import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import {
  authorize,
  authorizeOrg,
  ORG_ACTIONS,
  WORKSPACE_ACTIONS,
  type CallerFacts,
  type KeyRole,
  type WorkspaceFacts,
} from '../../src/policy/index';
import type { Role, Visibility } from '../../src/persistence/schema';
import {
  expectedKeyOrgOutcome,
  expectedOrgOutcome,
  expectedOutcome,
  SPEC_ORG_ACTIONS,
  SPEC_WORKSPACE_ACTIONS,
  type SpecCaller,
  type SpecOutcome,
} from './spec-rules';

/**
 * The whole permission matrix, cell by cell, against src/policy with no I/O:
 * every caller fact the policy can be given × every workspace state × every
 * action, compared with the independent rules in ./spec-rules.ts.
 */

const ROLES: Role[] = ['owner', 'editor', 'commenter', 'viewer'];
const ROLES_OR_NONE: Array<Role | null> = [...ROLES, null];
const KEY_ROLES: KeyRole[] = ['editor', 'commenter', 'viewer'];
const VISIBILITIES: Visibility[] = ['private', 'org', 'unlisted', 'public'];

const THIS_WS = 'wsp_this';
const OTHER_WS = 'wsp_other';

type Case = { kind: string; label: string; facts: CallerFacts; spec: SpecCaller };

function userKind(membershipRole: Role | null, orgRole: Role | null): string {
  if (membershipRole) return 'user member';
  return orgRole ? 'user org-member-only' : 'user stranger';
}

/** Every caller the policy can be handed, with its description in the spec's terms. */
function callers(): Case[] {
  const cases: Case[] = [{ kind: 'anonymous', label: 'anonymous', facts: { kind: 'anonymous' }, spec: { kind: 'anonymous' } }];
  for (const membershipRole of ROLES_OR_NONE) {
    for (const orgRole of ROLES_OR_NONE) {
      cases.push({
        kind: userKind(membershipRole, orgRole),
        label: `user row=${membershipRole} org=${orgRole}`,
        facts: { kind: 'user', membershipRole, orgRole },
        spec: { kind: 'user', row: membershipRole, orgMember: orgRole !== null },
      });
    }
  }
  for (const keyRole of KEY_ROLES) {
    for (const scope of ['none', 'this', 'other'] as const) {
      for (const suggestOnly of [false, true]) {
        for (const agentRow of ROLES_OR_NONE) {
          for (const ownerRow of ROLES_OR_NONE) {
            for (const ownerOrg of ROLES_OR_NONE) {
              const key = scope === 'none' ? 'unscoped key' : `${keyRole} key scoped ${scope === 'this' ? 'here' : 'elsewhere'}`;
              cases.push({
                kind: `agent with ${suggestOnly ? 'suggest-only ' : ''}${key}`,
                label: `agent key=${keyRole}${suggestOnly ? ' suggest-only' : ''} scope=${scope} row=${agentRow} owner.row=${ownerRow} owner.org=${ownerOrg}`,
                facts: {
                  kind: 'agent',
                  keyRole,
                  keyScopeWorkspaceId: scope === 'none' ? null : scope === 'this' ? THIS_WS : OTHER_WS,
                  suggestOnly,
                  membershipRole: agentRow,
                  owner: { membershipRole: ownerRow, orgRole: ownerOrg },
                },
                spec: { kind: 'agent', keyRole, scope, suggestOnly, row: agentRow, owner: { row: ownerRow, orgMember: ownerOrg !== null } },
              });
            }
          }
        }
      }
    }
  }
  return cases;
}

function workspaces(): Array<{ label: string; facts: WorkspaceFacts }> {
  const all: Array<{ label: string; facts: WorkspaceFacts }> = [];
  for (const visibility of VISIBILITIES) {
    for (const archived of [false, true]) {
      for (const commentsOnPublicShare of [false, true]) {
        all.push({
          label: `${visibility}${archived ? ' archived' : ''}${commentsOnPublicShare ? ' comments-on-share' : ''}`,
          facts: { id: THIS_WS, orgId: 'org_a', visibility, archivedAt: archived ? new Date('2025-01-01T00:00:00Z') : null, commentsOnPublicShare },
        });
      }
    }
  }
  return all;
}

/** What `authorize` answers, as the outcome names of the rules. */
function actualOutcome(run: () => unknown): SpecOutcome {
  try {
    run();
    return 'allow';
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const byStatus: Record<number, SpecOutcome> = { 403: 'forbidden', 404: 'not_found', 409: 'conflict' };
    const outcome = byStatus[error.statusCode];
    if (!outcome) throw new Error(`unexpected ${error.statusCode} ${error.code}`);
    return outcome;
  }
}

const CALLERS = callers();
const WORKSPACES = workspaces();
const KINDS = [...new Set(CALLERS.map((c) => c.kind))];

describe('the permission matrix (pure policy)', () => {
  it('names the same actions as the rules', () => {
    expect([...WORKSPACE_ACTIONS].sort()).toEqual([...SPEC_WORKSPACE_ACTIONS].sort());
    expect([...ORG_ACTIONS].sort()).toEqual([...SPEC_ORG_ACTIONS].sort());
  });

  it('enumerates every principal kind the issue names', () => {
    expect(KINDS).toEqual(
      expect.arrayContaining([
        'anonymous',
        'user member',
        'user org-member-only',
        'user stranger',
        'agent with viewer key scoped here',
        'agent with commenter key scoped here',
        'agent with editor key scoped here',
        'agent with editor key scoped elsewhere',
        'agent with unscoped key',
        'agent with suggest-only editor key scoped here',
        'agent with suggest-only unscoped key',
      ]),
    );
  });

  it.each(KINDS)('%s: every cell (role × visibility × archived × commentsOnPublicShare × action) matches the rules', (kind) => {
    const mismatches: string[] = [];
    let cells = 0;
    for (const caller of CALLERS.filter((c) => c.kind === kind)) {
      for (const ws of WORKSPACES) {
        const specWs = { visibility: ws.facts.visibility, archived: ws.facts.archivedAt !== null, commentsOnPublicShare: ws.facts.commentsOnPublicShare };
        for (const action of WORKSPACE_ACTIONS) {
          cells++;
          const expected = expectedOutcome(caller.spec, specWs, action);
          const actual = actualOutcome(() => authorize(caller.facts, ws.facts, action));
          if (expected !== actual) mismatches.push(`${caller.label} | ${ws.label} | ${action}: expected ${expected}, policy says ${actual}`);
        }
      }
    }
    expect(cells).toBeGreaterThan(0);
    expect(mismatches.slice(0, 25), `${mismatches.length} of ${cells} cells differ`).toEqual([]);
  });

  it('covers the whole product of the dimensions', () => {
    // 1 anonymous + 5×5 users + 3 key roles × 3 scopes × suggest-only or not × 5 agent rows × 5 owner rows × 5 owner org roles.
    expect(CALLERS).toHaveLength(1 + 25 + 3 * 3 * 2 * 125);
    expect(WORKSPACES).toHaveLength(16);
    expect(CALLERS.length * WORKSPACES.length * WORKSPACE_ACTIONS.length).toBe(801_152); // 22 actions
  });

  it('every ORG_ACTION × org role (and non-members) matches the rules', () => {
    const mismatches: string[] = [];
    for (const role of ROLES_OR_NONE) {
      for (const action of ORG_ACTIONS) {
        const expected = expectedOrgOutcome(role, action);
        const actual = actualOutcome(() => authorizeOrg({ orgRole: role }, action));
        if (expected !== actual) mismatches.push(`org role ${role} | ${action}: expected ${expected}, policy says ${actual}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('every ORG_ACTION × key role × scoped or not × suggest-only or not × the owner\'s org role matches the rules', () => {
    const mismatches: string[] = [];
    let cells = 0;
    for (const role of KEY_ROLES) {
      for (const scoped of [false, true]) {
        for (const suggestOnly of [false, true]) {
          for (const ownerOrg of ROLES_OR_NONE) {
            for (const action of ORG_ACTIONS) {
              cells++;
              const expected = expectedKeyOrgOutcome({ keyRole: role, scoped, suggestOnly }, ownerOrg, action);
              const actual = actualOutcome(() => authorizeOrg({ orgRole: ownerOrg, key: { role, scoped, suggestOnly } }, action));
              if (expected !== actual) mismatches.push(`${role} key${scoped ? ' scoped' : ''}${suggestOnly ? ' suggest-only' : ''} of an org ${ownerOrg} | ${action}: expected ${expected}, policy says ${actual}`);
            }
          }
        }
      }
    }
    expect(cells).toBe(3 * 2 * 2 * 5 * ORG_ACTIONS.length);
    expect(mismatches).toEqual([]);
  });

  it('agrees on a few cells the issue spells out', () => {
    const ws = (visibility: Visibility, archived = false) => ({ visibility, archived, commentsOnPublicShare: false });
    const stranger: SpecCaller = { kind: 'user', row: null, orgMember: false };
    const colleague: SpecCaller = { kind: 'user', row: null, orgMember: true };
    // A non-member gets 404 on a private workspace; an unlisted one is readable but not writable.
    expect(expectedOutcome(stranger, ws('private'), 'read')).toBe('not_found');
    expect(expectedOutcome(stranger, ws('unlisted'), 'read')).toBe('allow');
    expect(expectedOutcome(stranger, ws('unlisted'), 'write_rows')).toBe('forbidden');
    expect(expectedOutcome({ kind: 'anonymous' }, ws('public'), 'read')).toBe('allow');
    // An org-visibility member can edit but cannot pin.
    expect(expectedOutcome(colleague, ws('org'), 'write_rows')).toBe('allow');
    expect(expectedOutcome(colleague, ws('org'), 'pin')).toBe('forbidden');
    // A viewer key is refused every write; a key scoped elsewhere sees nothing.
    const viewerKey: SpecCaller = { kind: 'agent', keyRole: 'viewer', scope: 'this', row: 'viewer', owner: { row: 'owner', orgMember: true } };
    expect(expectedOutcome(viewerKey, ws('private'), 'write_rows')).toBe('forbidden');
    expect(expectedOutcome({ ...viewerKey, scope: 'other' }, ws('public'), 'read')).toBe('not_found');
    // Archived: members read, writes are 409, public reads stop.
    expect(expectedOutcome({ kind: 'user', row: 'editor', orgMember: false }, ws('public', true), 'write_rows')).toBe('conflict');
    expect(expectedOutcome({ kind: 'anonymous' }, ws('public', true), 'read')).toBe('not_found');
  });
});
