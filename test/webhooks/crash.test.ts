import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDataStore } from '../helpers/database';
import { signInThroughOutboxFile, startServerProcess, type ServerProcess } from '../helpers/server-process';
import { eventually } from '../helpers/sync';
import { Receiver } from './receiver';

/**
 * Nothing is lost on a crash: deliveries are written with the events, so a
 * server killed with SIGKILL while deliveries are pending (one attempt in
 * flight, the rest queued) sends every one of them after it restarts. At
 * least once: the receiver dedupes by `webhook-id`.
 */
let store: Awaited<ReturnType<typeof freshDataStore>>;
let server: ServerProcess | undefined;
let receiver: Receiver;

beforeAll(async () => {
  store = await freshDataStore();
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server?.kill();
  await receiver?.close();
  await store.dispose();
});

function env() {
  return { DATA_DIR: store.dataDir, WEBHOOK_ALLOW_PRIVATE: 'true', ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) };
}

describe('webhook deliveries across SIGKILL', () => {
  it('delivers every pending delivery after a restart', async () => {
    server = await startServerProcess(env(), { startTimeoutMs: 180_000 });
    const cookie = await signInThroughOutboxFile(server.url, store.dataDir, 'webhook-crash@example.com');
    const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const me = await (await fetch(`${server.url}/api/me`, { headers })).json();

    // The receiver takes the first delivery and never answers: it is in flight when the process dies.
    receiver.answer = () => 'hang';
    const hook = await fetch(`${server.url}/api/orgs/${me.org.slug}/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${receiver.url}/crash`, events: ['row.created'] }),
    });
    expect(hook.status).toBe(200);

    const rowIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/api/workspaces/welcome/rows`, { method: 'POST', headers, body: JSON.stringify({ data: { title: `crash ${i}` } }) });
      expect(res.status).toBe(200);
      rowIds.push((await res.json()).id);
    }
    await eventually(() => receiver.received.length >= 1, 20_000);
    await server.kill('SIGKILL');

    receiver.answer = () => 200;
    server = await startServerProcess(env(), { startTimeoutMs: 180_000 });
    // On Postgres a dead instance's lease runs out first (15 s); PGlite, opened by one process only, clears it at start.
    const byDelivery = await eventually(() => {
      const seen = new Map<string, string>();
      for (const r of receiver.received) if (r.json) seen.set(r.headers['webhook-id']!, r.json.data.id);
      const delivered = new Set(seen.values());
      return rowIds.every((id) => delivered.has(id)) ? seen : null;
    }, 60_000);
    // One delivery per row, each with one webhook-id across attempts, and the first one sent before the crash again.
    expect(byDelivery.size).toBe(20);
    const first = receiver.received[0]!;
    expect(first.json.data.id).toBe(rowIds[0]);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === first.headers['webhook-id']).length).toBeGreaterThanOrEqual(2);
    const order = receiver.received.slice(1).map((r) => rowIds.indexOf(r.json.data.id));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  }, 480_000);
});
