import type { Logger } from 'pino';
import type { UsageCounter } from './monthly-meter';
import type { RateLimitStore, WindowState } from './rate-limiter';

/**
 * Limits shared through Redis keep working when Redis does not answer: each
 * call that fails on Redis is answered by this instance's own memory store
 * instead (so limits hold per instance, not across them, until Redis is
 * back), and the outage is logged once rather than failing the request.
 */
class Fallback {
  private warned = false;
  constructor(private readonly log: Pick<Logger, 'warn' | 'info'>) {}

  async run<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    try {
      const value = await shared();
      if (this.warned) {
        this.warned = false;
        this.log.info('limits reach Redis again; shared across instances');
      }
      return value;
    } catch (error) {
      if (!this.warned) {
        this.warned = true;
        this.log.warn({ err: error }, 'limits cannot reach Redis; counting in this instance until it is back');
      }
      return local();
    }
  }
}

export class FallbackRateLimitStore implements RateLimitStore {
  private readonly fallback: Fallback;
  constructor(
    private readonly shared: RateLimitStore,
    private readonly local: RateLimitStore,
    log: Pick<Logger, 'warn' | 'info'>,
  ) {
    this.fallback = new Fallback(log);
  }
  hit(key: string, limit: number, windowMs: number, now: number): Promise<WindowState> {
    return this.fallback.run(
      () => this.shared.hit(key, limit, windowMs, now),
      () => this.local.hit(key, limit, windowMs, now),
    );
  }
  peek(key: string, windowMs: number, now: number): Promise<WindowState> {
    return this.fallback.run(
      () => this.shared.peek(key, windowMs, now),
      () => this.local.peek(key, windowMs, now),
    );
  }
}

export class FallbackUsageCounter implements UsageCounter {
  private readonly fallback: Fallback;
  constructor(
    private readonly shared: UsageCounter,
    private readonly local: UsageCounter,
    log: Pick<Logger, 'warn' | 'info'>,
  ) {
    this.fallback = new Fallback(log);
  }
  read(key: string, load: () => Promise<number>, ttlMs: number): Promise<number> {
    return this.fallback.run(
      () => this.shared.read(key, load, ttlMs),
      () => this.local.read(key, load, ttlMs),
    );
  }
  increment(key: string, load: () => Promise<number>, ttlMs: number): Promise<number> {
    return this.fallback.run(
      () => this.shared.increment(key, load, ttlMs),
      () => this.local.increment(key, load, ttlMs),
    );
  }
  forgetPeriodsOtherThan(period: string): void {
    this.shared.forgetPeriodsOtherThan(period);
    this.local.forgetPeriodsOtherThan(period);
  }
}
