import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { assertDowngradable, billingSummary, checkoutFor, portalFor, requestLimitIncrease, toggleDowngrade, upgradePlan } from '../domain/billing';
import { resolveCallerOrg } from '../domain/members';
import { spendBudget } from '../limits/budget';
import { PLANS } from '../limits/plans';
import { HOUR } from '../limits/rules';
import { IsoDateTime, OrgQuery } from '../model/schemas/common';
import type { PlanName as Plan } from '../persistence/schema';
import { defineOperation, type ToolContext } from './operation';
import { ORG, PAYMENTS, READ, WRITE } from './tool-text';

const PlanName = z.enum(['free', 'pro', 'scale']);
const PaidPlan = z.enum(['pro', 'scale']);

const Card = z.object({ brand: z.string(), last4: z.string(), expMonth: z.number().int(), expYear: z.number().int() }).meta({ id: 'CardOnFile' });

const BillingSummary = z
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

const UpgradeResult = z
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

const DowngradeResult = z
  .object({
    plan: PlanName.describe('The current plan (unchanged until the downgrade takes effect)'),
    status: z.enum(['scheduled', 'canceled']),
    effectiveAt: IsoDateTime.nullable().describe('When the organisation moves to free; null once cancelled'),
  })
  .meta({ id: 'DowngradeResult' });

const HostedPage = z.object({ url: z.string(), expiresAt: IsoDateTime }).meta({ id: 'BillingPage' });

const LimitIncreaseBody = z.strictObject({
  kind: z.enum(['agents', 'workspaces', 'rows', 'other']),
  desiredValue: z.number().int().min(1).max(1_000_000_000),
  reason: z.string().trim().min(1).max(2000),
});

const LimitIncreaseRequest = z
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

const UpgradeBody = z.strictObject({ plan: PaidPlan });

/** Plan changes spend a budget of 5 an hour per organisation, upgrades and downgrades each their own, over REST and MCP alike. */
const UPGRADE_BUDGET = { endpoint: 'billing_upgrade', limit: 5, windowMs: HOUR };
const DOWNGRADE_BUDGET = { endpoint: 'billing_downgrade', limit: 5, windowMs: HOUR };

/** A POST that only acts: no body, or an empty object. */
const NoBody = z.strictObject({}).nullish();

const price = (plan: Plan) => `$${(PLANS[plan].monthlyPriceCents / 100).toFixed(2)} a month`;

/**
 * The confirmation messages of the plan tools. The caller's right to change
 * the plan is checked first, so a caller who may not is refused at once
 * rather than after confirming; the operation checks it again when it runs.
 */
const billedOrg = ({ services, actor }: ToolContext, args: Record<string, unknown>) => resolveCallerOrg(services, actor, args.org as string | undefined, 'manage_billing');

async function confirmUpgrade(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const org = await billedOrg(context, args);
  const plan = args.plan as Plan;
  return (
    `Move ${org.name} (${org.slug}) from the ${org.plan} plan to ${plan} (${price(plan)})? ` +
    'With a card on file it switches at once and the rest of this period is charged, prorated; without one the answer is a checkout link for a person to pay.'
  );
}

async function confirmDowngrade(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const org = await billedOrg(context, args);
  assertDowngradable(org);
  if (org.pendingDowngradeAt) return `Cancel the move of ${org.name} (${org.slug}) to the free plan scheduled for ${org.pendingDowngradeAt.toISOString()}? It stays on ${org.plan}.`;
  return `Move ${org.name} (${org.slug}) from the ${org.plan} plan to free at the end of the billing period? The ${org.plan} caps stay until then; afterwards new writes over the free caps are refused (nothing is deleted).`;
}

/**
 * Plans and payments (docs/BILLING.md): REST routes and MCP tools (in this
 * order in tools/list). The organisation is the `org` query parameter (the
 * tools' `org` argument), else the caller's own. Every write is exempt from
 * the monthly API-call cap: paying is the way out of it.
 */
