import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import * as Y from 'yjs';
import { countRows, getRow, insertRow, listRows } from '../../src/model/table/document';
import { loadStoredDocument } from '../../src/persistence/documents';
import { fullStateEncodes } from '../../src/sync/full-state-answers';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { addMember, signInPerson, type Person } from '../keys/fixtures';

/**
 * The first sync client of a document nothing has loaded is answered from
 * what is stored (snapshot and log, or the V1 copy kept beside a large
 * snapshot: src/sync/document-store.ts SYNC_COPY_MIN_BYTES) while the
 * document loads (src/sync/stored-copy.ts). The load is held half way (`document.load`,
 * after it read what is stored) to look at what a client holds then, and
 * at what happens to what it sends before the load ends.
 */
let t: App;
let owner: Person;
let workspaceId: string;
let surfaceId: string;
let name: string;
const base = '/api/workspaces/welcome';
type App = Awaited<ReturnType<typeof startTestApp>>;
const isLoaded = (app: App, documentName: string) => (app.services.sync as unknown as { hocuspocus: { documents: Map<string, unknown> } }).hocuspocus.documents.has(documentName);

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInPerson(t, 'owner@example.com');
  const detail = await t.request('GET', base, { as: owner.as });
  workspaceId = detail.body.id;
  surfaceId = detail.body.primarySurface.id;
  name = tablesDocumentName(workspaceId);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const create = (title: string) => t.request('POST', `${base}/rows`, { as: owner.as, body: { data: { title } } });

async function storedRows(): Promise<Array<[string, string]>> {
  const res = await t.request('GET', `${base}/rows?limit=1000`, { as: owner.as });
  return (res.body.rows as Array<{ id: string; data: { title: string } }>).map((row): [string, string] => [row.id, row.data.title]).sort();
}

const rowsOf = (client: SyncClient) => listRows(client.doc).rows.map((row): [string, string] => [row.id, String(row.data.title)]).sort();

/** A restart's state: nothing loaded. */
async function unloadAll(app = t) {
  await app.services.sync.close();
  app.services.sync.attach(app.app.server);
  expect(app.services.sync.stats().documents).toBe(0);
}

describe('the first sync client of a document nothing has loaded', () => {
  it('holds every stored row before the load ends; what it and REST write meanwhile is acknowledged after it, and everyone converges', async () => {
    for (const title of ['one', 'two', 'three']) expect((await create(title)).status).toBe(200);
    await t.services.sync.compactNow(name);
    for (const title of ['four', 'five']) expect((await create(title)).status).toBe(200);
    const expected = await storedRows();
    const stranger = await signInPerson(t, 'stranger@example.com');
    await unloadAll();

    // Every load is held from here: its own table included, so the stranger signed in first.
    const release = t.services.failpoints.hold('document.load');
    let client: SyncClient | undefined;
    try {
      client = connectClient(t.url, name, { cookie: owner.cookie });
      await synced(client);
      // Answered from the snapshot and the log tail, merged: nothing is loaded yet.
      expect(rowsOf(client)).toEqual(expected);
      expect(isLoaded(t, name)).toBe(false);

      // Someone without access gets nothing, loading or not.
      const outsider = connectClient(t.url, name, { cookie: stranger.cookie });
      expect(await outsider.authenticationFailed).toBe('forbidden');
      expect(listRows(outsider.doc).rows).toEqual([]);
      outsider.destroy();

      insertRow(client.doc, { id: 'typed-while-loading', surfaceId, data: { title: 'typed while loading' } }, null);
      const rest = create('written while loading');
      release();
      expect((await rest).status).toBe(200);
      await acknowledged(client);
      const stored = await storedRows();
      expect(stored).toContainEqual(['typed-while-loading', 'typed while loading']);
      expect(stored.map(([, title]) => title)).toContain('written while loading');
      await eventually(() => rowsOf(client!).length === stored.length);
      expect(rowsOf(client)).toEqual(stored);

      const next = connectClient(t.url, name, { cookie: owner.cookie });
      await synced(next);
      expect(rowsOf(next)).toEqual(stored);
      next.destroy();
    } finally {
      release();
      client?.destroy();
    }
  });

  it('the next fresh client of the document it loaded is sent the same stored state, tail included, without encoding the document again; a later write reaches the one after', async () => {
    expect((await create('in the snapshot')).status).toBe(200);
    await t.services.sync.compactNow(name);
    expect((await create('in the tail')).status).toBe(200);
    expect((await loadStoredDocument(t.services.db, name)).updates.length).toBeGreaterThan(0);
    const expected = await storedRows();
    await unloadAll();

    const release = t.services.failpoints.hold('document.load');
    const clients: SyncClient[] = [];
    try {
      const first = connectClient(t.url, name, { cookie: owner.cookie });
      clients.push(first);
      await synced(first);
      release();
      await eventually(() => isLoaded(t, name));
      expect(rowsOf(first)).toEqual(expected);

      const encodes = fullStateEncodes.count;
      const second = connectClient(t.url, name, { cookie: owner.cookie });
      clients.push(second);
      await synced(second);
      // Answered with the copy the first client was sent: the load's document was not encoded for it.
      expect(fullStateEncodes.count).toBe(encodes);
      expect(rowsOf(second)).toEqual(expected);
      expect(Y.encodeStateVector(second.doc)).toEqual(Y.encodeStateVector((t.services.sync as unknown as { hocuspocus: { documents: Map<string, Y.Doc> } }).hocuspocus.documents.get(name)!));

      expect((await create('after the load')).status).toBe(200);
      const written = await storedRows();
      const third = connectClient(t.url, name, { cookie: owner.cookie });
      clients.push(third);
      await synced(third);
      expect(rowsOf(third)).toEqual(written);
      await eventually(() => rowsOf(second).length === written.length);
      expect(rowsOf(second)).toEqual(written);
    } finally {
      release();
      for (const client of clients) client.destroy();
    }
  });

  it('a viewer answered from what is stored still cannot write', async () => {
    const viewer = await signInPerson(t, 'viewer@example.com');
    await addMember(t, workspaceId, viewer.userId, 'viewer');
    expect((await create('before the viewer')).status).toBe(200);
    const expected = await storedRows();
    await unloadAll();

    const release = t.services.failpoints.hold('document.load');
    let reader: SyncClient | undefined;
    let writer: SyncClient | undefined;
    try {
      reader = connectClient(t.url, name, { cookie: viewer.cookie });
      await synced(reader);
      expect(rowsOf(reader)).toEqual(expected);
      insertRow(reader.doc, { id: 'viewer-row', surfaceId, data: { title: 'should not land' } }, null);
      // Sent after the edit on the same connection, so handled after it: once others see it, the edit was handled.
      reader.provider.setAwarenessField('probe', 'after the edit');
      release();

      writer = connectClient(t.url, name, { cookie: owner.cookie });
      await synced(writer);
      const probe = writer.provider.awareness!;
      await eventually(() => [...probe.getStates().values()].some((state) => state.probe === 'after the edit'));
      expect(getRow(writer.doc, 'viewer-row')).toBeNull();
      expect((await storedRows()).map(([id]) => id)).not.toContain('viewer-row');
    } finally {
      release();
      reader?.destroy();
      writer?.destroy();
    }
  });
});

