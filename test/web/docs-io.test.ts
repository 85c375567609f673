import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace } from '../workspaces/helpers';
import { zipOf } from '../files/helpers';
import { sampleWordFile } from '../docs-io/word-files';
import { editorText, launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * Documents in and out in the web app (docs/IMPORT-EXPORT.md): a Word file
 * imported through the doc's menu with its warnings shown before the dialog
 * closes, the doc exported as Word and PDF, the workspace exported from its
 * menu and imported again with the job's progress followed to its end, and
 * an import whose bad entry is listed by its path. No console errors.
 */
describe('import and export in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;
  let workspace: { id: string; slug: string; org: { slug: string } };
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@docs-io-web.test');
    ann.page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    ann.page.on('pageerror', (error) => consoleErrors.push(`${error.message} ${error.stack} @ ${ann.page.url()}`));
    cookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie } }, { name: 'Papers', slug: 'papers', initialMarkdown: '# Draft\n\nTo be replaced.\n' });
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  async function downloaded(page: Page, item: RegExp, open: () => Promise<void>): Promise<{ download: Download; bytes: Buffer }> {
    await open();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: item }).click()]);
    return { download, bytes: await readFile((await download.path())!) };
  }

  it("imports a Word file from the doc's menu, shows what the doc could not hold before closing, and the doc shows the file", async () => {
    const page = ann.page;
    await page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    await page.waitForSelector('.doc-page .ProseMirror');
    await page.getByTestId('doc-file-menu').click();
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('menuitem', { name: /Import Word, HTML or Markdown/ }).click()]);
    await chooser.setFiles({ name: 'report.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', buffer: await sampleWordFile() });
    await page.getByTestId('doc-import-replace').click();
    const warnings = page.getByTestId('doc-import-warnings');
    await warnings.waitFor();
    expect(await warnings.locator('li').allTextContents()).toEqual(['1 × underlined text is kept without its underline']);
    await page.screenshot({ path: `${SCREENSHOT_DIR}doc-import-warnings.png` });
    await page.getByTestId('doc-import-done').click();
    await expect.poll(() => page.getByTestId('doc-import-warnings').count()).toBe(0);
    await expect.poll(() => editorText(page)).toContain('Überschrift – 報告');
    expect(await editorText(page)).not.toContain('To be replaced');
    await expect.poll(() => page.locator('.doc-page img[src*="/api/blobs/"]').count()).toBe(1);
    expect(consoleErrors).toEqual([]);
  });

  it("exports the doc as Word and as PDF from the doc's menu", async () => {
    const page = ann.page;
    const openMenu = () => page.getByTestId('doc-file-menu').click();
    const word = await downloaded(page, /Export as Word/, openMenu);
    expect(word.download.suggestedFilename()).toMatch(/\.docx$/);
    expect(word.bytes.subarray(0, 2).toString()).toBe('PK');
    const pdf = await downloaded(page, /Export as PDF/, openMenu);
    expect(pdf.download.suggestedFilename()).toMatch(/\.pdf$/);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it("exports the workspace from its menu and imports it again, the job's progress followed to its end", async () => {
    const page = ann.page;
    const openMenu = () => page.getByRole('button', { name: 'Workspace options' }).click();
    const folder = await downloaded(page, /Export as a folder/, openMenu);
    expect(folder.download.suggestedFilename()).toBe('papers.zip');

    await openMenu();
    await page.getByRole('menuitem', { name: /Import a workspace/ }).click();
    await page.getByTestId('workspace-import-file').setInputFiles({ name: 'papers.zip', mimeType: 'application/zip', buffer: folder.bytes });
    await page.locator('input[name="name"]').fill('Papers again');
    await page.getByRole('dialog').getByRole('button', { name: 'Import', exact: true }).click();
    const progress = page.getByTestId('workspace-import-progress');
    await progress.waitFor();
    await expect.poll(() => progress.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
    const bar = progress.locator('progress');
    expect(await bar.getAttribute('value')).toBe(await bar.getAttribute('max'));
    expect(await page.getByTestId('workspace-import-errors').count()).toBe(0);
    await page.screenshot({ path: `${SCREENSHOT_DIR}workspace-import-done.png` });
    await page.getByTestId('workspace-import-open').click();
    await page.waitForURL(`**/${workspace.org.slug}/papers-again**`);
    await page.waitForSelector('.doc-page .ProseMirror');
    await expect.poll(() => editorText(page)).toContain('Überschrift – 報告');
    expect(consoleErrors).toEqual([]);
  });

  it('lists an entry that could not go in by its path, from the home page', async () => {
    const page = ann.page;
    await page.goto(`${ann.origin}/${workspace.org.slug}`);
    await page.getByTestId('import-workspace').click();
    const archive = await zipOf([
      ['Notes.md', '# Notes\n\nKept.\n'],
      ['Broken.md', Buffer.from([0x23, 0x20, 0, 0xff, 0xfe])],
    ]);
    await page.getByTestId('workspace-import-file').setInputFiles({ name: 'Team notes.zip', mimeType: 'application/zip', buffer: archive });
    expect(await page.locator('input[name="slug"]').inputValue()).toBe('team-notes');
    await page.getByRole('dialog').getByRole('button', { name: 'Import', exact: true }).click();
    const progress = page.getByTestId('workspace-import-progress');
    await expect.poll(() => progress.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
    expect(await page.getByTestId('workspace-import-errors').locator('li').allTextContents()).toEqual(['Broken.md: not UTF-8 text']);
    await page.getByTestId('workspace-import-open').click();
    await page.waitForURL(`**/${workspace.org.slug}/team-notes**`);
    await expect.poll(() => page.locator('[role="tab"]').allTextContents()).toEqual(['Notes', 'Broken']);
    expect(consoleErrors).toEqual([]);
  });
});
