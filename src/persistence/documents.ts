import { bytea, byteaAsBase64, fromBase64 } from './bytea';
import type { Executor } from './database';
import type { UpdateAuthor } from './document-log';

/** The durable Y update log and its snapshots. */

export type StoredUpdate = { seq: number; update: Uint8Array; derived: boolean; author: UpdateAuthor };

export type StoredDocument = {
  snapshot: { state: Uint8Array; uptoSeq: number } | null;
  updates: StoredUpdate[];
  /** Bytes in the update tail: compaction is due when this or the count grows. */
  tailBytes: number;
};

/** The snapshot (if any) and every update after it, in order. */
export async function loadStoredDocument(db: Executor, document: string): Promise<StoredDocument> {
  const snapshot = await db
    .selectFrom('documentSnapshots')
    .select([byteaAsBase64('state').as('state'), 'uptoSeq'])
    .where('document', '=', document)
    .executeTakeFirst();
  const uptoSeq = snapshot?.uptoSeq ?? 0;
  const updates = await db
    .selectFrom('documentUpdates')
    .select(['seq', byteaAsBase64('update').as('update'), 'derived', 'principalType', 'principalId'])
    .where('document', '=', document)
    .where('seq', '>', uptoSeq)
    .orderBy('seq')
    .execute();
  const tail = updates.map((u) => ({
    seq: Number(u.seq),
    update: fromBase64(u.update),
    derived: u.derived,
    author: u.principalType && u.principalId ? { principalType: u.principalType, id: u.principalId } : null,
  }));
  return {
    snapshot: snapshot ? { state: fromBase64(snapshot.state), uptoSeq: Number(snapshot.uptoSeq) } : null,
    updates: tail,
    tailBytes: tail.reduce((sum, u) => sum + u.update.byteLength, 0),
  };
}

/**
 * Replaces the snapshot and drops the updates it folds in, atomically. The
 * snapshot was built from the log itself (never from memory), so it holds
 * exactly the updates up to `uptoSeq`.
 */
export async function writeSnapshot(db: Executor, document: string, state: Uint8Array, uptoSeq: number, now: Date) {
  await db
    .insertInto('documentSnapshots')
    .values({ document, state: bytea(state), uptoSeq, updatedAt: now })
    .onConflict((oc) => oc.column('document').doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), uptoSeq, updatedAt: now })))
    .execute();
  await db.deleteFrom('documentUpdates').where('document', '=', document).where('seq', '<=', uptoSeq).execute();
}

export async function countTail(db: Executor, document: string, afterSeq: number): Promise<number> {
  const row = await db
    .selectFrom('documentUpdates')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('document', '=', document)
    .where('seq', '>', afterSeq)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
