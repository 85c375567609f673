import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_ACTIONS } from '../../src/policy/index';
import type { TestResponse } from '../helpers/app';
import { buildMatrix, expectOk, type Matrix, type MatrixPrincipal, type MatrixWorkspace } from './fixtures';
import { expectedOutcome, STATUS_OF, type SpecAction } from './spec-rules';
import { insertRun } from '../../src/persistence/runs';

/**
 * The permission matrix through real HTTP: every principal kind × every
 * workspace (four visibilities, live and archived) × one representative
 * route per workspace action, each answered with the status the rules in
 * ./spec-rules.ts predict. Successful requests are idempotent or undone, so
 * the order of the cells does not matter.
 */

type Probe = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path(ws: MatrixWorkspace): string;
  body?(ws: MatrixWorkspace): unknown;
  /** Puts back what a successful request changed. */
  undo?(ws: MatrixWorkspace, principal: MatrixPrincipal): Promise<void>;
  /** The status of an allowed request when it is not 200 (a suggestion is 202). */
  allowedStatus?: number;
};

let m: Matrix;
const runOf = new Map<string, string>();
let unique = 0;
const next = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;
const base = (ws: MatrixWorkspace) => `/api/workspaces/${ws.slug}`;

/**
 * One route per action, each needing exactly that action (see the route's
 * `resolveWorkspace(…, action)`). Actions without a route yet are listed in
 * NOT_ROUTED below, with the issue that brings them.
 */
const PROBES: Partial<Record<SpecAction, Probe>> = {
  read: { method: 'GET', path: (ws) => `${base(ws)}/rows?limit=1` },
  write_rows: { method: 'POST', path: (ws) => `${base(ws)}/rows`, body: () => ({ data: { title: 'matrix row' } }) },
  edit_columns: {
    method: 'POST',
    path: (ws) => `${base(ws)}/columns`,
    body: () => ({ column: { key: `m_${next()}`, label: 'Matrix', type: 'text' } }),
  },
  write_views: {
    method: 'POST',
    path: (ws) => `${base(ws)}/views`,
    body: () => ({ name: 'Matrix view' }),
    undo: async (ws) => {
      const listed = await m.t.request('GET', `${base(ws)}/views`, { as: m.alice.as });
      expect(listed.status, listed.text).toBe(200);
      for (const view of listed.body.views) await expectOk(await m.t.request('DELETE', `${base(ws)}/views/${view.id}`, { as: m.alice.as }));
    },
  },
  // A row suggestion: every matrix workspace has a table surface. Undone by rejecting it.
  suggest: {
    method: 'POST',
    path: (ws) => `${base(ws)}/rows?mode=suggest`,
    body: () => ({ data: { title: 'matrix suggestion' } }),
    allowedStatus: 202,
    undo: async (ws) => {
      const rejected = await m.t.request('POST', `${base(ws)}/suggestions/reject-all`, { as: m.alice.as });
      expect(rejected.status, rejected.text).toBe(200);
    },
  },
  // Nothing is open: allowed callers decide nothing.
  decide_suggestions: { method: 'POST', path: (ws) => `${base(ws)}/suggestions/reject-all` },
  edit_doc: { method: 'PUT', path: (ws) => `${base(ws)}/doc`, body: () => ({ markdown: 'The matrix doc.' }) },
  read_files: { method: 'GET', path: (ws) => `${base(ws)}/files?surfaceSlug=files&limit=1` },
  // The folder keeps its name: allowed callers change nothing.
  write_files: { method: 'PATCH', path: (ws) => `${base(ws)}/files/folders/${ws.filesFolderId}`, body: () => ({ name: 'Matrix folder' }) },
  manage_surfaces: {
    method: 'POST',
    path: (ws) => `${base(ws)}/surfaces`,
    body: () => ({ kind: 'html', slug: `m-${next()}`, name: 'Matrix page' }),
  },
  // Same name and same visibility: allowed callers change nothing.
  update_settings: { method: 'PATCH', path: base, body: (ws) => ({ name: ws.name }) },
  share: { method: 'PATCH', path: base, body: (ws) => ({ visibility: ws.visibility }) },
  // carol keeps her role: only whether the owner may change it is probed.
  manage_members: { method: 'PATCH', path: (ws) => `${base(ws)}/members/${m.carol.userId}`, body: () => ({ role: 'commenter' }) },
  archive: {
    method: 'DELETE',
    path: base,
    undo: async (ws) => {
      if (ws.archived) return; // archiving an archived workspace changes nothing
      const back = await m.t.request('POST', `${base(ws)}/unarchive`, { as: m.alice.as });
      expect(back.status, back.text).toBe(200);
      expect(back.body.archivedAt).toBeNull();
    },
  },
  read_comments: { method: 'GET', path: (ws) => `${base(ws)}/comments?limit=1` },
  comment: {
    method: 'POST',
    path: (ws) => `${base(ws)}/comments`,
    body: () => ({ target: { type: 'workspace' }, body: 'A matrix comment' }),
    undo: async (ws, principal) => {
      const mine = await m.t.request('GET', `${base(ws)}/comments?author=me&order=newest&limit=1`, { as: principal.as });
      expect(mine.status, mine.text).toBe(200);
      const removed = await m.t.request('DELETE', `/api/comments/${mine.body.comments[0].id}`, { as: principal.as });
      expect(removed.status, removed.text).toBe(200);
    },
  },
  // A loopback port nobody listens on, for an event the matrix never causes: nothing is ever sent.
  manage_webhooks: {
    method: 'POST',
    path: (ws) => `${base(ws)}/webhooks`,
    body: () => ({ url: 'http://127.0.0.1:9/matrix', events: ['doc.mention_added'] }),
    undo: async (ws) => {
      const listed = await m.t.request('GET', `${base(ws)}/webhooks`, { as: m.alice.as });
      expect(listed.status, listed.text).toBe(200);
      for (const hook of listed.body.webhooks) await expectOk(await m.t.request('DELETE', `${base(ws)}/webhooks/${hook.id}`, { as: m.alice.as }));
    },
  },
  read_versions: { method: 'GET', path: (ws) => `${base(ws)}/surfaces/${ws.tableSurfaceId}/versions?limit=1` },
  // A named version more changes nothing any other cell reads.
  write_versions: { method: 'POST', path: (ws) => `${base(ws)}/surfaces/${ws.tableSurfaceId}/versions`, body: () => ({ name: 'Matrix version' }) },
  // Runs (issue 35): starting one's own; a preview of reverting alice's run of the workspace, which changes nothing.
  start_runs: { method: 'POST', path: (ws) => `${base(ws)}/runs`, body: () => ({ name: 'Matrix run' }), allowedStatus: 201 },
  revert_runs: { method: 'POST', path: (ws) => `${base(ws)}/runs/${runOf.get(ws.slug)}/revert?dryRun=true` },
  pin: {
    method: 'POST',
    path: (ws) => `${base(ws)}/pin`,
    undo: async (ws, principal) => {
      const unpinned = await m.t.request('DELETE', `${base(ws)}/pin`, { as: principal.as });
      expect(unpinned.status, unpinned.text).toBe(200);
    },
  },
};

