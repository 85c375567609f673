import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace } from '../workspaces/helpers';
import { launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

/** Linked rows in the grid (issue 24, item 4; docs/TABLES.md "Linked rows"): add a link and a lookup column, pick a row of the other table, see its title. */
describe('linked rows in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let api: (method: string, path: string, body?: unknown) => ReturnType<TestApp['request']>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@links.test');
    const cookie = await sessionCookieOf(ann.context);
    const workspace = await createWorkspace(t, { as: { cookie } }, { name: 'Roadmap', slug: 'roadmap' });
    const base = `/api/orgs/${workspace.org.slug}/workspaces/roadmap`;
    api = (method, path, body) => t.request(method, `${base}${path}`, { as: { cookie }, body });
    expect((await api('POST', '/surfaces', { kind: 'table', slug: 'projects', name: 'Projects' })).status).toBe(200);
    for (const title of ['Apollo', 'Borealis']) ids[title] = (await api('POST', '/rows?surface=projects', { data: { title } })).body.id;
    ids.task = (await api('POST', '/rows', { data: { title: 'Write the plan' } })).body.id;
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/roadmap`);
    await ann.page.waitForSelector('.grid-row');
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  const cell = (rowId: string, key: string) => ann.page.locator(`[data-row-id="${rowId}"] [data-key="${key}"]`);

  it('adds a link column to another table and a lookup through it, picks a linked row by searching, and shows its title', async () => {
    const page = ann.page;
    await page.getByRole('button', { name: 'Column', exact: true }).click();
    await page.getByLabel('Name').fill('Project');
    await page.locator('.type-choice', { hasText: 'Link to rows' }).click();
    await page.getByLabel('Links to').selectOption({ label: 'Projects' });
    await page.getByRole('button', { name: 'Add column' }).click();

    await page.getByRole('button', { name: 'Column', exact: true }).click();
    await page.getByLabel('Name').fill('Project title');
    await page.locator('.type-choice', { hasText: 'Lookup' }).click();
    await page.getByLabel('Through link').selectOption({ label: 'Project' });
    await page.getByLabel('Shows').selectOption({ label: 'title' });
    await page.getByRole('button', { name: 'Add column' }).click();
    await expect.poll(() => page.locator('.grid-header-cell .header-label').allTextContents()).toEqual(['Title', 'Status', 'Notes', 'Project', 'Project title']);
    // The page shows the columns at once; the server has them once her update arrives.
    await expect.poll(async () => (await api('GET', '/columns')).body.columns.slice(3)).toEqual([
      expect.objectContaining({ key: 'project', type: 'link', targetSurface: 'projects' }),
      expect.objectContaining({ key: 'project_title', type: 'lookup', link: 'project', field: 'title' }),
    ]);

    await cell(ids.task!, 'project').dblclick();
    await page.locator('.cell-editor-choice').waitFor();
    expect(await page.locator('.cell-editor-choice .choice-item').allTextContents()).toEqual(['Apollo', 'Borealis']);
    await page.keyboard.type('bor');
    await expect.poll(() => page.locator('.cell-editor-choice .choice-item').allTextContents()).toEqual(['Borealis']);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');

    await expect.poll(() => cell(ids.task!, 'project').locator('.link-chip').allTextContents()).toEqual(['Borealis']);
    await expect.poll(() => cell(ids.task!, 'project_title').locator('.cell-content').textContent()).toBe('Borealis');
    await expect.poll(async () => (await api('GET', `/rows/${ids.task}`)).body.data.project).toEqual([ids.Borealis]);

    // A rename of the linked row shows in the chip and the lookup.
    await api('PATCH', `/rows/${ids.Borealis}`, { data: { title: 'Borealis II' } });
    await expect.poll(() => cell(ids.task!, 'project').locator('.link-chip').allTextContents()).toEqual(['Borealis II']);
    await expect.poll(() => cell(ids.task!, 'project_title').locator('.cell-content').textContent()).toBe('Borealis II');
    // Deleting it empties the cell.
    await api('DELETE', `/rows/${ids.Borealis}`);
    await expect.poll(() => cell(ids.task!, 'project').locator('.link-chip').count()).toBe(0);
  });
});
