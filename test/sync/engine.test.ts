import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { serverOrigin } from '../../src/sync/origins';
import { tablesDocumentName } from '../../src/model/document-names';
import { ensureSheet, insertRow, getRow, listRows } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string; orgSlug: string };
let workspaceId: string;
let surfaceId: string;
let docName: string;
const ownerPrincipal = () => ({ principalType: 'user' as const, id: '', name: 'owner', avatarUrl: null });

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'owner@example.com');
  const ws = await t.services.db
    .selectFrom('workspaces')
    .innerJoin('surfaces', 'surfaces.workspaceId', 'workspaces.id')
    .select(['workspaces.id', 'surfaces.id as surfaceId', 'workspaces.createdById'])
    .where('workspaces.slug', '=', 'welcome')
    .executeTakeFirstOrThrow();
  workspaceId = ws.id;
  surfaceId = ws.surfaceId;
  docName = tablesDocumentName(workspaceId);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('sync engine', () => {
  it('delivers a server-side row to a connected client and records the attributed event', async () => {
    const client = connectClient(t.url, docName, { cookie: owner.cookie });
    await synced(client);
    const user = await t.services.db.selectFrom('users').select('id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow();
    const principal = { ...ownerPrincipal(), id: user.id };
    await t.services.sync.transact(docName, serverOrigin(principal, 'system'), (doc) => {
      ensureSheet(doc, surfaceId, null);
      insertRow(doc, { id: 'row-from-server', surfaceId, data: { title: 'hello' } }, null);
    });
    await eventually(() => getRow(client.doc, 'row-from-server')?.data.title === 'hello');
    const events = await t.services.db.selectFrom('events').select(['event', 'principalId', 'subjectId']).where('workspaceId', '=', workspaceId).execute();
    expect(events).toContainEqual({ event: 'row.created', principalId: user.id, subjectId: 'row-from-server' });
    client.destroy();
  });

  it('logs a client edit before acknowledging it and attributes its event to the client', async () => {
    const client = connectClient(t.url, docName, { cookie: owner.cookie });
    await synced(client);
    insertRow(client.doc, { id: 'row-from-client', surfaceId, data: { title: 'typed in a browser' } }, null);
    await acknowledged(client);
    const logged = await t.services.db.selectFrom('documentUpdates').select('seq').where('document', '=', docName).execute();
    expect(logged.length).toBeGreaterThan(0);
    const event = await eventually(() =>
      t.services.db.selectFrom('events').selectAll().where('subjectId', '=', 'row-from-client').where('event', '=', 'row.created').executeTakeFirst(),
    );
    const user = await t.services.db.selectFrom('users').select('id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow();
    expect(event!.principalId).toBe(user.id);
    const serverRows = await t.services.sync.read(docName, (doc) => listRows(doc, { surfaceId }).rows.map((r) => r.id));
    expect(serverRows).toContain('row-from-client');
    client.destroy();
  });

  it('logs only what a client changes: a client that syncs and makes one edit adds one update to the log', async () => {
    const newest = async () => (await t.services.db.selectFrom('documentUpdates').select(({ fn }) => fn.max('seq').as('seq')).where('document', '=', docName).executeTakeFirst())?.seq ?? 0;
    const before = Number(await newest());
    const client = connectClient(t.url, docName, { cookie: owner.cookie });
    await synced(client);
    insertRow(client.doc, { id: 'row-after-a-fresh-sync', surfaceId, data: { title: 'one edit' } }, null);
    await acknowledged(client);
    // Its answer to the server's sync step 1 holds nothing the server lacks: not a row of the log.
    const logged = await t.services.db.selectFrom('documentUpdates').select('seq').where('document', '=', docName).where('seq', '>', before).execute();
    expect(logged).toHaveLength(1);
    expect(await t.services.sync.read(docName, (doc) => getRow(doc, 'row-after-a-fresh-sync')?.data.title)).toBe('one edit');
    client.destroy();
  });

  it('refuses a non-member and a connection without credentials', async () => {
    const stranger = await signIn(t, 'stranger@example.com');
    const client = connectClient(t.url, docName, { cookie: stranger.cookie });
    expect(await client.authenticationFailed).toBe('forbidden');
    client.destroy();
    const anonymous = connectClient(t.url, docName, {});
    expect(await anonymous.authenticationFailed).toBe('unauthorized');
    anonymous.destroy();
  });

  it('reloads a document from the log after it is unloaded', async () => {
    const before = await t.services.sync.read(docName, (doc) => Y.encodeStateVector(doc));
    await t.services.sync.close();
    const fresh = new Y.Doc();
    const { loadInto } = await import('../../src/sync/document-store');
    await loadInto(t.services.db, docName, fresh);
    expect(Y.encodeStateVector(fresh)).toEqual(before);
    expect(getRow(fresh, 'row-from-client')?.data.title).toBe('typed in a browser');
  });
});

describe('a document its last sync client left', () => {
  it('stays loaded, held by the server, and the next client is served from memory', async () => {
    const t2 = await startTestApp();
    try {
      const person = await signIn(t2, 'leaves@example.com');
      const ws = await t2.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
      const name = tablesDocumentName(ws.id);
      // Nothing loaded: signing in wrote to (and so held) the table document.
      await t2.services.sync.close();
      t2.services.sync.attach(t2.app.server);
      const engine = t2.services.sync as unknown as { hocuspocus: { documents: Map<string, { getConnectionsCount(): number }> } };
      expect(engine.hocuspocus.documents.has(name)).toBe(false);

      const first = connectClient(t2.url, name, { cookie: person.cookie });
      await synced(first);
      first.destroy();
      // Settled either way: unloaded, or held by the server's own connection alone.
      const outcome = await eventually(() => {
        const document = engine.hocuspocus.documents.get(name);
        if (!document) return 'unloaded';
        return document.getConnectionsCount() === 1 && t2.services.sync.stats().connections === 0 ? 'held' : null;
      });
      expect(outcome).toBe('held');
      const metrics = await t2.request('GET', '/metrics');
      expect(metrics.text).toMatch(/^trellis_documents_loaded 1$/m);

      const second = connectClient(t2.url, name, { cookie: person.cookie });
      await synced(second);
      expect(listRows(second.doc).rows.length).toBe(await t2.services.sync.read(name, (doc) => listRows(doc).rows.length));
      second.destroy();
    } finally {
      await t2.close();
      await t2.store.dispose();
    }
  });
});

describe('a table the server has not loaded', () => {
  it('is loaded by the first sync client, which receives exactly the rows stored (snapshot and log after it)', async () => {
    const t2 = await startTestApp();
    try {
      const person = await signIn(t2, 'cold@example.com');
      const ws = await t2.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
      const name = tablesDocumentName(ws.id);
      const create = (title: string) => t2.request('POST', '/api/workspaces/welcome/rows', { as: { cookie: person.cookie }, body: { data: { title } } });
      for (const title of ['one', 'two', 'three']) expect((await create(title)).status).toBe(200);
      await t2.services.sync.compactNow(name);
      for (const title of ['four', 'five']) expect((await create(title)).status).toBe(200);
      const stored = await t2.request('GET', '/api/workspaces/welcome/rows?limit=100', { as: { cookie: person.cookie } });
      const expected = (stored.body.rows as Array<{ id: string; data: { title: string } }>).map((row) => [row.id, row.data.title]).sort();
      expect(expected.map(([, title]) => title)).toEqual(expect.arrayContaining(['one', 'two', 'three', 'four', 'five']));
      // A restart's state: nothing loaded.
      await t2.services.sync.close();
      t2.services.sync.attach(t2.app.server);
      expect(t2.services.sync.stats().documents).toBe(0);

      const client = connectClient(t2.url, name, { cookie: person.cookie });
      await synced(client);
      const received = listRows(client.doc).rows.map((row) => [row.id, row.data.title]).sort();
      expect(received).toEqual(expected);
      client.destroy();
    } finally {
      await t2.close();
      await t2.store.dispose();
    }
  });
});

describe('a document that fails to load', () => {
  it('is not served empty and nothing is written over what is stored', async () => {
    const t2 = await startTestApp();
    try {
      const person = await signIn(t2, 'broken@example.com');
      const ws = await t2.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
      const name = tablesDocumentName(ws.id);
      await t2.request('POST', '/api/workspaces/welcome/rows', { as: { cookie: person.cookie }, body: { data: { title: 'kept' } } });
      // Unload, then damage the stored log so the next load fails.
      await t2.services.sync.close();
      t2.services.sync.attach(t2.app.server);
      const stored = await t2.services.db.selectFrom('documentUpdates').select(['seq']).where('document', '=', name).execute();
      await t2.services.db.insertInto('documentUpdates').values({ document: name, update: new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x01, 0x02]) }).execute();

      const rows = await t2.request('GET', '/api/workspaces/welcome/rows', { as: { cookie: person.cookie } });
      expect(rows.status).toBe(500);
      expect(rows.body.error.code).toBe('internal');
      const write = await t2.request('POST', '/api/workspaces/welcome/rows', { as: { cookie: person.cookie }, body: { data: { title: 'x' } } });
      expect(write.status).toBe(500);
      const client = connectClient(t2.url, name, { cookie: person.cookie });
      await expect(synced(client, 1500)).rejects.toThrow();
      client.destroy();

      const after = await t2.services.db.selectFrom('documentUpdates').select(['seq']).where('document', '=', name).execute();
      expect(after.length).toBe(stored.length + 1);
      const snapshots = await t2.services.db.selectFrom('documentSnapshots').select('document').where('document', '=', name).execute();
      expect(snapshots).toEqual([]);
    } finally {
      await t2.close();
      await t2.store.dispose();
    }
  });
});
