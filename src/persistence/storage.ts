import { sql } from 'kysely';
import type { Executor } from './database';
import type { StoredBlobKind } from './schema';

/**
 * The storage counter of each organisation, the reservations that hold
 * bytes for uploads in flight, and the ledger of counted blobs. The counter
 * only moves through `tryAddUsage` (a conditional update) and
 * `subtractUsage`, so the cap holds under any concurrency.
 */

export async function readOrgStorage(db: Executor, orgId: string): Promise<{ usedBytes: number; quotaBytes: number | null }> {
  const row = await db.selectFrom('orgStorage').select(['usedBytes', 'quotaBytes']).where('orgId', '=', orgId).executeTakeFirst();
  return { usedBytes: Number(row?.usedBytes ?? 0), quotaBytes: row?.quotaBytes == null ? null : Number(row.quotaBytes) };
}

async function ensureOrgStorage(db: Executor, orgId: string) {
  await db.insertInto('orgStorage').values({ orgId }).onConflict((oc) => oc.column('orgId').doNothing()).execute();
}

/**
 * Adds `bytes` to the org's usage if the result stays within `cap`, in one
 * statement: concurrent callers each see the others' committed increments.
 * Returns the new usage, or null when the cap would be passed.
 */
export async function tryAddUsage(db: Executor, orgId: string, bytes: number, cap: number): Promise<number | null> {
  await ensureOrgStorage(db, orgId);
  const row = await db
    .updateTable('orgStorage')
    .set((eb) => ({ usedBytes: eb('usedBytes', '+', bytes) }))
    .where('orgId', '=', orgId)
    .where(sql<boolean>`used_bytes + ${bytes} <= ${cap}`)
    .returning('usedBytes')
    .executeTakeFirst();
  return row ? Number(row.usedBytes) : null;
}

export async function subtractUsage(db: Executor, orgId: string, bytes: number) {
  if (bytes <= 0) return;
  await db
    .updateTable('orgStorage')
    .set({ usedBytes: sql<number>`greatest(used_bytes - ${bytes}, 0)` })
    .where('orgId', '=', orgId)
    .execute();
}

export async function setQuotaOverride(db: Executor, orgId: string, quotaBytes: number | null) {
  await ensureOrgStorage(db, orgId);
  await db.updateTable('orgStorage').set({ quotaBytes }).where('orgId', '=', orgId).execute();
}

export type ReservationRow = { id: string; orgId: string; bytes: number; blobKeys: string[] };

export async function insertReservation(db: Executor, reservation: ReservationRow & { createdAt: Date; expiresAt: Date }) {
  await db
    .insertInto('storageReservations')
    .values({ ...reservation, blobKeys: JSON.stringify(reservation.blobKeys) })
    .execute();
}

/** Removes a reservation and returns it; undefined when it was already committed, released or swept. */
export async function takeReservation(db: Executor, id: string): Promise<ReservationRow | undefined> {
  const row = await db.deleteFrom('storageReservations').where('id', '=', id).returning(['id', 'orgId', 'bytes', 'blobKeys']).executeTakeFirst();
  return row ? { ...row, bytes: Number(row.bytes) } : undefined;
}

export async function extendReservation(db: Executor, id: string, expiresAt: Date) {
  await db.updateTable('storageReservations').set({ expiresAt }).where('id', '=', id).execute();
}

/** Removes up to `limit` reservations that expired before `now`, returning them. */
export async function takeExpiredReservations(db: Executor, now: Date, limit: number): Promise<ReservationRow[]> {
  const rows = await db
    .deleteFrom('storageReservations')
    .where('id', 'in', (eb) => eb.selectFrom('storageReservations').select('id').where('expiresAt', '<', now).limit(limit))
    .returning(['id', 'orgId', 'bytes', 'blobKeys'])
    .execute();
  return rows.map((r) => ({ ...r, bytes: Number(r.bytes) }));
}

export type LedgerEntry = { key: string; size: number; kind: StoredBlobKind };

export async function insertStoredBlobs(db: Executor, orgId: string, entries: LedgerEntry[], at: Date) {
  if (entries.length === 0) return;
  await db
    .insertInto('storedBlobs')
    .values(entries.map((e) => ({ ...e, orgId, createdAt: at })))
    .execute();
}

/** Removes ledger entries, returning what was removed (keys not in the ledger are skipped). */
export async function deleteStoredBlobs(db: Executor, keys: string[]): Promise<Array<{ key: string; orgId: string; size: number }>> {
  if (keys.length === 0) return [];
  const rows = await db.deleteFrom('storedBlobs').where('key', 'in', keys).returning(['key', 'orgId', 'size']).execute();
  return rows.map((r) => ({ ...r, size: Number(r.size) }));
}

export async function findStoredBlob(db: Executor, key: string) {
  return db.selectFrom('storedBlobs').selectAll().where('key', '=', key).executeTakeFirst();
}

/** Bytes in the ledger and in live reservations: what the counter should read. */
export async function accountedBytes(db: Executor, orgId: string): Promise<{ stored: number; reserved: number }> {
  const stored = await db
    .selectFrom('storedBlobs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('n'))
    .where('orgId', '=', orgId)
    .executeTakeFirstOrThrow();
  const reserved = await db
    .selectFrom('storageReservations')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('bytes'), sql<number>`0`).as('n'))
    .where('orgId', '=', orgId)
    .executeTakeFirstOrThrow();
  return { stored: Number(stored.n), reserved: Number(reserved.n) };
}
