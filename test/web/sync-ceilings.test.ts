import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { connectClient, eventually, synced } from '../helpers/sync';
import { createWorkspace } from '../workspaces/helpers';
import { editorText, launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

/** A server with `env`, and Ann in a browser with a doc workspace reading "hello". */
async function annWithADoc(env: Record<string, string>, workspace: { name: string; slug: string }) {
  const t = await startTestApp({ env });
  const browser = await launchBrowser();
  const ann = await signedInPerson(t, browser, 'ann@example.com');
  const cookie = await sessionCookieOf(ann.context);
  const created = await createWorkspace(t, { as: { cookie } }, { ...workspace, mode: 'doc', initialMarkdown: 'hello\n' });
  return {
    t,
    ann,
    cookie,
    documentName: created.primarySurface.syncDocument as string,
    path: `/${created.org.slug}/${created.slug}`,
    close: async () => {
      await ann.close();
      await browser.close();
      await t.close();
    },
  };
}

/** Issue 26 item 4: a person whose document is refused for the connections ceiling is told so, and gets in once there is room. */
describe('sync ceilings in the browser', () => {
  let setup: Awaited<ReturnType<typeof annWithADoc>>;
  let t: TestApp;
  let ann: Person;
  let cookie: string;
  let documentName: string;
  let path: string;

  beforeAll(async () => {
    setup = await annWithADoc({ SYNC_MAX_CONNECTIONS_PER_DOCUMENT: '1' }, { name: 'Crowded', slug: 'crowded' });
    ({ t, ann, cookie, documentName, path } = setup);
  }, 240_000);

  afterAll(async () => setup?.close());

  it('says "this document has too many open connections" while the document is full, then connects and saves', async () => {
    // Someone else holds the document's only connection.
    const other = connectClient(t.url, documentName, { cookie });
    await synced(other);
    await ann.page.goto(ann.origin + path);
    const banner = ann.page.locator('[data-testid="sync-refusal"]');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.textContent()).toContain('this document has too many open connections');

    // Room again: the app reconnects, the banner goes, and an edit reaches the server.
    other.destroy();
    await banner.waitFor({ state: 'detached', timeout: 30_000 });
    await ann.page.locator('.ProseMirror').click();
    await ann.page.keyboard.press('End');
    await ann.page.keyboard.type(' world');
    await expect.poll(() => editorText(ann.page, 'p')).toBe('hello world');
    await eventually(async () => (await t.request('GET', '/api/workspaces/crowded/doc?format=markdown', { as: { cookie } })).body?.markdown === 'hello world\n', 15_000);
  });
});

/** A change refused as too large stays on the device and is sent again at every reconnect: the person can discard it and go on from the saved copy. */
describe('a change too large for the server, in the browser', () => {
  let setup: Awaited<ReturnType<typeof annWithADoc>>;
  let t: TestApp;
  let ann: Person;
  let cookie: string;
  let path: string;

  beforeAll(async () => {
    setup = await annWithADoc({ SYNC_MAX_UPDATE_BYTES: '16384' }, { name: 'Big paste', slug: 'big-paste' });
    ({ t, ann, cookie, path } = setup);
  }, 240_000);

  afterAll(async () => setup?.close());

  const markdown = async () => (await t.request('GET', '/api/workspaces/big-paste/doc?format=markdown', { as: { cookie } })).body?.markdown;

  it('says the change is too large, stays refused after a reload, and after "Discard unsaved changes" edits save again', async () => {
    await ann.page.goto(ann.origin + path);
    const editor = ann.page.locator('.ProseMirror');
    await expect.poll(() => editorText(ann.page, 'p')).toBe('hello');
    await editor.click();
    await ann.page.keyboard.press('End');
    // One paste of 40,000 characters: one change over the 16 KiB ceiling.
    await ann.page.keyboard.insertText(' ' + 'x'.repeat(40_000));
    const banner = ann.page.locator('[data-testid="sync-refusal"]');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.textContent()).toContain('your last change is too large for the server to accept');
    expect(await markdown()).toBe('hello\n');

    // The change is still on the device: a reload sends it again and is refused again.
    await ann.page.reload();
    await banner.waitFor({ timeout: 30_000 });
    expect(await editorText(ann.page, 'p')).toContain('x'.repeat(100));

    await banner.getByRole('button', { name: 'Discard unsaved changes' }).click();
    await ann.page.getByRole('dialog').getByRole('button', { name: 'Discard' }).click();
    await ann.page.waitForLoadState('load');
    await expect.poll(() => editorText(ann.page, 'p'), { timeout: 15_000 }).toBe('hello');
    expect(await banner.count()).toBe(0);

    await ann.page.locator('.ProseMirror').click();
    await ann.page.keyboard.press('End');
    await ann.page.keyboard.type(' world');
    await eventually(async () => (await markdown()) === 'hello world\n', 15_000);
    await expect.poll(() => ann.page.locator('.sync-indicator').innerText(), { timeout: 15_000 }).toBe('Saved');
    expect(await banner.count()).toBe(0);
  });
});
