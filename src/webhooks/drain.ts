import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import type { AttemptRecord, LockedDelivery, RetryLock } from '../persistence/webhooks';
import { DEACTIVATE_AFTER_FAILING_MS, retryDelayAfter } from './schedule';
import type { AttemptResult, Sender } from './sender';

/**
 * The read side of the outbox: leases subscriptions that have a due
 * delivery, sends each subscription's deliveries one at a time in event
 * order, and records every attempt. Several instances can drain one
 * database: a subscription is leased by one of them at a time (the store
 * claims with `for update skip locked`), and a lease that is not renewed
 * (the instance died) expires after `leaseMs`.
 *
 * The store, the sender and the clock are parameters, so the logic here is
 * tested with fakes (test/webhooks/drain.test.ts); the real ones are
 * src/webhooks/pg-store.ts and src/webhooks/sender.ts.
 */

export type LockOptions = { owner: string; now: Date; leaseUntil: Date };

/** An attempt's outcome; the store adds the month it counts in. */
export type AttemptOutcome = Omit<AttemptRecord, 'period'>;

export type ManualRetryResult = { state: 'done'; deliveryId: string } | { state: 'over_cap'; used: number; cap: number } | Exclude<RetryLock, { state: 'locked' }>;

export interface DeliveryStore {
  /** Leases up to `limit` subscriptions with a due head delivery, under their org's cap. */
  claim(options: LockOptions & { limit: number }): Promise<string[]>;
  /** Locks the head delivery of a leased subscription if it is due (and renews the lease). */
  lockNext(options: LockOptions & { webhookId: string; attemptUntil: Date }): Promise<LockedDelivery | null>;
  record(outcome: AttemptOutcome): Promise<void>;
  /** Locks one delivery for a manual retry, whatever its place in the queue. */
  lockForRetry(deliveryId: string, now: Date, attemptUntil: Date): Promise<RetryLock>;
  unlock(deliveryId: string): Promise<void>;
  release(webhookId: string, owner: string): Promise<void>;
  /** Deliveries other instances' caches missed for new subscriptions (src/webhooks/outbox.ts). */
  catchUp(now: Date): Promise<string[]>;
  /** Forgets finished deliveries past their retention; returns how many. */
  prune(now: Date): Promise<number>;
  /** All leases, when no other instance can hold one (PGlite). */
  clearLeases(): Promise<void>;
}

export type DrainOptions = {
  /** This instance, as written into leases. */
  owner: string;
  /** Subscriptions sent to at once. */
  concurrency: number;
  /** How often to look for due work when nothing wakes the drain. */
  pollMs: number;
  /** Lease and attempt lock; longer than one attempt's timeout. */
  leaseMs: number;
  /** Deliveries per lease before others get a turn. */
  batch: number;
  /** Clear every lease at start: set when this process is the only one that can open the database. */
  exclusive: boolean;
  /** Signing secrets at rest → usable (throws for one this instance cannot open). */
  openSecret(ciphertext: string): string;
  /** A subscription was deactivated after failing for too long. */
  onDeactivated(webhookId: string): Promise<void>;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
};

const CATCH_UP_EVERY_MS = 5_000;
const PRUNE_EVERY_MS = 10 * 60_000;
/** A subscription whose secret this instance cannot open is left to other instances for this long. */
const UNREADABLE_SECRET_BACKOFF_MS = 60_000;

