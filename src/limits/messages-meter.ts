import type { Clock } from '../lib/clock';
import { findOrgById } from '../persistence/accounts';
import type { Executor } from '../persistence/database';
import { incrementMessageUsage, readMessageUsage } from '../persistence/message-usage';
import type { PlanName } from '../persistence/schema';
import { monthOf } from './monthly-meter';
import { capsFor } from './plans';

/**
 * The messages meter (SPEC "Plan caps"): messages delivered per
 * organisation per calendar UTC month, counted in Postgres by one atomic
 * increment that refuses past the plan's hard ceiling. The bundle is what
 * the plan includes; what lies between bundle and ceiling is overage, which
 * billing prices (free has bundle = ceiling, so no overage). See
 * docs/COMMENTS.md, "The messages meter".
 */

export type MessagesUsage = {
  orgId: string;
  plan: PlanName;
  /** `YYYY-MM` (UTC) and the instant the next month starts. */
  period: string;
  resetAt: Date;
  delivered: number;
  bundle: number;
  hardCeiling: number;
  /** Delivered beyond the bundle this month. */
  overage: number;
};

export type CountedDelivery = { counted: true; usage: MessagesUsage } | { counted: false; usage: MessagesUsage };

export class MessagesMeter {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
  ) {}

  /** This month's usage of one organisation, counting nothing (billing reads this). */
  async usage(orgId: string, db: Executor = this.db): Promise<MessagesUsage> {
    const { period, resetAt } = monthOf(this.clock.now());
    const plan = await planOf(db, orgId);
    return usageOf(orgId, plan, period, resetAt, await readMessageUsage(db, orgId, period));
  }

  /**
   * Counts one delivered message, inside the caller's transaction so the
   * count and the delivery commit or roll back together. At the hard
   * ceiling nothing is counted and `counted` is false: the caller must not
   * deliver.
   */
  async countDelivery(tx: Executor, orgId: string): Promise<CountedDelivery> {
    const { period, resetAt } = monthOf(this.clock.now());
    const plan = await planOf(tx, orgId);
    const ceiling = capsFor(plan).messagesHardCeilingPerMonth;
    const delivered = await incrementMessageUsage(tx, orgId, period, ceiling);
    if (delivered === null) return { counted: false, usage: usageOf(orgId, plan, period, resetAt, ceiling) };
    return { counted: true, usage: usageOf(orgId, plan, period, resetAt, delivered) };
  }
}

async function planOf(db: Executor, orgId: string): Promise<PlanName> {
  return (await findOrgById(db, orgId))?.plan ?? 'free';
}

function usageOf(orgId: string, plan: PlanName, period: string, resetAt: Date, delivered: number): MessagesUsage {
  const caps = capsFor(plan);
  return {
    orgId,
    plan,
    period,
    resetAt,
    delivered,
    bundle: caps.messagesBundlePerMonth,
    hardCeiling: caps.messagesHardCeilingPerMonth,
    overage: Math.max(0, delivered - caps.messagesBundlePerMonth),
  };
}