export const billingOperations = {
  summary: defineOperation(
    {
      query: OrgQuery, response: BillingSummary,
      rest: {
        method: 'GET',
        path: '/api/billing',
        summary: 'Plan, caps and live usage',
        description: "Counters are read live, counted as the caps count them. Any member of the organisation may read it; API keys included.",
        tags: ['billing'],
      },
      mcp: {
        name: 'get_billing',
        title: 'Get the plan and usage',
        description: `The organisation's plan, price and every cap next to live usage (agents, members, workspaces, rows, API calls this month, storage, messages), the billing period, any scheduled downgrade and every plan's caps. Any member. ${ORG}`,
        annotations: READ,
      },
    },
    async (services, actor, { query }) => {
      const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
      return billingSummary(services, org);
    },
  ),
  upgrade: defineOperation(
    {
      query: OrgQuery, body: UpgradeBody, response: UpgradeResult,
      rest: {
        method: 'POST',
        path: '/api/billing/upgrade',
        summary: 'Move to a paid plan',
        description:
          'Owner only (`manage_billing`). With a card on file the plan switches at once (`switched`, with proration), between paid plans too, and every cap follows on the next write; a pending downgrade is cancelled. ' +
          'Without a card: `checkout-required` with a `checkoutUrl` where a person adds one; the plan switches when the checkout completes. 5 per hour per organisation.',
        tags: ['billing'],
        config: { capExempt: true },
      },
      mcp: {
        name: 'upgrade_plan',
        title: 'Upgrade the plan',
        description:
          'Moves the organisation to `plan` (`pro` or `scale`). With a card on file it switches at once (`switched`, with the prorated charge) and the new caps apply to the next write; ' +
          `without one it answers \`checkout-required\` with a \`checkoutUrl\` a person must open to pay. Owners only (OAuth tokens need the \`admin\` scope). 5 an hour per organisation. ${ORG}`,
        annotations: PAYMENTS,
        confirm: confirmUpgrade,
        capExempt: true,
      },
    },
    async (services, actor, { query, body }, http) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
      await spendBudget(services, UPGRADE_BUDGET, org.id, http);
      return upgradePlan(services, caller, org, body.plan);
    },
  ),
  downgrade: defineOperation(
    {
      query: OrgQuery, response: DowngradeResult,
      rest: {
        method: 'POST',
        path: '/api/billing/downgrade',
        summary: 'Schedule (or cancel) the move to free at the end of the period',
        description:
          'Owner only. Schedules the downgrade to free for the end of the billing period (`scheduled`, `effectiveAt`); calling again while one is pending cancels it (`canceled`). ' +
          'The paid caps stay until then. After it, caps gate new writes only: nothing over the free caps is removed. 409 on the free plan. 5 per hour per organisation.',
        tags: ['billing'],
        body: NoBody,
        config: { capExempt: true },
      },
      mcp: {
        name: 'downgrade_plan',
        title: 'Downgrade to free',
        description:
          'Schedules the move to the free plan for the end of the billing period (`scheduled`, `effectiveAt`); called while one is scheduled, it cancels it (`canceled`). ' +
          `The paid caps stay until then, and nothing is deleted. Owners only (OAuth tokens need the \`admin\` scope). 5 an hour per organisation. ${ORG}`,
        annotations: PAYMENTS,
        confirm: confirmDowngrade,
        capExempt: true,
      },
    },
    async (services, actor, { query }, http) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
      await spendBudget(services, DOWNGRADE_BUDGET, org.id, http);
      return toggleDowngrade(services, caller, org);
    },
  ),
  requestLimitIncrease: defineOperation(
    {
      query: OrgQuery, body: LimitIncreaseBody, response: LimitIncreaseRequest,
      rest: {
        method: 'POST',
        path: '/api/billing/request-limit-increase',
        summary: 'Ask for a cap beyond the plan',
        description:
          "Recorded for the operator with the current plan and cap, and announced as `billing.limit_increase_requested`; there is no reply loop. Any member of the organisation may ask (a request changes nothing), API keys included.",
        tags: ['billing'],
        config: { capExempt: true },
      },
      mcp: {
        name: 'request_limit_increase',
        title: 'Ask for a higher limit',
        description: `Asks the operator for a cap beyond the plan (\`kind\`: agents, workspaces, rows or other; \`desiredValue\`; \`reason\`). It is recorded and changes nothing by itself; there is no reply through this tool. Any member. ${ORG}`,
        annotations: WRITE,
        capExempt: true,
      },
    },
    async (services, actor, { query, body }) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'read_org');
      const stored = await requestLimitIncrease(services, caller, org, body);
      return {
        id: stored.id,
        kind: stored.kind,
        desiredValue: stored.desiredValue,
        currentCap: stored.currentCap,
        plan: stored.plan,
        reason: stored.reason,
        status: 'received' as const,
        createdAt: stored.createdAt.toISOString(),
      };
    },
  ),
  checkout: defineOperation(
    {
      query: OrgQuery, body: UpgradeBody, response: HostedPage,
      rest: {
        method: 'POST',
        path: '/api/billing/checkout',
        summary: 'A checkout page for a plan',
        description: 'Owner only. A page where a person adds a card and subscribes; the plan switches as soon as it completes. 409 when already on that plan.',
        tags: ['billing'],
        config: { capExempt: true },
      },
    },
    async (services, actor, { query, body }) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
      const page = await checkoutFor(services, caller, org, body.plan);
      return { url: page.url, expiresAt: page.expiresAt.toISOString() };
    },
  ),
  portal: defineOperation(
    {
      query: OrgQuery, response: HostedPage,
      rest: {
        method: 'POST',
        path: '/api/billing/portal',
        summary: 'A short-lived customer portal page',
        description: 'Owner only. A page (valid for an hour) showing the plan and the card on file, where the card can be replaced.',
        tags: ['billing'],
        body: NoBody,
        config: { capExempt: true },
      },
    },
    async (services, actor, { query }) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
      const page = await portalFor(services, caller, org);
      return { url: page.url, expiresAt: page.expiresAt.toISOString() };
    },
  ),
};
