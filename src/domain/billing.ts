import { messagesOverageCents } from '../billing/messages-overage';
import type { BillingAccount, CardOnFile, HostedPage, PaidPlan } from '../billing/payment-provider';
import { errors } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { EventName } from '../model/event-names';
import type { Actor, Principal } from '../policy/actor';
import { newId } from '../lib/ids';
import type { BillingSummary } from '../model/schemas/billing';
import { monthOf } from '../limits/monthly-meter';
import { capsFor, PLAN_NAMES, PLANS } from '../limits/plans';
import { findOrgById } from '../persistence/accounts';
import {
  applyDowngrade,
  countOrgRows,
  findDueDowngrades,
  insertLimitIncreaseRequest,
  markReferralsActivated,
  setOrgPlan,
  setPendingDowngrade,
  type LimitIncreaseRequest,
} from '../persistence/billing';
import { countActiveAgents } from '../persistence/keys';
import { webhookUsage } from '../persistence/webhooks';
import { countHumans } from '../persistence/members';
import type { Org, PlanName } from '../persistence/schema';
import { countLiveWorkspaces, findPrincipals, lockOrgForCapCheck } from '../persistence/workspaces';
import type { Services } from './services';
import { storageUsage } from './storage';
import { transactWithEvents } from './transact';

/**
 * Plans and billing. The plan lives on `orgs.plan`, and every cap check
 * reads it there when it runs (inside the write's transaction where a race
 * matters), so a changed plan applies to the next write on every cap; the
 * API meter's short plan cache is told at once. Payments go through
 * `services.payments` (src/billing/payment-provider.ts).
 *
 * Downgrades go to free at the end of the billing period and gate writes
 * only: an organisation over the free caps keeps every agent, member,
 * workspace and row, can read and edit them, and cannot add more until it
 * is back under the cap (docs/BILLING.md).
 */

export type { BillingSummary };

const PLAN_RANK: Record<PlanName, number> = { free: 0, pro: 1, scale: 2 };

function accountOf(org: Org): BillingAccount {
  return { orgId: org.id, plan: org.plan, customerId: org.paymentCustomerId, subscriptionId: org.paymentSubscriptionId };
}

/** Live counters, counted as the caps count them (docs/LIMITS.md "Plan caps"). */
export async function billingSummary(services: Services, org: Org): Promise<BillingSummary> {
  const caps = capsFor(org.plan);
  const account = accountOf(org);
  const [agents, humans, workspaces, rows, usage, card, storage, webhooks, messages] = await Promise.all([
    countActiveAgents(services.db, org.id),
    countHumans(services.db, org.id),
    countLiveWorkspaces(services.db, org.id),
    countOrgRows(services.db, org.id, 5),
    services.limits.meter.read({ orgId: org.id }),
    services.payments.cardOnFile(account),
    storageUsage(services, org.id),
    webhookUsage(services.db, org.id, monthOf(services.clock.now()).period),
    services.limits.messages.usage(org.id),
  ]);
  const overageCents = messagesOverageCents(org.plan, messages.overage);
  return {
    plan: org.plan,
    monthlyPriceCents: caps.monthlyPriceCents,
    activeAgents: agents,
    agentCap: caps.agents,
    activeMembers: humans,
    memberCap: caps.humans,
    activeWorkspaces: workspaces,
    workspaceCap: caps.workspaces,
    totalRows: rows.total,
    rowsPerWorkspaceCap: caps.rowsPerWorkspace,
    fullestWorkspaces: rows.fullest,
    apiCallsThisMonth: usage.used,
    apiCallsPerMonthCap: caps.apiCallsPerMonth,
    apiCallsResetAt: usage.resetAt.toISOString(),
    webhooksThisMonth: webhooks.used,
    webhooksPerMonthCap: caps.webhookDeliveriesPerMonth,
    messagesThisMonth: messages.delivered,
    messagesOverage: messages.overage,
    messagesOverageCents: overageCents,
    messagesBundlePerMonth: caps.messagesBundlePerMonth,
    messagesHardCeilingPerMonth: caps.messagesHardCeilingPerMonth,
    storageBytesUsed: storage.used,
    storageBytesCap: storage.cap,
    monthlyTotalCents: caps.monthlyPriceCents + overageCents,
    periodEndsAt: services.payments.periodEnd(account, services.clock.now()).toISOString(),
    pendingDowngradeAt: org.pendingDowngradeAt?.toISOString() ?? null,
    payments: { provider: services.payments.name, customerId: org.paymentCustomerId, subscriptionId: org.paymentSubscriptionId, card },
    plans: PLAN_NAMES.map((plan) => {
      const { monthlyPriceCents, ...planCaps } = PLANS[plan];
      return { plan, monthlyPriceCents, caps: planCaps };
    }),
  };
}

