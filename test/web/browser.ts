import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app';
import { latestMagicToken } from '../helpers/sign-in';

/** Debian's Chromium, headless (STACK-NOTES: no browser is downloaded). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/**
 * A TCP proxy in front of the server, one per browser context. `sever()`
 * cuts every open connection (the sync websocket included) and refuses new
 * ones until `restore()`: Chromium's offline emulation alone leaves an open
 * websocket running, so a test of offline editing must cut the wire too.
 */
export interface LinkProxy {
  url: string;
  sever(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startLinkProxy(targetUrl: string): Promise<LinkProxy> {
  const target = new URL(targetUrl);
  const open = new Set<net.Socket>();
  let severed = false;
  const server = net.createServer((client) => {
    if (severed) return client.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    sever() {
      severed = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      severed = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Person {
  context: BrowserContext;
  page: Page;
  proxy: LinkProxy;
  /** The app's origin as this browser sees it (through its proxy). */
  origin: string;
  /** Takes this browser off the network: the emulated offline state and a cut wire. */
  goOffline(): Promise<void>;
  goOnline(): Promise<void>;
  close(): Promise<void>;
}

/** A browser context behind its own proxy, signed in through the real magic link. */
export async function signedInPerson(t: TestApp, browser: Browser, email: string): Promise<Person> {
  const person = await personBehindProxy(t, browser);
  const sent = await t.request('POST', '/api/auth', { body: { email } });
  if (sent.status !== 200) throw new Error(`POST /api/auth answered ${sent.status}`);
  const token = await latestMagicToken(t, email);
  // A loaded machine (several browser files at once) can take well over Playwright's default 30 s for a first load.
  await person.page.goto(`${person.origin}/api/auth?token=${encodeURIComponent(token)}`, { timeout: 120_000 });
  return person;
}

/**
 * A browser context behind its own proxy that holds `sessionCookie` without
 * having loaded any page yet: its first `goto` is the person's first visit
 * (the offline test needs exactly one).
 */
export async function personWithSession(t: TestApp, browser: Browser, sessionCookie: string): Promise<Person> {
  const person = await personBehindProxy(t, browser);
  await person.context.addCookies([{ name: 'svc-session', value: sessionCookie, url: person.origin, httpOnly: true, sameSite: 'Lax' }]);
  return person;
}

/** A browser context behind its own proxy, signed out, that has loaded nothing yet. */
export async function personBehindProxy(t: TestApp, browser: Browser): Promise<Person> {
  const proxy = await startLinkProxy(t.url);
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  return {
    context,
    page,
    proxy,
    origin: proxy.url,
    async goOffline() {
      await context.setOffline(true);
      proxy.sever();
    },
    async goOnline() {
      proxy.restore();
      await context.setOffline(false);
    },
    async close() {
      await context.close();
      await proxy.close();
    },
  };
}

/** Opens a grid row's menu (the button in its gutter shows on hover). */
export async function openRowMenu(person: Person, rowId: string) {
  await person.page.locator(`[data-row-id="${rowId}"]`).hover();
  await person.page.locator(`[data-row-id="${rowId}"] .row-menu-button`).click();
}

/** The session cookie a browser context holds, for REST calls made as the same person. */
export async function sessionCookieOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'svc-session');
  if (!cookie) throw new Error('the browser has no session cookie');
  return cookie.value;
}

/**
 * Where the browser tests write their screenshots: docs/screenshots when
 * `UPDATE_SCREENSHOTS=1` (to refresh the docs on purpose), else a temporary
 * directory, so a test run leaves the working tree as it found it.
 */
export const SCREENSHOT_DIR = process.env.UPDATE_SCREENSHOTS === '1'
  ? new URL('../../docs/screenshots/', import.meta.url).pathname
  : `${mkdtempSync(path.join(os.tmpdir(), 'trellis-screenshots-'))}/`;

/** The text of an element of the doc editor, without the name tags of other people's cursors. */
export function editorText(page: Page, selector = ''): Promise<string> {
  return page
    .locator(`.ProseMirror ${selector}`.trim())
    .first()
    .evaluate((element) => {
      const copy = element.cloneNode(true) as HTMLElement;
      copy.querySelectorAll('.ProseMirror-yjs-cursor').forEach((cursor) => cursor.remove());
      // innerText keeps the line breaks between blocks; a detached copy has none, so read the live root.
      return copy.classList.contains('ProseMirror') ? (element as HTMLElement).innerText.replace(/\u2060[^\u2060]*\u2060/g, '') : (copy.textContent ?? '');
    });
}

/**
 * Clicks the last element matching `selector` inside the doc editor and waits
 * until the page has handled the caret moving there. ProseMirror learns of a
 * click's caret from the browser's `selectionchange` event, which is queued:
 * on a loaded machine Playwright's next key can arrive first (12 ms after the
 * click was seen) and act at the old selection; a person types later than that.
 */
export async function placeCaretIn(page: Page, selector: string): Promise<void> {
  await page.evaluate((selector) => {
    (window as unknown as { caretPlaced: Promise<void> }).caretPlaced = new Promise<void>((resolve) => {
      const onChange = () => {
        const target = [...document.querySelectorAll(selector)].at(-1);
        const anchor = window.getSelection()?.anchorNode;
        if (!target || !anchor || !target.contains(anchor)) return;
        document.removeEventListener('selectionchange', onChange);
        resolve();
      };
      document.addEventListener('selectionchange', onChange);
    });
  }, selector);
  await page.locator(selector).last().click();
  await page.evaluate(() => (window as unknown as { caretPlaced: Promise<void> }).caretPlaced);
}

/**
 * Signs in as a person does: the sign-in form (on whatever page shows it),
 * then the link the server mailed. The page must be showing the form.
 */
export async function signInFromForm(t: TestApp, person: Person, email: string): Promise<void> {
  const before = (await t.outbox()).length;
  await person.page.getByLabel('Work e-mail').fill(email);
  await person.page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await person.page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  if ((await t.outbox()).length === before) throw new Error(`no sign-in link mailed to ${email}`);
  const token = await latestMagicToken(t, email);
  await person.page.goto(`${person.origin}/api/auth?token=${encodeURIComponent(token)}`, { timeout: 120_000 });
}

/**
 * Every console error and uncaught page error of a page, from now on (a
 * failed request is a console error too: Chromium logs "Failed to load
 * resource" for it). Tests assert the list is empty.
 */
export function watchForErrors(page: Page, who: string): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') seen.push(`${who}: console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => seen.push(`${who}: page error: ${error.message}`));
  return seen;
}
