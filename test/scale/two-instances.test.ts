import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SSE_PING_MS } from '../../src/http/sse';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow, insertRow, listRows } from '../../src/model/table/document';
import type { TestApp } from '../helpers/app';
import type { ServerProcess } from '../helpers/server-process';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { elevateForKeys, mint, signInPerson, type Person } from '../keys/fixtures';
import { addComment } from '../comments/helpers';
import { Receiver } from '../webhooks/receiver';
import type { RedisOutage } from './redis-outage';
import { reconnectDocument, startTwoInstances, type TwoInstances } from './two-instances';

/**
 * Two Trellis instances on one Postgres and one Redis, as behind a load
 * balancer: instance A is a real process (so it can be SIGKILLed), instance
 * B runs in this process. They need TEST_DATABASE_URL and TEST_REDIS_URL
 * (`.ci/run` provides both); without them the suite is reported as skipped,
 * never passed.
 */
const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/**
 * How long a condition may take to become true. Every wait below is for a
 * condition; this only bounds it, generously, because two servers, Postgres
 * and Redis share two cores with other test runs here.
 */
const PATIENCE_MS = 30_000;

describe.skipIf(!shared)('two instances on one Postgres and one Redis (needs TEST_DATABASE_URL and TEST_REDIS_URL)', { timeout: 4 * PATIENCE_MS }, () => {
  let instances: TwoInstances;
  let a: ServerProcess;
  let b: TestApp;
  let owner: Person;
  let workspaceId: string;
  let surfaceId: string;
  let docName: string;
  let outage: RedisOutage;
  const clients: SyncClient[] = [];

  function connect(url: string, credential: { cookie?: string; token?: string } = { cookie: owner.cookie }) {
    const client = connectClient(url, docName, credential);
    clients.push(client);
    return client;
  }

  async function restRowIds(url: string): Promise<string[]> {
    const res = await fetch(`${url}/api/workspaces/welcome/rows?limit=1000`, { headers: { cookie: `svc-session=${owner.cookie}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { rows: Array<{ id: string }> }).rows.map((r) => r.id);
  }

  beforeAll(async () => {
    instances = await startTwoInstances({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ a, b, outage } = instances);
    owner = await signInPerson(b, 'owner@example.com');
    const detail = await b.request('GET', '/api/workspaces/welcome', { as: owner.as });
    workspaceId = detail.body.id;
    surfaceId = detail.body.primarySurface.id;
    docName = tablesDocumentName(workspaceId);
  });

  afterAll(async () => {
    for (const client of clients) client.destroy();
    await instances?.close();
  });

  it('converges a provider on each instance through concurrent edits', async () => {
    const onA = connect(a.url);
    const onB = connect(b.url);
    await Promise.all([synced(onA), synced(onB)]);
    for (let i = 0; i < 10; i++) {
      insertRow(onA.doc, { id: `a-${i}`, surfaceId, data: { title: `from A ${i}` } }, null);
      insertRow(onB.doc, { id: `b-${i}`, surfaceId, data: { title: `from B ${i}` } }, null);
    }
    await Promise.all([acknowledged(onA, PATIENCE_MS), acknowledged(onB, PATIENCE_MS)]);
    const expected = Array.from({ length: 10 }, (_, i) => [`a-${i}`, `b-${i}`]).flat().sort();
    const ids = (client: SyncClient) => listRows(client.doc).rows.map((r) => r.id).filter((id) => /^[ab]-\d+$/.test(id)).sort();
    await eventually(() => ids(onA).length === 20 && ids(onB).length === 20, PATIENCE_MS);
    expect(ids(onA)).toEqual(expected);
    expect(ids(onB)).toEqual(expected);
    // Both instances serve the same rows over REST (one log, one projection).
    await eventually(async () => (await restRowIds(a.url)).filter((id) => expected.includes(id)).length === 20, PATIENCE_MS);
    expect((await restRowIds(b.url)).filter((id) => expected.includes(id)).sort()).toEqual(expected);
    onA.destroy();
    onB.destroy();
  });

  it('brings a REST write on B to a provider and an SSE stream on A', async () => {
    const onA = connect(a.url);
    await synced(onA);
    const stream = openSse(`${a.url}/api/workspaces/welcome/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    expect(await stream.ready).toBe(200);
    const res = await b.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: 'written on B' } } });
    expect(res.status).toBe(200);
    const rowId = res.body.id as string;
    await eventually(() => getRow(onA.doc, rowId)?.data.title === 'written on B', PATIENCE_MS);
    const frame = await eventually(() => stream.frames.find((f) => f.event === 'row.created' && f.data.data.id === rowId), PATIENCE_MS);
    expect(frame.data.workspace.id).toBe(workspaceId);
    expect(frame.data.principal.id).toBe(owner.userId);
    stream.close();
    onA.destroy();
  });

  it('delivers each event to a webhook once, whichever instance derived it', async () => {
    const receiver = await Receiver.start();
    try {
      const hook = await b.request('POST', `/api/orgs/${owner.orgSlug}/webhooks`, {
        as: owner.as,
        body: { url: `${receiver.url}/hook`, events: ['row.created'] },
      });
      expect(hook.status).toBe(200);
      const createRow = async (url: string, title: string) => {
        const res = await fetch(`${url}/api/workspaces/welcome/rows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: `svc-session=${owner.cookie}` },
          body: JSON.stringify({ data: { title } }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as { id: string }).id;
      };
      const created: string[] = [];
      for (let i = 0; i < 6; i++) created.push(await createRow(i % 2 === 0 ? a.url : b.url, `hooked ${i}`));
      const deliveredIds = () => receiver.ofEvent('row.created').map((r) => r.json.data.id as string);
      await eventually(() => created.every((id) => deliveredIds().includes(id)), PATIENCE_MS, 50);
      // A subscription's deliveries go out one at a time in event order, whichever instance holds it:
      // once a later event (one made on each instance) has arrived, no send of the earlier ones is still to come.
      const later = [await createRow(a.url, 'hooked after, on A'), await createRow(b.url, 'hooked after, on B')];
      await eventually(() => later.every((id) => deliveredIds().includes(id)), PATIENCE_MS, 50);
      const counts = new Map<string, number>();
      for (const id of deliveredIds()) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect(created.map((id) => counts.get(id))).toEqual(created.map(() => 1));
    } finally {
      await receiver.close();
    }
  });

  it('closes a socket on B within a second of its key being revoked through A', async () => {
    await elevateForKeys(b, owner);
    const { key, secret } = await mint(b, owner, { scopeSlug: 'welcome', role: 'editor', agentName: 'roaming bot' });
    const agent = connect(b.url, { token: secret });
    await synced(agent);
    const revoked = await fetch(`${a.url}/api/keys/${key.id}`, { method: 'DELETE', headers: { cookie: `svc-session=${owner.cookie}` } });
    expect(revoked.status).toBe(200);
    const started = Date.now();
    await agent.closed;
    expect(Date.now() - started).toBeLessThan(1000);
    agent.destroy();
  });

  it('brings a mention made on B to the inbox stream on A at once, not at its next keep-alive', async () => {
    const { key, secret } = await mint(b, owner, { scopeSlug: 'welcome', role: 'editor', agentName: 'inbox bot' });
    // Without a signal from B, A's stream would find the message only when it re-reads the inbox at its first
    // keep-alive, SSE_PING_MS after it opened. An attempt that took that long (a stalled machine) proves nothing
    // either way and is made again, with a new thread.
    let crossed = false;
    for (let attempt = 0; attempt < 3 && !crossed; attempt++) {
      const opened = Date.now();
      const inbox = openSse(`${a.url}/api/me/messages/stream`, { authorization: `Bearer ${secret}` });
      expect(await inbox.ready).toBe(200);
      const row = await b.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: `for the bot ${attempt}` } } });
      expect(row.status).toBe(200);
      const comment = await addComment(b, owner.as, 'welcome', {
        target: { type: 'row', rowId: row.body.id },
        body: '@inbox bot please look',
        mentions: [{ kind: 'agent', id: key.agent.id, label: 'inbox bot' }],
      });
      expect(comment.wakes).toEqual([{ agentId: key.agent.id, status: 'delivered' }]);
      await eventually(() => inbox.frames.length > 0, PATIENCE_MS);
      crossed = Date.now() - opened < SSE_PING_MS;
      expect(inbox.frames.map((f) => [f.event, f.data.comment.id])).toEqual([['mention', comment.id]]);
      inbox.close();
    }
    expect(crossed).toBe(true);
  });

  it('keeps serving its own clients without Redis, says so, and catches up when Redis is back', async () => {
    const onA = connect(a.url);
    const onB = connect(b.url);
    const otherOnB = connect(b.url);
    await Promise.all([synced(onA), synced(onB), synced(otherOnB)]);
    const stream = openSse(`${b.url}/api/workspaces/welcome/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    const streamOnA = openSse(`${a.url}/api/workspaces/welcome/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    expect(await stream.ready).toBe(200);
    expect(await streamOnA.ready).toBe(200);

    // Only B loses Redis: A's own connections stay up, so A never notices anything.
    outage.cut();
    const health = await eventually(async () => {
      const res = await b.request('GET', '/api/health');
      return res.body.redis?.ok === false ? res : null;
    }, PATIENCE_MS);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', redis: { configured: true, ok: false }, database: { ok: true } });
    const metrics = await b.request('GET', '/metrics');
    expect(metrics.text).toMatch(/^trellis_redis_connected 0$/m);

    // B's own clients still sync with each other; A's write cannot reach B meanwhile.
    insertRow(onB.doc, { id: 'during-outage-b', surfaceId, data: { title: 'B alone' } }, null);
    await acknowledged(onB, PATIENCE_MS);
    await eventually(() => getRow(otherOnB.doc, 'during-outage-b'), PATIENCE_MS);
    insertRow(onA.doc, { id: 'during-outage-a', surfaceId, data: { title: 'A alone' } }, null);
    await acknowledged(onA, PATIENCE_MS);
    // Both events are committed while B is cut off, and each instance reads the other's from the audit log (src/events/redis-bus.ts,
    // deliverUnheard), so both SSE streams hear both within seconds; the documents stay apart until Redis is back.
    for (const frames of [stream.frames, streamOnA.frames]) {
      for (const id of ['during-outage-a', 'during-outage-b']) await eventually(() => frames.find((f) => f.event === 'row.created' && f.data.data.id === id), PATIENCE_MS);
    }
    expect(getRow(onB.doc, 'during-outage-a')).toBeNull();

    outage.restore();
    await eventually(async () => (await b.request('GET', '/api/health')).body.status === 'ok', PATIENCE_MS);
    // Caught up both ways: documents by state vectors; B publishes what it kept, which A already has (delivered once).
    await eventually(() => getRow(onB.doc, 'during-outage-a') && getRow(onA.doc, 'during-outage-b'), PATIENCE_MS);
    expect((await b.request('GET', '/metrics')).text).toMatch(/^trellis_redis_connected 1$/m);
    // Each event once on each stream, however it arrived.
    for (const frames of [stream.frames, streamOnA.frames]) {
      const ids = frames.filter((f) => f.event === 'row.created' && /^during-outage-/.test(f.data.data.id)).map((f) => f.data.data.id);
      expect(ids.sort()).toEqual(['during-outage-a', 'during-outage-b']);
    }
    stream.close();
    streamOnA.close();
  });

  it('answers every REST patch of the same rows made on both instances at once, and both instances then read the same last values', async () => {
    // A REST write's log append rides in its commit's projection statement (document-log.ts `appendHead`); that statement must
    // lock the document's log head before any row of table_rows, as the append's own statement did, or two instances' commits
    // of the same rows in different orders could deadlock (Postgres then fails one of them). This passes with that order
    // switched off too (the window is one row's update wide): it pins the answers, the plan's order is argued in PERFORMANCE.md.
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await b.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: `shared ${i}` } } });
      expect(res.status).toBe(200);
      ids.push(res.body.id as string);
    }
    const patch = (url: string, id: string, title: string) =>
      fetch(`${url}/api/workspaces/welcome/rows/${id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', cookie: `svc-session=${owner.cookie}` },
        body: JSON.stringify({ data: { title } }),
      }).then(async (res) => ({ status: res.status, body: await res.text() }));
    for (let round = 0; round < 6; round++) {
      // Each instance groups its concurrent patches into commits of several rows; A's go through the rows in one order, B's in the other.
      const answers = await Promise.all([
        ...ids.map((id, i) => patch(a.url, id, `a ${round} ${i}`)),
        ...[...ids].reverse().map((id, i) => patch(b.url, id, `b ${round} ${i}`)),
      ]);
      expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    }
    // Both instances read the same rows, and the log rebuilds them.
    const titles = async (url: string) => {
      const res = await fetch(`${url}/api/workspaces/welcome/rows?limit=1000`, { headers: { cookie: `svc-session=${owner.cookie}` } });
      const rows = ((await res.json()) as { rows: Array<{ id: string; data: { title: string } }> }).rows;
      return ids.map((id) => rows.find((row) => row.id === id)?.data.title);
    };
    await eventually(async () => JSON.stringify(await titles(a.url)) === JSON.stringify(await titles(b.url)), PATIENCE_MS);
    for (const title of await titles(b.url)) expect(title).toMatch(/^[ab] 5 /);
  });

  it('moves the clients of a SIGKILLed instance to the other without losing anything acknowledged', async () => {
    const writer = connect(a.url);
    const watcher = connect(b.url);
    await Promise.all([synced(writer), synced(watcher)]);
    const acked: string[] = [];
    let sent = 0;
    let killed = false;
    // A stream of edits, five at a time, each five waited for until A acknowledges them or dies.
    const streaming = (async () => {
      while (!killed) {
        const id = `stream-${sent++}`;
        insertRow(writer.doc, { id, surfaceId, data: { title: id } }, null);
        if (sent % 5 !== 0) continue;
        await eventually(() => killed || writer.provider.unsyncedChanges === 0, 4 * PATIENCE_MS);
        if (writer.provider.unsyncedChanges === 0 && !killed) for (let i = acked.length; i < sent; i++) acked.push(`stream-${i}`);
      }
    })();
    await eventually(() => acked.length >= 30, PATIENCE_MS);
    await a.kill('SIGKILL');
    killed = true;
    await streaming;
    expect(acked.length).toBeGreaterThanOrEqual(30);

    // The load balancer sends the client to B: the same Y document, a new socket.
    writer.provider.destroy();
    const disconnect = await reconnectDocument(b.url, docName, writer.doc, owner.cookie, PATIENCE_MS);

    // Everything acknowledged by A is on B (it was in the log), and so is what A never acknowledged (the client resent it).
    const onB = await restRowIds(b.url);
    expect(acked.filter((id) => !onB.includes(id))).toEqual([]);
    const everything = Array.from({ length: sent }, (_, i) => `stream-${i}`);
    await eventually(async () => everything.every((id) => getRow(watcher.doc, id)), PATIENCE_MS);
    expect(everything.filter((id) => !getRow(watcher.doc, id))).toEqual([]);
    disconnect();
  });
});
