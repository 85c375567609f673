import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock';

/**
 * Sliding-window rate limits: a bucket allows `limit` hits in any window of
 * `windowMs`. Every hit's time is kept (a log, not two fixed windows), so a
 * client cannot double its rate by straddling a window edge.
 */

export type RateLimitDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the oldest hit leaves the window and one slot frees up (now, for an empty bucket). */
  resetAt: Date;
};

/** A bucket after an operation: whether the hit was recorded, hits in the window, oldest hit (ms) or null. */
export type WindowState = { recorded: boolean; count: number; oldestAt: number | null };

/** Keeps the hit logs. Each operation is atomic per key, so two instances sharing Redis never both take the last slot. */
export interface RateLimitStore {
  /** Records a hit at `now` unless `limit` hits already fall inside the window. */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowState>;
  /** The bucket as it stands, recording nothing. */
  peek(key: string, windowMs: number, now: number): Promise<WindowState>;
}

export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
  ) {}

  /** Takes a slot if one is free. */
  async consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    const now = this.clock.now().getTime();
    const state = await this.store.hit(key, limit, windowMs, now);
    return decide(state, state.recorded, limit, windowMs, now);
  }

  /** Would a hit be allowed now? Takes nothing. */
  async check(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    const now = this.clock.now().getTime();
    const state = await this.store.peek(key, windowMs, now);
    return decide(state, state.count < limit, limit, windowMs, now);
  }
}

function decide(state: WindowState, allowed: boolean, limit: number, windowMs: number, now: number): RateLimitDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - state.count),
    resetAt: new Date(state.oldestAt === null ? now : state.oldestAt + windowMs),
  };
}

const SWEEP_EVERY_MS = 60_000;

/** One process's buckets. Empty buckets are dropped, and a periodic sweep drops buckets nobody came back to. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, MemoryBucket>();
  private lastSweepAt = Number.NEGATIVE_INFINITY;

  async hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowState> {
    this.sweepOccasionally(now);
    const bucket = this.liveBucket(key, windowMs, now) ?? { windowMs, hits: [], start: 0 };
    const recorded = bucket.hits.length - bucket.start < limit;
    if (recorded) bucket.hits.push(now);
    bucket.windowMs = windowMs;
    if (bucket.hits.length > bucket.start) this.buckets.set(key, bucket);
    return { recorded, count: bucket.hits.length - bucket.start, oldestAt: bucket.hits[bucket.start] ?? null };
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowState> {
    const bucket = this.liveBucket(key, windowMs, now);
    return { recorded: false, count: bucket ? bucket.hits.length - bucket.start : 0, oldestAt: bucket ? bucket.hits[bucket.start]! : null };
  }

  /** Buckets held; for tests of the memory bound. */
  get size(): number {
    return this.buckets.size;
  }

  /** The key's bucket with its expired hits dropped; undefined (and forgotten) when none is left. */
  private liveBucket(key: string, windowMs: number, now: number): MemoryBucket | undefined {
    const bucket = this.buckets.get(key);
    if (!bucket) return undefined;
    dropExpired(bucket, windowMs, now);
    if (bucket.hits.length === bucket.start) {
      this.buckets.delete(key);
      return undefined;
    }
    return bucket;
  }

  private sweepOccasionally(now: number) {
    if (now - this.lastSweepAt < SWEEP_EVERY_MS) return;
    this.lastSweepAt = now;
    for (const [key, bucket] of this.buckets) {
      dropExpired(bucket, bucket.windowMs, now);
      if (bucket.hits.length === bucket.start) this.buckets.delete(key);
    }
  }
}

/**
 * A bucket's hit times, oldest first, live from `start`: dropping expired hits
 * moves `start` on rather than shifting the array each hit (a bucket under a
 * high limit holds a minute of hits: thousands to move for every request).
 */
type MemoryBucket = { windowMs: number; hits: number[]; start: number };

/** Spent slots are cut off the array once they are most of it, so it stays within twice the live hits. */
const COMPACT_AFTER = 64;

/** A hit at `t` counts while `now - t < windowMs` (the Redis script removes the same ones): the hits before the first live one go. */
function dropExpired(bucket: MemoryBucket, windowMs: number, now: number) {
  const { hits } = bucket;
  while (bucket.start < hits.length && !(now - hits[bucket.start]! < windowMs)) bucket.start++;
  if (bucket.start === hits.length) {
    hits.length = 0;
    bucket.start = 0;
  } else if (bucket.start >= COMPACT_AFTER && bucket.start * 2 >= hits.length) {
    hits.splice(0, bucket.start);
    bucket.start = 0;
  }
}

// A sorted set per bucket, scored by hit time. The script runs atomically in
// Redis; time comes from the caller (services.clock) so every instance and
// every test agrees on it. The key expires with its newest hit.
const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local recorded = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  recorded = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {recorded, count, oldest[2] or '-1'}
`;

const PEEK_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, redis.call('ZCARD', KEYS[1]), oldest[2] or '-1'}
`;

/** Buckets shared by every instance through Redis (REDIS_URL). */
export class RedisRateLimitStore implements RateLimitStore {
  private sequence = 0;
  private readonly instance = Math.random().toString(36).slice(2, 10);

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowState> {
    // Members must be unique: two hits in the same millisecond are two hits.
    const member = `${now}:${this.instance}:${++this.sequence}`;
    return parse(await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, now, windowMs, limit, member));
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowState> {
    return parse(await this.redis.eval(PEEK_SCRIPT, 1, this.prefix + key, now, windowMs));
  }
}

function parse(reply: unknown): WindowState {
  const [recorded, count, oldest] = reply as [number, number, string];
  const oldestAt = Number(oldest);
  return { recorded: recorded === 1, count: Number(count), oldestAt: oldestAt < 0 ? null : oldestAt };
}
