import { ApiError, errors } from '../errors';
import { capsFor } from '../limits/plans';
import { newId } from '../lib/ids';
import { findOrgPlan } from '../persistence/accounts';
import type { Executor, Tx } from '../persistence/database';
import type { StoredBlobKind } from '../persistence/schema';
import {
  deleteStoredBlobs,
  insertReservation,
  insertStoredBlobs,
  readOrgStorage,
  setQuotaOverride,
  subtractUsage,
  takeExpiredReservations,
  takeReservation,
  tryAddUsage,
  type LedgerEntry,
} from '../persistence/storage';
import type { Services } from './services';

/**
 * The organisation's storage quota (SPEC "Plan caps", counting rule 6).
 * Every stored byte is counted: files and their thumbnails, doc images,
 * avatars, support screenshots. The flow for anything that stores bytes:
 *
 * 1. `reserveStorage` before writing the blob: one conditional UPDATE adds
 *    the bytes to the org's counter only if the result stays within the
 *    cap, so concurrent uploads cannot pass it (413 `storage_quota`).
 * 2. Write the blob.
 * 3. `commitStorage(tx, ...)` in the transaction that records what the
 *    bytes belong to: the reservation becomes ledger entries
 *    (`stored_blobs`). Or `releaseStorage` when anything failed: the bytes
 *    go back and the reserved blob keys are deleted.
 *
 * A reservation that is never committed (a crash, an abandoned direct
 * upload) expires; `sweepExpiredReservations` (the trash job) gives its
 * bytes back and deletes its blobs. `freeStoredBlobs` un-counts blobs that
 * are deleted for good. `storeCountedBlob` does all of it for a single blob.
 */

export type StorageReservation = { id: string; orgId: string; bytes: number; blobKeys: string[] };

/** How long a reservation lives without a commit; direct uploads pass their own. */
const DEFAULT_RESERVATION_TTL_MS = 15 * 60 * 1000;

export async function storageCap(services: Services, db: Executor, orgId: string): Promise<number> {
  const plan = await findOrgPlan(db, orgId);
  const { quotaBytes } = await readOrgStorage(db, orgId);
  return quotaBytes ?? capsFor(plan ?? 'free').storageBytes;
}

/** The org's usage (committed and reserved bytes) and its cap. */
export async function storageUsage(services: Services, orgId: string): Promise<{ used: number; cap: number }> {
  const [{ usedBytes }, cap] = await Promise.all([readOrgStorage(services.db, orgId), storageCap(services, services.db, orgId)]);
  return { used: usedBytes, cap };
}

/** An operator's override of the plan's storage cap for one org (a granted increase); null goes back to the plan's. */
export async function setStorageQuota(services: Services, orgId: string, quotaBytes: number | null): Promise<void> {
  await setQuotaOverride(services.db, orgId, quotaBytes);
}

async function addWithinCap(services: Services, db: Executor, orgId: string, bytes: number) {
  const cap = await storageCap(services, db, orgId);
  if ((await tryAddUsage(db, orgId, bytes, cap)) === null) {
    throw errors.storageQuota((await readOrgStorage(db, orgId)).usedBytes, cap);
  }
}

/**
 * Holds `bytes` of the org's quota for blobs about to be written under
 * `blobKeys`. 413 `storage_quota` with `{ current, cap }` when they do not fit.
 */
export async function reserveStorage(
  services: Services,
  orgId: string,
  bytes: number,
  options: { blobKeys: string[]; ttlMs?: number },
): Promise<StorageReservation> {
  const reservation: StorageReservation = { id: newId('rsv'), orgId, bytes, blobKeys: options.blobKeys };
  const now = services.clock.now();
  await services.db.transaction().execute(async (tx) => {
    await addWithinCap(services, tx, orgId, bytes);
    await insertReservation(tx, { ...reservation, createdAt: now, expiresAt: new Date(now.getTime() + (options.ttlMs ?? DEFAULT_RESERVATION_TTL_MS)) });
  });
  return reservation;
}

export class ReservationExpiredError extends ApiError {
  constructor() {
    super(409, 'conflict', 'The upload took too long and its storage reservation expired; upload the file again.');
  }
}

