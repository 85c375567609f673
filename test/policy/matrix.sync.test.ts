import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';
import { buildMatrix, expectOk, type Matrix, type MatrixPrincipal, type MatrixWorkspace } from './fixtures';
import { expectedOutcome } from './spec-rules';

/**
 * The same matrix over /api/sync: every principal opens every workspace's
 * table document with a real @hocuspocus/provider. It is refused, read-only
 * or writable exactly as the rules predict for `read`, `write_rows` and
 * `suggest`, and an edit from a read-only connection, or a plain edit from a
 * connection that may only suggest, never reaches the server.
 */

/** `suggest-only`: the provider is granted writing (its updates reach the server), each checked to be a suggestion (issue 25). */
type Verdict = 'unauthorized' | 'forbidden' | 'readonly' | 'read-write' | 'suggest-only';

let m: Matrix;
beforeAll(async () => {
  // Hocuspocus logs every refused connection; hundreds are refused here on purpose.
  const log = console.error.bind(console);
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('[onAuthenticate]')) return;
    log(...args);
  });
  m = await buildMatrix();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

function expectedVerdict(principal: MatrixPrincipal, ws: MatrixWorkspace): Verdict {
  // Without a credential a client reads what anyone may read (public and
  // unlisted), read-only, like anonymous REST; elsewhere it is refused.
  const state = { visibility: ws.visibility, archived: ws.archived, commentsOnPublicShare: false };
  const caller = principal.spec(ws);
  // No credential and nothing public to read: the client is told to authenticate.
  if (expectedOutcome(caller, state, 'read') !== 'allow') return principal.as ? 'forbidden' : 'unauthorized';
  // An archived workspace's `write_rows` is 409 over REST: read-only here.
  if (expectedOutcome(caller, state, 'write_rows') === 'allow') return 'read-write';
  return expectedOutcome(caller, state, 'suggest') === 'allow' ? 'suggest-only' : 'readonly';
}

/** What the provider can observe: a suggest-only connection is granted writing like a writer's. */
function grantedAs(expected: Verdict): Verdict {
  return expected === 'suggest-only' ? 'read-write' : expected;
}

/** Waits for the server's answer: a refusal reason, or synced with the scope it granted. */
async function verdictOf(client: SyncClient): Promise<Verdict> {
  const refused = client.authenticationFailed.then((reason) => reason as Verdict);
  const accepted = synced(client, 10_000).then(() => client.provider.authorizedScope as Verdict);
  return Promise.race([refused, accepted]);
}

async function serverRowIds(ws: MatrixWorkspace): Promise<Set<string>> {
  const res = await expectOk(await m.t.request('GET', `/api/workspaces/${ws.slug}/rows?limit=1000`, { as: m.alice.as }));
  return new Set(res.body.rows.map((r: { id: string }) => r.id));
}

describe('the permission matrix over /api/sync', () => {
  it('opens every workspace table document as refused, read-only or writable, as read/write_rows predict', async () => {
    const mismatches: string[] = [];
    const tally: Record<string, number> = {};
    let cells = 0;
    for (const ws of m.workspaces) {
      const clients = m.principals
        .filter((principal) => principal.probeOn(m.workspaces).includes(ws))
        .map((principal, i) => ({
          principal,
          rowId: `sync-${ws.slug}-${i}`,
          client: connectClient(m.t.url, tablesDocumentName(ws.id), principal.sync),
        }));
      const verdicts = await Promise.all(clients.map(({ client }) => verdictOf(client)));
      clients.forEach(({ principal }, i) => {
        cells++;
        tally[verdicts[i]!] = (tally[verdicts[i]!] ?? 0) + 1;
        const expected = expectedVerdict(principal, ws);
        if (verdicts[i] !== grantedAs(expected)) mismatches.push(`${principal.name} | ${ws.slug}: expected ${expected}, got ${verdicts[i]}`);
      });

      // Everyone let in makes one edit; the writable ones are acknowledged and land, the read-only ones never do.
      const open = clients.filter((_, i) => verdicts[i] === 'readonly' || verdicts[i] === 'read-write');
      for (const { client, rowId, principal } of open) insertRow(client.doc, { id: rowId, surfaceId: ws.tableSurfaceId, data: { title: principal.name } }, null);
      const writers = open.filter(({ principal }) => expectedVerdict(principal, ws) === 'read-write');
      await Promise.all(writers.map(({ client }) => acknowledged(client)));
      // A read-only update is discarded without an acknowledgement, on its own socket: give it time to arrive before reading the rows.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const landed = await serverRowIds(ws);
      for (const { rowId, principal } of open) {
        const writable = expectedVerdict(principal, ws) === 'read-write';
        if (landed.has(rowId) !== writable) mismatches.push(`${principal.name} | ${ws.slug}: ${writable ? 'writable edit missing' : 'read-only or suggest-only edit reached the server'}`);
      }
      for (const { client } of clients) client.destroy();
    }
    console.info(`policy matrix over sync: ${cells} connections; ${JSON.stringify(tally)}`);
    expect(mismatches, `${mismatches.length} of ${cells} connections differ`).toEqual([]);
    expect(cells).toBe(m.principals.reduce((n, p) => n + p.probeOn(m.workspaces).length, 0));
  }, 120_000);
});
