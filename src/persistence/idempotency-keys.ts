import type { Executor } from './database';

/** Stored responses for `Idempotency-Key` retries (src/limits/idempotency.ts holds the rules). */

export type IdempotencyPlaceholder = { requestHash: string; statusCode: number; responseBody: string; createdAt: Date };

/** Claims (owner, key) with a placeholder; false when the row exists. */
export async function insertIdempotencyPlaceholder(db: Executor, owner: string, key: string, placeholder: IdempotencyPlaceholder): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotencyKeys')
    .values({ owner, key, ...placeholder })
    .onConflict((oc) => oc.columns(['owner', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  return Boolean(inserted);
}

/** Replaces a row created at or before `expiredBefore`, or a placeholder (status `inFlight`) created at or before `abandonedBefore`. */
export async function takeOverIdempotencyKey(
  db: Executor,
  owner: string,
  key: string,
  placeholder: IdempotencyPlaceholder,
  limits: { expiredBefore: Date; abandonedBefore: Date; inFlight: number },
): Promise<boolean> {
  const takenOver = await db
    .updateTable('idempotencyKeys')
    .set(placeholder)
    .where('owner', '=', owner)
    .where('key', '=', key)
    .where((eb) =>
      eb.or([eb('createdAt', '<=', limits.expiredBefore), eb.and([eb('statusCode', '=', limits.inFlight), eb('createdAt', '<=', limits.abandonedBefore)])]),
    )
    .returning('key')
    .executeTakeFirst();
  return Boolean(takenOver);
}

export async function findIdempotencyKey(db: Executor, owner: string, key: string) {
  return db.selectFrom('idempotencyKeys').select(['requestHash', 'statusCode', 'responseBody']).where('owner', '=', owner).where('key', '=', key).executeTakeFirst();
}

/** Stores the response of a placeholder still in flight. */
export async function completeIdempotencyKey(db: Executor, owner: string, key: string, response: { statusCode: number; responseBody: string }, inFlight: number): Promise<void> {
  await db.updateTable('idempotencyKeys').set(response).where('owner', '=', owner).where('key', '=', key).where('statusCode', '=', inFlight).execute();
}

export async function deleteIdempotencyPlaceholder(db: Executor, owner: string, key: string, inFlight: number): Promise<void> {
  await db.deleteFrom('idempotencyKeys').where('owner', '=', owner).where('key', '=', key).where('statusCode', '=', inFlight).execute();
}

export async function deleteIdempotencyKeysCreatedBefore(db: Executor, cutoff: Date): Promise<number> {
  const result = await db.deleteFrom('idempotencyKeys').where('createdAt', '<=', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
