import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow, insertRow } from '../../src/model/table/document';
import type { TestApp } from '../helpers/app';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';
import { openSse } from '../helpers/sse';
import { connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { signInPerson, type Person } from '../keys/fixtures';
import { reconnectDocument, startTwoInstances, type TwoInstances } from './two-instances';

/**
 * Issue 33, item 1: a sync client's rows, logged and acknowledged by
 * instance A, must reach REST, the audit log and SSE on instance B when A
 * dies before it derived them, while B keeps the document open (so nobody
 * loads it again). Every logged update is derived once by a live instance
 * within seconds of its writer dying.
 *
 * Two ways: A SIGKILLed from outside a few milliseconds after the last
 * acknowledgement, several times (before the fix the last batch was missing
 * in every run), and A whose commits of events all fail (a failpoint), so
 * nothing it acknowledged is derived when it is SIGKILLed.
 */
const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const PATIENCE_MS = 30_000;
/** How soon after its writer died an update must be derived (the sweep runs every few seconds). */
const DERIVED_WITHIN_MS = 15_000;

describe.skipIf(!shared)('rows acknowledged by an instance that dies (needs TEST_DATABASE_URL and TEST_REDIS_URL)', { timeout: 6 * PATIENCE_MS }, () => {
  let instances: TwoInstances;
  let b: TestApp;
  let owner: Person;
  let surfaceId: string;
  let docName: string;
  const killed: ServerProcess[] = [];
  const clients: SyncClient[] = [];

  beforeAll(async () => {
    instances = await startTwoInstances();
    b = instances.b;
    owner = await signInPerson(b, 'failover@example.com');
    const detail = await b.request('GET', '/api/workspaces/welcome', { as: owner.as });
    surfaceId = detail.body.primarySurface.id;
    docName = tablesDocumentName(detail.body.id);
  });

  afterAll(async () => {
    for (const client of clients) client.destroy();
    for (const a of killed) await a.kill();
    await instances?.close();
  });

  /** Another instance A on the same Postgres and Redis (same environment as the pair's A). */
  function startA(env: Record<string, string> = {}) {
    return startServerProcess({ ...instances.env, ...env });
  }

  async function restRowIds(): Promise<Set<string>> {
    const res = await b.request('GET', '/api/workspaces/welcome/rows?limit=1000', { as: owner.as });
    expect(res.status).toBe(200);
    return new Set((res.body.rows as Array<{ id: string }>).map((r) => r.id));
  }

  async function createdEvents(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    let after: string | undefined;
    for (;;) {
      const res = await b.request('GET', `/api/workspaces/welcome/events?action=row.created&limit=200${after ? `&before=${after}` : ''}`, { as: owner.as });
      expect(res.status).toBe(200);
      for (const event of res.body.events as Array<{ data: { id: string } }>) counts.set(event.data.id, (counts.get(event.data.id) ?? 0) + 1);
      if (!res.body.nextCursor) return counts;
      after = res.body.nextCursor;
    }
  }

  /**
   * Writes batches of 10 rows through a provider on `a`, each waited for until
   * acknowledged, until `a` dies (or `batches` were written, then `a` is
   * SIGKILLed at once). Returns the acknowledged row ids and the provider's document.
   */
  async function writeUntilDeath(a: ServerProcess, tag: string, batches: number, killAfterLast: boolean) {
    const writer = connectClient(a.url, docName, { cookie: owner.cookie });
    clients.push(writer);
    await synced(writer, PATIENCE_MS);
    let dead = false;
    const died = new Promise<void>((resolve) => a.child.once('exit', () => resolve()));
    void died.then(() => (dead = true));
    const acked: string[] = [];
    for (let batch = 0; batch < batches && !dead; batch++) {
      const ids = Array.from({ length: 10 }, (_, i) => `${tag}-${batch}-${i}`);
      writer.doc.transact(() => {
        for (const id of ids) insertRow(writer.doc, { id, surfaceId, data: { title: id } }, null);
      });
      await eventually(() => dead || writer.provider.unsyncedChanges === 0, PATIENCE_MS, 1);
      if (writer.provider.unsyncedChanges === 0) acked.push(...ids);
      if (batch === batches - 1 && killAfterLast) await a.kill('SIGKILL');
    }
    await died;
    writer.provider.destroy();
    return { acked, doc: writer.doc };
  }

  async function expectDerivedOnB(acked: string[], stream: ReturnType<typeof openSse>) {
    // Derived within seconds, with the document open on B all along (nobody loads it again).
    const missing = async () => {
      const [rows, events] = await Promise.all([restRowIds(), createdEvents()]);
      const streamed = new Set(stream.frames.filter((f) => f.event === 'row.created').map((f) => f.data.data.id as string));
      const where = (id: string) => [!rows.has(id) && 'REST', !events.has(id) && 'audit log', !streamed.has(id) && 'SSE'].filter(Boolean).join('+');
      return acked.filter((id) => where(id)).map((id) => `${id} missing from ${where(id)}`);
    };
    await eventually(async () => (await missing()).length === 0, DERIVED_WITHIN_MS, 250).catch(() => {});
    expect(await missing()).toEqual([]);
    // Once: each row's event is recorded once, however many instances could have derived it.
    const events = await createdEvents();
    expect(acked.filter((id) => events.get(id) !== 1)).toEqual([]);
  }

  /** A client that keeps the document open on B, as the other clients of a failover do, and an SSE stream on B. */
  async function watchOnB() {
    const watcher = connectClient(b.url, docName, { cookie: owner.cookie });
    clients.push(watcher);
    await synced(watcher, PATIENCE_MS);
    const stream = openSse(`${b.url}/api/workspaces/welcome/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    expect(await stream.ready).toBe(200);
    return { watcher, stream };
  }

  /** Three acknowledged batches on A, A SIGKILLed at once, the client moved to B: B must derive all 30 rows. */
  async function failOver(a: ServerProcess, tag: string, stream: ReturnType<typeof openSse>): Promise<string[]> {
    const { acked, doc } = await writeUntilDeath(a, tag, 3, true);
    expect(acked).toHaveLength(30);
    const disconnect = await reconnectDocument(b.url, docName, doc, owner.cookie, PATIENCE_MS);
    try {
      await expectDerivedOnB(acked, stream);
    } finally {
      disconnect();
    }
    return acked;
  }

  it('derives everything an instance acknowledged but could not derive before it was SIGKILLed', async () => {
    const { watcher, stream } = await watchOnB();

    // Every commit of a client change's events fails on A (and so does deriving them again): A logs and acknowledges, derives nothing.
    const a = await startA({ TRELLIS_FAILPOINTS: 'document.derived.commit=error' });
    killed.push(a);
    const acked = await failOver(a, 'failpoint', stream);
    expect(acked.filter((id) => !getRow(watcher.doc, id))).toEqual([]);
    stream.close();
  });

  it('derives what a SIGKILLed instance acknowledged last, run after run', async () => {
    const { stream } = await watchOnB();
    for (let run = 0; run < 3; run++) {
      const a = await startA();
      killed.push(a);
      await failOver(a, `kill-${run}`, stream);
    }
    stream.close();
  });
});
