import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually } from '../helpers/sync';
import { addMembership, createWorkspace } from '../workspaces/helpers';
import { editorText, launchBrowser, personWithSession, placeCaretIn, SCREENSHOT_DIR, signedInPerson, type Person } from './browser';
import { signIn } from '../helpers/sign-in';

/** How many updates this browser has stored for its documents in IndexedDB (y-indexeddb's `updates` stores). */
function storedUpdates(page: Page): Promise<number> {
  return page.evaluate(async () => {
    let total = 0;
    for (const { name } of await indexedDB.databases()) {
      if (!name?.startsWith('trellis:')) continue;
      total += await new Promise<number>((resolve) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains('updates')) return resolve((db.close(), 0));
          const count = db.transaction('updates').objectStore('updates').count();
          count.onsuccess = () => resolve((db.close(), count.result));
          count.onerror = () => resolve((db.close(), 0));
        };
        open.onerror = () => resolve(0);
      });
    }
    return total;
  });
}

/**
 * Offline for real, as a person meets it: ONE online visit (the service
 * worker installs and takes the page over, the documents land in
 * IndexedDB), then the network is gone (the browser's offline emulation and
 * the server unreachable: the proxy destroys open sockets and refuses new
 * ones), then a reload. The app, the documents and typing must work from
 * this device alone, and the reconnect merges both ways.
 */
