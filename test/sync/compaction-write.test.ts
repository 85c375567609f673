import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { countAttributionRows } from '../../src/persistence/attribution';
import { appendUpdates } from '../../src/persistence/document-log';
import { writeSnapshot } from '../../src/persistence/documents';
import { snapshotInfo } from '../../src/persistence/versions';
import { startTestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';
import { eventually } from '../helpers/sync';
import { createWorkspace, signInUser } from '../workspaces/helpers';

/**
 * Issue 38, goal 3: a compaction's fold writes the snapshot and deletes the
 * folded updates without locking the document's log head, so REST writes
 * and sync updates appended meanwhile commit and are answered while it
 * runs (before, every append waited for the fold's transaction to commit);
 * two folds of one document take turns on the snapshot row instead.
 */

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const COMPACT_AFTER = 20;

type Store = Awaited<ReturnType<typeof freshDataStore>>;
const stores: Store[] = [];

afterAll(async () => {
  for (const store of stores) await store.dispose();
});

describe('a fold in progress', () => {
  // On the embedded database a transaction holds its one session, so a write waits for any open transaction, a fold's too.
  it.skipIf(!onPostgres)('lets a REST write to the same table commit and be answered, and the write outlives the fold and a restart', async () => {
    const store = await freshDataStore();
    stores.push(store);
    const env = { COMPACT_AFTER_UPDATES: String(COMPACT_AFTER) };
    let t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, env });
    let release = () => {};
    try {
      const ada = await signInUser(t, 'ada@example.com');
      const ws = await createWorkspace(t, ada, { name: 'Folds', slug: 'folds', mode: 'table' });
      const documentName = tablesDocumentName(ws.id);
      const rows = '/api/workspaces/folds/rows';

      // The fold stops with its snapshot written and its transaction open.
      release = t.services.failpoints.hold('document.compact.write');
      const titles: string[] = [];
      const reached = t.services.failpoints.reached('document.compact.write');
      let folding = false;
      void reached.then(() => (folding = true));
      for (let i = 0; !folding && i < 5 * COMPACT_AFTER; i++) {
        const res = await t.request('POST', rows, { as: ada.as, body: { data: { title: `before ${i}`, status: 'todo' } } });
        expect(res.status, res.text).toBe(200);
        titles.push(`before ${i}`);
      }
      await reached;

      // Written and answered while the fold is held: the append did not wait for the fold's transaction.
      const during = await t.request('POST', rows, { as: ada.as, body: { data: { title: 'during the fold', status: 'doing' } } });
      expect(during.status, during.text).toBe(200);
      titles.push('during the fold');
      const read = await t.request('GET', `${rows}/${during.body.id}`, { as: ada.as });
      expect(read.body.data.title).toBe('during the fold');

      release();
      await t.services.sync.drain();
      // The fold committed its snapshot.
      expect((await snapshotInfo(t.services.db, documentName))?.uptoSeq ?? 0).toBeGreaterThan(0);

      await t.close();
      t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, env });
      const ada2 = await signInUser(t, 'ada@example.com');
      const list = await t.request('GET', `${rows}?limit=500`, { as: ada2.as });
      expect(list.status, list.text).toBe(200);
      const listed = (list.body.rows as Array<{ data: { title: string } }>).map((row) => row.data.title);
      for (const title of titles) expect(listed).toContain(title);
    } finally {
      release();
      await t.close();
    }
  }, 120_000);
});

describe('two folds of one document', () => {
  async function loggedDocument(db: Parameters<typeof appendUpdates>[0], document: string, count: number) {
    const writer = new Y.Doc();
    const updates: Uint8Array[] = [];
    writer.on('update', (update: Uint8Array) => updates.push(update));
    for (let i = 0; i < count; i++) writer.getText('t').insert(i, String(i % 10));
    const author = { principalType: 'user' as const, id: 'usr_ada' };
    // One append an update, as a typist's acknowledged keystrokes: each its own row of the log, which a fold deletes whole (an append's run is folded only once all of it is).
    const seqs: number[] = [];
    for (const update of updates) seqs.push(...(await appendUpdates(db, [{ document, update, author, derived: true }])));
    return { writer, seqs };
  }

  it('the second, from the snapshot the first replaced, writes nothing: the first snapshot, the log after it and the attribution stand', async () => {
    const t = await startTestApp();
    try {
      const db = t.services.db;
      const document = `doc_folds${Date.now()}`;
      const { writer, seqs } = await loggedDocument(db, document, 8);
      const state = Y.encodeStateAsUpdateV2(writer);
      expect(await writeSnapshot(db, document, state, 0, seqs[4]!, new Date())).toBe(5);
      const attribution = await countAttributionRows(db, document);

      expect(await writeSnapshot(db, document, state, 0, seqs[7]!, new Date())).toBeNull();
      expect((await snapshotInfo(db, document))?.uptoSeq).toBe(seqs[4]);
      const left = await db.selectFrom('documentUpdates').select('seq').where('document', '=', document).orderBy('seq').execute();
      expect(left.map((row) => Number(row.seq))).toEqual(seqs.slice(5));
      expect(await countAttributionRows(db, document)).toBe(attribution);
    } finally {
      await t.close();
    }
  }, 120_000);

  // Two instances on one Postgres: the second fold's write waits for the first's transaction, then finds the snapshot moved.
  it.skipIf(!onPostgres)('run at once, take turns on the snapshot row: the one that commits first stands', async () => {
    const t = await startTestApp();
    try {
      const db = t.services.db;
      const document = `doc_race${Date.now()}`;
      const { writer, seqs } = await loggedDocument(db, document, 8);
      const state = Y.encodeStateAsUpdateV2(writer);
      let commitFirst!: () => void;
      let firstWrote!: () => void;
      const wrote = new Promise<void>((resolve) => (firstWrote = resolve));
      const first = db.transaction().execute(async (tx) => {
        const folded = await writeSnapshot(tx, document, state, 0, seqs[4]!, new Date());
        firstWrote();
        await new Promise<void>((resolve) => (commitFirst = resolve));
        return folded;
      });
      await wrote;
      const second = writeSnapshot(db, document, state, 0, seqs[7]!, new Date());
      // The second waits on the first's snapshot row before the first commits.
      await eventually(async () => {
        const waiting = await sql<{ n: number | string }>`select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike '%document_snapshots%'`.execute(db);
        return Number(waiting.rows[0]!.n) > 0;
      });
      commitFirst();
      expect(await first).toBe(5);
      expect(await second).toBeNull();
      expect((await snapshotInfo(db, document))?.uptoSeq).toBe(seqs[4]);
      const left = await db.selectFrom('documentUpdates').select('seq').where('document', '=', document).orderBy('seq').execute();
      expect(left.map((row) => Number(row.seq))).toEqual(seqs.slice(5));
    } finally {
      await t.close();
    }
  }, 120_000);
});
