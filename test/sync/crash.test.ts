import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { freshDataStore } from '../helpers/database';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';
import { acknowledged, connectClient, synced } from '../helpers/sync';

/**
 * An acknowledged write is never lost: kill the server with SIGKILL right
 * after REST and sync writes were acknowledged, restart it on the same data,
 * and find every one of them.
 */
let store: Awaited<ReturnType<typeof freshDataStore>>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  store = await freshDataStore();
});
afterAll(async () => {
  await server?.kill();
  await store.dispose();
});

function env() {
  return { DATA_DIR: store.dataDir, ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) };
}

async function signInThroughOutbox(url: string, email: string) {
  await fetch(`${url}/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const outbox = await fs.readFile(path.join(store.dataDir, 'outbox.jsonl'), 'utf8');
  const token = /token=([A-Za-z0-9_-]+)/.exec(outbox.trim().split('\n').at(-1)!)![1]!;
  const res = await fetch(`${url}/api/auth?token=${token}`, { redirect: 'manual' });
  return /svc-session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!;
}

describe('durability across SIGKILL', () => {
  it('keeps every acknowledged REST and sync write', async () => {
    server = await startServerProcess(env());
    const cookie = await signInThroughOutbox(server.url, 'crash@example.com');
    const json = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const detail = await (await fetch(`${server.url}/api/workspaces/welcome`, { headers: json })).json();
    const workspaceId = detail.id as string;
    const surfaceId = (detail.surfaces ?? []).find((s: any) => s.kind === 'table')?.id ?? detail.primarySurface?.id;

    const restIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/api/workspaces/welcome/rows`, { method: 'POST', headers: json, body: JSON.stringify({ data: { title: `rest ${i}` } }) });
      expect(res.status).toBe(200);
      restIds.push((await res.json()).id);
    }

    const client = connectClient(server.url, tablesDocumentName(workspaceId), { cookie });
    await synced(client);
    const syncIds = Array.from({ length: 20 }, (_, i) => `sync-${i}`);
    for (const id of syncIds) insertRow(client.doc, { id, surfaceId, data: { title: id } }, null);
    await acknowledged(client);
    // The last REST write is acknowledged, then the process dies at once.
    const last = await fetch(`${server.url}/api/workspaces/welcome/rows`, { method: 'POST', headers: json, body: JSON.stringify({ data: { title: 'last' } }) });
    restIds.push((await last.json()).id);
    await server.kill('SIGKILL');
    client.destroy();

    server = await startServerProcess(env());
    const listed = await (await fetch(`${server.url}/api/workspaces/welcome/rows?limit=1000`, { headers: json })).json();
    const ids = new Set(listed.rows.map((r: any) => r.id));
    for (const id of [...restIds, ...syncIds]) expect(ids.has(id), `row ${id} survived`).toBe(true);
    const me = await fetch(`${server.url}/api/me`, { headers: json });
    expect(me.status).toBe(200);
  }, 120_000);
});