describe('offline editing in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let annCookie: string;
  let base: string;
  let path: string;
  let orgSlug: string;
  let rowId: string;

  const status = (person: Person) => person.page.locator('.sync-indicator').getAttribute('data-status');
  const docText = (person: Person) => editorText(person.page);
  const cellText = (person: Person, key: string) => person.page.locator(`[data-row-id="${rowId}"] [data-key="${key}"] .cell-content`).textContent();
  const openTab = async (person: Person, name: string) => {
    await person.page.getByRole('tab', { name }).click();
    await person.page.locator(name === 'Notes' ? '.ProseMirror' : '.grid-row').first().waitFor();
  };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    // Ann signs in elsewhere (the magic link over HTTP); this browser loads no page until her one visit below.
    annCookie = (await signIn(t, 'ann@example.com')).cookie;
    [ann, ben] = await Promise.all([personWithSession(t, browser, annCookie), signedInPerson(t, browser, 'ben@example.com')]);
    const workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Field trip', slug: 'field-trip', initialMarkdown: '# Field trip\n\nMeet at the station.\n' });
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    path = `/${workspace.org.slug}/${workspace.slug}`;
    orgSlug = workspace.org.slug;
    // A workspace this device never opens: a deep link to it offline has nothing to show.
    await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Budget', slug: 'budget' });
    const renamed = await t.request('PATCH', `${base}/surfaces/doc`, { as: { cookie: annCookie }, body: { name: 'Notes' } });
    expect(renamed.status).toBe(200);
    const table = await t.request('POST', `${base}/surfaces`, { as: { cookie: annCookie }, body: { kind: 'table', slug: 'packing', name: 'Packing' } });
    expect(table.status).toBe(200);
    const row = await t.request('POST', `${base}/rows`, { as: { cookie: annCookie }, body: { surface: 'packing', data: { title: 'Water bottle' } } });
    expect(row.status).toBe(200);
    rowId = row.body.id;
    const benUser = await t.services.db.selectFrom('users').select('id').where('email', '=', 'ben@example.com').executeTakeFirstOrThrow();
    await addMembership(t, workspace.id, benUser.id, 'editor');

    // Ann's one online visit: the first page this browser ever loads is the workspace.
    for (const person of [ann, ben]) {
      await person.page.goto(`${person.origin}${path}/packing`, { timeout: 120_000 });
      await person.page.locator('.grid-row').first().waitFor();
      await openTab(person, 'Notes');
    }
    // The one visit: Ann stays on the page until the service worker is active and her doc is
    // stored here. The wait for the worker to hold the page's first reads is no assertion (a
    // person does not notice it); the reload offline below shows whether they were kept.
    await ann.page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    await eventually(
      () =>
        ann.page.evaluate(async (workspaceApi) => {
          const cache = await caches.open('trellis-api');
          const cached = (await cache.keys()).map((request) => new URL(request.url).pathname);
          return ['/api/me', '/api/workspaces', workspaceApi, `${workspaceApi}/members`].every((p) => cached.includes(p));
        }, base),
      20_000,
    ).catch(() => undefined);
    await eventually(async () => (await storedUpdates(ann.page)) > 0, 10_000);
    await ann.page.locator('.ProseMirror h1').waitFor();
    await eventually(async () => (await status(ann)) === 'saved', 10_000);
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await ben?.close();
    await browser?.close();
    await t?.close();
  });

  it('after one online visit, a reload with the network gone shows the app and the doc from this device', async () => {
    await ann.goOffline();
    await ann.page.reload();
    // Whatever the page ends up showing (the workspace, a sign-in form, an offline page, nothing), its text says it.
    await ann.page.locator('.ProseMirror h1, .auth-page, .offline-page').first().waitFor({ timeout: 30_000 }).catch(() => undefined);
    expect(await ann.page.locator('body').innerText()).toContain('Field trip');
    expect(await ann.page.locator('.workspace-title h1').textContent()).toBe('Field trip');
    expect(await ann.page.locator('.sidebar').textContent()).toContain('Budget');
    await expect.poll(() => docText(ann)).toContain('Meet at the station.');
    expect(await status(ann)).toBe('offline');
  }, 120_000);

  it('keeps editing a doc and a table offline, and shows it is offline', async () => {
    await expect.poll(() => status(ann), { timeout: 10_000 }).toBe('offline');
    const storedBefore = await storedUpdates(ann.page);

    await placeCaretIn(ann.page, '.ProseMirror p');
    await ann.page.keyboard.press('End');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('Written on the train, offline.');
    await openTab(ann, 'Packing');
    await ann.page.locator(`[data-row-id="${rowId}"] [data-key="title"]`).click();
    await ann.page.keyboard.type('Water bottle and map');
    await ann.page.keyboard.press('Enter');
    await expect.poll(() => cellText(ann, 'title')).toBe('Water bottle and map');

    // Ben, online, keeps working on the same doc.
    await placeCaretIn(ben.page, '.ProseMirror h1');
    await ben.page.keyboard.press('End');
    await ben.page.keyboard.type(' (Saturday)');
    await expect.poll(async () => (await t.request('GET', `${base}/doc?format=markdown`, { as: { cookie: annCookie } })).body.markdown).toContain('# Field trip (Saturday)');

    // Nothing of Ann's reached the server or Ben.
    expect((await t.request('GET', `${base}/rows/${rowId}`, { as: { cookie: annCookie } })).body.data.title).toBe('Water bottle');
    expect(await docText(ben)).not.toContain('Written on the train');
    // Both edits are on this device, in IndexedDB.
    await expect.poll(() => storedUpdates(ann.page)).toBeGreaterThanOrEqual(storedBefore + 2);
  });

  it('still shows the app and the synced doc after a reload while offline', async () => {
    await ann.page.reload();
    await ann.page.locator('.grid-row').first().waitFor();
    expect(await ann.page.locator('.workspace-title h1').textContent()).toBe('Field trip');
    expect(await status(ann)).toBe('offline');
    expect(await cellText(ann, 'title')).toBe('Water bottle and map');
    await openTab(ann, 'Notes');
    await expect.poll(() => docText(ann)).toContain('Written on the train, offline.');
    expect(await docText(ann)).toContain('Meet at the station.');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}offline.png` });
  });

  it('shows a clear offline page for a workspace this device never opened', async () => {
    await ann.page.goto(`${ann.origin}/${orgSlug}/budget`);
    const page = ann.page.locator('.offline-page');
    await page.waitFor();
    expect(await page.locator('h3').textContent()).toBe('You are offline');
    expect(await page.textContent()).toContain('has not been opened on this device');
    // The rest of the app is there: the sidebar, and the way back to what is here.
    expect(await ann.page.locator('.sidebar').textContent()).toContain('Field trip');
    await ann.page.goto(`${ann.origin}${path}/doc`);
    await expect.poll(() => docText(ann)).toContain('Written on the train, offline.');
    }, 120_000);

  it('sends the offline edits when the connection comes back, and receives what it missed', async () => {
    await ann.goOnline();
    await expect.poll(() => status(ann), { timeout: 15_000 }).toBe('saved');
    await expect.poll(() => docText(ben), { timeout: 10_000 }).toContain('Written on the train, offline.');
    await expect.poll(() => docText(ann), { timeout: 10_000 }).toContain('Field trip (Saturday)');
    const markdown = (await t.request('GET', `${base}/doc?format=markdown`, { as: { cookie: annCookie } })).body.markdown;
    expect(markdown).toBe('# Field trip (Saturday)\n\nMeet at the station.\n\nWritten on the train, offline.\n');

    await openTab(ben, 'Packing');
    await expect.poll(() => cellText(ben, 'title')).toBe('Water bottle and map');
    await expect.poll(async () => (await t.request('GET', `${base}/rows/${rowId}`, { as: { cookie: annCookie } })).body.data.title).toBe('Water bottle and map');
  });
});
