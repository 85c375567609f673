import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock';
import { newId } from '../../src/lib/ids';
import { createLimits } from '../../src/limits/index';
import { MemoryUsageCounter, MonthlyMeter, monthOf, RedisUsageCounter, type UsageCounter } from '../../src/limits/monthly-meter';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { freshDataStore } from '../helpers/database';

const silent = { warn: () => {} };
let store: Awaited<ReturnType<typeof freshDataStore>>;
let database: DatabaseHandle;

beforeAll(async () => {
  store = await freshDataStore();
  database = await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir });
});
afterAll(async () => {
  await database.close();
  await store.dispose();
});

async function newOrg(plan: 'free' | 'pro' | 'scale' = 'free') {
  const id = newId('org');
  await database.db.insertInto('orgs').values({ id, slug: id.toLowerCase(), name: 'Org', plan }).execute();
  return id;
}

async function storedCalls(orgId: string, period: string) {
  const row = await database.db.selectFrom('apiUsage').select('calls').where('orgId', '=', orgId).where('period', '=', period).executeTakeFirst();
  return row?.calls ?? null;
}

describe('calendar month', () => {
  it('names the UTC month and resets at the next one', () => {
    expect(monthOf(new Date('2027-03-31T23:59:59.999Z'))).toEqual({ period: '2027-03', resetAt: new Date('2027-04-01T00:00:00.000Z') });
    expect(monthOf(new Date('2027-12-15T10:00:00Z'))).toEqual({ period: '2027-12', resetAt: new Date('2028-01-01T00:00:00.000Z') });
  });

  it('answers each instant with its own month when asked back and forth across a month end', () => {
    const sequence: Array<[string, string]> = [
      ['2027-03-01T00:00:00.000Z', '2027-03'],
      ['2027-03-31T23:59:59.999Z', '2027-03'],
      ['2027-04-01T00:00:00.000Z', '2027-04'],
      ['2027-03-31T23:59:59.999Z', '2027-03'],
      ['2027-02-28T23:59:59.999Z', '2027-02'],
      ['2027-03-01T00:00:00.000Z', '2027-03'],
      ['2027-04-30T12:00:00.000Z', '2027-04'],
    ];
    for (const [at, period] of sequence) {
      const month = monthOf(new Date(at));
      expect(month.period, at).toBe(period);
      expect(month.resetAt.getTime(), at).toBe(Date.UTC(Number(period.slice(0, 4)), Number(period.slice(5)), 1));
    }
    // Each answer's reset instant is its own: changing one changes no later answer.
    monthOf(new Date('2027-04-02T00:00:00Z')).resetAt.setUTCFullYear(1999);
    expect(monthOf(new Date('2027-04-02T00:00:00Z')).resetAt.toISOString()).toBe('2027-05-01T00:00:00.000Z');
  });
});