export class WebhookDrain {
  /** Subscriptions this instance is sending to; `more` is set when new deliveries were written for one meanwhile. */
  private readonly running = new Map<string, { done: Promise<void>; more: boolean }>();
  private readonly unreadable = new Map<string, number>();
  private readonly abort = new AbortController();
  private loopDone: Promise<void> | null = null;
  private started = false;
  private stopped = false;
  private woken = false;
  private interrupt: (() => void) | null = null;
  private lastCatchUp = 0;
  private lastPrune = 0;

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: Sender,
    private readonly clock: Clock,
    private readonly options: DrainOptions,
  ) {}

  start() {
    if (this.started || this.stopped) return;
    this.started = true;
    this.loopDone = this.loop();
  }

  /**
   * Look for work now: after a commit that wrote deliveries (for these
   * subscriptions, when known). A subscription this instance is already
   * sending to only needs its worker told, not a new claim.
   */
  wake(webhookIds?: readonly string[]) {
    if (webhookIds && webhookIds.every((id) => this.running.has(id))) {
      for (const id of webhookIds) this.running.get(id)!.more = true;
      return;
    }
    this.woken = true;
    this.interrupt?.();
  }

  /** Stops claiming, aborts attempts in flight (they are not counted) and releases every lease. */
  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.interrupt?.();
    await this.loopDone;
    await Promise.allSettled([...this.running.values()].map((w) => w.done));
  }

  /**
   * A manual retry: one attempt now, outside the queue's order (a person
   * asked for it). A failure leaves the delivery's status and schedule as
   * they were; at the monthly cap nothing is sent.
   */
  async retryNow(deliveryId: string): Promise<ManualRetryResult> {
    const now = this.clock.now();
    const lock = await this.store.lockForRetry(deliveryId, now, this.later(now));
    if (lock.state !== 'locked') return lock;
    const { delivery, used, cap } = lock;
    if (used >= cap) {
      await this.store.unlock(delivery.id);
      return { state: 'over_cap', used, cap };
    }
    let secret: string;
    try {
      secret = this.options.openSecret(delivery.secretCiphertext);
    } catch (error) {
      await this.store.unlock(delivery.id);
      throw error;
    }
    const result = await this.send(delivery, secret);
    await this.store.record(manualOutcome(delivery, result, this.clock.now()));
    return { state: 'done', deliveryId: delivery.id };
  }

  /** One pass for tests: claim and send until nothing is due. */
  async runUntilIdle() {
    for (;;) {
      const claimed = await this.claim();
      if (claimed === 0 && this.running.size === 0) return;
      await Promise.allSettled([...this.running.values()].map((w) => w.done));
    }
  }

  private async loop() {
    if (this.options.exclusive) await this.store.clearLeases().catch((error) => this.options.log.warn({ err: error }, 'could not clear webhook leases'));
    while (!this.stopped) {
      this.woken = false;
      try {
        await this.catchUpNow();
        await this.pruneNow();
        await this.claim();
      } catch (error) {
        this.options.log.warn({ err: error }, 'webhook drain: claim failed; retrying');
      }
      if (this.stopped) break;
      if (!this.woken) await this.sleep(this.options.pollMs);
    }
  }

  private sleep(ms: number) {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const self = this;
      function done() {
        clearTimeout(timer);
        self.interrupt = null;
        resolve();
      }
      this.interrupt = done;
    });
  }

  private async catchUpNow() {
    const now = Date.now();
    if (now - this.lastCatchUp < CATCH_UP_EVERY_MS) return;
    this.lastCatchUp = now;
    const touched = await this.store.catchUp(this.clock.now());
    if (touched.length > 0) this.options.log.info({ webhookIds: touched }, 'webhook catch-up wrote missed deliveries');
  }

  private async pruneNow() {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    const pruned = await this.store.prune(this.clock.now());
    if (pruned > 0) this.options.log.info({ pruned }, 'pruned finished webhook deliveries');
  }

  /** Leases what is due, starting a worker per subscription; returns how many workers it started. */
  private async claim(): Promise<number> {
    const free = this.options.concurrency - this.running.size;
    if (free <= 0 || this.stopped) return 0;
    const now = this.clock.now();
    const ids = await this.store.claim({ owner: this.options.owner, now, leaseUntil: this.later(now), limit: free });
    let started = 0;
    for (const id of ids) {
      // Already ours: the clock passed the lease while a worker was busy; that worker goes on.
      if (this.running.has(id)) continue;
      if ((this.unreadable.get(id) ?? 0) > Date.now()) {
        await this.store.release(id, this.options.owner);
        continue;
      }
      const worker = { done: Promise.resolve(), more: false };
      worker.done = this.work(id, worker).finally(() => {
        this.running.delete(id);
        // New deliveries for it arrived after its last look, or a slot is free for others.
        if (worker.more || this.running.size === this.options.concurrency - 1) this.wake();
      });
      this.running.set(id, worker);
      started++;
    }
    return started;
  }

  private async work(webhookId: string, worker: { more: boolean }) {
    try {
      for (let sent = 0; sent < this.options.batch && !this.stopped; sent++) {
        const now = this.clock.now();
        const delivery = await this.store.lockNext({ webhookId, owner: this.options.owner, now, leaseUntil: this.later(now), attemptUntil: this.later(now) });
        if (!delivery) {
          if (!worker.more) break;
          worker.more = false;
          continue;
        }
        if (!(await this.attempt(delivery))) break;
      }
    } catch (error) {
      this.options.log.warn({ err: error, webhookId }, 'webhook drain: worker failed; the lease will expire');
    } finally {
      await this.store.release(webhookId, this.options.owner).catch(() => {});
    }
  }

  /** One attempt of a locked delivery; false when the worker should stop. */
  private async attempt(delivery: LockedDelivery): Promise<boolean> {
    let secret: string;
    try {
      secret = this.options.openSecret(delivery.secretCiphertext);
    } catch (error) {
      this.unreadable.set(delivery.webhookId, Date.now() + UNREADABLE_SECRET_BACKOFF_MS);
      this.options.log.error({ err: error, webhookId: delivery.webhookId }, 'cannot open a webhook signing secret: check WEBHOOK_SECRET_KEY on every instance');
      await this.store.unlock(delivery.id);
      return false;
    }
    const result = await this.send(delivery, secret);
    const outcome = automaticOutcome(delivery, result, this.clock.now());
    // An event that no longer exists will not come back: no retries.
    await this.store.record(delivery.record == null ? { ...outcome, status: 'failed', nextAttemptAt: null } : outcome);
    if (outcome.deactivate) {
      this.options.log.warn({ webhookId: delivery.webhookId }, 'webhook deactivated after failing for 3 days');
      await this.options.onDeactivated(delivery.webhookId).catch((error) => this.options.log.warn({ err: error }, 'could not announce a webhook deactivation'));
      return false;
    }
    return !result.aborted;
  }

  private async send(delivery: LockedDelivery, secret: string): Promise<AttemptResult> {
    if (delivery.record == null) return { ok: false, responseStatus: null, error: 'the event no longer exists', durationMs: 0 };
    const payload = eventBody(delivery.record, delivery.eventSeq);
    return this.sender.send({ deliveryId: delivery.id, url: delivery.url, secret, payload, timestamp: this.clock.now() }, this.abort.signal);
  }

  private later(now: Date) {
    return new Date(now.getTime() + this.options.leaseMs);
  }
}

