import { sql } from 'kysely';
import { INSTANCE_ID } from '../lib/instance';
import type { Tx } from './database';

/**
 * One writer at a time per document log. Every append to a document's log
 * and every compaction of it first locks the document's head row (an upsert,
 * so the first append creates it) and holds that lock until its transaction
 * commits. Two instances holding the same document on one Postgres therefore
 * take turns: a document's log sequence numbers are drawn and committed in
 * the same order, and a compaction never folds past an append still in
 * flight. The lock dies with the transaction: an instance that dies holding
 * it loses its connection, Postgres rolls the transaction back (nothing in it
 * was acknowledged) and the next writer goes on. See docs/SCALING.md.
 */

/**
 * Locks the heads of `documents` (in name order, so two writers never wait
 * on each other crosswise) and records the appends to come. Call inside the
 * transaction that appends or compacts.
 */
export async function lockDocumentLogs(tx: Tx, appendsByDocument: ReadonlyMap<string, number>): Promise<void> {
  if (appendsByDocument.size === 0) return;
  const documents = [...appendsByDocument.keys()].sort();
  // One statement locks them all; VALUES rows are inserted (and conflicting rows locked) in order.
  await tx
    .insertInto('documentLogHeads')
    .values(documents.map((document) => ({ document, appends: appendsByDocument.get(document)!, writer: INSTANCE_ID })))
    .onConflict((oc) =>
      oc.column('document').doUpdateSet({
        appends: sql`document_log_heads.appends + excluded.appends`,
        writer: INSTANCE_ID,
        updatedAt: sql`now()`,
      }),
    )
    .execute();
}
