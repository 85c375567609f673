import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { freshDataStore } from '../helpers/database';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';

/**
 * Events are derived at least once (issue 13): the process is killed between
 * a sync client's update being logged (and acknowledged) and the commit of
 * its events. After a restart the events exist, exactly once, attributed to
 * the client, and a second restart does not record them again.
 */
let store: Awaited<ReturnType<typeof freshDataStore>>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  store = await freshDataStore();
});
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await server?.kill();
  await store.dispose();
  for (const cleanup of cleanups) await cleanup();
});

function env(extra: Record<string, string> = {}, on = store) {
  return { DATA_DIR: on.dataDir, ...(on.databaseUrl ? { DATABASE_URL: on.databaseUrl } : {}), ...extra };
}

async function signInThroughOutbox(url: string, email: string, on = store) {
  await fetch(`${url}/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const outbox = await fs.readFile(path.join(on.dataDir, 'outbox.jsonl'), 'utf8');
  const token = /token=([A-Za-z0-9_-]+)/.exec(outbox.trim().split('\n').at(-1)!)![1]!;
  const res = await fetch(`${url}/api/auth?token=${token}`, { redirect: 'manual' });
  return /svc-session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!;
}

describe('events derived at least once', () => {
  it('a SIGKILL between a sync update and its events: after restart the events exist, once', async () => {
    // This run dies inside the commit of the first client change's events (signing in makes only server changes).
    server = await startServerProcess(env({ TRELLIS_FAILPOINTS: 'document.derived.commit=kill' }));
    const cookie = await signInThroughOutbox(server.url, 'derive@example.com');
    const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const detail = await (await fetch(`${server.url}/api/workspaces/welcome`, { headers })).json();
    const me = await (await fetch(`${server.url}/api/me`, { headers })).json();
    const surfaceId = detail.primarySurface.id as string;
    const documentName = tablesDocumentName(detail.id);
    const client = connectClient(server.url, documentName, { cookie });
    await synced(client);
    const died = new Promise<number | null>((resolve) => server!.child.once('exit', (code) => resolve(code)));
    client.doc.transact(() => {
      insertRow(client.doc, { id: 'typed-before-the-crash', surfaceId, data: { title: 'acknowledged, events not yet recorded' } }, null);
    });
    await acknowledged(client);
    await died;
    client.destroy();

    server = await startServerProcess(env());
    const row = await (await fetch(`${server.url}/api/workspaces/welcome/rows/typed-before-the-crash`, { headers })).json();
    expect(row.data.title).toBe('acknowledged, events not yet recorded');
    const created = async () =>
      (await (await fetch(`${server!.url}/api/workspaces/welcome/events?action=row.created&limit=200`, { headers })).json()).events.filter(
        (e: { data: { id: string } }) => e.data.id === 'typed-before-the-crash',
      );
    const events = await eventually(async () => {
      const found = await created();
      return found.length > 0 ? found : null;
    }, 15_000);
    expect(events).toHaveLength(1);
    expect(events[0].principal.id).toBe(me.principal.id);
    // The row is attributed in the projection too.
    const attributed = await (await fetch(`${server.url}/api/workspaces/welcome/rows/typed-before-the-crash`, { headers })).json();
    expect(attributed.createdByPrincipalId).toBe(me.principal.id);

    // Derived once is derived for good: another restart and load records nothing more.
    await server.kill('SIGKILL');
    server = await startServerProcess(env());
    const again = connectClient(server.url, documentName, { cookie });
    await synced(again);
    await eventually(() => again.doc.getMap('rows').has('typed-before-the-crash'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await created()).toHaveLength(1);
    again.destroy();
  }, 180_000);

  it('derives what a killed process acknowledged at the next start, whether or not anyone opens the document', async () => {
    // Dies inside the commit of the client change's events, after its update was logged.
    await server?.kill();
    const own = await freshDataStore();
    cleanups.push(() => own.dispose());
    server = await startServerProcess(env({ TRELLIS_FAILPOINTS: 'document.derived.commit=kill' }, own));
    const cookie = await signInThroughOutbox(server.url, 'orphan@example.com', own);
    const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const detail = await (await fetch(`${server.url}/api/workspaces/welcome`, { headers })).json();
    const client = connectClient(server.url, tablesDocumentName(detail.id), { cookie });
    await synced(client);
    const died = new Promise<number | null>((resolve) => server!.child.once('exit', (code) => resolve(code)));
    insertRow(client.doc, { id: 'left-by-the-dead', surfaceId: detail.primarySurface.id, data: { title: 'logged, never derived' } }, null);
    await died;
    client.destroy();

    // Nothing reads the table after the restart: only the audit log, which never loads a document.
    server = await startServerProcess(env({}, own));
    const created = await eventually(async () => {
      const res = await fetch(`${server!.url}/api/workspaces/welcome/events?action=row.created&limit=200`, { headers });
      const found = ((await res.json()).events as Array<{ data: { id: string } }>).filter((e) => e.data.id === 'left-by-the-dead');
      return found.length > 0 ? found : null;
    }, 15_000);
    expect(created).toHaveLength(1);
  }, 180_000);
});
