import { monthOf } from '../limits/monthly-meter';
import { PLANS } from '../limits/plans';
import type { Db } from '../persistence/database';
import type { PlanName } from '../persistence/schema';
import {
  catchUpNewWebhooks,
  claimSubscriptions,
  clearAllLeases,
  lockDeliveryForRetry,
  lockNextDelivery,
  pruneFinishedDeliveries,
  recordAttempt,
  releaseSubscription,
  unlockDelivery,
  type PlanCaps,
} from '../persistence/webhooks';
import type { AttemptOutcome, DeliveryStore, LockOptions } from './drain';
import { CATCH_UP_AFTER_MS } from './outbox';

/** How long succeeded and failed deliveries stay listed (and retriable). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Monthly caps of successful deliveries, from the plans table. */
export const WEBHOOK_CAPS = Object.fromEntries(
  Object.entries(PLANS).map(([plan, caps]) => [plan, caps.webhookDeliveriesPerMonth]),
) as PlanCaps & Record<PlanName, number>;

/** The drain's store over Postgres or PGlite: caps from the plans table, months by the UTC calendar. */
export class PgDeliveryStore implements DeliveryStore {
  constructor(
    private readonly db: Db,
    /** Told of every attempt the receiver judged (metrics). */
    private readonly onAttempt: (outcome: AttemptOutcome) => void = () => {},
  ) {}

  claim(options: LockOptions & { limit: number }) {
    return claimSubscriptions(this.db, { ...options, period: monthOf(options.now).period, caps: WEBHOOK_CAPS });
  }

  lockNext(options: LockOptions & { webhookId: string; attemptUntil: Date }) {
    return lockNextDelivery(this.db, { ...options, period: monthOf(options.now).period, caps: WEBHOOK_CAPS });
  }

  lockForRetry(deliveryId: string, now: Date, attemptUntil: Date) {
    return lockDeliveryForRetry(this.db, deliveryId, { now, attemptUntil, period: monthOf(now).period, caps: WEBHOOK_CAPS });
  }

  async record(outcome: AttemptOutcome) {
    await recordAttempt(this.db, { ...outcome, period: monthOf(outcome.now).period });
    if (outcome.counted) this.onAttempt(outcome);
  }

  unlock(deliveryId: string) {
    return unlockDelivery(this.db, deliveryId);
  }

  release(webhookId: string, owner: string) {
    return releaseSubscription(this.db, webhookId, owner);
  }

  catchUp(now: Date) {
    return catchUpNewWebhooks(this.db, new Date(now.getTime() - CATCH_UP_AFTER_MS), CATCH_UP_AFTER_MS, now);
  }

  prune(now: Date) {
    return pruneFinishedDeliveries(this.db, new Date(now.getTime() - DELIVERY_RETENTION_MS), 10_000);
  }

  clearLeases() {
    return clearAllLeases(this.db);
  }
}
