import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { launchBrowser, personBehindProxy, signInFromForm, type Person } from './browser';

const POLL = { timeout: 30_000 };
/** The budget of issue 34: the first page a person sees carries at most this much script, gzipped (the rest comes when used). */
const FIRST_PAGE_BUDGET = 150 * 1024;

/** Every script the page itself fetched (not the service worker's precache), by path, with its gzipped size. */
function watchScripts(page: Page): Map<string, number> {
  const scripts = new Map<string, number>();
  page.on('response', async (response) => {
    if (response.request().resourceType() !== 'script') return;
    const path = new URL(response.url()).pathname;
    scripts.set(path, 0);
    scripts.set(path, gzipSync(await response.body()).length);
  });
  return scripts;
}

const total = (scripts: Map<string, number>) => [...scripts.values()].reduce((sum, size) => sum + size, 0);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * What the first page costs: the sign-in page, and the pages a sign-in
 * lands on (the welcome workspace with its table, and the organisation's
 * workspace list), each in a browser that has loaded nothing yet. A size
 * assertion: the scripts are measured as gzip would send them.
 */
describe('the first page’s JavaScript', () => {
  let t: TestApp;
  let browser: Browser;
  let person: Person;

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    person = await personBehindProxy(t, browser);
  }, 240_000);

  afterAll(async () => {
    await person?.close();
    await browser?.close();
    await t?.close();
  });

  it('the sign-in page loads under 150 KB of gzipped JavaScript', async () => {
    const scripts = watchScripts(person.page);
    await person.page.goto(`${person.origin}/`, { timeout: 120_000 });
    await person.page.getByRole('heading', { name: 'Sign in' }).waitFor(POLL);
    await expect.poll(() => [...scripts.values()].every((size) => size > 0), POLL).toBe(true);
    console.info(`sign-in page: ${scripts.size} scripts, ${kb(total(scripts))} gzipped`);
    expect(total(scripts)).toBeLessThan(FIRST_PAGE_BUDGET);
  }, 180_000);

  it('the welcome workspace a sign-in opens, and the list of workspaces, each load under 150 KB', async () => {
    await signInFromForm(t, person, 'ann@example.com');
    await person.page.waitForURL(/\/ann\/welcome$/, POLL);

    // Each page as a first visit: a new context that holds the session and has fetched nothing.
    const cookies = await person.context.cookies();
    for (const [path, shown] of [
      ['/ann/welcome', '.grid-header'],
      ['/ann', '.workspace-list'],
    ] as const) {
      const visitor = await personBehindProxy(t, browser);
      await visitor.context.addCookies(cookies.map((cookie) => ({ name: cookie.name, value: cookie.value, url: visitor.origin })));
      const scripts = watchScripts(visitor.page);
      await visitor.page.goto(`${visitor.origin}${path}`, { timeout: 120_000 });
      await visitor.page.locator(shown).first().waitFor(POLL);
      await expect.poll(() => [...scripts.values()].every((size) => size > 0), POLL).toBe(true);
      console.info(`${path}: ${scripts.size} scripts, ${kb(total(scripts))} gzipped`);
      expect(total(scripts), path).toBeLessThan(FIRST_PAGE_BUDGET);
      await visitor.close();
    }
  }, 240_000);
});
