import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import { findOrgPlan } from '../persistence/accounts';
import { addApiUsage, readApiUsage } from '../persistence/api-usage';
import type { Db } from '../persistence/database';
import type { PlanName } from '../persistence/schema';
import { capsFor } from './plans';

/**
 * The monthly API-call counter. Counting is in memory (or one Redis INCR):
 * increments are written to `api_usage` in batches every second and on
 * close, and the stored total is read only the first time an organisation is
 * seen in a month. See docs/LIMITS.md.
 */

/** Who a call is metered against: an organisation, or an anonymous caller's IP (free cap, never stored). */
export type MeterSubject = { orgId: string } | { ip: string };

export type MonthlyUsage = { plan: PlanName; cap: number; used: number; period: string; resetAt: Date };

/**
 * The calendar UTC month holding `at`: `YYYY-MM`, and the instant the next
 * month starts. The last month answered is kept (every metered request asks
 * twice, nearly always of the same month); `resetAt` is a fresh Date each time.
 */
export function monthOf(at: Date): { period: string; resetAt: Date } {
  const ms = at.getTime();
  if (!(ms >= lastMonth.startMs && ms < lastMonth.endMs)) {
    const year = at.getUTCFullYear();
    const month = at.getUTCMonth();
    lastMonth = { startMs: Date.UTC(year, month, 1), endMs: Date.UTC(year, month + 1, 1), period: `${year}-${String(month + 1).padStart(2, '0')}` };
  }
  return { period: lastMonth.period, resetAt: new Date(lastMonth.endMs) };
}
let lastMonth = { startMs: 0, endMs: 0, period: '' };

/** Running totals keyed `<period>|<subject>`. `load` gives the stored total the first time a key is seen. */
export interface UsageCounter {
  read(key: string, load: () => Promise<number>, ttlMs: number): Promise<number>;
  increment(key: string, load: () => Promise<number>, ttlMs: number): Promise<number>;
  /** Drops keys of other months, so memory holds one month at most. */
  forgetPeriodsOtherThan(period: string): void;
}

/** How long a looked-up plan is trusted: an upgrade shows within this (billing may also call `forgetPlan`). */
const PLAN_TTL_MS = 1_000;

export class MonthlyMeter {
  /** Per org, the plan as looked up (or being looked up: the requests that find it expired at once share one query). */
  private readonly plans = new Map<string, { plan: Promise<PlanName>; fetchedAt: number }>();
  /** Calls counted here and not yet added to `api_usage`. */
  private readonly unflushed = new Map<string, { orgId: string; period: string; calls: number }>();
  private flushChain: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly counter: UsageCounter,
    private readonly log: Pick<Logger, 'warn'>,
    flushEveryMs = 1_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushEveryMs);
    this.timer.unref();
  }

  /** The subject's usage this month, counting nothing. */
  read(subject: MeterSubject): Promise<MonthlyUsage> {
    return this.usage(subject, false);
  }

  /** Counts one call and returns the usage including it. */
  count(subject: MeterSubject): Promise<MonthlyUsage> {
    return this.usage(subject, true);
  }

  /** Makes the next call re-read the org's plan (after an upgrade or downgrade in this process). */
  forgetPlan(orgId: string) {
    this.plans.delete(orgId);
  }

  /** Adds everything counted so far to `api_usage`. Flushes run one after another, never overlapping. */
  flush(): Promise<void> {
    this.flushChain = this.flushChain.then(() => this.writeUnflushed());
    return this.flushChain;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async usage(subject: MeterSubject, increment: boolean): Promise<MonthlyUsage> {
    const now = this.clock.now();
    const { period, resetAt } = monthOf(now);
    const orgId = 'orgId' in subject ? subject.orgId : null;
    const key = `${period}|${'orgId' in subject ? `org:${subject.orgId}` : `ip:${subject.ip}`}`;
    const load = orgId ? () => this.storedCalls(orgId, period) : async () => 0;
    // Kept a little past the month end, for instances whose clocks run slightly behind.
    const ttlMs = resetAt.getTime() - now.getTime() + 60 * 60_000;
    const used = increment ? await this.counter.increment(key, load, ttlMs) : await this.counter.read(key, load, ttlMs);
    if (increment && orgId) {
      const entry = this.unflushed.get(key) ?? { orgId, period, calls: 0 };
      entry.calls += 1;
      this.unflushed.set(key, entry);
    }
    const plan = orgId ? await this.planOf(orgId, now.getTime()) : 'free';
    return { plan, cap: capsFor(plan).apiCallsPerMonth, used, period, resetAt };
  }

  private async planOf(orgId: string, now: number): Promise<PlanName> {
    const cached = this.plans.get(orgId);
    if (cached && now - cached.fetchedAt < PLAN_TTL_MS && now >= cached.fetchedAt) return cached.plan;
    const plan = findOrgPlan(this.db, orgId).then((found) => found ?? 'free');
    const entry = { plan, fetchedAt: now };
    this.plans.set(orgId, entry);
    plan.catch(() => {
      if (this.plans.get(orgId) === entry) this.plans.delete(orgId);
    });
    return plan;
  }

  private async storedCalls(orgId: string, period: string): Promise<number> {
    return readApiUsage(this.db, orgId, period);
  }

  private async writeUnflushed(): Promise<void> {
    const batch = [...this.unflushed.values()];
    this.unflushed.clear();
    for (const entry of batch) {
      try {
        await addApiUsage(this.db, entry.orgId, entry.period, entry.calls);
      } catch (error) {
        this.log.warn({ err: error, orgId: entry.orgId }, 'api usage flush failed; retrying on the next flush');
        const key = `${entry.period}|org:${entry.orgId}`;
        const pending = this.unflushed.get(key);
        this.unflushed.set(key, { ...entry, calls: entry.calls + (pending?.calls ?? 0) });
      }
    }
    const now = this.clock.now().getTime();
    this.counter.forgetPeriodsOtherThan(monthOf(new Date(now)).period);
    for (const [orgId, cached] of this.plans) if (now - cached.fetchedAt >= PLAN_TTL_MS) this.plans.delete(orgId);
  }
}

