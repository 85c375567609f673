import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { startTestApp, type TestApp } from '../helpers/app';
import { setPlan } from '../billing/helpers';
import { capsFor } from '../../src/limits/plans';
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
    // The rows reach the grid over sync, which can be before the import's reply closes the preview.
    await expect.poll(() => page.getByTestId('csv-preview').count()).toBe(0);

    const listed = await t.request('GET', `/api/workspaces/${workspace.id}/rows`, { as: { cookie } });
    expect(listed.body.rows.map((r: { data: Record<string, unknown> }) => r.data)).toEqual([
      { title: 'Write the brief', status: 'todo', estimate: 3, due: '2026-12-01' },
      { title: 'Review, then ship', status: 'doing', estimate: 5, due: '2026-12-08' },
      { title: 'Celebrate 🎉', status: 'done', estimate: 1, due: '2026-12-09' },
    ]);
  });

  it('Export CSV downloads what is on screen as people open it: named after the view or the table, a BOM, the labels of the shown columns in their order, the view\'s rows, formulas neutralized (issue 34 item 5, issue 33 item 9)', async () => {
    const page = ann.page;
    const base = `/api/workspaces/${workspace.id}`;
    const formula = '=HYPERLINK("http://evil.example","click me")';
    const added = await t.request('POST', `${base}/rows`, { as: { cookie }, body: { data: { title: formula, status: 'todo', estimate: -5 } } });
    expect(added.status, added.text).toBe(200);
    const view = await t.request('POST', `${base}/views`, {
      as: { cookie },
      body: { name: 'Launch plan ✓', filter: { and: [{ column: 'status', op: 'in', value: ['todo', 'doing'] }] }, columnOrder: ['estimate', 'title', 'status'], hiddenColumns: ['notes', 'due'] },
    });
    expect(view.status, view.text).toBe(200);

    const exported = async () => {
      await page.getByTestId('csv-menu').click();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: /Export CSV/ }).click()]);
      const { readFile } = await import('node:fs/promises');
      const bytes = await readFile((await download.path())!);
      return { name: download.suggestedFilename(), bytes, records: parse(bytes, { bom: true }) as string[][] };
    };

    await page.getByRole('tab', { name: 'Launch plan ✓', exact: true }).click();
    await expect.poll(() => page.getByTestId('row-count').textContent()).toMatch(/^3 of 4 rows/);
    const fromView = await exported();
    expect(fromView.name).toBe('Launch plan ✓.csv');
    expect([...fromView.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(fromView.records).toEqual([
      ['Estimate', 'Title', 'Status'],
      ['3', 'Write the brief', 'todo'],
      ['5', 'Review, then ship', 'doing'],
      ['-5', `'${formula}`, 'todo'],
    ]);

    await page.getByRole('tab', { name: 'All rows', exact: true }).click();
    await expect.poll(() => page.getByTestId('row-count').textContent()).toMatch(/^4 rows/);
    const fromGrid = await exported();
    expect(fromGrid.name).toBe('Table.csv');
    expect([...fromGrid.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(fromGrid.records[0]).toEqual(['Title', 'Status', 'Notes', 'Estimate', 'Due']);
    expect(fromGrid.records.slice(1).map((r) => r[0])).toEqual(['Write the brief', 'Review, then ship', 'Celebrate 🎉', `'${formula}`]);
    expect(fromGrid.records[2]).toEqual(['Review, then ship', 'doing', '', '5', '2026-12-08']);
  });

  it('a file with more rows than the plan\'s cap leaves room for is refused whole, and the dialog offers to import the rows that fit (issue 33 item 3)', async () => {
    const page = ann.page;
    const cap = capsFor('free').rowsPerWorkspace;
    const full = await createWorkspace(t, { as: { cookie } }, { name: 'Over the cap', slug: 'over-the-cap' });
    const org = await t.services.db.selectFrom('workspaces').innerJoin('orgs', 'orgs.id', 'workspaces.orgId').select(['orgs.id', 'orgs.plan']).where('workspaces.id', '=', full.id).executeTakeFirstOrThrow();
    await setPlan(t, org.id, 'free');
    try {
      await page.goto(`${ann.origin}/${full.org.slug}/${full.slug}`);
      await page.waitForSelector('.table-surface .grid-scroll');
      const csv = `Title\n${Array.from({ length: cap + 5 }, (_, i) => `Row ${i}`).join('\n')}\n`;
      await page.getByTestId('csv-file').setInputFiles({ name: 'many.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByTestId('csv-preview').waitFor();

      await page.getByTestId('csv-import-confirm').click();
      const failed = page.getByTestId('csv-import-errors');
      await failed.waitFor();
      expect(await failed.textContent()).toContain(`allows ${cap} rows`);
      expect(await page.getByTestId('row-count').textContent()).toMatch(/^0 rows/);

      const partial = page.getByTestId('csv-import-partial');
      expect(await partial.textContent()).toBe('Import the rows that fit');
      await partial.click();
      const report = page.getByTestId('csv-import-report');
      await report.waitFor();
      expect(await report.textContent()).toContain(`Imported ${cap.toLocaleString('en-US')} rows; the rest were not imported`);
      await expect.poll(() => page.getByTestId('row-count').textContent()).toMatch(new RegExp(`^${cap.toLocaleString('en-US')} rows`));
    } finally {
      await setPlan(t, org.id, org.plan);
    }
  });
});
