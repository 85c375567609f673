import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

const POLL = { timeout: 15_000 };

/** Search from the sidebar and the `/` key: grouped hits with the match marked, and a click that opens the row or the doc section. */
describe('search in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;
  let rowId: string;
  let sheet: { org: { slug: string }; slug: string; primarySurface: { slug: string } };
  let notes: { org: { slug: string }; slug: string; primarySurface: { slug: string } };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    cookie = await sessionCookieOf(ann.context);
    sheet = await createWorkspace(t, { as: { cookie } }, { name: 'Orchard planning', slug: 'orchard' });
    const api = `/api/orgs/${sheet.org.slug}/workspaces/${sheet.slug}`;
    for (let i = 0; i < 60; i++) {
      const created = await t.request('POST', `${api}/rows`, { as: { cookie }, body: { data: { title: i === 45 ? 'Prune the kumquat trees' : `Ordinary task ${i}` } } });
      expect(created.status).toBe(200);
      if (i === 45) rowId = created.body.id;
    }
    notes = await createWorkspace(t, { as: { cookie } }, {
      name: 'Field notes',
      slug: 'field-notes',
      mode: 'doc',
      initialMarkdown: `# Soil\n\nLoamy.\n\n${Array.from({ length: 40 }, (_, i) => `Filler paragraph ${i}.`).join('\n\n')}\n\n# Harvest\n\nThe kumquat crop came in early this year.\n`,
    });
    await ann.page.goto(`${ann.origin}/${sheet.org.slug}`);
    await ann.page.getByRole('button', { name: 'Search' }).waitFor();
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it('finds a row created over REST, marks the match, and opens the row selected in its sheet', async () => {
    await ann.page.keyboard.press('/');
    const dialog = ann.page.getByRole('dialog', { name: 'Search' });
    await dialog.getByLabel('Search workspaces, rows and docs').fill('KUMQUAT');
    const rows = dialog.getByRole('region', { name: 'Rows' });
    const sections = dialog.getByRole('region', { name: 'Doc sections' });
    await rows.getByRole('option').first().waitFor(POLL);
    expect(await rows.getByRole('option').count()).toBe(1);
    expect(await rows.locator('mark').first().textContent()).toBe('kumquat');
    expect(await rows.getByRole('option').textContent()).toContain('Orchard planning');
    expect(await sections.getByRole('option').count()).toBe(1);
    expect(await sections.locator('.search-hit-title').textContent()).toBe('Harvest');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}search.png` });

    await rows.getByRole('option').click();
    await expect.poll(() => new URL(ann.page.url()).search, POLL).toBe(`?row=${rowId}`);
    expect(new URL(ann.page.url()).pathname).toBe(`/${sheet.org.slug}/${sheet.slug}/${sheet.primarySurface.slug}`);
    // The row is the active one, scrolled into view though it is far down the grid.
    const active = ann.page.locator(`.grid-row.is-active-row[data-row-id="${rowId}"]`);
    await active.waitFor(POLL);
    expect(await active.textContent()).toContain('Prune the kumquat trees');
    expect(await active.isVisible()).toBe(true);
  }, 120_000);

  it('opens a doc section at its heading, and arrow keys with Enter work as well as a click', async () => {
    await ann.page.locator('.grid-scroll').click();
    await ann.page.keyboard.press('Escape');
    await ann.page.getByRole('button', { name: 'Search' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Search' });
    await dialog.getByLabel('Search workspaces, rows and docs').fill('crop came');
    await dialog.getByRole('region', { name: 'Doc sections' }).getByRole('option').waitFor(POLL);
    await ann.page.keyboard.press('Enter');
    await expect.poll(() => new URL(ann.page.url()).hash, POLL).toMatch(/^#section-\d+$/);
    expect(new URL(ann.page.url()).pathname).toBe(`/${notes.org.slug}/${notes.slug}/${notes.primarySurface.slug}`);
    const heading = ann.page.locator('.ProseMirror h1', { hasText: 'Harvest' });
    await heading.waitFor(POLL);
    // The caret is in the section and the heading is on screen (it is below forty paragraphs).
    await expect.poll(() => heading.evaluate((element) => {
      const rect = element.getBoundingClientRect();
      return rect.top >= 0 && rect.bottom <= window.innerHeight;
    }), POLL).toBe(true);
    expect(await ann.page.evaluate(() => window.getSelection()?.anchorNode?.textContent ?? '')).toContain('Harvest');
  }, 120_000);

  it('says when nothing matches', async () => {
    await ann.page.getByRole('button', { name: 'Search' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Search' });
    await dialog.getByLabel('Search workspaces, rows and docs').fill('no such thing anywhere');
    await dialog.getByText('Nothing matches “no such thing anywhere”.').waitFor(POLL);
  }, 120_000);
});
