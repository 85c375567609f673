import { sql } from 'kysely';
import { bytea } from './bytea';
import type { Executor, Tx } from './database';
import { appendsNeedLock, lockDocumentLogs } from './document-log-heads';
import type { AuthorKind } from '../model/roles';

/** Many Y updates appended to the durable log in one statement per chunk (group commit). */

// Postgres (and PGlite) take at most 65,535 parameters a statement; past that the count wraps and the bind fails.
const MAX_PARAMETERS = 65_535;

export type UpdateAuthor = { principalType: AuthorKind; id: string } | null;

export type LoggedUpdate = {
  document: string;
  update: Uint8Array;
  /** Who made it (null: the system or unknown). */
  author: UpdateAuthor;
  /** False for a sync client's update, whose events are committed after it (see migration 0007). */
  derived: boolean;
  /** The number of the instance logging a client's update, which derives it unless it dies first (instances.ts). */
  writer?: number | null;
  /** The run the update joined (docs/RUNS.md). */
  runId?: string | null;
};

/**
 * Appends updates in order and returns their sequence numbers, in the same
 * order. The documents' log heads are locked first (in the caller's
 * transaction, or one of its own), so appends to one document commit in
 * sequence order whichever instance makes them (document-log-heads.ts).
 */
export async function appendUpdates(db: Executor, rows: ReadonlyArray<LoggedUpdate>): Promise<number[]> {
  if (rows.length === 0) return [];
  if (appendsNeedLock(db)) {
    if (!db.isTransaction) return db.transaction().execute((tx) => appendUpdates(tx, rows));
    await lockDocumentLogs(db as Tx, rows.map((row) => row.document));
  }
  const values = rows.map((r) => ({
    document: r.document,
    update: bytea(r.update),
    derived: r.derived,
    principalType: r.author?.principalType ?? null,
    principalId: r.author?.id ?? null,
    writer: r.writer ?? null,
    runId: r.runId ?? null,
  }));
  // A parameter per column of each row: a column added to the log shortens the chunks by itself.
  const rowsPerStatement = Math.floor(MAX_PARAMETERS / Object.keys(values[0]!).length);
  // All or nothing: more rows than one statement holds go in one transaction.
  if (values.length > rowsPerStatement && !db.isTransaction) return db.transaction().execute((tx) => appendUpdates(tx, rows));
  const seqs: number[] = [];
  for (let from = 0; from < values.length; from += rowsPerStatement) {
    // One multi-row VALUES insert: Postgres assigns the identity in row order and returns the rows in that order.
    const inserted = await db
      .insertInto('documentUpdates')
      .values(values.slice(from, from + rowsPerStatement))
      .returning('seq')
      .execute();
    for (const row of inserted) seqs.push(Number(row.seq));
  }
  return seqs;
}

/**
 * Records that the events and projections of these updates are committed
 * (call in that transaction). The numbers go as one array literal: a typing
 * burst marks thousands, and a parameter each made a statement Kysely,
 * PGlite and the parser all had to walk.
 */
export async function markUpdatesDerived(db: Executor, document: string, seqs: readonly number[]): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('documentUpdates')
    .set({ derived: true })
    .where('document', '=', document)
    .where('seq', '=', sql<number>`any(${`{${seqs.join(',')}}`}::bigint[])`)
    .where('derived', '=', false)
    .execute();
}

/** The updates of a document whose events are still to be derived, with who wrote each and the run it joined. */
export async function listUnderivedUpdates(db: Executor, document: string): Promise<Array<{ seq: number; principalId: string | null; runId: string | null }>> {
  const rows = await db.selectFrom('documentUpdates').select(['seq', 'principalId', 'runId']).where('document', '=', document).where('derived', '=', false).execute();
  return rows.map((row) => ({ seq: Number(row.seq), principalId: row.principalId, runId: row.runId }));
}
