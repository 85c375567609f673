import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** The workspace list, its lifecycle, and API keys, as a person uses them. */
describe('workspaces and keys in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;

  const sidebar = () => ann.page.locator('nav.sidebar .nav-list .nav-label').allTextContents();

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    cookie = await sessionCookieOf(ann.context);
    await ann.page.waitForURL(/\/ann\/welcome$/);
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it('creates a workspace and opens it on the tab its mode picks', async () => {
    await ann.page.getByRole('button', { name: 'New workspace' }).first().click();
    await ann.page.getByRole('dialog').getByLabel('Name', { exact: true }).fill('Q3 planning');
    await ann.page.locator('.choice', { hasText: 'Doc' }).click();
    await ann.page.getByRole('button', { name: 'Create workspace' }).click();
    await ann.page.waitForURL(/\/ann\/q3-planning$/);
    await ann.page.locator('.ProseMirror').waitFor();
    expect(await ann.page.getByRole('tab', { selected: true }).textContent()).toBe('Doc');
    await expect.poll(sidebar).toEqual(['Q3 planning', 'Welcome']);
  });

  it('pins, renames and archives from the list, with an archived view', async () => {
    await ann.page.getByRole('link', { name: 'All workspaces' }).click();
    await ann.page.getByRole('button', { name: 'Pin Welcome' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list .workspace-name').allTextContents()).toEqual(['Welcome', 'Q3 planning']);
    await expect.poll(() => ann.page.locator('.nav-heading').allTextContents()).toEqual(['Pinned', 'Workspaces']);

    await ann.page.getByRole('button', { name: 'More for Q3 planning' }).click();
    await ann.page.getByRole('menuitem', { name: 'Rename…' }).click();
    await ann.page.getByRole('dialog').getByLabel('Name', { exact: true }).fill('Q3 roadmap');
    await ann.page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list .workspace-name').allTextContents()).toEqual(['Welcome', 'Q3 roadmap']);

    await ann.page.getByRole('button', { name: 'More for Q3 roadmap' }).click();
    await ann.page.getByRole('menuitem', { name: 'Archive' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list .workspace-name').allTextContents()).toEqual(['Welcome']);
    await ann.page.getByRole('tab', { name: 'Archived' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list .workspace-name').allTextContents()).toEqual(['Q3 roadmap']);
    const archived = await t.request('GET', '/api/workspaces?archived=1', { as: { cookie } });
    expect(archived.body.workspaces.map((w: { name: string }) => w.name)).toEqual(['Q3 roadmap']);

    await ann.page.getByRole('button', { name: 'More for Q3 roadmap' }).click();
    await ann.page.getByRole('menuitem', { name: 'Restore' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list').count()).toBe(0);
    await ann.page.getByRole('tab', { name: 'Active' }).click();
    await expect.poll(() => ann.page.locator('.workspace-list .workspace-name').allTextContents()).toEqual(['Welcome', 'Q3 roadmap']);
  });

  it('shows an error the server gives, in words', async () => {
    await ann.page.getByRole('button', { name: 'New workspace' }).first().click();
    await ann.page.getByRole('dialog').getByLabel('Name', { exact: true }).fill('Welcome');
    await ann.page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => ann.page.locator('.dialog .form-error').textContent()).toMatch(/welcome|slug|taken|exists/i);
    await ann.page.keyboard.press('Escape');
  });

  it('mints an API key after elevation and shows the secret once', async () => {
    await ann.page.goto(`${ann.origin}/settings`);
    await ann.page.getByRole('button', { name: 'New key' }).click();
    await ann.page.getByRole('dialog').getByLabel('What is it for?').fill('Nightly report');
    await ann.page.getByRole('dialog').getByLabel('Agent name').fill('Report bot');
    await ann.page.getByRole('button', { name: 'Create key' }).click();
    const secret = await ann.page.getByTestId('api-key-secret').textContent();
    expect(secret).toMatch(/^svc_live_/);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}api-key.png` });
    // The key works, as the agent.
    const me = await t.request('GET', '/api/me', { as: { bearer: secret! } });
    expect(me.body.principal.name).toBe('Report bot');
    await ann.page.getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => ann.page.locator('.key-table tbody tr').count()).toBe(1);
    expect(await ann.page.locator('.key-table').textContent()).not.toContain(secret!);
    // Revoking it stops it at once.
    // The app asks in its own dialog (no window.confirm); cancelling keeps the key.
    await ann.page.getByRole('button', { name: 'Revoke Nightly report' }).click();
    await ann.page.getByRole('dialog', { name: 'Revoke key?' }).getByRole('button', { name: 'Cancel' }).click();
    expect((await t.request('GET', '/api/me', { as: { bearer: secret! } })).status).toBe(200);
    await ann.page.getByRole('button', { name: 'Revoke Nightly report' }).click();
    await ann.page.getByRole('dialog', { name: 'Revoke key?' }).getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => ann.page.locator('.key-table').count()).toBe(0);
    expect((await t.request('GET', '/api/me', { as: { bearer: secret! } })).status).toBe(401);
  });
});
