import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDueDowngrades } from '../../src/domain/billing';
import type { EventRecord } from '../../src/model/event-record';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { addOrgMember, createWorkspace, elevate, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { addAgentsWithKeys, payThroughCheckout, submitForm, TEST_CARD } from './helpers';

let t: TestApp & { store: { dispose(): Promise<void> } };
// Ten days into March 2027: the period (a calendar UTC month) ends on 1 April.
const clock = new ManualClock(new Date('2027-03-11T00:00:00Z'));
const PERIOD_END = '2027-04-01T00:00:00.000Z';
const events: EventRecord[] = [];
let owner: TestUser;

const billing = (user: { as: TestUser['as'] }, query = '') => t.request('GET', `/api/billing${query}`, { as: user.as });
const billingEvents = (name: string) => events.filter((e) => e.event === name);

beforeAll(async () => {
  t = await startTestApp({ clock });
  t.services.events.subscribeAll((record) => events.push(record));
  owner = await signInUser(t, 'owner@billing.test');
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('GET /api/billing', () => {
  it('shows the free plan with live counters, caps, the period and no payment details yet', async () => {
    const res = await billing(owner);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plan: 'free',
      monthlyPriceCents: 0,
      monthlyTotalCents: 0,
      activeAgents: 0,
      agentCap: 3,
      activeMembers: 1,
      memberCap: 6,
      activeWorkspaces: 1,
      workspaceCap: 20,
      totalRows: 0,
      rowsPerWorkspaceCap: 500,
      apiCallsPerMonthCap: 10_000,
      webhooksThisMonth: 0,
      webhooksPerMonthCap: 1_000,
      storageBytesUsed: 0,
      storageBytesCap: 5 * 1024 ** 3,
      messagesBundlePerMonth: 1_000,
      messagesHardCeilingPerMonth: 1_000,
      periodEndsAt: PERIOD_END,
      pendingDowngradeAt: null,
      payments: { provider: 'local', customerId: null, subscriptionId: null, card: null },
    });
    // The live counter, before this call is counted (the header includes it).
    expect(res.body.apiCallsThisMonth).toBe(Number(res.headers.get('x-ratelimit-monthly-used')) - 1);
    expect(res.body.plans.map((p: { plan: string; monthlyPriceCents: number }) => [p.plan, p.monthlyPriceCents])).toEqual([
      ['free', 0],
      ['pro', 1900],
      ['scale', 4900],
    ]);
  });

  it('counters follow usage: rows, workspaces, members, agents, API calls; archiving and revoking count down at once', async () => {
    const before = (await billing(owner)).body;
    for (const title of ['a', 'b', 'c']) await t.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title } } });
    const extra = await createWorkspace(t, owner, { name: 'Extra', slug: 'extra' });
    const friend = await signInUser(t, 'friend@billing.test');
    await addOrgMember(t, owner.orgId, friend.userId, 'viewer');
    const key = await insertKey(t, owner, { role: 'viewer' });

    const after = (await billing(owner)).body;
    expect(after).toMatchObject({ totalRows: 3, activeWorkspaces: 2, activeMembers: 2, activeAgents: 1 });
    expect(after.fullestWorkspaces[0]).toMatchObject({ slug: 'welcome', rows: 3 });
    expect(after.apiCallsThisMonth).toBeGreaterThan(before.apiCallsThisMonth);

    await elevate(t, owner);
    expect((await t.request('DELETE', '/api/workspaces/extra', { as: owner.as })).status).toBe(200);
    const keyId = (await t.services.db.selectFrom('apiKeys').select('id').where('agentId', '=', key.agentId).executeTakeFirstOrThrow()).id;
    expect((await t.request('DELETE', `/api/keys/${keyId}`, { as: owner.as })).status).toBe(200);
    expect((await billing(owner)).body).toMatchObject({ activeWorkspaces: 1, activeAgents: 0 });
    expect(extra.id).toBeTruthy();
  });

  it('is readable by every member of the organisation and by its keys, and by nobody else', async () => {
    const viewer = await signInUser(t, 'viewer@billing.test');
    await addOrgMember(t, owner.orgId, viewer.userId, 'viewer');
    expect((await billing(viewer, `?org=${owner.orgSlug}`)).body.plan).toBe('free');
    const key = await insertKey(t, owner, { role: 'editor' });
    expect((await billing(key)).status).toBe(200);
    const stranger = await signInUser(t, 'stranger@billing.test');
    expect((await billing(stranger, `?org=${owner.orgSlug}`)).status).toBe(404);
    expect((await billing(stranger)).body.plan).toBe('free'); // their own organisation
    expect((await t.request('GET', '/api/billing')).status).toBe(401);
  });
});