export type UpgradeResult =
  | { plan: PlanName; status: 'switched'; previousPlan: PlanName; prorationCents: number }
  | { plan: PaidPlan; status: 'checkout-required'; checkoutUrl: string; expiresAt: string };

/**
 * With a card on file the plan switches at once (the provider swaps the
 * price, with proration), including between paid plans; a pending downgrade
 * is cancelled, since the organisation has chosen a paid plan again. Without
 * a card, a checkout link: the plan switches when the checkout completes.
 */
export async function upgradePlan(services: Services, actor: Actor, org: Org, plan: PaidPlan): Promise<UpgradeResult> {
  const account = accountOf(org);
  const now = services.clock.now();
  if (!(await services.payments.cardOnFile(account))) {
    const page = await services.payments.checkoutPage(account, { plan, requestedById: actor.principal.id, now });
    return { plan, status: 'checkout-required', checkoutUrl: page.url, expiresAt: page.expiresAt.toISOString() };
  }
  if (org.plan === plan && !org.pendingDowngradeAt) return { plan, status: 'switched', previousPlan: org.plan, prorationCents: 0 };
  const subscription = org.plan === plan ? null : await services.payments.subscribe(account, plan, now);
  await switchPlan(services, org.id, plan, {
    principal: actor.principal,
    reason: 'upgrade',
    customerId: subscription?.customerId,
    subscriptionId: subscription?.subscriptionId,
  });
  return { plan, status: 'switched', previousPlan: org.plan, prorationCents: subscription?.prorationCents ?? 0 };
}

/**
 * Completes a checkout reported by the provider (the local checkout page,
 * or a hosted provider's webhook): the card is on file, so the subscription
 * starts and the plan switches at once.
 */
export async function completePaidCheckout(services: Services, orgId: string, plan: PaidPlan, principalId: string): Promise<Org> {
  const org = await findOrgById(services.db, orgId);
  if (!org) throw errors.notFound('Organisation');
  const subscription = await services.payments.subscribe(accountOf(org), plan, services.clock.now());
  const principal = (await findPrincipals(services.db, [principalId])).get(principalId) ?? null;
  return switchPlan(services, org.id, plan, {
    principal,
    reason: 'checkout',
    customerId: subscription.customerId,
    subscriptionId: subscription.subscriptionId,
  });
}

/** The customer replaced the card on file (the provider's portal reports it): `billing.payment_method_updated`. */
export async function recordCardUpdate(services: Services, orgId: string, card: CardOnFile, principalId: string): Promise<void> {
  const org = await findOrgById(services.db, orgId);
  if (!org) return;
  const principal = (await findPrincipals(services.db, [principalId])).get(principalId) ?? null;
  await transactWithEvents(services, async (_tx, events) => {
    events.push(orgEvent('billing.payment_method_updated', org, principal, { brand: card.brand, last4: card.last4, expMonth: card.expMonth, expYear: card.expYear }));
  });
}

type PlanChange = {
  principal: Principal | null;
  reason: 'upgrade' | 'checkout' | 'scheduled_downgrade' | 'operator';
  customerId?: string | null;
  subscriptionId?: string | null;
};

/** Sets the plan under the org lock, cancels any pending downgrade, records `billing.plan_changed`, and tells the plan caches. */
export async function switchPlan(services: Services, orgId: string, plan: PlanName, change: PlanChange): Promise<Org> {
  const now = services.clock.now();
  const updated = await transactWithEvents(services, async (tx, events) => {
    await lockOrgForCapCheck(tx, orgId);
    const before = (await findOrgById(tx, orgId))!;
    const after = await setOrgPlan(tx, orgId, { plan, customerId: change.customerId, subscriptionId: change.subscriptionId, pendingDowngradeAt: null }, now);
    if (before.pendingDowngradeAt) {
      events.push(orgEvent('billing.downgrade_canceled', after, change.principal, { plan: after.plan, canceledEffectiveAt: before.pendingDowngradeAt.toISOString(), reason: change.reason }));
    }
    if (before.plan !== plan) {
      events.push(orgEvent('billing.plan_changed', after, change.principal, { from: before.plan, to: plan, reason: change.reason }));
      if (PLAN_RANK[plan] > 0) await markReferralsActivated(tx, orgId, now);
    }
    return after;
  });
  services.limits.meter.forgetPlan(orgId);
  return updated;
}

export type DowngradeResult = { plan: PlanName; status: 'scheduled' | 'canceled'; effectiveAt: string | null };

/**
 * Schedules the move to free for the end of the billing period, or, when
 * one is already scheduled, cancels it (SPEC: calling again cancels).
 * Nothing changes until then: the paid caps stay for the period paid for.
 */
/** 409 on the free plan, which has nothing to downgrade. */
export function assertDowngradable(org: Org) {
  if (org.plan === 'free') throw errors.conflict('This organisation is on the free plan: there is nothing to downgrade.');
}

