import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** CSV import in the web app: a file dropped on the table, its mapping previewed, then imported (web/src/table/CsvImport.tsx). */
describe('CSV import in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;
  let workspace: { id: string; slug: string; org: { slug: string } };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@csv-web.test');
    cookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie } }, { name: 'Imports', slug: 'imports' });
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it('dropping a CSV file on the table previews the mapping (existing columns, new ones with their types) and the first rows; confirming imports the rows, which appear in the grid', async () => {
    const page = ann.page;
    await page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    await page.waitForSelector('.table-surface .grid-scroll');
    const csv = 'Title,Status,Estimate,Due\r\nWrite the brief,todo,3,2026-12-01\r\n"Review, then ship",doing,5,2026-12-08\r\nCelebrate 🎉,done,1,2026-12-09\r\n';

    // A drop as the browser makes it: a DataTransfer holding the file, dispatched on the table.
    const dataTransfer = await page.evaluateHandle((text) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([text], 'plan.csv', { type: 'text/csv' }));
      return transfer;
    }, csv);
    const grid = page.locator('.table-surface .grid-scroll');
    await grid.dispatchEvent('dragenter', { dataTransfer });
    await grid.dispatchEvent('dragover', { dataTransfer });
    await grid.dispatchEvent('drop', { dataTransfer });

    const preview = page.getByTestId('csv-preview');
    await preview.waitFor();
    await expect.poll(() => preview.getByTestId('csv-mapping-row').allTextContents()).toEqual([
      'Title→title (Text)',
      'Status→status (Status)',
      'Estimate→New column “Estimate” · Number',
      'Due→New column “Due” · Date',
    ]);
    expect(await preview.locator('.csv-sample tbody tr').count()).toBe(3);
    expect(await preview.locator('.csv-sample tbody tr').nth(1).locator('td').first().textContent()).toBe('Review, then ship');
    await page.screenshot({ path: `${SCREENSHOT_DIR}csv-import.png` });
    // Nothing is written before the confirmation.
    expect(await page.getByTestId('row-count').textContent()).toMatch(/^0 rows/);

    await page.getByTestId('csv-import-confirm').click();
    await expect.poll(() => page.getByTestId('row-count').textContent()).toMatch(/^3 rows/);
    await expect.poll(() => page.locator('.grid-header-cell .header-label').allTextContents()).toEqual(['Title', 'Status', 'Notes', 'Estimate', 'Due']);
    await expect.poll(() => page.locator('.grid-row [data-key="title"] .cell-content').allTextContents()).toEqual(['Write the brief', 'Review, then ship', 'Celebrate 🎉']);
    expect(await page.getByTestId('csv-preview').count()).toBe(0);

    const listed = await t.request('GET', `/api/workspaces/${workspace.id}/rows`, { as: { cookie } });
    expect(listed.body.rows.map((r: { data: Record<string, unknown> }) => r.data)).toEqual([
      { title: 'Write the brief', status: 'todo', estimate: 3, due: '2026-12-01' },
      { title: 'Review, then ship', status: 'doing', estimate: 5, due: '2026-12-08' },
      { title: 'Celebrate 🎉', status: 'done', estimate: 1, due: '2026-12-09' },
    ]);
  });

  it('the CSV menu exports the sheet as a download named after it', async () => {
    const page = ann.page;
    await page.getByTestId('csv-menu').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: /Export CSV/ }).click()]);
    expect(download.suggestedFilename()).toBe('table.csv');
    const path = await download.path();
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(path!, 'utf8');
    expect(text.split('\r\n')[0]).toBe('id,title,status,notes,estimate,due');
    expect(text).toContain('"Review, then ship",doing,,5,2026-12-08');
  });
});