function meterContract(makeCounter: () => UsageCounter) {
  it('loads the stored total once, counts without the database, and flushes the increments', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const meter = new MonthlyMeter(database.db, clock, makeCounter(), silent, 60_000);
    const orgId = await newOrg();
    await database.db.insertInto('apiUsage').values({ orgId, period: '2027-05', calls: 40 }).execute();

    expect((await meter.read({ orgId })).used).toBe(40);
    for (let i = 0; i < 5; i++) await meter.count({ orgId });
    // Another writer (another instance without Redis, the admin CLI) adds meanwhile: the flush adds, never overwrites.
    await database.db.updateTable('apiUsage').set({ calls: 42 }).where('orgId', '=', orgId).execute();
    expect(await storedCalls(orgId, '2027-05')).toBe(42);
    await meter.flush();
    expect(await storedCalls(orgId, '2027-05')).toBe(47);
    await meter.close();
  });

  it('reports the plan cap and the next month start, and starts over in a new month', async () => {
    const clock = new ManualClock(new Date('2027-05-31T23:59:59Z'));
    const meter = new MonthlyMeter(database.db, clock, makeCounter(), silent, 60_000);
    const orgId = await newOrg('pro');
    const may = await meter.count({ orgId });
    expect(may).toMatchObject({ plan: 'pro', cap: 100_000, used: 1, period: '2027-05', resetAt: new Date('2027-06-01T00:00:00Z') });
    clock.advance(1_000);
    const june = await meter.count({ orgId });
    expect(june).toMatchObject({ used: 1, period: '2027-06', resetAt: new Date('2027-07-01T00:00:00Z') });
    await meter.close();
    expect(await storedCalls(orgId, '2027-05')).toBe(1);
    expect(await storedCalls(orgId, '2027-06')).toBe(1);
  });

  it('sees a plan change within a second', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const meter = new MonthlyMeter(database.db, clock, makeCounter(), silent, 60_000);
    const orgId = await newOrg('free');
    expect((await meter.read({ orgId })).cap).toBe(10_000);
    await database.db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', orgId).execute();
    clock.advance(1_000);
    expect((await meter.read({ orgId })).cap).toBe(1_000_000);
    await meter.close();
  });

  it('meters anonymous callers per IP on the free cap and stores nothing', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const meter = new MonthlyMeter(database.db, clock, makeCounter(), silent, 60_000);
    const ip = `10.${Math.floor(Math.random() * 250)}.0.${Math.floor(Math.random() * 250)}`;
    await meter.count({ ip });
    expect(await meter.count({ ip })).toMatchObject({ plan: 'free', cap: 10_000, used: 2 });
    const before = await database.db.selectFrom('apiUsage').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    await meter.close();
    const after = await database.db.selectFrom('apiUsage').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('loses no count when the first calls of a month arrive together', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const meter = new MonthlyMeter(database.db, clock, makeCounter(), silent, 60_000);
    const orgId = await newOrg();
    await database.db.insertInto('apiUsage').values({ orgId, period: '2027-05', calls: 7 }).execute();
    const results = await Promise.all(Array.from({ length: 20 }, () => meter.count({ orgId })));
    expect(Math.max(...results.map((r) => r.used))).toBe(27);
    await meter.close();
    expect(await storedCalls(orgId, '2027-05')).toBe(27);
  });
}

describe('monthly meter, in-process counter', () => {
  meterContract(() => new MemoryUsageCounter());

  it('holds a bounded number of keys', async () => {
    const counter = new MemoryUsageCounter(3);
    for (const ip of ['a', 'b', 'c', 'd']) await counter.increment(`2027-05|ip:${ip}`, async () => 0);
    // The oldest key was forgotten: it starts over.
    expect(await counter.read('2027-05|ip:a', async () => 0)).toBe(0);
    expect(await counter.read('2027-05|ip:d', async () => 0)).toBe(1);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('monthly meter, Redis counter', () => {
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

  meterContract(() => new RedisUsageCounter(redis, `${prefix}${randomUUID()}:`));

  it('shares one count between instances, and each persists its own increments', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const shared = `${prefix}shared:`;
    const first = new MonthlyMeter(database.db, clock, new RedisUsageCounter(redis, shared), silent, 60_000);
    const second = new MonthlyMeter(database.db, clock, new RedisUsageCounter(redis, shared), silent, 60_000);
    const orgId = await newOrg();
    await database.db.insertInto('apiUsage').values({ orgId, period: '2027-05', calls: 100 }).execute();
    await first.count({ orgId });
    await second.count({ orgId });
    expect((await first.count({ orgId })).used).toBe(103);
    expect((await second.read({ orgId })).used).toBe(103);
    await first.close();
    await second.close();
    expect(await storedCalls(orgId, '2027-05')).toBe(103);
  });

  it('createLimits uses Redis when REDIS_URL is set and closes cleanly', async () => {
    const clock = new ManualClock(new Date('2027-05-10T08:00:00Z'));
    const limits = createLimits({ redisUrl: process.env.TEST_REDIS_URL }, database.db, clock, { redisKeyPrefix: `${prefix}factory:` });
    await limits.rateLimiter.consume('k', 5, 60_000);
    expect(await redis.exists(`${prefix}factory:rl:k`)).toBe(1);
    await limits.close();
    await limits.close();
  });
});