/** What an automatic attempt's result does to the delivery and its subscription. */
export function automaticOutcome(delivery: Pick<LockedDelivery, 'id' | 'webhookId' | 'orgId' | 'attempts' | 'failingSince'>, result: AttemptResult, now: Date): AttemptOutcome {
  const base = {
    deliveryId: delivery.id,
    webhookId: delivery.webhookId,
    orgId: delivery.orgId,
    now,
    responseStatus: result.responseStatus,
    error: result.error,
    durationMs: result.durationMs,
    deactivate: false,
  };
  if (result.aborted) return { ...base, status: 'pending', counted: false, nextAttemptAt: null };
  if (result.ok) return { ...base, status: 'succeeded', counted: true, nextAttemptAt: null };
  const delay = retryDelayAfter(delivery.attempts + 1);
  const failingSince = delivery.failingSince ?? now;
  return {
    ...base,
    status: delay === null ? 'failed' : 'pending',
    counted: true,
    nextAttemptAt: delay === null ? null : new Date(now.getTime() + delay),
    deactivate: now.getTime() - failingSince.getTime() >= DEACTIVATE_AFTER_FAILING_MS,
  };
}

/** A manual retry: one attempt; a failure leaves the status and schedule as they were. */
export function manualOutcome(delivery: Pick<LockedDelivery, 'id' | 'webhookId' | 'orgId' | 'status' | 'nextAttemptAt'>, result: AttemptResult, now: Date): AttemptOutcome {
  return {
    deliveryId: delivery.id,
    webhookId: delivery.webhookId,
    orgId: delivery.orgId,
    now,
    status: result.ok ? 'succeeded' : delivery.status,
    counted: !result.aborted,
    responseStatus: result.responseStatus,
    error: result.error,
    durationMs: result.durationMs,
    nextAttemptAt: result.ok ? null : delivery.nextAttemptAt,
    deactivate: false,
  };
}

/**
 * The request body: the event record (API-DECISIONS "Events"), its keys in
 * the documented order whatever order the database returned them in.
 */
export function eventBody(record: unknown, eventSeq: number): string {
  const r = (typeof record === 'string' ? JSON.parse(record) : record) as Record<string, unknown>;
  return JSON.stringify({
    eventId: String(eventSeq),
    event: r.event,
    ts: r.ts,
    workspace: r.workspace ?? null,
    ...(r.surface ? { surface: r.surface } : {}),
    principal: r.principal ?? null,
    data: r.data ?? {},
  });
}
