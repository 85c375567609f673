import { sql } from 'kysely';
import { base64Of } from './bytea';
import { runStatement } from './raw-statements';
import type { Executor, Tx } from './database';
import { appendsNeedLock } from './document-log-heads';
import { INSTANCE_ID } from '../lib/instance';
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
 * order. Where appends must take turns (document-log-heads.ts), the
 * documents' log heads are locked by the same statement, before it draws a
 * sequence number: appends to one document commit in sequence order
 * whichever instance makes them, and a lone append is one round trip, its
 * own transaction, instead of four.
 */
export async function appendUpdates(db: Executor, rows: ReadonlyArray<LoggedUpdate>): Promise<number[]> {
  if (rows.length === 0) return [];
  const locking = appendsNeedLock(db);
  const documents = locking ? [...new Set(rows.map((row) => row.document))].sort() : [];
  // A parameter per column of each row (and two per locked head).
  const rowsPerStatement = Math.floor((MAX_PARAMETERS - 2 * documents.length) / COLUMNS_PER_ROW);
  // All or nothing: more rows than one statement holds go in one transaction.
  if (rows.length > rowsPerStatement && !db.isTransaction) return db.transaction().execute((tx) => appendUpdates(tx, rows));
  const seqs: number[] = [];
  for (let from = 0; from < rows.length; from += rowsPerStatement) {
    // The heads stay locked until the transaction ends: the first chunk takes them for the rest.
    const { text, parameters } = appendStatement(from === 0 ? documents : [], rows, from, Math.min(rows.length, from + rowsPerStatement));
    const inserted = await runStatement<{ seq: number | string }>(db, text, parameters);
    for (const row of inserted) seqs.push(Number(row.seq));
  }
  return seqs;
}

const COLUMNS_PER_ROW = 7;

/**
 * The append as one statement, its SQL written here rather than built
 * through Kysely: a typist's updates are appended thousands a second, and
 * building and compiling a node tree for each row's seven values cost more
 * than the statement's round trip.
 *
 * With `documents`, the statement first locks their heads (in name order,
 * so two writers never wait on each other crosswise; lockDocumentLogs says
 * why), then inserts the rows in order. The insert reads the count of
 * locked heads as a one-time filter, so Postgres runs the lock to
 * completion before it draws the first sequence number; the rows then take
 * the identity in VALUES order and come back in that order, as a plain
 * multi-row insert's do. Updates go as base64 text (bytea.ts says why).
 */
function appendStatement(documents: readonly string[], rows: ReadonlyArray<LoggedUpdate>, from: number, to: number): { text: string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  const values: string[] = [];
  for (let i = from; i < to; i++) {
    const r = rows[i]!;
    const n = parameters.length;
    parameters.push(r.document, base64Of(r.update), r.derived, r.author?.principalType ?? null, r.author?.id ?? null, r.writer ?? null, r.runId ?? null);
    values.push(`($${n + 1}::text, decode($${n + 2}, 'base64'), $${n + 3}::boolean, $${n + 4}::text, $${n + 5}::text, $${n + 6}::integer, $${n + 7}::text)`);
  }
  const insert = 'insert into document_updates (document, update, derived, principal_type, principal_id, writer, run_id)';
  if (documents.length === 0) return { text: `${insert} values ${values.join(', ')} returning seq`, parameters };
  const heads: string[] = [];
  for (const document of documents) {
    const n = parameters.length;
    parameters.push(document, INSTANCE_ID);
    heads.push(`($${n + 1}, $${n + 2})`);
  }
  return {
    text:
      `with heads as (insert into document_log_heads (document, writer) values ${heads.join(', ')} ` +
      'on conflict (document) do update set writer = excluded.writer, updated_at = now() returning document) ' +
      `${insert} select * from (values ${values.join(', ')}) as appended (document, update, derived, principal_type, principal_id, writer, run_id) ` +
      'where (select count(*) from heads) > 0 returning seq',
    parameters,
  };
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
