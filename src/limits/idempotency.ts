import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import { sha256Hex } from '../lib/secrets';
import type { Db } from '../persistence/database';
import {
  completeIdempotencyKey,
  deleteIdempotencyKeysCreatedBefore,
  deleteIdempotencyPlaceholder,
  findIdempotencyKey,
  insertIdempotencyPlaceholder,
  takeOverIdempotencyKey,
} from '../persistence/idempotency-keys';

/**
 * Stored responses for `Idempotency-Key` retries. A request first claims its
 * (owner, key) with a placeholder row, so a concurrent duplicate finds it and
 * is refused; the response then replaces the placeholder, or the placeholder
 * is released when the response must not be replayed (5xx, 402, 429).
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** A placeholder this old belongs to a request that died with its process; a retry may take it over. */
const ABANDONED_AFTER_MS = 5 * 60_000;
const PURGE_EVERY_MS = 60 * 60_000;
/** `status_code` of a placeholder: the first request is still running. */
const IN_FLIGHT = 0;

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' };

/** What makes two requests "the same": method, path with query, and JSON body. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return sha256Hex(`${method} ${url}\n${JSON.stringify(body ?? null)}`);
}

export class IdempotencyStore {
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  async claim(owner: string, key: string, requestHash: string): Promise<IdempotencyClaim> {
    const now = this.clock.now();
    this.purgeOccasionally(now);
    const placeholder = { requestHash, statusCode: IN_FLIGHT, responseBody: '', createdAt: now };
    // A loop because the row we collided with may be released before we read it.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await insertIdempotencyPlaceholder(this.db, owner, key, placeholder)) return { kind: 'claimed' };
      const limits = { expiredBefore: new Date(now.getTime() - IDEMPOTENCY_TTL_MS), abandonedBefore: new Date(now.getTime() - ABANDONED_AFTER_MS), inFlight: IN_FLIGHT };
      if (await takeOverIdempotencyKey(this.db, owner, key, placeholder, limits)) return { kind: 'claimed' };
      const existing = await findIdempotencyKey(this.db, owner, key);
      if (!existing) continue;
      if (existing.requestHash !== requestHash) return { kind: 'mismatch' };
      if (existing.statusCode === IN_FLIGHT) return { kind: 'in_flight' };
      return { kind: 'replay', statusCode: existing.statusCode, body: existing.responseBody };
    }
    return { kind: 'in_flight' };
  }

  /** Stores the response that later retries will get. */
  async complete(owner: string, key: string, statusCode: number, body: string): Promise<void> {
    await completeIdempotencyKey(this.db, owner, key, { statusCode, responseBody: body }, IN_FLIGHT);
  }

  /** Frees the key: the next request with it runs as if it were the first. */
  async release(owner: string, key: string): Promise<void> {
    await deleteIdempotencyPlaceholder(this.db, owner, key, IN_FLIGHT);
  }

  async purgeExpired(): Promise<number> {
    return deleteIdempotencyKeysCreatedBefore(this.db, new Date(this.clock.now().getTime() - IDEMPOTENCY_TTL_MS));
  }

  /** Expired rows are ignored by `claim` anyway; this only keeps the table small. */
  private purgeOccasionally(now: Date) {
    if (now.getTime() - this.lastPurgeAt < PURGE_EVERY_MS) return;
    this.lastPurgeAt = now.getTime();
    this.purgeExpired().catch((error) => this.log.warn({ err: error }, 'idempotency key purge failed'));
  }
}
