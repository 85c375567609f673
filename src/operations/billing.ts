import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { assertDowngradable, billingSummary, checkoutFor, portalFor, requestLimitIncrease, toggleDowngrade, upgradePlan } from '../domain/billing';
import { resolveCallerOrg } from '../domain/members';
import { spendBudget } from '../limits/budget';
import { PLANS } from '../limits/plans';
import { HOUR } from '../limits/rules';
import { OrgQuery } from '../model/schemas/common';
import { BillingSummary, DowngradeResult, HostedPage, LimitIncreaseRequest, PaidPlan, UpgradeResult } from '../model/schemas/billing';
import type { PlanName as Plan } from '../persistence/schema';
import { defineOperation, type ToolContext } from './operation';
import { ORG, PAYMENTS, READ, WRITE } from './tool-text';
const LimitIncreaseBody = z.strictObject({
  kind: z.enum(['agents', 'workspaces', 'rows', 'other']),
  desiredValue: z.number().int().min(1).max(1_000_000_000),
  reason: z.string().trim().min(1).max(2000),
});

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
          "Recorded for the operator with the current plan and cap, and announced as `billing.limit_increase_requested`; there is no reply loop. Any member of the organisation may ask (a request changes nothing), API keys included but suggest-only ones.",
        tags: ['billing'],
        config: { capExempt: true },
      },
      mcp: {
        name: 'request_limit_increase',
        title: 'Ask for a higher limit',
        description: `Asks the operator for a cap beyond the plan (\`kind\`: agents, workspaces, rows or other; \`desiredValue\`; \`reason\`). It is recorded and changes nothing by itself; there is no reply through this tool. Any member (not with a suggest-only key). ${ORG}`,
        annotations: WRITE,
        capExempt: true,
      },
    },
    async (services, actor, { query, body }) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'contact_support');
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
