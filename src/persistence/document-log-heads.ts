import { sql } from 'kysely';
import { INSTANCE_ID } from '../lib/instance';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema';

// Not from ./database, which imports this module: the two would form a circle.
type Tx = Transaction<Database>;
type Executor = Kysely<Database> | Tx;

/**
 * One writer at a time per document log. Every append to a document's log
 * first locks the document's head row (an upsert, so the first append
 * creates it) and holds that lock until its transaction commits; an append
 * does it in its insert statement (document-log.ts `appendUpdates`), before
 * the statement draws a sequence number. Two instances holding the same
 * document on one Postgres therefore take turns: a document's log sequence
 * numbers are drawn and committed in the same order, so every update up to
 * the newest committed one is committed, and a compaction that folds no
 * further than the head it read never folds past an append still in flight.
 * A compaction does not take the lock (documents.ts `writeSnapshot`: two
 * folds take turns on the snapshot row), so appends commit while it writes.
 * The lock dies with the transaction: an instance that dies holding it loses
 * its connection, Postgres rolls the transaction back (nothing in it was
 * acknowledged) and the next writer goes on. See docs/SCALING.md.
 */

/**
 * Locks the heads of `documents` (in name order, so two writers never wait
 * on each other crosswise). Call inside the transaction that appends or
 * claims updates to derive.
 */
export async function lockDocumentLogs(tx: Tx, names: Iterable<string>): Promise<void> {
  const documents = [...new Set(names)].sort();
  if (documents.length === 0) return;
  // One statement locks them all; VALUES rows are inserted (and conflicting rows locked) in order.
  await tx
    .insertInto('documentLogHeads')
    .values(documents.map((document) => ({ document, writer: INSTANCE_ID })))
    .onConflict((oc) =>
      oc.column('document').doUpdateSet({
        writer: INSTANCE_ID,
        updatedAt: sql`now()`,
      }),
    )
    .execute();
}

/**
 * Databases only one session can use at a time (embedded PGlite): statements
 * never interleave there, and the driver holds its one session from a
 * transaction's first statement to its commit, so no other append can draw
 * a sequence number between. Kept by the query adapter, which a transaction
 * shares with the database it runs on.
 */
const singleSession = new WeakSet<object>();

export function markSingleSession(db: Executor) {
  singleSession.add(db.getExecutor().adapter);
}

/**
 * Whether appending through `db` needs the head lock: not on a
 * single-session database, where appends commit in sequence order anyway,
 * in a transaction or not (the group-commit hot path saves a transaction,
 * and a commit's append an upsert of the head).
 */
export function appendsNeedLock(db: Executor): boolean {
  return !singleSession.has(db.getExecutor().adapter);
}
