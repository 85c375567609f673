import { z } from 'zod';
import {
  billingSummary,
  checkoutFor,
  portalFor,
  requestLimitIncrease,
  startPeriodEndJob,
  toggleDowngrade,
  upgradePlan,
} from '../domain/billing';
import { resolveCallerOrg } from '../domain/members';
import { requireCaller } from '../access/callers';
import { requireActor } from '../http/authenticate';
import { spendBudget } from '../http/limits';
import { httpExchange } from '../http/exchange';
import { defineOperation } from '../operations/operation';
import type { App } from '../http/types';
import { HOUR } from '../limits/rules';
import type { Services } from '../services';
import { BillingSummary, DowngradeResult, HostedPage, LimitIncreaseRequest, PaidPlan, UpgradeResult } from '../model/schemas/billing';
import { errorResponses, OrgQuery } from '../model/schemas/common';

const LimitIncreaseBody = z.strictObject({
  kind: z.enum(['agents', 'workspaces', 'rows', 'other']),
  desiredValue: z.number().int().min(1).max(1_000_000_000),
  reason: z.string().trim().min(1).max(2000),
});

const UpgradeBody = z.strictObject({ plan: PaidPlan });

/** Plan changes spend a budget of 5 an hour per organisation, upgrades and downgrades each their own, over REST and MCP alike. */
const UPGRADE_BUDGET = { endpoint: 'billing_upgrade', limit: 5, windowMs: HOUR };
const DOWNGRADE_BUDGET = { endpoint: 'billing_downgrade', limit: 5, windowMs: HOUR };

/**
 * Each route's policy check and domain call; the MCP tools (src/mcp/tools.ts)
 * run the same ones. The organisation is the `org` query parameter (the
 * tools' `org` argument), else the caller's own.
 */
export const billingOperations = {
  summary: defineOperation({ query: OrgQuery, response: BillingSummary }, async (services, actor, { query }) => {
    const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
    return billingSummary(services, org);
  }),
  upgrade: defineOperation({ query: OrgQuery, body: UpgradeBody, response: UpgradeResult }, async (services, actor, { query, body }, http) => {
    const caller = requireCaller(actor);
    const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
    await spendBudget(services, UPGRADE_BUDGET, org.id, http);
    return upgradePlan(services, caller, org, body.plan);
  }),
  downgrade: defineOperation({ query: OrgQuery, response: DowngradeResult }, async (services, actor, { query }, http) => {
    const caller = requireCaller(actor);
    const org = await resolveCallerOrg(services, caller, query.org, 'manage_billing');
    await spendBudget(services, DOWNGRADE_BUDGET, org.id, http);
    return toggleDowngrade(services, caller, org);
  }),
  requestLimitIncrease: defineOperation({ query: OrgQuery, body: LimitIncreaseBody, response: LimitIncreaseRequest }, async (services, actor, { query, body }) => {
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
  }),
};

/** Plans and payments (docs/BILLING.md). */
export async function billingRoutes(app: App, services: Services) {
  const { summary, upgrade, downgrade } = billingOperations;
  const stopPeriodEndJob = startPeriodEndJob(services);
  app.addHook('onClose', async () => stopPeriodEndJob());

  app.get(
    '/api/billing',
    {
      schema: {
        summary: 'Plan, caps and live usage',
        description: "Counters are read live, counted as the caps count them. Any member of the organisation may read it; API keys included.",
        tags: ['billing'],
        querystring: summary.query,
        response: { 200: summary.response, ...errorResponses },
      },
    },
    async (request) => summary.run(services, request.actor, request),
  );

  app.post(
    '/api/billing/upgrade',
    {
      schema: {
        summary: 'Move to a paid plan',
        description:
          'Owner only (`manage_billing`). With a card on file the plan switches at once (`switched`, with proration), between paid plans too, and every cap follows on the next write; a pending downgrade is cancelled. ' +
          'Without a card: `checkout-required` with a `checkoutUrl` where a person adds one; the plan switches when the checkout completes. 5 per hour per organisation.',
        tags: ['billing'],
        querystring: upgrade.query,
        body: upgrade.body,
        response: { 200: upgrade.response, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request, reply) => upgrade.run(services, request.actor, request, httpExchange(request, reply)),
  );

  app.post(
    '/api/billing/downgrade',
    {
      schema: {
        summary: 'Schedule (or cancel) the move to free at the end of the period',
        description:
          'Owner only. Schedules the downgrade to free for the end of the billing period (`scheduled`, `effectiveAt`); calling again while one is pending cancels it (`canceled`). ' +
          'The paid caps stay until then. After it, caps gate new writes only: nothing over the free caps is removed. 409 on the free plan. 5 per hour per organisation.',
        tags: ['billing'],
        querystring: downgrade.query,
        body: z.strictObject({}).nullish(),
        response: { 200: downgrade.response, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request, reply) => downgrade.run(services, request.actor, request, httpExchange(request, reply)),
  );

  app.post(
    '/api/billing/checkout',
    {
      schema: {
        summary: 'A checkout page for a plan',
        description: 'Owner only. A page where a person adds a card and subscribes; the plan switches as soon as it completes. 409 when already on that plan.',
        tags: ['billing'],
        querystring: OrgQuery,
        body: UpgradeBody,
        response: { 200: HostedPage, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request) => {
      const actor = requireActor(request);
      const org = await resolveCallerOrg(services, actor, request.query.org, 'manage_billing');
      const page = await checkoutFor(services, actor, org, request.body.plan);
      return { url: page.url, expiresAt: page.expiresAt.toISOString() };
    },
  );

  app.post(
    '/api/billing/portal',
    {
      schema: {
        summary: 'A short-lived customer portal page',
        description: 'Owner only. A page (valid for an hour) showing the plan and the card on file, where the card can be replaced.',
        tags: ['billing'],
        querystring: OrgQuery,
        body: z.strictObject({}).nullish(),
        response: { 200: HostedPage, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request) => {
      const actor = requireActor(request);
      const org = await resolveCallerOrg(services, actor, request.query.org, 'manage_billing');
      const page = await portalFor(services, actor, org);
      return { url: page.url, expiresAt: page.expiresAt.toISOString() };
    },
  );

  app.post(
    '/api/billing/request-limit-increase',
    {
      schema: {
        summary: 'Ask for a cap beyond the plan',
        description:
          "Recorded for the operator with the current plan and cap, and announced as `billing.limit_increase_requested`; there is no reply loop. Any member of the organisation may ask (a request changes nothing), API keys included.",
        tags: ['billing'],
        querystring: billingOperations.requestLimitIncrease.query,
        body: billingOperations.requestLimitIncrease.body,
        response: { 200: billingOperations.requestLimitIncrease.response, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request) => billingOperations.requestLimitIncrease.run(services, request.actor, request),
  );
}
