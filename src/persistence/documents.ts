import { bytea, byteaAsBase64, fromBase64 } from './bytea';
import { BYTEA_ROWS, readsRawBytes } from './pglite-bytes';
import { sql } from 'kysely';
import type { Db, Executor } from './database';
import { rowAuthor, listUnderivedSeqs, updatesHeldIn, updatesOfLogRows, type UpdateAuthor } from './document-log';
import { foldAttribution, rangesOfLog } from './attribution';
import type { ClockRanges } from '../model/attribution';

/** The durable Y update log and its snapshots. */

export type StoredUpdate = { seq: number; update: Uint8Array; derived: boolean; author: UpdateAuthor };

export type StoredDocument = {
  /** `encoding`: the V2 state as compacted, or its V1 copy when one was kept (writeSyncCopy): the same state. */
  snapshot: { state: Uint8Array; encoding: 'v1' | 'v2'; uptoSeq: number } | null;
  updates: StoredUpdate[];
  /** Bytes in the update tail: compaction is due when this or the count grows. */
  tailBytes: number;
};

/**
 * The snapshot (if any) and every update after it, in order, read in one
 * repeatable-read transaction (unless the caller's own), so a compaction
 * committing in between cannot make the two disagree.
 */
export async function loadStoredDocument(db: Executor, document: string): Promise<StoredDocument> {
  if (!db.isTransaction) return (db as Db).transaction().setIsolationLevel('repeatable read').execute((tx) => loadStoredDocument(tx, document));
  const snapshot = await readSnapshot(db, document);
  const uptoSeq = snapshot?.uptoSeq ?? 0;
  const updates = await db
    .selectFrom('documentUpdates')
    .select(['seq', 'firstSeq', byteaAsBase64('update').as('update'), 'principalType', 'principalId'])
    .where('document', '=', document)
    .where('seq', '>', uptoSeq)
    .orderBy('seq')
    .execute();
  const underived = new Set(await listUnderivedSeqs(db, document));
  const tail = updatesOfLogRows(updates, (u) => fromBase64(u.update), uptoSeq).map(({ row: u, seq, update }) => ({
    seq,
    update,
    derived: !underived.has(seq),
    author: rowAuthor(u),
  }));
  return {
    snapshot: snapshot ? { state: snapshot.state, encoding: snapshot.isV1 ? 'v1' : 'v2', uptoSeq: snapshot.uptoSeq } : null,
    updates: tail,
    tailBytes: tail.reduce((sum, u) => sum + u.update.byteLength, 0),
  };
}

/**
 * A document's snapshot: its stored state (the V1 copy when there is one:
 * it serves a first sync client as read, and loads as fast as the V2
 * state), whether that is the V1 copy, and the log position it folds. The
 * state is megabytes: on PGlite it is read as the raw value by a statement
 * of its own (no text encoding either side, pglite-bytes.ts); on Postgres
 * as base64 in the same statement (bytea.ts; cheaper there than
 * node-postgres's hex).
 */
async function readSnapshot(db: Executor, document: string): Promise<{ state: Uint8Array; isV1: boolean; uptoSeq: number } | null> {
  if (readsRawBytes(db)) {
    const found = await db
      .selectFrom('documentSnapshots')
      .select([sql<boolean>`sync_state is not null`.as('isV1'), 'uptoSeq'])
      .where('document', '=', document)
      .executeTakeFirst();
    if (!found) return null;
    const { rows } = await sql<{ state: Uint8Array | null }>`${sql.raw(BYTEA_ROWS)} select coalesce(sync_state, state) as state from document_snapshots where document = ${document}`.execute(db);
    const state = rows[0]?.state;
    return state ? { state, isV1: found.isV1, uptoSeq: Number(found.uptoSeq) } : null;
  }
  const row = await db
    .selectFrom('documentSnapshots')
    .select([sql<string>`encode(coalesce(sync_state, state), 'base64')`.as('state'), sql<boolean>`sync_state is not null`.as('isV1'), 'uptoSeq'])
    .where('document', '=', document)
    .executeTakeFirst();
  return row ? { state: fromBase64(row.state), isV1: row.isV1, uptoSeq: Number(row.uptoSeq) } : null;
}

/**
 * Replaces the snapshot folded up to `fromSeq` and drops the updates the
 * new one folds in, atomically; null, writing nothing, when the stored
 * snapshot is no longer the one at `fromSeq` (another instance folded
 * first: its snapshot stands). The snapshot was built from the log itself
 * (never from memory), so it holds exactly the updates up to `uptoSeq`. Who
 * made them goes into the attribution table (attribution.ts): the rows
 * deleted here are the only record of it. `attribution`: their ranges, when
 * read already (from `fromSeq`); else they are read here.
 *
 * The snapshot row is written first and is what two folds of one document
 * take turns on: its upsert replaces only the snapshot at `fromSeq`, and a
 * second fold's waits on the first's row lock, then finds it moved. The
 * log's head is not locked: every update up to `uptoSeq` was committed
 * before the fold read the log (appends to a document commit in sequence
 * order, document-log-heads.ts), and appends after it insert rows the fold
 * neither reads nor deletes, so they commit while it writes.
 */
