import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp } from '../helpers/app';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc';
import { launchBrowser } from './browser';

type Started = Awaited<ReturnType<typeof startTestApp>>;

/** Single sign-on in the browser (issue 27, item 2): the sign-in page's "Sign in with …" button through a real provider. */
describe('OpenID Connect sign-in in the browser', () => {
  let t: Started;
  let idp: TestOidcProvider;
  let browser: Browser;

  beforeAll(async () => {
    idp = await startOidcProvider();
    t = await startTestApp({ env: { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_NAME: 'Acme SSO' } });
    idp.configure(`${t.url}/api/auth/oidc/callback`);
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await t?.store.dispose();
    await idp?.close();
  });

  it('clicks "Sign in with Acme SSO" and lands signed in in the welcome workspace', async () => {
    idp.signInAs({ sub: 'ann-1', email: 'ann@acme.test', email_verified: true, name: 'Ann Acme' });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${t.url}/signin`, { timeout: 120_000 });
      await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
      await page.waitForURL(`${t.url}/ann/welcome`, { timeout: 60_000 });
      const me = await page.evaluate(async () => (await fetch('/api/me')).json());
      expect(me.user.email).toBe('ann@acme.test');
      // The app itself, not the sign-in page: the workspace shell is shown.
      await page.getByText('Welcome').first().waitFor({ timeout: 60_000 });
      expect(await page.getByRole('link', { name: 'Sign in with Acme SSO' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('shows the refusal in words on the sign-in page and makes no session', async () => {
    idp.signInAs({ sub: 'eve-1', email: 'eve@acme.test', email_verified: false });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${t.url}/signin`, { timeout: 120_000 });
      await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
      await page.waitForURL(`${t.url}/signin`, { timeout: 60_000 });
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('has not verified your e-mail address');
      expect((await context.cookies()).some((c) => c.name === 'svc-session')).toBe(false);
    } finally {
      await context.close();
    }
  }, 180_000);
});