export async function toggleDowngrade(services: Services, actor: Actor, org: Org): Promise<DowngradeResult> {
  assertDowngradable(org);
  const now = services.clock.now();
  return transactWithEvents(services, async (tx, events) => {
    await lockOrgForCapCheck(tx, org.id);
    const current = (await findOrgById(tx, org.id))!;
    assertDowngradable(current);
    if (current.pendingDowngradeAt) {
      const after = await setPendingDowngrade(tx, org.id, null, now);
      events.push(orgEvent('billing.downgrade_canceled', after, actor.principal, { plan: after.plan, canceledEffectiveAt: current.pendingDowngradeAt.toISOString(), reason: 'request' }));
      return { plan: after.plan, status: 'canceled' as const, effectiveAt: null };
    }
    const effectiveAt = services.payments.periodEnd(accountOf(current), now);
    const after = await setPendingDowngrade(tx, org.id, effectiveAt, now);
    events.push(orgEvent('billing.downgrade_scheduled', after, actor.principal, { plan: after.plan, to: 'free', effectiveAt: effectiveAt.toISOString() }));
    return { plan: after.plan, status: 'scheduled' as const, effectiveAt: effectiveAt.toISOString() };
  });
}

/**
 * The period-end job: applies every downgrade that is due. Safe on several
 * instances at once: the update only takes an org whose downgrade is still
 * due, so each is applied (and announced) once. Returns how many it applied.
 */
export async function applyDueDowngrades(services: Services): Promise<number> {
  const now = services.clock.now();
  let applied = 0;
  for (const org of await findDueDowngrades(services.db, now, 100)) {
    try {
      await services.payments.cancel(accountOf(org));
      const changed = await transactWithEvents(services, async (tx, events) => {
        const after = await applyDowngrade(tx, org.id, now);
        if (after && org.plan !== 'free') {
          events.push(orgEvent('billing.plan_changed', after, null, { from: org.plan, to: 'free', reason: 'scheduled_downgrade' }));
        }
        return after;
      });
      if (changed) {
        applied++;
        services.limits.meter.forgetPlan(org.id);
      }
    } catch (error) {
      services.log.error({ err: error, orgId: org.id }, 'scheduled downgrade failed; retrying on the next run');
    }
  }
  return applied;
}

/** Runs `applyDueDowngrades` every `intervalMs` (and once at start); returns the stop function. */
export function startPeriodEndJob(services: Services, intervalMs = 60_000): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running.then(() => applyDueDowngrades(services)).catch((error) => services.log.error({ err: error }, 'period-end job failed'));
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

export async function checkoutFor(services: Services, actor: Actor, org: Org, plan: PaidPlan): Promise<HostedPage> {
  if (org.plan === plan) throw errors.conflict(`This organisation is already on ${plan}.`);
  return services.payments.checkoutPage(accountOf(org), { plan, requestedById: actor.principal.id, now: services.clock.now() });
}

export async function portalFor(services: Services, actor: Actor, org: Org): Promise<HostedPage> {
  return services.payments.portalPage(accountOf(org), { requestedById: actor.principal.id, now: services.clock.now() });
}

export type LimitIncreaseInput = { kind: 'agents' | 'workspaces' | 'rows' | 'other'; desiredValue: number; reason: string };

const CAP_OF_KIND = { agents: 'agents', workspaces: 'workspaces', rows: 'rowsPerWorkspace' } as const;

/** Recorded for the operator (and announced as an event); there is no reply loop. */
export async function requestLimitIncrease(services: Services, actor: Actor, org: Org, input: LimitIncreaseInput): Promise<LimitIncreaseRequest> {
  const currentCap = input.kind === 'other' ? null : capsFor(org.plan)[CAP_OF_KIND[input.kind]];
  const request = await transactWithEvents(services, async (tx, events) => {
    const stored = await insertLimitIncreaseRequest(tx, {
      id: newId('lir'),
      orgId: org.id,
      kind: input.kind,
      desiredValue: input.desiredValue,
      currentCap,
      plan: org.plan,
      reason: input.reason,
      requestedById: actor.principal.id,
      requestedByType: actor.principal.principalType,
      createdAt: services.clock.now(),
    });
    events.push(orgEvent('billing.limit_increase_requested', org, actor.principal, { requestId: stored.id, kind: input.kind, desiredValue: input.desiredValue, currentCap, plan: org.plan }));
    return stored;
  });
  services.log.info({ orgId: org.id, requestId: request.id, kind: input.kind, desiredValue: input.desiredValue }, 'limit increase requested');
  return request;
}

/** Billing events concern the organisation, not one workspace (`workspace: null`); webhooks and the org's audit see them. */
function orgEvent(event: EventName, org: Org, principal: Principal | null, data: Record<string, unknown>): EventDraft {
  return { event, orgId: org.id, workspace: null, principal, subjectId: org.id, data };
}

