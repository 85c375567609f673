import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { grantTokens } from '../oauth/helpers';
import { Receiver } from '../webhooks/receiver';
import { addOrgMember, createWorkspace } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

const POLL = { timeout: 20_000 };

/** Organisation settings (billing, webhooks), connected apps and the Help form, as an owner and as a viewer sees them. */
describe('organisation settings in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let vic: Person;
  let annCookie: string;
  let receiver: Receiver;
  let workspace: { org: { slug: string }; slug: string };

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    receiver = await Receiver.start();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    vic = await signedInPerson(t, browser, 'vic@example.com');
    annCookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Orders', slug: 'orders' });
    // Vic works in Ann's organisation as a viewer (that organisation is the one his session speaks for).
    const annUser = await t.services.db.selectFrom('users').select(['primaryOrgId']).where('email', '=', 'ann@example.com').executeTakeFirstOrThrow();
    const vicUser = await t.services.db.selectFrom('users').select(['id']).where('email', '=', 'vic@example.com').executeTakeFirstOrThrow();
    await addOrgMember(t, annUser.primaryOrgId!, vicUser.id, 'viewer');
    await t.services.db.updateTable('users').set({ primaryOrgId: annUser.primaryOrgId }).where('id', '=', vicUser.id).execute();
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await vic?.close();
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  it('upgrades through the checkout page and shows the new plan; schedules a downgrade and cancels it', async () => {
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}`);
    await ann.page.getByRole('button', { name: /^ann/ }).click();
    await ann.page.getByRole('menuitem', { name: 'Organisation settings' }).click();
    const plan = ann.page.getByTestId('current-plan');
    await plan.waitFor(POLL);
    expect(await plan.textContent()).toBe('Free');
    expect(await ann.page.locator('[data-meter="Workspaces"] .meter-figures').textContent()).toBe('2 of 20');

    const checkoutOpened = ann.context.waitForEvent('page');
    await ann.page.getByRole('button', { name: 'Upgrade to Pro' }).click();
    const checkout = await checkoutOpened;
    await checkout.waitForLoadState();
    expect(new URL(checkout.url()).pathname).toMatch(/^\/billing\/checkout\//);
    await checkout.fill('#name', 'Ann Example');
    await checkout.fill('#number', '4242 4242 4242 4242');
    await checkout.fill('#expiry', '12/39');
    await checkout.fill('#cvc', '123');
    await checkout.getByRole('button', { name: /Pay and switch to Pro/ }).click();
    await checkout.getByRole('heading', { name: 'Payment complete' }).waitFor(POLL);
    await checkout.close();

    // The settings page notices the paid checkout by itself.
    await expect.poll(() => plan.textContent(), POLL).toBe('Pro');
    expect((await t.request('GET', '/api/billing', { as: { cookie: annCookie } })).body.plan).toBe('pro');
    expect(await ann.page.locator('[data-meter="Workspaces"] .meter-figures').textContent()).toBe('2 of 200');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}billing.png` });

    await ann.page.getByRole('button', { name: 'Downgrade to Free' }).click();
    await ann.page.getByRole('dialog', { name: 'Move to Free?' }).getByRole('button', { name: 'Downgrade at period end' }).click();
    const banner = ann.page.getByRole('note').filter({ hasText: 'Moving to Free on' });
    await banner.waitFor(POLL);
    expect((await t.request('GET', '/api/billing', { as: { cookie: annCookie } })).body.pendingDowngradeAt).not.toBeNull();
    await banner.getByRole('button', { name: 'Keep Pro' }).click();
    await banner.waitFor({ state: 'detached', ...POLL });
    expect((await t.request('GET', '/api/billing', { as: { cookie: annCookie } })).body.pendingDowngradeAt).toBeNull();
  }, 120_000);

  it('offers a viewer the usage but no plan changes and no webhooks', async () => {
    await vic.page.goto(`${vic.origin}/settings/billing`);
    const plan = vic.page.getByTestId('current-plan');
    await plan.waitFor(POLL);
    expect(await plan.textContent()).toBe('Pro');
    await vic.page.getByText('Only owners of the organisation can change its plan.').waitFor();
    expect(await vic.page.getByRole('button', { name: /Upgrade|Switch to|Downgrade/ }).count()).toBe(0);
    expect(await vic.page.getByRole('tab', { name: 'Webhooks' }).count()).toBe(0);
    // The API agrees: the same request from him is refused.
    const vicCookie = await sessionCookieOf(vic.context);
    expect((await t.request('POST', '/api/billing/upgrade', { as: { cookie: vicCookie }, body: { plan: 'scale' } })).status).toBe(403);
  }, 120_000);

  it('creates a webhook whose secret is shown once, lists its deliveries after a row write, and retries a failed one', async () => {
    await ann.page.getByRole('tab', { name: 'Webhooks' }).click();
    await ann.page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'New webhook' });
    await dialog.getByLabel('Address').fill(`${receiver.url}/hook`);
    expect(await dialog.getByRole('checkbox', { name: 'row.*' }).isChecked()).toBe(true);
    await dialog.getByRole('checkbox', { name: 'comment.*' }).check();
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const secret = ann.page.getByTestId('webhook-secret');
    await secret.waitFor(POLL);
    expect(await secret.textContent()).toMatch(/^whsec_/);
    await ann.page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await ann.page.getByTestId('webhook-secret').count()).toBe(0);
    const listed = (await t.request('GET', `/api/orgs/${workspace.org.slug}/webhooks`, { as: { cookie: annCookie } })).body.webhooks;
    expect(listed).toMatchObject([{ url: `${receiver.url}/hook`, active: true }]);
    expect([...listed[0].events].sort()).toEqual(['comment.*', 'row.*']);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    receiver.answer = () => 500;
    const row = await t.request('POST', `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}/rows`, { as: { cookie: annCookie }, body: { data: { title: 'First order' } } });
    expect(row.status).toBe(200);
    const hook = ann.page.locator('.webhook').first();
    await hook.locator('.webhook-toggle').click();
    const delivery = hook.locator('tr[data-delivery]').first();
    await expect.poll(() => delivery.locator('td').nth(2).textContent(), POLL).toContain('500');
    expect(await delivery.locator('td').first().textContent()).toBe('row.created');
    expect(await delivery.locator('.delivery-status').textContent()).not.toBe('succeeded');

    receiver.answer = () => 200;
    await delivery.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => delivery.locator('.delivery-status').textContent(), POLL).toBe('succeeded');
    expect(receiver.ofEvent('row.created').length).toBeGreaterThanOrEqual(2);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}webhooks.png` });

    await hook.getByRole('button', { name: 'Pause' }).click();
    await hook.getByText('Paused').waitFor(POLL);
    await hook.getByRole('button', { name: 'Resume' }).click();
    await hook.getByText('Active').waitFor(POLL);
    await hook.getByRole('button', { name: /Delete webhook/ }).click();
    await ann.page.getByRole('dialog', { name: 'Delete webhook?' }).getByRole('button', { name: 'Delete' }).click();
    await ann.page.getByText('No webhooks').waitFor(POLL);
  }, 120_000);

  it('lists an app authorised over OAuth on the account page and disconnects it', async () => {
    const { tokens } = await grantTokens(t, annCookie);
    expect((await t.request('GET', '/api/me', { as: { bearer: tokens.access_token } })).status).toBe(200);
    await ann.page.goto(`${ann.origin}/settings`);
    const apps = ann.page.getByRole('region', { name: 'Connected apps' });
    await apps.getByText('Test Assistant').waitFor(POLL);
    expect(await apps.locator('tr[data-grant]').textContent()).toContain('read and write');
    await apps.getByRole('button', { name: 'Disconnect' }).click();
    await ann.page.getByRole('dialog', { name: 'Disconnect Test Assistant?' }).getByRole('button', { name: 'Disconnect' }).click();
    await apps.getByText('No connected apps').waitFor(POLL);
    expect((await t.request('GET', '/api/me', { as: { bearer: tokens.access_token } })).status).toBe(401);
  }, 120_000);

  it('files a support request from Help and shows the ticket id', async () => {
    await ann.page.getByRole('button', { name: 'Help' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Help and support' });
    await dialog.getByLabel('What is it about?').selectOption('bug');
    await dialog.getByLabel('Subject').fill('Export stops at 500 rows');
    await dialog.getByLabel('Details').fill('The CSV export of Orders ends at row 500.');
    await dialog.getByRole('button', { name: 'Send' }).click();
    const id = ann.page.getByTestId('ticket-id');
    await id.waitFor(POLL);
    const tickets = (await t.request('GET', '/api/support', { as: { cookie: annCookie } })).body.tickets as Array<Record<string, any>>;
    expect(tickets).toHaveLength(1);
    expect(await id.textContent()).toBe(tickets[0]!.id);
    expect(tickets[0]).toMatchObject({ kind: 'bug', title: 'Export stops at 500 rows', body: 'The CSV export of Orders ends at row 500.', context: { page: '/settings' } });
    await ann.page.getByRole('dialog', { name: 'Request received' }).getByText(/issue #1/).waitFor();
  }, 120_000);
});
