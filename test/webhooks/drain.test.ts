import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock';
import type { LockedDelivery, RetryLock } from '../../src/persistence/webhooks';
import { automaticOutcome, WebhookDrain, type AttemptOutcome, type DeliveryStore, type DrainOptions, type LockOptions } from '../../src/webhooks/drain';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/schedule';
import type { Attempt, AttemptResult, Sender } from '../../src/webhooks/sender';
import { eventually } from '../helpers/sync';

/**
 * The drain's logic with a fake store, a fake sender and a manual clock
 * (the outbox shape of tldraw's worker): order per subscription, one
 * attempt at a time per subscription, the retry schedule, `failed`, the
 * 3-day deactivation, shutdown, and two drains sharing one store. The
 * store's SQL is exercised by the HTTP tests beside this one.
 */

type FakeDelivery = { id: string; webhookId: string; seq: number; status: 'pending' | 'succeeded' | 'failed'; attempts: number; nextAttemptAt: number; lockedUntil: number };
type FakeWebhook = { id: string; active: boolean; leaseOwner: string | null; leaseUntil: number; failingSince: number | null };

/** The semantics of src/persistence/webhooks.ts, in memory. */
class FakeStore implements DeliveryStore {
  readonly webhooks = new Map<string, FakeWebhook>();
  readonly deliveries: FakeDelivery[] = [];
  readonly records: AttemptOutcome[] = [];
  private seq = 0;

  add(webhookId: string, count: number, at: number) {
    if (!this.webhooks.has(webhookId)) this.webhooks.set(webhookId, { id: webhookId, active: true, leaseOwner: null, leaseUntil: -Infinity, failingSince: null });
    for (let i = 0; i < count; i++) {
      this.seq++;
      this.deliveries.push({ id: `d${this.seq}`, webhookId, seq: this.seq, status: 'pending', attempts: 0, nextAttemptAt: at, lockedUntil: -Infinity });
    }
  }

  private head(webhookId: string) {
    return this.deliveries.filter((d) => d.webhookId === webhookId && d.status === 'pending').sort((a, b) => a.seq - b.seq)[0];
  }

  async claim({ owner, now, leaseUntil, limit }: LockOptions & { limit: number }) {
    const t = now.getTime();
    const due = [...this.webhooks.values()].filter((w) => {
      const head = this.head(w.id);
      return w.active && w.leaseUntil < t && head && head.nextAttemptAt <= t && head.lockedUntil < t;
    });
    return due.slice(0, limit).map((w) => {
      w.leaseOwner = owner;
      w.leaseUntil = leaseUntil.getTime();
      return w.id;
    });
  }

  async lockNext({ webhookId, owner, now, leaseUntil, attemptUntil }: LockOptions & { webhookId: string; attemptUntil: Date }): Promise<LockedDelivery | null> {
    const w = this.webhooks.get(webhookId)!;
    if (w.leaseOwner !== owner || !w.active) return null;
    w.leaseUntil = leaseUntil.getTime();
    const head = this.head(webhookId);
    if (!head || head.nextAttemptAt > now.getTime() || head.lockedUntil >= now.getTime()) return null;
    head.lockedUntil = attemptUntil.getTime();
    return this.locked(head, w);
  }

  private locked(d: FakeDelivery, w: FakeWebhook): LockedDelivery {
    return {
      id: d.id,
      webhookId: d.webhookId,
      orgId: 'org',
      eventSeq: d.seq,
      event: 'row.created',
      attempts: d.attempts,
      status: d.status,
      nextAttemptAt: new Date(d.nextAttemptAt),
      url: `http://receiver/${d.webhookId}`,
      secretCiphertext: `sealed:${d.webhookId}`,
      failingSince: w.failingSince === null ? null : new Date(w.failingSince),
      record: { event: 'row.created', ts: 'now', workspace: null, principal: null, data: { n: d.seq } },
    };
  }

  async lockForRetry(): Promise<RetryLock> {
    return { state: 'missing' };
  }

  async record(outcome: AttemptOutcome) {
    this.records.push(outcome);
    const d = this.deliveries.find((x) => x.id === outcome.deliveryId)!;
    d.lockedUntil = -Infinity;
    if (!outcome.counted) return;
    d.status = outcome.status;
    d.attempts++;
    d.nextAttemptAt = outcome.nextAttemptAt?.getTime() ?? Infinity;
    const w = this.webhooks.get(outcome.webhookId)!;
    if (outcome.status === 'succeeded') w.failingSince = null;
    else w.failingSince ??= outcome.now.getTime();
    if (outcome.deactivate) Object.assign(w, { active: false, leaseOwner: null, leaseUntil: -Infinity });
  }

  async unlock(deliveryId: string) {
    this.deliveries.find((x) => x.id === deliveryId)!.lockedUntil = -Infinity;
  }

  async release(webhookId: string, owner: string) {
    const w = this.webhooks.get(webhookId)!;
    if (w.leaseOwner === owner) Object.assign(w, { leaseOwner: null, leaseUntil: -Infinity });
  }

  async catchUp() {
    return [];
  }

