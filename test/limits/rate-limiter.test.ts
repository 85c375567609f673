import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock';
import { MemoryRateLimitStore, RateLimiter, RedisRateLimitStore, type RateLimitStore } from '../../src/limits/rate-limiter';

const START = Date.UTC(2027, 0, 15, 12, 0, 0);
const WINDOW = 60_000;

/** The same behaviour from every store. */
function slidingWindowContract(makeStore: () => RateLimitStore) {
  let clock: ManualClock;
  let limiter: RateLimiter;
  let key: string;

  const setup = () => {
    clock = new ManualClock(START);
    limiter = new RateLimiter(makeStore(), clock);
    key = `bucket-${randomUUID()}`;
  };

  it('allows up to the limit, counting remaining down, then refuses', async () => {
    setup();
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const decision = await limiter.consume(key, 3, WINDOW);
      expect(decision.allowed).toBe(true);
      remaining.push(decision.remaining);
      clock.advance(1_000);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await limiter.consume(key, 3, WINDOW);
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: new Date(START + WINDOW) });
  });

  it('slides: a slot frees exactly when the oldest hit leaves the window', async () => {
    setup();
    await limiter.consume(key, 2, WINDOW);
    clock.advance(30_000);
    await limiter.consume(key, 2, WINDOW);
    clock.set(START + WINDOW - 1);
    expect((await limiter.consume(key, 2, WINDOW)).allowed).toBe(false);
    clock.set(START + WINDOW);
    const freed = await limiter.consume(key, 2, WINDOW);
    expect(freed.allowed).toBe(true);
    expect(freed.remaining).toBe(0);
    // The oldest live hit is now the one at +30 s.
    expect(freed.resetAt).toEqual(new Date(START + 30_000 + WINDOW));
  });

  it('does not record refused hits, so hammering does not extend the wait', async () => {
    setup();
    await limiter.consume(key, 1, WINDOW);
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000);
      expect((await limiter.consume(key, 1, WINDOW)).allowed).toBe(false);
    }
    clock.set(START + WINDOW);
    expect((await limiter.consume(key, 1, WINDOW)).allowed).toBe(true);
  });

  it('counts a steady stream under a high limit exactly, hit by hit, as the oldest hits leave the window', async () => {
    setup();
    // 2,000 hits 100 ms apart against a 60 s window: the window holds 600 of them once full, and each hit then pushes one out.
    for (let i = 0; i < 2_000; i++) {
      const decision = await limiter.consume(key, 100_000, WINDOW);
      const live = Math.min(i + 1, WINDOW / 100);
      const oldest = START + (i + 1 - live) * 100;
      expect(decision).toEqual({ allowed: true, limit: 100_000, remaining: 100_000 - live, resetAt: new Date(oldest + WINDOW) });
      clock.advance(100);
    }
    const checked = await limiter.check(key, 100_000, WINDOW);
    expect(checked.remaining).toBe(100_000 - (WINDOW / 100 - 1));
  });

  it('check() reports without taking a slot', async () => {
    setup();
    expect(await limiter.check(key, 2, WINDOW)).toEqual({ allowed: true, limit: 2, remaining: 2, resetAt: new Date(START) });
    await limiter.consume(key, 2, WINDOW);
    await limiter.consume(key, 2, WINDOW);
    const full = await limiter.check(key, 2, WINDOW);
    expect(full.allowed).toBe(false);
    expect(full.resetAt).toEqual(new Date(START + WINDOW));
  });

  it('keeps buckets apart', async () => {
    setup();
    await limiter.consume(key, 1, WINDOW);
    expect((await limiter.consume(key, 1, WINDOW)).allowed).toBe(false);
    expect((await limiter.consume(`${key}-other`, 1, WINDOW)).allowed).toBe(true);
  });

  it('takes exactly the limit under concurrent hits', async () => {
    setup();
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.consume(key, 10, WINDOW)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });
}

describe('sliding window, in-process store', () => {
  slidingWindowContract(() => new MemoryRateLimitStore());

  it('drops empty buckets and sweeps abandoned ones, so memory stays bounded', async () => {
    const clock = new ManualClock(START);
    const store = new MemoryRateLimitStore();
    const limiter = new RateLimiter(store, clock);
    for (let i = 0; i < 100; i++) await limiter.consume(`ip-${i}`, 5, WINDOW);
    expect(store.size).toBe(100);
    clock.advance(WINDOW);
    // A bucket read after its window is dropped at once.
    await limiter.check('ip-0', 5, WINDOW);
    expect(store.size).toBe(99);
    // The others are swept by the next hit once the sweep interval has passed.
    await limiter.consume('fresh', 5, WINDOW);
    expect(store.size).toBe(1);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('sliding window, Redis store', () => {
  let redis: Redis;
  const prefix = `trellis-test:${randomUUID()}:`;
  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  slidingWindowContract(() => new RedisRateLimitStore(redis, prefix));

  it('lets keys expire with their window', async () => {
    const limiter = new RateLimiter(new RedisRateLimitStore(redis, prefix), new ManualClock(START));
    await limiter.consume('expiring', 5, WINDOW);
    const ttl = await redis.pttl(`${prefix}expiring`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WINDOW);
  });
});
