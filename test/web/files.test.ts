import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { startTestApp, type TestApp } from '../helpers/app';
import { proxyUpload } from '../files/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** The files view: folders, uploads with progress, previews, share links, and others' files arriving live. */
describe('files in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;
  let folderId: string;
  const base = '/api/orgs/ann/workspaces/welcome/files';

  const names = () => ann.page.locator('.file-table .file-name').allTextContents();
  const listed = async (parentFolderId: string | null) => {
    const query = parentFolderId ? `?parentFolderId=${parentFolderId}` : '';
    return (await t.request('GET', `${base}${query}`, { as: { cookie } })).body as { folders: Array<{ id: string; name: string }>; files: Array<{ id: string; name: string; size: number }> };
  };

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

  it('adds a files surface and a folder, and opens it', async () => {
    await ann.page.getByRole('button', { name: 'Add a surface' }).click();
    await ann.page.getByRole('menuitem', { name: 'New files' }).click();
    // Named as it is made: the suggestion for a workspace's first drive is "Files".
    const naming = ann.page.getByRole('dialog', { name: 'New files' });
    expect(await naming.getByLabel('Name', { exact: true }).inputValue()).toBe('Files');
    await naming.getByRole('button', { name: 'Create', exact: true }).click();
    await ann.page.waitForURL(/\/ann\/welcome\/files$/);
    await ann.page.getByText('No files yet').waitFor();

    await ann.page.getByRole('button', { name: 'New folder' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByLabel('Name').fill('Reports');
    await dialog.getByRole('button', { name: 'Create folder' }).click();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['Reports']);
    const root = await listed(null);
    expect(root.folders.map((f) => f.name)).toEqual(['Reports']);
    folderId = root.folders[0]!.id;

    await ann.page.getByRole('button', { name: 'Reports', exact: true }).click();
    await ann.page.getByText('This folder is empty').waitFor();
    expect(await ann.page.locator('.breadcrumbs [aria-current]').textContent()).toBe('Reports');
  });

  it('uploads files into the open folder, showing their progress', async () => {
    const png = await sharp({ create: { width: 640, height: 400, channels: 3, background: { r: 59, g: 91, b: 219 } } }).png().toBuffer();
    const notes = '# Launch notes\n\nShip on Thursday.\n<script>alert(1)</script>\n';
    await ann.page.getByTestId('file-picker').setInputFiles([
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from(notes) },
      { name: 'cover.png', mimeType: 'image/png', buffer: png },
    ]);
    await expect.poll(names, { timeout: 15_000 }).toEqual(['cover.png', 'notes.md']);
    const stored = await listed(folderId);
    expect(stored.files.map((f) => [f.name, f.size])).toEqual([
      ['cover.png', expect.any(Number)],
      ['notes.md', Buffer.byteLength(notes)],
    ]);
    // The image got a thumbnail, shown in the list.
    await expect.poll(() => ann.page.locator('.file-row[data-name="cover.png"] .file-icon img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 15_000 }).toBeGreaterThan(0);

    // A slow link (Chromium's throttling, upload included) shows the bytes going up.
    const cdp = await ann.context.newCDPSession(ann.page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
    const seen: number[] = [];
    await ann.page.getByTestId('file-picker').setInputFiles([{ name: 'archive.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1024 * 1024, 7) }]);
    await expect
      .poll(async () => {
        const value = await ann.page.locator('.uploads progress').getAttribute('value').catch(() => null);
        if (value !== null) seen.push(Number(value));
        return seen.some((v) => v > 0 && v < 100);
      }, { timeout: 20_000, interval: 100 })
      .toBe(true);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await expect.poll(names, { timeout: 20_000 }).toEqual(['archive.bin', 'cover.png', 'notes.md']);
    // The progress panel goes once the upload is done (the list may show the file a moment before).
    await expect.poll(() => ann.page.locator('.uploads').count(), { timeout: 10_000 }).toBe(0);
    expect((await listed(folderId)).files.find((f) => f.name === 'archive.bin')?.size).toBe(1024 * 1024);
  });

  it('previews text as text and images as images', async () => {
    await ann.page.getByRole('button', { name: 'Preview notes.md' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'notes.md' });
    await expect.poll(() => dialog.locator('pre.text-preview').textContent(), { timeout: 15_000 }).toContain('Ship on Thursday.');
    // Shown, never run: the script tag is text.
    expect(await dialog.locator('pre.text-preview').textContent()).toContain('<script>alert(1)</script>');
    await ann.page.keyboard.press('Escape');

    await ann.page.getByRole('button', { name: 'Preview cover.png' }).click();
    const image = ann.page.getByRole('dialog', { name: 'cover.png' }).locator('.file-preview img');
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 15_000 }).toBe(640);
    await ann.page.keyboard.press('Escape');

    await ann.page.getByRole('button', { name: 'Preview archive.bin' }).click();
    await ann.page.getByRole('dialog', { name: 'archive.bin' }).getByText('No preview').waitFor();
    await ann.page.keyboard.press('Escape');
  });

  it('creates a share link that works without an account, and revokes it', async () => {
    await ann.page.getByRole('button', { name: 'Share cover.png' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Share “cover.png”' });
    await dialog.getByText('No active links.').waitFor();
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const url = await dialog.getByLabel('Share link').inputValue();
    expect(url).toMatch(/\/share\/files\/[A-Za-z0-9_-]{43}$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('cover.png');

    await dialog.getByRole('button', { name: 'Revoke link' }).click();
    await ann.page.getByRole('dialog', { name: 'Revoke link?' }).getByRole('button', { name: 'Revoke link' }).click();
    await dialog.getByText('No active links.').waitFor();
    expect((await fetch(url)).status).toBe(404);
    await dialog.getByRole('button', { name: 'Done' }).click();
  });

  it('shows a file an agent uploads over REST in the open folder', async () => {
    expect((await t.request('POST', '/api/me/elevate', { as: { cookie }, body: { scope: 'keys' } })).status).toBe(200);
    const minted = await t.request('POST', '/api/keys', { as: { cookie }, body: { name: 'Filer', agentName: 'Filing bot', role: 'editor', scopeSlug: 'welcome' } });
    expect(minted.status).toBe(200);
    const uploaded = await proxyUpload(t, base, { bearer: minted.body.secret }, { bytes: new TextEncoder().encode('id,total\n1,42\n'), name: 'totals.csv', type: 'text/csv' }, { folder: folderId, surface: 'files' });
    expect(uploaded.status).toBe(200);
    await expect.poll(names, { timeout: 15_000 }).toEqual(['archive.bin', 'cover.png', 'notes.md', 'totals.csv']);
    expect(await ann.page.locator('.file-row[data-name="totals.csv"]').textContent()).toContain('Filing bot');
    await ann.page.mouse.move(0, 0);
    await expect.poll(() => ann.page.locator('.toast').count(), { timeout: 10_000 }).toBe(0);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}files.png` });
  });

  it('renames and deletes through the app’s own dialogs', async () => {
    await ann.page.getByRole('button', { name: 'More for archive.bin' }).click();
    await ann.page.getByRole('menuitem', { name: 'Rename…' }).click();
    const rename = ann.page.getByRole('dialog', { name: 'Rename file' });
    await rename.getByLabel('Name').fill('backup.bin');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['backup.bin', 'cover.png', 'notes.md', 'totals.csv']);

    await ann.page.getByRole('button', { name: 'More for backup.bin' }).click();
    await ann.page.getByRole('menuitem', { name: 'Delete' }).click();
    await ann.page.getByRole('dialog', { name: 'Delete file?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['cover.png', 'notes.md', 'totals.csv']);
    expect((await listed(folderId)).files.map((f) => f.name)).toEqual(['cover.png', 'notes.md', 'totals.csv']);

    // Back at the root through the breadcrumbs.
    await ann.page.locator('.breadcrumbs').getByRole('button', { name: 'Files' }).click();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['Reports']);
  });
});