  async prune() {
    return 0;
  }

  async clearLeases() {}
}

/** Records attempts; answers with `respond` (which may wait). Tracks attempts in flight per subscription. */
class FakeSender implements Sender {
  readonly sent: Attempt[] = [];
  readonly inFlight = new Map<string, number>();
  maxInFlightPerWebhook = 0;
  respond: (attempt: Attempt, signal?: AbortSignal) => Promise<AttemptResult> = async () => ({ ok: true, responseStatus: 200, error: null, durationMs: 1 });

  async send(attempt: Attempt, signal?: AbortSignal) {
    const webhookId = attempt.url.split('/').at(-1)!;
    this.sent.push(attempt);
    const n = (this.inFlight.get(webhookId) ?? 0) + 1;
    this.inFlight.set(webhookId, n);
    this.maxInFlightPerWebhook = Math.max(this.maxInFlightPerWebhook, n);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await this.respond(attempt, signal);
    } finally {
      this.inFlight.set(webhookId, this.inFlight.get(webhookId)! - 1);
    }
  }
}

const failure: AttemptResult = { ok: false, responseStatus: 500, error: 'HTTP 500', durationMs: 1 };
const silentLog = { info() {}, warn() {}, error() {} };

function drainOver(store: FakeStore, sender: FakeSender, clock: ManualClock, overrides: Partial<DrainOptions> = {}) {
  const deactivated: string[] = [];
  const drain = new WebhookDrain(store, sender, clock, {
    owner: 'instance-a',
    concurrency: 4,
    pollMs: 10,
    leaseMs: 15_000,
    batch: 100,
    exclusive: false,
    openSecret: (sealed) => `whsec_${Buffer.from(sealed).toString('base64')}`,
    onDeactivated: async (id) => void deactivated.push(id),
    log: silentLog,
    ...overrides,
  });
  return { drain, deactivated };
}

const sentOf = (sender: FakeSender, webhookId: string) => sender.sent.filter((a) => a.url.endsWith(`/${webhookId}`)).map((a) => JSON.parse(a.payload).data.n);