export async function writeSnapshot(
  db: Executor,
  document: string,
  state: Uint8Array,
  fromSeq: number,
  uptoSeq: number,
  now: Date,
  attribution?: ClockRanges,
): Promise<number | null> {
  if (!db.isTransaction) return (db as Db).transaction().execute((tx) => writeSnapshot(tx, document, state, fromSeq, uptoSeq, now, attribution));
  const replaced = await db
    .insertInto('documentSnapshots')
    .values({ document, state: bytea(state), uptoSeq, updatedAt: now })
    // A new state: the sync copy of the one it replaces no longer holds it.
    .onConflict((oc) =>
      oc
        .column('document')
        .doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), syncState: null, uptoSeq, updatedAt: now }))
        .where('documentSnapshots.uptoSeq', '=', fromSeq),
    )
    .returning('uptoSeq')
    .executeTakeFirst();
  if (!replaced) return null;
  await foldAttribution(db, document, attribution ?? (await rangesOfLog(db, document, 0, uptoSeq)));
  // In slices: on the embedded database each statement holds the event loop while it runs.
  // A run (document-log.ts) reaching past `uptoSeq` stays whole, its updates up to there read past by every reader.
  let folded = 0;
  for (;;) {
    const deleted = await foldSlice(db, document, uptoSeq).returning(updatesHeldIn(0).as('updates')).execute();
    for (const row of deleted) folded += Number(row.updates);
    if (deleted.length < DELETE_SLICE_ROWS) return folded;
  }
}

/**
 * The most folded updates one delete statement removes. PGlite runs a
 * statement inside the serving thread; a slice of 2,000 held it for 7-32 ms
 * of CPU (load 13-16), on top of the 20 ms a turn runs before a statement
 * waits for the next one (pglite-dialect.ts): one turn of the fold paused the
 * event loop 99 ms (47 ms of CPU) under the trace. A slice of 500 costs a quarter of
 * that; the fold stays one transaction, and the driver lets the event loop
 * turn between slices once it has held the session past its budget.
 */
const DELETE_SLICE_ROWS = 500;

/**
 * The last seq of the next slice to fold: the DELETE_SLICE_ROWS-th log row
 * of the document, or `uptoSeq` when fewer are left. A range, not
 * `seq in (select ... limit)`: for a document newer than the table's
 * statistics the planner expects one row and joins the two as a nested
 * loop that runs the subquery again for every row of the document (1,096
 * rows x 527: 650,000 buffer reads, 4.5 s holding PGlite's event loop; a
 * 5,000-update fold beside a typist stalled the server for 6-9 s at a time,
 * docs/PERFORMANCE.md "PGlite's slow mode beside a typist"). A scalar
 * subquery is run once whatever the plan.
 */
function sliceEnd(document: string, uptoSeq: number) {
  return sql<number>`coalesce((select seq from document_updates where document = ${document} and seq <= ${uptoSeq} order by seq offset ${DELETE_SLICE_ROWS - 1} limit 1), ${uptoSeq})`;
}

/** Deletes the next slice (at most DELETE_SLICE_ROWS) of the document's updates folded up to `uptoSeq`; exported for its plan's test. */
export function foldSlice(db: Executor, document: string, uptoSeq: number) {
  return db.deleteFrom('documentUpdates').where('document', '=', document).where('seq', '<=', sliceEnd(document, uptoSeq));
}

/**
 * Keeps the snapshot folded up to `uptoSeq` also as a V1 update (what the
 * sync protocol sends), if that snapshot is still the stored one; false when
 * it was replaced meanwhile.
 */
export async function writeSyncCopy(db: Executor, document: string, uptoSeq: number, state: Uint8Array): Promise<boolean> {
  const result = await db
    .updateTable('documentSnapshots')
    .set({ syncState: bytea(state) })
    .where('document', '=', document)
    .where('uptoSeq', '=', uptoSeq)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countTail(db: Executor, document: string, afterSeq: number): Promise<number> {
  const row = await db
    .selectFrom('documentUpdates')
    .select(sql<number | string | null>`sum(${updatesHeldIn(afterSeq)})`.as('n'))
    .where('document', '=', document)
    .where('seq', '>', afterSeq)
    .executeTakeFirstOrThrow();
  return Number(row.n ?? 0);
}

export type StoredSize = { snapshotBytes: number; tailUpdates: number; tailBytes: number };

/** What loading the document would read, without reading it. */
export async function storedSize(db: Executor, document: string): Promise<StoredSize> {
  const row = await sql<{ snapshot_bytes: number | string | null; upto: number | string | null }>`
    select octet_length(state) as snapshot_bytes, upto_seq as upto from document_snapshots where document = ${document}
  `.execute(db);
  const snapshot = row.rows[0];
  const tail = await sql<{ n: number | string; bytes: number | string | null }>`
    select coalesce(sum(${updatesHeldIn(Number(snapshot?.upto ?? 0))}), 0) as n, sum(octet_length(update)) as bytes
    from document_updates where document = ${document} and seq > ${Number(snapshot?.upto ?? 0)}
  `.execute(db);
  return { snapshotBytes: Number(snapshot?.snapshot_bytes ?? 0), tailUpdates: Number(tail.rows[0]?.n ?? 0), tailBytes: Number(tail.rows[0]?.bytes ?? 0) };
}