describe('a large table folded with nothing logged after it', () => {
  // An app of its own: a base handed out by the reads above would hold its fold back.
  let big: App;
  let bigOwner: Person;
  let bigName: string;
  const create = (title: string) => big.request('POST', `${base}/rows`, { as: bigOwner.as, body: { data: { title } } });

  beforeAll(async () => {
    big = await startTestApp();
    bigOwner = await signInPerson(big, 'owner@example.com');
    bigName = tablesDocumentName((await big.request('GET', base, { as: bigOwner.as })).body.id);
    // Past the free plan's row limit.
    await big.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
  });
  afterAll(async () => {
    await big.close();
    await big.store.dispose();
  });

  /** Enough text that its snapshot is kept in V1 beside it (document-store.ts SYNC_COPY_MIN_BYTES). */
  async function importLargeRows(count: number) {
    const csv = ['title', ...Array.from({ length: count }, (_, i) => `row ${i} ${'long text '.repeat(120)}`)].join('\n');
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const response = await fetch(`${big.url}${base}/rows/import`, { method: 'POST', body: form, headers: { cookie: `svc-session=${bigOwner.cookie}` } });
    expect(response.status).toBe(200);
  }

  async function firstClientHolds(rows: number) {
    await unloadAll(big);
    const release = big.services.failpoints.hold('document.load');
    let client: SyncClient | undefined;
    try {
      client = connectClient(big.url, bigName, { cookie: bigOwner.cookie });
      await synced(client);
      expect(countRows(client.doc)).toBe(rows);
      expect(isLoaded(big, bigName)).toBe(false);
    } finally {
      release();
      client?.destroy();
    }
  }

  it('is kept as the V1 update a first client is sent, which holds every stored row; a write after it or a new snapshot is never answered with it', async () => {
    await importLargeRows(1_000);
    await big.services.sync.compactNow(bigName);
    const { snapshot } = await loadStoredDocument(big.services.db, bigName);
    expect(snapshot?.encoding).toBe('v1');
    const folded = snapshot!.uptoSeq;
    const decoded = new Y.Doc();
    Y.applyUpdate(decoded, snapshot!.state);
    const rows = countRows(decoded);
    expect(rows).toBeGreaterThanOrEqual(1_000);
    await firstClientHolds(rows);

    // Logged after the snapshot: the copy does not hold it, so the first client is sent the snapshot and the log.
    expect((await create('after the fold')).status).toBe(200);
    await firstClientHolds(rows + 1);

    // A new snapshot: the old one's copy goes with it, and the new one is kept.
    await big.services.sync.compactNow(bigName);
    const again = (await loadStoredDocument(big.services.db, bigName)).snapshot!;
    expect(again.uptoSeq).toBeGreaterThan(folded);
    expect(again.encoding).toBe('v1');
    await firstClientHolds(rows + 1);
  }, 120_000);
});