/**
 * Turns a reservation into ledger entries inside the caller's transaction.
 * The stored sizes may differ from what was reserved (an image re-encoded,
 * a thumbnail added): the difference is added within the cap (413 when it
 * does not fit, and the caller's transaction rolls back) or given back.
 * Returns the reserved keys that were not stored, for the caller to delete
 * after commit.
 */
export async function commitStorage(services: Services, tx: Tx, reservation: StorageReservation, stored: LedgerEntry[]): Promise<string[]> {
  const held = await takeReservation(tx, reservation.id);
  if (!held) throw new ReservationExpiredError();
  const total = stored.reduce((sum, entry) => sum + entry.size, 0);
  const delta = total - held.bytes;
  if (delta > 0) await addWithinCap(services, tx, held.orgId, delta);
  else await subtractUsage(tx, held.orgId, -delta);
  await insertStoredBlobs(tx, held.orgId, stored, services.clock.now());
  const storedKeys = new Set(stored.map((entry) => entry.key));
  return held.blobKeys.filter((key) => !storedKeys.has(key));
}

/** Gives a reservation's bytes back and deletes its blobs. Safe to call after a commit (then it does nothing). */
export async function releaseStorage(services: Services, reservation: StorageReservation): Promise<void> {
  const held = await services.db.transaction().execute(async (tx) => {
    const row = await takeReservation(tx, reservation.id);
    if (row) await subtractUsage(tx, row.orgId, row.bytes);
    return row;
  });
  if (held) await deleteBlobsQuietly(services, held.blobKeys);
}

/** Un-counts blobs that are being deleted for good (inside the caller's transaction); delete the blobs after commit. */
export async function freeStoredBlobs(tx: Tx, keys: string[]): Promise<void> {
  const removed = await deleteStoredBlobs(tx, keys);
  const byOrg = new Map<string, number>();
  for (const entry of removed) byOrg.set(entry.orgId, (byOrg.get(entry.orgId) ?? 0) + entry.size);
  for (const [orgId, bytes] of byOrg) await subtractUsage(tx, orgId, bytes);
}

/** Deletes blobs, logging (not throwing) failures: the bytes are already un-counted, a leftover object only costs disk. */
export async function deleteBlobsQuietly(services: Services, keys: string[]): Promise<void> {
  for (const key of keys) {
    await services.blobs.delete(key).catch((error) => services.log.warn({ err: error, key }, 'could not delete a blob'));
  }
}

/**
 * Stores one blob counted against the org's quota (doc images, avatars,
 * support screenshots): reserve, write, commit; on any failure the bytes
 * are given back and nothing is left in the store. `record` runs in the
 * committing transaction, for a row that refers to the blob.
 */
export async function storeCountedBlob(
  services: Services,
  blob: { orgId: string; key: string; bytes: Buffer; contentType: string; kind: StoredBlobKind },
  record?: (tx: Tx) => Promise<void>,
): Promise<{ size: number }> {
  const reservation = await reserveStorage(services, blob.orgId, blob.bytes.byteLength, { blobKeys: [blob.key] });
  try {
    const { size } = await services.blobs.put(blob.key, blob.bytes, blob.contentType);
    await services.db.transaction().execute(async (tx) => {
      await commitStorage(services, tx, reservation, [{ key: blob.key, size, kind: blob.kind }]);
      await record?.(tx);
    });
    return { size };
  } catch (error) {
    await releaseStorage(services, reservation);
    throw error;
  }
}

/** Gives back the bytes of reservations that expired uncommitted and deletes their blobs. Returns how many. */
export async function sweepExpiredReservations(services: Services): Promise<number> {
  let swept = 0;
  for (;;) {
    const expired = await services.db.transaction().execute(async (tx) => {
      const rows = await takeExpiredReservations(tx, services.clock.now(), 100);
      for (const row of rows) await subtractUsage(tx, row.orgId, row.bytes);
      return rows;
    });
    for (const row of expired) await deleteBlobsQuietly(services, row.blobKeys);
    swept += expired.length;
    if (expired.length < 100) return swept;
  }
}