describe('the webhook drain', () => {
  it('sends each subscription in event order, one attempt at a time, subscriptions side by side', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    store.add('a', 5, 0);
    store.add('b', 5, 0);
    store.add('a', 5, 0);
    const { drain } = drainOver(store, sender, clock);
    await drain.runUntilIdle();
    expect(sentOf(sender, 'a')).toEqual([1, 2, 3, 4, 5, 11, 12, 13, 14, 15]);
    expect(sentOf(sender, 'b')).toEqual([6, 7, 8, 9, 10]);
    expect(sender.maxInFlightPerWebhook).toBe(1);
    expect(store.deliveries.every((d) => d.status === 'succeeded' && d.attempts === 1)).toBe(true);
    expect([...store.webhooks.values()].every((w) => w.leaseOwner === null)).toBe(true);
    // The same id on every attempt (the webhook-id header).
    expect(new Set(sender.sent.map((a) => a.deliveryId)).size).toBe(15);
  });

  it('retries on the schedule, never before due, then fails the delivery and moves on to the next', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    sender.respond = async (attempt) => (JSON.parse(attempt.payload).data.n === 1 ? failure : { ok: true, responseStatus: 204, error: null, durationMs: 1 });
    store.add('a', 2, 0);
    const { drain } = drainOver(store, sender, clock);

    await drain.runUntilIdle();
    expect(sentOf(sender, 'a')).toEqual([1]);
    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      clock.advance(delay - 1);
      await drain.runUntilIdle();
      expect(sentOf(sender, 'a'), `not before the ${delay} ms wait`).toHaveLength(i + 1);
      clock.advance(1);
      await drain.runUntilIdle();
      expect(sentOf(sender, 'a').filter((n) => n === 1)).toHaveLength(Math.min(i + 2, MAX_ATTEMPTS));
    }
    expect(store.deliveries[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    // Only then does the second go, at once.
    expect(sentOf(sender, 'a')).toEqual([...Array(MAX_ATTEMPTS).fill(1), 2]);
    expect(store.deliveries[1]).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('deactivates a subscription once its failures span 3 days, and announces it once', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    sender.respond = async () => failure;
    store.add('a', 4, 0);
    const { drain, deactivated } = drainOver(store, sender, clock);
    for (let step = 0; step < 100 && store.webhooks.get('a')!.active; step++) {
      await drain.runUntilIdle();
      const head = store.deliveries.find((d) => d.status === 'pending');
      if (head && head.nextAttemptAt > clock.now().getTime()) clock.set(head.nextAttemptAt);
    }
    expect(store.webhooks.get('a')!.active).toBe(false);
    expect(deactivated).toEqual(['a']);
    const last = store.records.at(-1)!;
    expect(last.deactivate).toBe(true);
    expect(last.now.getTime()).toBeGreaterThanOrEqual(3 * 24 * 3600_000);
    // Two deliveries failed for good (about 27.6 h each); the third was pending when it stopped.
    expect(store.deliveries.map((d) => d.status)).toEqual(['failed', 'failed', 'pending', 'pending']);
    const sentBefore = sender.sent.length;
    clock.advance(24 * 3600_000);
    await drain.runUntilIdle();
    expect(sender.sent).toHaveLength(sentBefore);
  });

  it('on stop, aborts attempts in flight without counting them and releases the lease', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    sender.respond = (_attempt, signal) =>
      new Promise((resolve) => {
        started();
        signal!.addEventListener('abort', () => resolve({ ok: false, responseStatus: null, error: 'aborted by shutdown', durationMs: 5, aborted: true }));
      });
    store.add('a', 2, 0);
    const { drain } = drainOver(store, sender, clock);
    drain.start();
    await inFlight;
    await drain.stop();
    expect(store.deliveries.map((d) => [d.status, d.attempts, d.lockedUntil])).toEqual([
      ['pending', 0, -Infinity],
      ['pending', 0, -Infinity],
    ]);
    expect(store.webhooks.get('a')!.leaseOwner).toBeNull();
    expect(sender.sent).toHaveLength(1);
  });

  it('two drains over one store send every delivery exactly once, each subscription in order', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) store.add(id, 20, 0);
    const one = drainOver(store, sender, clock, { owner: 'one', concurrency: 2 }).drain;
    const two = drainOver(store, sender, clock, { owner: 'two', concurrency: 2 }).drain;
    await Promise.all([one.runUntilIdle(), two.runUntilIdle()]);
    await Promise.all([one.runUntilIdle(), two.runUntilIdle()]);
    expect(sender.sent).toHaveLength(120);
    expect(new Set(sender.sent.map((a) => a.deliveryId)).size).toBe(120);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const order = sentOf(sender, id);
      expect(order).toEqual([...order].sort((x, y) => x - y));
    }
    expect(sender.maxInFlightPerWebhook).toBe(1);
  });

  it('a wake for a subscription already being sent to reaches its worker: nothing waits for the next poll', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    // Polling is out of the picture: only wakes move this drain.
    const { drain } = drainOver(store, sender, clock, { pollMs: 600_000 });
    // New deliveries commit just after the worker found its queue empty, before it lets go of the lease.
    const lockNext = store.lockNext.bind(store);
    let injected = false;
    store.lockNext = async (options) => {
      const next = await lockNext(options);
      if (!next && !injected) {
        injected = true;
        store.add('a', 2, 0);
        drain.wake(['a']);
      }
      return next;
    };
    drain.start();
    store.add('a', 1, 0);
    drain.wake(['a']);
    await eventually(() => sender.sent.length === 3, 2_000);
    expect(sentOf(sender, 'a')).toEqual([1, 2, 3]);
    // Once the worker has let go, a wake claims again.
    await eventually(() => store.webhooks.get('a')!.leaseOwner === null, 2_000);
    store.add('a', 1, 0);
    drain.wake(['a']);
    await eventually(() => sender.sent.length === 4, 2_000);
    await drain.stop();
  });

  it('leaves a subscription whose secret this instance cannot open to the others, without an attempt', async () => {
    const clock = new ManualClock(0);
    const store = new FakeStore();
    const sender = new FakeSender();
    store.add('a', 1, 0);
    store.add('b', 1, 0);
    const { drain } = drainOver(store, sender, clock, {
      openSecret: (sealed) => {
        if (sealed.endsWith(':a')) throw new Error('encrypted under another key');
        return 'whsec_AAAA';
      },
    });
    await drain.runUntilIdle();
    expect(sentOf(sender, 'b')).toEqual([2]);
    expect(sentOf(sender, 'a')).toEqual([]);
    expect(store.deliveries[0]).toMatchObject({ status: 'pending', attempts: 0, lockedUntil: -Infinity });
    expect(store.webhooks.get('a')!.leaseOwner).toBeNull();
  });

  it('decides outcomes: success, a scheduled retry, the last attempt, shutdown, and 3 days of failure', () => {
    const base = { id: 'd', webhookId: 'w', orgId: 'o', failingSince: null };
    const now = new Date(1_000_000);
    expect(automaticOutcome({ ...base, attempts: 0 }, { ok: true, responseStatus: 200, error: null, durationMs: 3 }, now)).toMatchObject({ status: 'succeeded', counted: true, nextAttemptAt: null });
    expect(automaticOutcome({ ...base, attempts: 0 }, failure, now)).toMatchObject({ status: 'pending', counted: true, nextAttemptAt: new Date(1_000_000 + RETRY_DELAYS_MS[0]) });
    expect(automaticOutcome({ ...base, attempts: MAX_ATTEMPTS - 1 }, failure, now)).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(automaticOutcome({ ...base, attempts: 2 }, { ...failure, aborted: true }, now)).toMatchObject({ counted: false });
    const since = new Date(now.getTime() - 3 * 24 * 3600_000);
    expect(automaticOutcome({ ...base, attempts: 1, failingSince: since }, failure, now).deactivate).toBe(true);
    expect(automaticOutcome({ ...base, attempts: 1, failingSince: new Date(since.getTime() + 1) }, failure, now).deactivate).toBe(false);
  });
});