describe('upgrading through the local checkout page', () => {
  it('without a card on file answers checkout-required; the page takes a test card and the plan switches at once', async () => {
    const upgrade = await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } });
    expect(upgrade.status).toBe(200);
    expect(upgrade.body).toMatchObject({ plan: 'pro', status: 'checkout-required' });
    expect(upgrade.body.checkoutUrl).toMatch(new RegExp(`^${t.url}/billing/checkout/[A-Za-z0-9_-]{40,}$`));
    expect((await billing(owner)).body.plan).toBe('free');

    const page = await fetch(upgrade.body.checkoutUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('$19.00 per month');

    // A declined card and a bad expiry re-render the form with the reason; nothing changes.
    const declined = await submitForm(upgrade.body.checkoutUrl, html, { ...TEST_CARD, number: '4000 0000 0000 0002' });
    expect(declined.status).toBe(422);
    expect(await declined.text()).toContain('Your card was declined.');
    const expired = await submitForm(upgrade.body.checkoutUrl, html, { ...TEST_CARD, expiry: '01/27' });
    expect(await expired.text()).toContain('This card has expired.');
    const notLuhn = await submitForm(upgrade.body.checkoutUrl, html, { ...TEST_CARD, number: '4242 4242 4242 4241' });
    expect(await notLuhn.text()).toContain('This card number is not valid.');
    expect((await billing(owner)).body.plan).toBe('free');

    const paid = await submitForm(upgrade.body.checkoutUrl, html, TEST_CARD);
    expect(paid.status).toBe(303);
    expect(new URL(paid.headers.get('location')!, t.url).toString()).toBe(upgrade.body.checkoutUrl);
    const receipt = await (await fetch(upgrade.body.checkoutUrl)).text();
    expect(receipt).toContain('Payment complete');
    expect(receipt).toContain('ending 4242');

    const res = await billing(owner);
    expect(res.body).toMatchObject({
      plan: 'pro',
      monthlyPriceCents: 1900,
      monthlyTotalCents: 1900,
      agentCap: 10,
      memberCap: 20,
      workspaceCap: 200,
      rowsPerWorkspaceCap: 5000,
      apiCallsPerMonthCap: 100_000,
      payments: { provider: 'local', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034 } },
    });
    expect(res.body.payments.customerId).toMatch(/^cus_/);
    expect(res.body.payments.subscriptionId).toMatch(/^sub_/);
    // The monthly API cap follows at once, not after the meter's plan cache expires.
    expect(res.headers.get('x-ratelimit-monthly-cap')).toBe('100000');
    expect(billingEvents('billing.plan_changed').at(-1)).toMatchObject({
      workspace: null,
      principal: { id: owner.userId, principalType: 'user' },
      data: { from: 'free', to: 'pro', reason: 'checkout' },
    });
    // The raw card number is nowhere in the database.
    const stored = JSON.stringify(await t.services.db.selectFrom('localPaymentCustomers').selectAll().execute());
    expect(stored).not.toContain('4242424242424242');
  });

  it('a used checkout link shows its receipt again and cannot pay twice; an expired or unknown one is 404', async () => {
    const checkout = await t.request('POST', '/api/billing/checkout', { as: owner.as, body: { plan: 'scale' } });
    expect(checkout.status).toBe(200);
    expect(checkout.body.url).toMatch(/\/billing\/checkout\//);
    expect(new Date(checkout.body.expiresAt).getTime() - clock.now().getTime()).toBe(24 * 3600_000);
    expect((await t.request('POST', '/api/billing/checkout', { as: owner.as, body: { plan: 'pro' } })).status).toBe(409);

    clock.advance(24 * 3600_000 + 1);
    expect((await fetch(checkout.body.url)).status).toBe(404);
    expect((await fetch(`${t.url}/billing/checkout/not-a-token`)).status).toBe(404);
    const late = await fetch(checkout.body.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(TEST_CARD).toString() });
    expect(late.status).toBe(404);
    expect((await billing(owner)).body.plan).toBe('pro');
  });

  it('with a card on file, an upgrade switches at once with proration and needs no checkout', async () => {
    const res = await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'scale' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ plan: 'scale', status: 'switched', previousPlan: 'pro' });
    // $30 more a month, for the share of March that is left.
    const now = clock.now().getTime();
    const share = (Date.parse(PERIOD_END) - now) / (Date.parse(PERIOD_END) - Date.parse('2027-03-01T00:00:00Z'));
    expect(res.body.prorationCents).toBe(Math.round(3000 * share));
    expect((await billing(owner)).body).toMatchObject({ plan: 'scale', agentCap: 30, monthlyPriceCents: 4900 });
    // Asking for the plan it is on changes nothing.
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'scale' } })).body).toMatchObject({ status: 'switched', prorationCents: 0 });
    // Moving between paid plans is a switch too.
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } })).body).toMatchObject({ plan: 'pro', status: 'switched', previousPlan: 'scale' });
  });
});

