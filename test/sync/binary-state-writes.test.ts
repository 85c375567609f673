import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { loadStoredDocument, writeSnapshot, writeSyncCopy } from '../../src/persistence/documents';
import { advanceCursor, loadCheckpoint, loadCursor } from '../../src/persistence/versions';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';

/**
 * Issue 38, goal 2 (session 19): a document's whole state (the snapshot,
 * its V1 sync copy, the history cursor's checkpoint) goes to the database
 * as a binary parameter instead of base64 text that the embedded database
 * decoded on the serving thread. What a user relies on: the state reads
 * back byte for byte, after a restart too, whatever bytes it holds (every
 * byte value, zero and backslash included) and at several megabytes; a
 * document built from it holds the same content.
 */

const onPostgres = Boolean(testDatabaseUrl());
type Store = Awaited<ReturnType<typeof freshDataStore>>;
const stores: Store[] = [];
afterAll(async () => {
  for (const store of stores) await store.dispose();
});

function tableState(rows: number): { v1: Uint8Array; v2: Uint8Array; json: unknown } {
  const doc = new Y.Doc();
  const table = doc.getMap('rows');
  doc.transact(() => {
    for (let i = 0; i < rows; i++) {
      const row = new Y.Map<unknown>();
      row.set('title', `Row ${i} \\ \u0000 ü ${i % 7}`);
      row.set('n', i);
      table.set(`r${i}`, row);
    }
  });
  return { v1: Y.encodeStateAsUpdate(doc), v2: Y.encodeStateAsUpdateV2(doc), json: table.toJSON() };
}

function contentOf(state: Uint8Array, encoding: 'v1' | 'v2'): unknown {
  const doc = new Y.Doc();
  if (encoding === 'v1') Y.applyUpdate(doc, state);
  else Y.applyUpdateV2(doc, state);
  return doc.getMap('rows').toJSON();
}

const variants: Array<{ name: string; pgliteThread?: boolean; skip: boolean }> = [
  { name: onPostgres ? 'on Postgres' : 'on the embedded database', skip: false },
  { name: 'on the embedded database in its own thread', pgliteThread: true, skip: onPostgres },
];

describe.each(variants)('a whole state written as a binary parameter, $name', ({ pgliteThread, skip }) => {
  it.skipIf(skip)('reads back byte for byte, before and after a restart: the snapshot, its sync copy and the history checkpoint', async () => {
    const store = await freshDataStore();
    stores.push(store);
    const open = () => openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, pgliteThread });
    const document = `tables:binary-${Math.random().toString(36).slice(2)}`;
    const every = new Uint8Array(256 * 4).map((_, i) => i % 256);
    const large = tableState(20_000);
    const noise = new Uint8Array(randomBytes(2 * 1024 * 1024));
    let handle: DatabaseHandle = await open();
    try {
      // Every byte value first, replaced by a multi-megabyte state: both reads see exactly what was written.
      expect(await writeSnapshot(handle.db, document, every, 0, 0, new Date())).toBe(0);
      const first = await loadStoredDocument(handle.db, document);
      expect(first.snapshot?.encoding).toBe('v2');
      expect(Buffer.from(first.snapshot!.state).equals(Buffer.from(every))).toBe(true);

      expect(await writeSnapshot(handle.db, document, large.v2, 0, 5, new Date())).toBe(0);
      const v2 = await loadStoredDocument(handle.db, document);
      expect(v2.snapshot).toMatchObject({ encoding: 'v2', uptoSeq: 5 });
      expect(Buffer.from(v2.snapshot!.state).equals(Buffer.from(large.v2))).toBe(true);
      expect(await writeSyncCopy(handle.db, document, 5, large.v1)).toBe(true);

      const cursor = { uptoSeq: 5, historyFromSeq: 0, historyFrom: null, sessions: {} };
      expect(await advanceCursor(handle.db, document, cursor, null, noise)).toBe(true);
      expect(await advanceCursor(handle.db, document, { ...cursor, uptoSeq: 6 }, 5, large.v2)).toBe(true);

      const check = async () => {
        const stored = await loadStoredDocument(handle.db, document);
        expect(stored.snapshot).toMatchObject({ encoding: 'v1', uptoSeq: 5 });
        expect(Buffer.from(stored.snapshot!.state).equals(Buffer.from(large.v1))).toBe(true);
        expect(contentOf(stored.snapshot!.state, 'v1')).toEqual(large.json);
        const checkpoint = await loadCheckpoint(handle.db, document);
        expect(checkpoint?.seq).toBe(6);
        expect(Buffer.from(checkpoint!.state).equals(Buffer.from(large.v2))).toBe(true);
        expect(contentOf(checkpoint!.state, 'v2')).toEqual(large.json);
        expect((await loadCursor(handle.db, document))?.uptoSeq).toBe(6);
      };
      await check();
      await handle.close();
      handle = await open();
      await check();
    } finally {
      await handle.close();
    }
  }, 180_000);
});
