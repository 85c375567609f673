import { newRedis } from '../lib/redis';
import pino, { type Logger } from 'pino';
import type { Config } from '../config';
import type { Clock } from '../lib/clock';
import type { Db } from '../persistence/database';
import { ConcurrencyLimit } from './concurrency';
import { FallbackRateLimitStore, FallbackUsageCounter } from './fallback';
import { IdempotencyStore } from './idempotency';
import { MessagesMeter } from './messages-meter';
import { MemoryUsageCounter, MonthlyMeter, RedisUsageCounter } from './monthly-meter';
import { MemoryRateLimitStore, RateLimiter, RedisRateLimitStore } from './rate-limiter';

/** The shared state behind every limit (see src/http/limits.ts for where each is enforced). */
export type Limits = {
  rateLimiter: RateLimiter;
  meter: MonthlyMeter;
  idempotency: IdempotencyStore;
  /** Delivered messages (agent wake-ups) per organisation and month, with the plan's bundle and hard ceiling. */
  messages: MessagesMeter;
  /** Work limited to so many runs at once per key in this process (CSV imports per organisation). */
  running: ConcurrencyLimit;
  /** Flushes the meter and disconnects Redis. Safe to call more than once. */
  close(): Promise<void>;
};

export type LimitsOptions = {
  log?: Logger;
  /** Namespaces Redis keys; tests use a fresh prefix so runs do not see each other's counts. */
  redisKeyPrefix?: string;
};

/** In-process stores, or Redis shared by all instances when `REDIS_URL` is set. */
export function createLimits(config: Pick<Config, 'redisUrl'>, db: Db, clock: Clock, options: LimitsOptions = {}): Limits {
  const log = options.log ?? pino({ level: 'warn' });
  const prefix = options.redisKeyPrefix ?? 'trellis:';
  // lazyConnect: a process that never limits anything (the admin CLI) never connects.
  // One retry and a command timeout: while Redis is away a limit falls back to this instance's count quickly (./fallback.ts).
  const redis = config.redisUrl ? newRedis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 1_000 }) : null;
  redis?.on('error', () => {}); // logged by the fallback, once per outage
  const usage = redis ? new FallbackUsageCounter(new RedisUsageCounter(redis, `${prefix}usage:`), new MemoryUsageCounter(), log) : new MemoryUsageCounter();
  const meter = new MonthlyMeter(db, clock, usage, log);
  let closing: Promise<void> | null = null;
  return {
    rateLimiter: new RateLimiter(
      redis ? new FallbackRateLimitStore(new RedisRateLimitStore(redis, `${prefix}rl:`), new MemoryRateLimitStore(), log) : new MemoryRateLimitStore(),
      clock,
    ),
    meter,
    idempotency: new IdempotencyStore(db, clock, log),
    messages: new MessagesMeter(db, clock),
    running: new ConcurrencyLimit(),
    close: () =>
      (closing ??= (async () => {
        await meter.close();
        if (redis?.status === 'wait') redis.disconnect();
        else if (redis) await redis.quit().catch(() => redis.disconnect());
      })()),
  };
}