describe('downgrading to free at the end of the period', () => {
  it('schedules, cancels on a second call, and the period-end job applies it; data over the free caps stays', async () => {
    const scheduled = await t.request('POST', '/api/billing/downgrade', { as: owner.as });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toEqual({ plan: 'pro', status: 'scheduled', effectiveAt: PERIOD_END });
    expect((await billing(owner)).body).toMatchObject({ plan: 'pro', pendingDowngradeAt: PERIOD_END });

    const canceled = await t.request('POST', '/api/billing/downgrade', { as: owner.as, body: {} });
    expect(canceled.body).toEqual({ plan: 'pro', status: 'canceled', effectiveAt: null });
    expect((await billing(owner)).body.pendingDowngradeAt).toBeNull();
    expect((await t.request('POST', '/api/billing/downgrade', { as: owner.as })).body.status).toBe('scheduled');

    // Four agents, one over the free cap of three.
    const extraKey = await insertKey(t, owner, { role: 'viewer' });
    const agents = await addAgentsWithKeys(t, owner, 4 - (await billing(owner)).body.activeAgents);
    expect((await billing(owner)).body.activeAgents).toBe(4);

    // Nothing happens before the period ends.
    clock.set(new Date('2027-03-31T23:59:59Z'));
    expect(await applyDueDowngrades(t.services)).toBe(0);
    expect((await billing(owner)).body.plan).toBe('pro');

    clock.set(new Date(PERIOD_END));
    expect(await applyDueDowngrades(t.services)).toBe(1);
    expect(await applyDueDowngrades(t.services)).toBe(0);
    const after = await billing(owner);
    expect(after.body).toMatchObject({
      plan: 'free',
      pendingDowngradeAt: null,
      activeAgents: 4,
      agentCap: 3,
      payments: { subscriptionId: null, card: { last4: '4242' } },
      periodEndsAt: '2027-05-01T00:00:00.000Z',
    });
    expect(after.headers.get('x-ratelimit-monthly-cap')).toBe('10000');
    expect(billingEvents('billing.plan_changed').at(-1)).toMatchObject({ principal: null, data: { from: 'pro', to: 'free', reason: 'scheduled_downgrade' } });
    // Caps gate writes only: the fourth agent keeps working; a new one is refused.
    expect((await t.request('GET', '/api/billing', { as: extraKey.as })).status).toBe(200);
    owner = await signInUser(t, 'owner@billing.test'); // a fresh session: elevation is granted at once
    await elevate(t, owner, 'keys');
    const mint = await t.request('POST', '/api/keys', { as: owner.as, body: { name: 'k', agentName: 'fifth', role: 'viewer' } });
    expect(mint.status).toBe(402);
    expect(mint.body).toMatchObject({ code: 'over_limit', limit: 'agents', current: 4, cap: 3 });
    expect(agents.length).toBeGreaterThan(0);

    // The card stayed on file: upgrading again is immediate.
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } })).body).toMatchObject({ status: 'switched', plan: 'pro' });
  });

  it('an upgrade while a downgrade is pending cancels the downgrade; the free plan has nothing to downgrade', async () => {
    expect((await t.request('POST', '/api/billing/downgrade', { as: owner.as })).body.status).toBe('scheduled');
    const keep = await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } });
    expect(keep.body).toMatchObject({ status: 'switched', plan: 'pro' });
    expect((await billing(owner)).body.pendingDowngradeAt).toBeNull();
    expect(billingEvents('billing.downgrade_canceled').at(-1)).toMatchObject({ data: { reason: 'upgrade' } });

    const freeOwner = await signInUser(t, 'free@billing.test');
    const refused = await t.request('POST', '/api/billing/downgrade', { as: freeOwner.as });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
  });
});