/** One process's totals. Bounded: past `maxKeys` the oldest key is forgotten (an org's is re-read from the database). */
export class MemoryUsageCounter implements UsageCounter {
  private readonly counts = new Map<string, number>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(private readonly maxKeys = 100_000) {}

  async read(key: string, load: () => Promise<number>): Promise<number> {
    await this.ensureLoaded(key, load);
    return this.counts.get(key) ?? 0;
  }

  async increment(key: string, load: () => Promise<number>): Promise<number> {
    await this.ensureLoaded(key, load);
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    return used;
  }

  forgetPeriodsOtherThan(period: string) {
    for (const key of this.counts.keys()) if (!key.startsWith(`${period}|`)) this.counts.delete(key);
  }

  private async ensureLoaded(key: string, load: () => Promise<number>) {
    if (this.counts.has(key)) return;
    // Concurrent first calls share one load, so none of their counts is lost.
    let loading = this.loading.get(key);
    if (!loading) {
      loading = load()
        .then((stored) => {
          this.counts.set(key, stored);
          if (this.counts.size > this.maxKeys) this.counts.delete(this.counts.keys().next().value!);
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, loading);
    }
    await loading;
  }
}

/** Totals shared by every instance through Redis; seeded from the database once per key and instance. */
export class RedisUsageCounter implements UsageCounter {
  private readonly seeded = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async read(key: string, load: () => Promise<number>, ttlMs: number): Promise<number> {
    await this.seed(key, load, ttlMs);
    return Number((await this.redis.get(this.prefix + key)) ?? 0);
  }

  async increment(key: string, load: () => Promise<number>, ttlMs: number): Promise<number> {
    await this.seed(key, load, ttlMs);
    const used = await this.redis.incr(this.prefix + key);
    // The key vanished (Redis restarted or evicted it) and INCR recreated it without an expiry.
    if (used === 1) await this.redis.pexpire(this.prefix + key, ttlMs);
    return used;
  }

  forgetPeriodsOtherThan(period: string) {
    for (const key of this.seeded) if (!key.startsWith(`${period}|`)) this.seeded.delete(key);
  }

  private async seed(key: string, load: () => Promise<number>, ttlMs: number) {
    if (this.seeded.has(key)) return;
    // NX: another instance may have seeded and counted already; its total wins.
    await this.redis.set(this.prefix + key, await load(), 'PX', ttlMs, 'NX');
    this.seeded.add(key);
  }
}
