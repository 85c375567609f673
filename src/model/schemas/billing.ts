import { z } from 'zod';
import { IsoDateTime } from './common';

/** Plans and billing as the API answers them (docs/BILLING.md); the web app's billing page reads the same types. */

export const PlanName = z.enum(['free', 'pro', 'scale']);
export const PaidPlan = z.enum(['pro', 'scale']);

export const Card = z.object({ brand: z.string(), last4: z.string(), expMonth: z.number().int(), expYear: z.number().int() }).meta({ id: 'CardOnFile' });

export const BillingSummary = z
  .object({
    plan: PlanName,
    monthlyPriceCents: z.number().int(),
    activeAgents: z.number().int().describe('Agents holding at least one live (non-revoked) key'),
    agentCap: z.number().int(),
    activeMembers: z.number().int().describe('Humans: org members and user members of live workspaces, each counted once'),
    memberCap: z.number().int(),
    activeWorkspaces: z.number().int().describe('Live (non-archived) workspaces'),
    workspaceCap: z.number().int(),
    totalRows: z.number().int().describe('Rows in all live workspaces (the cap applies to each workspace separately)'),
    rowsPerWorkspaceCap: z.number().int(),
    fullestWorkspaces: z
      .array(z.object({ id: z.string(), slug: z.string(), name: z.string(), rows: z.number().int() }))
      .describe('The five live workspaces with the most rows, fullest first'),
    apiCallsThisMonth: z.number().int(),
    apiCallsPerMonthCap: z.number().int(),
    apiCallsResetAt: IsoDateTime,
    webhooksThisMonth: z.number().int().describe('Successful (2xx) webhook deliveries this calendar month'),
    webhooksPerMonthCap: z.number().int(),
    messagesThisMonth: z.number().int().describe('Messages delivered this calendar month (agent wake-ups), as the messages meter counts them'),
    messagesOverage: z.number().int().describe('Of those, the ones beyond the bundle'),
    messagesOverageCents: z.number().int().describe('Their price: $1.00 per 1,000 for the first 10,000, $0.50 per 1,000 through 100,000, $0.25 per 1,000 above; per message, rounded once to the cent; never on free'),
    messagesBundlePerMonth: z.number().int(),
    messagesHardCeilingPerMonth: z.number().int(),
    storageBytesUsed: z.number().int().describe('Stored bytes counted against the quota: files, thumbnails, doc images, avatars, support screenshots, and uploads in progress'),
    storageBytesCap: z.number().int().describe("The plan's storage cap, or an operator's override for this organisation"),
    monthlyTotalCents: z.number().int().describe("This month's charge so far: the plan's price plus `messagesOverageCents`"),
    periodEndsAt: IsoDateTime.describe('End of the current billing period (calendar UTC month); a scheduled downgrade takes effect then'),
    pendingDowngradeAt: IsoDateTime.nullable().describe('When a scheduled downgrade to free takes effect; null when none'),
    payments: z.object({
      provider: z.string().describe('`local` for the built-in provider'),
      customerId: z.string().nullable(),
      subscriptionId: z.string().nullable(),
      card: Card.nullable().describe('The card on file (brand, last four, expiry); null when none: an upgrade then needs a checkout'),
    }),
    plans: z
      .array(z.object({ plan: PlanName, monthlyPriceCents: z.number().int(), caps: z.record(z.string(), z.number().nullable()).describe('Each cap of the plan; null: unlimited') }))
      .describe('Every plan with its price and caps, for a plan picker'),
  })
  .meta({ id: 'BillingSummary' });

export const UpgradeResult = z
  .union([
    z.object({
      plan: PlanName,
      status: z.literal('switched'),
      previousPlan: PlanName,
      prorationCents: z.number().int().describe('Charged now for the rest of the period (negative: credited)'),
    }),
    z.object({
      plan: PaidPlan.describe('The plan the checkout switches to'),
      status: z.literal('checkout-required'),
      checkoutUrl: z.string(),
      expiresAt: IsoDateTime,
    }),
  ])
  .meta({ id: 'UpgradeResult' });

export const DowngradeResult = z
  .object({
    plan: PlanName.describe('The current plan (unchanged until the downgrade takes effect)'),
    status: z.enum(['scheduled', 'canceled']),
    effectiveAt: IsoDateTime.nullable().describe('When the organisation moves to free; null once cancelled'),
  })
  .meta({ id: 'DowngradeResult' });

export const HostedPage = z.object({ url: z.string(), expiresAt: IsoDateTime }).meta({ id: 'BillingPage' });

export const LimitIncreaseRequest = z
  .object({
    id: z.string(),
    kind: z.string(),
    desiredValue: z.number().int(),
    currentCap: z.number().int().nullable(),
    plan: PlanName,
    reason: z.string(),
    status: z.literal('received'),
    createdAt: IsoDateTime,
  })
  .meta({ id: 'LimitIncreaseRequest' });

export type BillingSummary = z.infer<typeof BillingSummary>;
export type UpgradeResult = z.infer<typeof UpgradeResult>;
export type DowngradeResult = z.infer<typeof DowngradeResult>;
export type HostedPage = z.infer<typeof HostedPage>;
export type LimitIncreaseRequest = z.infer<typeof LimitIncreaseRequest>;