describe('who may change the plan, and how often', () => {
  it('only the owner: editors and keys get 403', async () => {
    const editor = await signInUser(t, 'editor@billing.test');
    await addOrgMember(t, owner.orgId, editor.userId, 'editor');
    const key = await insertKey(t, owner, { role: 'editor' });
    for (const caller of [editor, key]) {
      const q = `?org=${owner.orgSlug}`;
      expect((await t.request('POST', `/api/billing/upgrade${q}`, { as: caller.as, body: { plan: 'scale' } })).status).toBe(403);
      expect((await t.request('POST', `/api/billing/downgrade${q}`, { as: caller.as })).status).toBe(403);
      expect((await t.request('POST', `/api/billing/checkout${q}`, { as: caller.as, body: { plan: 'scale' } })).status).toBe(403);
      expect((await t.request('POST', `/api/billing/portal${q}`, { as: caller.as })).status).toBe(403);
    }
  });

  it('allows 5 upgrades and 5 downgrades per hour per organisation, counted separately', async () => {
    const busy = await signInUser(t, 'busy@billing.test');
    // Refused callers do not spend the organisation's budget.
    const helper = await signInUser(t, 'helper@billing.test');
    await addOrgMember(t, busy.orgId, helper.userId, 'editor');
    for (let i = 0; i < 6; i++) {
      expect((await t.request('POST', `/api/billing/upgrade?org=${busy.orgSlug}`, { as: helper.as, body: { plan: 'pro' } })).status).toBe(403);
    }
    for (let i = 0; i < 5; i++) expect((await t.request('POST', '/api/billing/upgrade', { as: busy.as, body: { plan: 'pro' } })).status).toBe(200);
    const refused = await t.request('POST', '/api/billing/upgrade', { as: busy.as, body: { plan: 'pro' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', endpoint: 'billing_upgrade', limit: 5, window: '1h' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The downgrade budget is its own (409: free has nothing to downgrade, but it is not rate limited).
    expect((await t.request('POST', '/api/billing/downgrade', { as: busy.as })).status).toBe(409);
    clock.advance(3600_000 + 1);
    expect((await t.request('POST', '/api/billing/upgrade', { as: busy.as, body: { plan: 'pro' } })).status).toBe(200);
  });

  it('validates bodies: an unknown or free plan is 400, and nothing changes', async () => {
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'free' } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'enterprise' } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: {} })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro', extra: 1 } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/downgrade', { as: owner.as, body: { now: true } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/upgrade', { as: owner.as, rawBody: '{"plan":' })).status).toBe(400);
    expect((await billing(owner)).body.plan).toBe('pro');
  });
});

describe('portal and limit-increase requests', () => {
  it('the portal shows the card on file and replaces it', async () => {
    const portal = await t.request('POST', '/api/billing/portal', { as: owner.as });
    expect(portal.status).toBe(200);
    expect(new Date(portal.body.expiresAt).getTime() - clock.now().getTime()).toBe(3600_000);
    const html = await (await fetch(portal.body.url)).text();
    expect(html).toContain('visa ending 4242, expires 12/2034');
    const saved = await submitForm(portal.body.url, html, { number: '5555 5555 5555 4444', expiry: '09/31', cvc: '321' });
    expect(saved.status).toBe(303);
    expect((await billing(owner)).body.payments.card).toEqual({ brand: 'mastercard', last4: '4444', expMonth: 9, expYear: 2031 });
    expect(billingEvents('billing.payment_method_updated').at(-1)).toMatchObject({ data: { brand: 'mastercard', last4: '4444' } });
    clock.advance(3600_000 + 1);
    expect((await fetch(portal.body.url)).status).toBe(404);
  });

  it('records a limit-increase request from any member or key, with the current cap', async () => {
    const key = await insertKey(t, owner, { role: 'viewer' });
    const res = await t.request('POST', '/api/billing/request-limit-increase', { as: key.as, body: { kind: 'rows', desiredValue: 20_000, reason: 'Importing our CRM' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'rows', desiredValue: 20_000, currentCap: 5000, plan: 'pro', reason: 'Importing our CRM', status: 'received' });
    expect(res.body.id).toMatch(/^lir_/);
    expect(billingEvents('billing.limit_increase_requested').at(-1)).toMatchObject({ principal: { principalType: 'agent' }, data: { kind: 'rows', desiredValue: 20_000, currentCap: 5000 } });
    const other = await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'other', desiredValue: 1, reason: 'SSO' } });
    expect(other.body.currentCap).toBeNull();

    expect((await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'gold', desiredValue: 1, reason: 'x' } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'rows', desiredValue: 0, reason: 'x' } })).status).toBe(422);
    expect((await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'rows', desiredValue: 1.5, reason: 'x' } })).status).toBe(400);
    expect((await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'rows', desiredValue: 10, reason: '   ' } })).status).toBe(422);
    expect((await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'rows', desiredValue: 10, reason: 'x'.repeat(2001) } })).status).toBe(422);
  });
});

describe('payThroughCheckout helper', () => {
  it('pays for a new organisation end to end', async () => {
    const fresh = await signInUser(t, 'fresh@billing.test');
    await payThroughCheckout(t, fresh, 'scale');
    expect((await billing(fresh)).body.plan).toBe('scale');
  });
});
