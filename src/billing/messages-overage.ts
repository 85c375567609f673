import type { PlanName } from '../persistence/schema';

/**
 * Messaging overage (SPEC "Plan caps"): messages delivered beyond the
 * plan's bundle cost $1.00 per 1,000 for the first 10,000 of overage, $0.50
 * per 1,000 through 100,000, $0.25 per 1,000 above. Free has no overage.
 * Priced per message (a tenth, a twentieth, a fortieth of a cent), the
 * month's total rounded to the nearest cent once: 1,500 over is $1.50, not
 * two blocks.
 */
const TIERS: ReadonlyArray<{ upTo: number; milliCentsEach: number }> = [
  { upTo: 10_000, milliCentsEach: 100 },
  { upTo: 100_000, milliCentsEach: 50 },
  { upTo: Infinity, milliCentsEach: 25 },
];

export function messagesOverageCents(plan: PlanName, overage: number): number {
  if (plan === 'free' || overage <= 0) return 0;
  let milliCents = 0;
  let from = 0;
  for (const tier of TIERS) {
    const inTier = Math.max(0, Math.min(overage, tier.upTo) - from);
    milliCents += inTier * tier.milliCentsEach;
    from = tier.upTo;
    if (overage <= tier.upTo) break;
  }
  return Math.round(milliCents / 1000);
}