/**
 * Actions no route takes yet, each with the part of SPEC that brings its
 * routes; the test below fails as soon as such a route is registered, so it
 * cannot land without joining the matrix. Empty: every action has a route.
 */
const NOT_ROUTED: Partial<Record<SpecAction, { routes: Array<{ method: string; url: string }>; note: string }>> = {};

/** The status a principal should get for one cell. */
function expectedStatus(principal: MatrixPrincipal, ws: MatrixWorkspace, action: SpecAction, probe: Probe): number {
  // Every workspace write route needs credentials: without any it is 401 before the workspace is looked up.
  if (!principal.as && probe.method !== 'GET') return 401;
  const outcome = expectedOutcome(principal.spec(ws), { visibility: ws.visibility, archived: ws.archived, commentsOnPublicShare: false }, action);
  // Archiving needs an elevated browser session: a key the policy allows still gets 403 (SPEC "Authentication" 7; API-DECISIONS).
  if (action === 'archive' && outcome === 'allow' && !principal.user) return 403;
  return outcome === 'allow' ? (probe.allowedStatus ?? 200) : STATUS_OF[outcome];
}

/**
 * Keeps the failed-auth throttle (50 × 401/403 per IP in 10 minutes, which
 * then answers unauthenticated callers 429) out of the way: the clock jumps
 * past the window before an anonymous request once 40 failures piled up.
 */
let failuresInWindow = 0;
function beforeRequest(principal: MatrixPrincipal) {
  if (!principal.as && failuresInWindow >= 40) {
    m.clock.advance(11 * 60_000);
    failuresInWindow = 0;
  }
}
function afterResponse(res: TestResponse) {
  if (res.status === 401 || res.status === 403) failuresInWindow++;
}

/**
 * Archiving needs a `workspace_delete` grant (15 minutes, sliding). The
 * clock moves, so grants are renewed when older than 10 minutes: at once
 * while the session is fresh, else with the mailed code.
 */
