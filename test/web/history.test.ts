import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestApp } from '../helpers/app';
import { editorText, SCREENSHOT_DIR } from './browser';
import { useTwoPeople } from './two-people';

// Generous: the first list runs a history pass, and the machine may be loaded.
const POLL = { timeout: 20_000 };

/**
 * Version history in the browser (issue 34, item 4), ann (the owner) and
 * ben (the editor she invited) each in their own browser: a version shown
 * as the doc is shown (a table's as a grid), any two versions compared (a
 * doc by blocks, a table by rows and cells), a restore asked through the
 * app's own dialog and listed as a restore, live in the other tab.
 */
/** The log aged past the 10-minute session window, so the next write is another session (another version). */
const ageLog = (t: TestApp, document: string) => sql`update document_updates set created_at = created_at - interval '30 minutes' where document = ${document}`.execute(t.services.db);

describe('version history in the browser', () => {
  const app = useTwoPeople({ name: 'Plans', slug: 'plans', mode: 'doc', initialMarkdown: '# Plans\n\nThe first draft.\n\n- keep this\n' }, async (t, two) => {
    await ageLog(t, two.workspace.primarySurface.syncDocument);
    const put = await t.request('PUT', `${two.base}/doc`, { as: { cookie: two.annCookie }, body: { markdown: '# Plans\n\nA rewrite nobody liked.\n\n- keep this\n' } });
    expect(put.status).toBe(200);
    for (const person of [two.ann, two.ben]) {
      await person.page.goto(`${person.origin}${two.path}`);
      await person.page.locator('.ProseMirror p', { hasText: 'A rewrite nobody liked.' }).waitFor({ timeout: 60_000 });
    }
  });

  const markdown = async () => (await app.t.request('GET', `${app.two.base}/doc?format=markdown`, { as: { cookie: app.two.annCookie } })).body.markdown as string;
  const history = (page: Page) => page.locator('aside.side-panel[aria-label="History"]');
  const versionDialog = (page: Page) => page.locator('.dialog-large[role="dialog"]');
  it('shows a version as the doc is shown, not as Markdown source', async () => {
    const { ben } = app.two;
    await ben.page.getByRole('button', { name: 'History' }).click();
    const items = history(ben.page).locator('.history-list > li');
    await expect.poll(() => items.count(), POLL).toBe(2);
    await items.nth(1).locator('.history-item').click();
    const shown = versionDialog(ben.page).locator('.version-doc .prose');
    await expect.poll(() => shown.locator('h1').textContent(), POLL).toBe('Plans');
    expect(await shown.locator('p').first().textContent()).toBe('The first draft.');
    expect(await shown.locator('ul li').textContent()).toBe('keep this');
    const text = await shown.innerText();
    expect(text).not.toContain('#');
    expect(text).not.toContain('- keep');
    expect(await versionDialog(ben.page).locator('pre').count()).toBe(0);
    // Headings look like headings.
    const size = (selector: string) => shown.locator(selector).first().evaluate((element) => parseFloat(getComputedStyle(element).fontSize));
    expect(await size('h1')).toBeGreaterThan((await size('p')) * 1.5);
  }, 90_000);

  it('compares a version with the current doc and with any other version, block by block', async () => {
    const { ben } = app.two;
    const dialog = versionDialog(ben.page);
    await dialog.getByLabel('Compare with').selectOption('current');
    const removed = dialog.locator('.prose .diff-removed');
    const added = dialog.locator('.prose .diff-added');
    await expect.poll(() => removed.textContent(), POLL).toBe('The first draft.');
    expect(await added.textContent()).toBe('A rewrite nobody liked.');
    // Blocks nobody changed are there, unmarked, in their place.
    expect(await dialog.locator('.prose > *').evaluateAll((blocks) => blocks.map((block) => [block.textContent, block.getAttribute('data-diff')]))).toEqual([
      ['Plans', null],
      ['The first draft.', 'removed'],
      ['A rewrite nobody liked.', 'added'],
      ['keep this', null],
    ]);
    expect(await dialog.locator('.diff-words-added').textContent()).toBe('A rewrite nobody liked');
    expect(await dialog.locator('.version-legend').textContent()).toContain('to the current doc');
    await ben.page.screenshot({ path: `${SCREENSHOT_DIR}history.png` });

    // From the newest version, compared with the older one: still from the older to the newer.
    await dialog.locator('.dialog-footer').getByRole('button', { name: 'Close' }).click();
    const items = history(ben.page).locator('.history-list > li');
    await items.nth(0).locator('.history-item').click();
    const older = await items.nth(1).getAttribute('data-version-id');
    await dialog.getByLabel('Compare with').selectOption(older!);
    await expect.poll(() => dialog.locator('.prose .diff-removed').textContent(), POLL).toBe('The first draft.');
    expect(await dialog.locator('.prose .diff-added').textContent()).toBe('A rewrite nobody liked.');
    await dialog.locator('.dialog-footer').getByRole('button', { name: 'Close' }).click();
  }, 90_000);

  it("restores through the app's own dialog; the owner's open history lists it as a restore by the editor", async () => {
    const { ann, ben } = app.two;
    await ann.page.getByRole('button', { name: 'History' }).click();
    const annItems = history(ann.page).locator('.history-list > li');
    await expect.poll(() => annItems.count(), POLL).toBe(2);

    const items = history(ben.page).locator('.history-list > li');
    await items.nth(1).locator('.history-item').click();
    await versionDialog(ben.page).getByRole('button', { name: 'Restore this version' }).click();
    const confirm = ben.page.getByRole('dialog', { name: 'Restore this version?' });
    await confirm.waitFor();
    // Escape closes the question only, not the version under it.
    await ben.page.keyboard.press('Escape');
    await expect.poll(() => confirm.count()).toBe(0);
    expect(await versionDialog(ben.page).count()).toBe(1);
    await versionDialog(ben.page).getByRole('button', { name: 'Restore this version' }).click();
    await confirm.getByRole('button', { name: 'Restore', exact: true }).click();

    await expect.poll(() => editorText(ben.page, 'p'), POLL).toBe('The first draft.');
    await expect.poll(() => editorText(ann.page, 'p'), POLL).toBe('The first draft.');
    await expect.poll(markdown, POLL).toBe('# Plans\n\nThe first draft.\n\n- keep this\n');
    // Listed as a restore, by ben, in ann's history without her doing anything.
    const top = annItems.first();
    await expect.poll(() => top.locator('.history-restore').textContent(), POLL).toMatch(/^Restored version from /);
    expect(await top.locator('strong').textContent()).toBe('ben');
    expect(await top.innerText()).not.toMatch(/blocks:/);
    await expect.poll(() => items.first().locator('.history-restore').count(), POLL).toBe(1);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}history-restore.png` });
  }, 90_000);

  it('shows a table version as a grid and compares two table versions by rows and cells', async () => {
    const { t, two } = app;
    const { ann, ben } = two;
    const table = await t.request('POST', `${two.base}/surfaces`, { as: { cookie: two.annCookie }, body: { kind: 'table', slug: 'roadmap', name: 'Roadmap' } });
    expect(table.status, table.text).toBe(200);
    const columns = [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'status', label: 'Status', type: 'status', options: [{ value: 'todo', label: 'To do' }, { value: 'doing', label: 'Doing' }, { value: 'done', label: 'Done' }] },
    ].map((column, position) => ({ ...column, position }));
    expect((await t.request('PUT', `${two.base}/columns?surface=roadmap`, { as: { cookie: two.annCookie }, body: { columns } })).status).toBe(200);
    const rowsPath = `${two.base}/rows?surface=roadmap`;
    const add = async (data: Record<string, unknown>) => (await t.request('POST', rowsPath, { as: { cookie: two.annCookie }, body: { data } })).body.id as string;
    const kept = await add({ title: 'Pricing page', status: 'todo' });
    const dropped = await add({ title: 'Old banner', status: 'doing' });
    await ageLog(app.t, table.body.syncDocument);
    expect((await t.request('PATCH', `${two.base}/rows/${kept}?surface=roadmap`, { as: { cookie: two.annCookie }, body: { data: { status: 'done' } } })).status).toBe(200);
    expect((await t.request('DELETE', `${two.base}/rows/${dropped}?surface=roadmap`, { as: { cookie: two.annCookie } })).status).toBe(200);
    const added = await add({ title: 'Launch email', status: 'todo' });

    await ben.page.goto(`${ben.origin}${two.path}/roadmap`);
    await ben.page.locator(`[data-row-id="${added}"]`).waitFor({ timeout: 30_000 });
    await ben.page.getByRole('button', { name: 'History' }).click();
    const items = history(ben.page).locator('.history-list > li');
    await expect.poll(() => items.count(), POLL).toBeGreaterThanOrEqual(2);
    await items.last().locator('.history-item').click();
    const dialog = versionDialog(ben.page);
    const grid = dialog.locator('.version-sheet table');
    await expect.poll(() => grid.locator('tbody tr').count(), POLL).toBe(2);
    expect(await grid.locator('thead th').allTextContents()).toEqual(expect.arrayContaining(['Title', 'Status']));
    expect(await grid.locator(`tr[data-row-id="${dropped}"]`).innerText()).toContain('Old banner');
    // A status is its option's pill, as in the grid.
    expect(await grid.locator(`tr[data-row-id="${kept}"] .pill`).count()).toBe(1);

    await dialog.getByLabel('Compare with').selectOption('current');
    await expect.poll(() => dialog.locator('.diff-row-added').count(), POLL).toBe(1);
    expect(await dialog.locator('.diff-row-added').getAttribute('data-row-id')).toBe(added);
    expect(await dialog.locator('.diff-row-removed').getAttribute('data-row-id')).toBe(dropped);
    const changed = dialog.locator(`tr.diff-row-changed[data-row-id="${kept}"]`);
    expect(await changed.locator('td:not(.diff-cell)').first().innerText()).toBe('Pricing page');
    const cell = changed.locator('.diff-cell[data-key="status"]');
    expect(await cell.locator('del').innerText()).toBe('To do');
    expect(await cell.locator('ins').innerText()).toBe('Done');
    await ben.page.screenshot({ path: `${SCREENSHOT_DIR}history-table.png` });
    await dialog.locator('.dialog-footer').getByRole('button', { name: 'Close' }).click();
    void ann;
  }, 90_000);

  it('shows no console error and no native dialog in either tab', () => {
    expect(app.two.consoleErrors()).toEqual([]);
  });
});