const elevatedAt = new Map<string, number>();
async function ensureElevated(principal: MatrixPrincipal) {
  const user = principal.user!;
  const now = m.clock.now().getTime();
  if (now - (elevatedAt.get(user.userId) ?? -Infinity) < 10 * 60_000) return;
  const asked = await m.t.request('POST', '/api/me/elevate', { as: user.as, body: { scope: 'workspace_delete' } });
  expect(asked.status, asked.text).toBe(200);
  if (asked.body.status === 'code_sent') {
    const mail = (await m.t.outbox()).filter((x) => x.to === user.email).at(-1)!;
    const code = /(\d{6})/.exec(mail.subject)![1];
    await expectOk(await m.t.request('POST', '/api/me/elevate', { as: user.as, body: { scope: 'workspace_delete', code } }));
  }
  elevatedAt.set(user.userId, now);
}

let cells = 0;
let started = 0;
const tally = new Map<number, number>();

beforeAll(async () => {
  m = await buildMatrix();
  // A run of alice's in every workspace, archived ones too (written directly: an archived workspace starts none).
  for (const ws of m.workspaces) {
    const run = await insertRun(m.t.services.db, {
      id: `run_matrix_${ws.id}`,
      workspaceId: ws.id,
      name: 'alice at work',
      principal: { principalType: 'user', id: m.alice.userId },
      automatic: false,
      actorKey: null,
      reverts: null,
      startedAt: new Date(),
    });
    runOf.set(ws.slug, run.id);
  }
  started = Date.now();
}, 180_000); // dozens of sign-ins, workspaces, surfaces and keys over HTTP: slow on a loaded machine
afterAll(async () => {
  console.info(`policy matrix over HTTP: ${cells} cells in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries([...tally].sort()))}`);
  await m?.close();
});

describe('the permission matrix over HTTP', () => {
  it('has a probe for every action that has a route, and the others have none yet', () => {
    for (const action of WORKSPACE_ACTIONS) {
      const routed = action in PROBES;
      const pending = NOT_ROUTED[action];
      expect(routed !== Boolean(pending), `${action}: exactly one of PROBES / NOT_ROUTED`).toBe(true);
      for (const route of pending?.routes ?? []) {
        expect(m.t.app.hasRoute(route as Parameters<typeof m.t.app.hasRoute>[0]), `${route.method} ${route.url} exists: add ${action} to PROBES (${pending!.note})`).toBe(false);
      }
    }
  });

  it('builds every principal kind the issue names', () => {
    expect(new Set(m?.principals.map((p) => p.kind))).toEqual(
      new Set([
        'anonymous',
        'user member',
        'user org-member-only',
        'user stranger',
        'agent with viewer key scoped to one workspace',
        'agent with commenter key scoped to one workspace',
        'agent with editor key scoped to one workspace',
        'agent with unscoped key inheriting via owner',
        'agent with unscoped key inheriting via owner (and an own lower enrolment)',
      ]),
    );
  });

  it('walks every (principal, workspace, action) cell', async () => {
    const mismatches: string[] = [];
    let expectedCells = 0;
    for (const principal of m.principals) {
      const targets = principal.probeOn(m.workspaces);
      expectedCells += targets.length * Object.keys(PROBES).length;
      for (const ws of targets) {
        for (const action of WORKSPACE_ACTIONS) {
          const probe = PROBES[action];
          if (!probe) continue;
          const expected = expectedStatus(principal, ws, action, probe);
          if (action === 'archive' && principal.user) await ensureElevated(principal);
          beforeRequest(principal);
          const res = await m.t.request(probe.method, probe.path(ws), { as: principal.as, ...(probe.body ? { body: probe.body(ws) } : {}) });
          afterResponse(res);
          cells++;
          tally.set(res.status, (tally.get(res.status) ?? 0) + 1);
          if (res.status !== expected) {
            mismatches.push(`${principal.name} | ${ws.slug} | ${action} (${probe.method} ${probe.path(ws)}): expected ${expected}, got ${res.status} ${res.body?.error?.code ?? ''}`);
          } else if (expected === (probe.allowedStatus ?? 200) && probe.undo) {
            await probe.undo(ws, principal);
          }
        }
      }
    }
    expect(mismatches, `${mismatches.length} of ${cells} cells differ`).toEqual([]);
    expect(cells).toBe(expectedCells);
  }, 300_000); // about 2,600 requests: minutes on a loaded 2-core machine

  it('left every workspace as it was (names, visibility, archive state, carol’s role)', async () => {
    for (const ws of m.workspaces) {
      const detail = await expectOk(await m.t.request('GET', base(ws), { as: m.alice.as }));
      expect(detail.body).toMatchObject({ name: ws.name, visibility: ws.visibility, pinnedAt: null });
      expect(detail.body.archivedAt === null).toBe(!ws.archived);
      const members = await expectOk(await m.t.request('GET', `${base(ws)}/members`, { as: m.alice.as }));
      expect(members.body.members.find((x: { id: string }) => x.id === m.carol.userId)).toMatchObject({ role: 'commenter' });
    }
  });
});
