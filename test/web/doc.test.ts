import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, createWorkspace } from '../workspaces/helpers';
import { editorText, launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** A doc edited live by two people, read by a third who may only view it. */
describe('doc editor in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let cleo: Person;
  let annCookie: string;
  let benId: string;
  let base: string;
  let path: string;

  const markdown = async () => (await t.request('GET', `${base}/doc?format=markdown`, { as: { cookie: annCookie } })).body.markdown as string;
  const editor = (person: Person) => person.page.locator('.ProseMirror');
  const text = (person: Person, selector: string) => editorText(person.page, selector);

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    [ann, ben, cleo] = await Promise.all(['ann@example.com', 'ben@example.com', 'cleo@example.com'].map((email) => signedInPerson(t, browser, email)));
    annCookie = await sessionCookieOf(ann.context);
    const workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch notes', slug: 'launch-notes', mode: 'doc' });
    const users = await t.services.db.selectFrom('users').select(['id', 'email']).execute();
    benId = users.find((u) => u.email === 'ben@example.com')!.id;
    await addMembership(t, workspace.id, benId, 'editor');
    await addMembership(t, workspace.id, users.find((u) => u.email === 'cleo@example.com')!.id, 'viewer');
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    path = `/${workspace.org.slug}/${workspace.slug}`;
    for (const person of [ann, ben, cleo]) {
      await person.page.goto(person.origin + path);
      await editor(person).waitFor();
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all([ann, ben, cleo].map((person) => person?.close()));
    await browser?.close();
    await t?.close();
  });

  it('shows text typed in one browser in the other and in GET /doc as Markdown', async () => {
    await editor(ann).click();
    await ann.page.keyboard.type('# Launch notes');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('We ship on **Thursday** after the demo.');
    await expect.poll(() => text(ben, 'h1')).toBe('Launch notes');
    await expect.poll(() => text(ben, 'p')).toBe('We ship on Thursday after the demo.');
    expect(await text(ben, 'p strong')).toBe('Thursday');
    await expect.poll(markdown).toBe('# Launch notes\n\nWe ship on **Thursday** after the demo.\n');
  });

  it('turns Markdown habits into lists and task lists, and mentions members', async () => {
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('[ ] Record the demo');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('Ask @be');
    await ann.page.locator('.mention-popup .mention-item').first().waitFor();
    expect(await ann.page.locator('.mention-popup .mention-item.is-active .mention-label').textContent()).toBe('ben');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('to review');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('- Blog post');
    await expect.poll(() => ben.page.locator('.ProseMirror li[data-type="taskItem"]').count()).toBe(2);
    await expect.poll(() => text(ben, 'span[data-type="mention"]')).toBe('@ben');
    await expect.poll(markdown).toContain('- [ ] Record the demo');
    await expect.poll(markdown).toContain(`- [ ] Ask [@ben](mention:user/${benId}) to review`);
    await expect.poll(markdown).toMatch(/^[-*] Blog post$/m);
    const events = await t.request('GET', `${base}/events?action=doc.mention_added`, { as: { cookie: annCookie } });
    await expect.poll(async () => (await t.request('GET', `${base}/events?action=doc.mention_added`, { as: { cookie: annCookie } })).body.events).toHaveLength(1);
    expect(events.status).toBe(200);

    // Ticking a task in Ben's browser ticks it for Ann and on the server.
    await ben.page.locator('.ProseMirror li[data-type="taskItem"] input[type="checkbox"]').first().check();
    await expect.poll(() => ann.page.locator('.ProseMirror li[data-type="taskItem"]').first().getAttribute('data-checked')).toBe('true');
    await expect.poll(markdown).toContain('- [x] Record the demo');
  });

  it('inserts tables and uploaded images for everyone', async () => {
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.press('Enter');
    await ann.page.getByRole('button', { name: 'Insert table' }).click();
    await ann.page.keyboard.type('Owner');
    await expect.poll(() => text(ben, 'table th')).toBe('Owner');

    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#3b5bdb' } }).png().toBuffer();
    await ann.page.locator('.ProseMirror td').first().click();
    await ann.page.locator('.doc-toolbar input[type="file"]').setInputFiles({ name: 'badge.png', mimeType: 'image/png', buffer: png });
    await expect.poll(() => ben.page.locator('.ProseMirror img[src]').count(), { timeout: 15_000 }).toBe(1);
    const src = await ben.page.locator('.ProseMirror img[src]').getAttribute('src');
    expect(src).toMatch(/\/api\/blobs\//);
    const image = await fetch(src!);
    expect(image.status).toBe(200);
    await expect.poll(markdown).toContain(`![badge](${src})`);
  });

  it("keeps a viewer's editor read-only", async () => {
    await expect.poll(() => text(cleo, 'h1')).toBe('Launch notes');
    expect(await editor(cleo).getAttribute('contenteditable')).toBe('false');
    await expect.poll(() => cleo.page.locator('.doc-readonly').textContent()).toContain('not edit it');
    expect(await cleo.page.locator('.doc-toolbar').count()).toBe(0);
    const before = await markdown();
    await cleo.page.locator('.ProseMirror h1').click();
    await cleo.page.keyboard.type('Cleo typed this');
    await cleo.page.keyboard.press('Enter');
    expect(await text(cleo, 'h1')).toBe('Launch notes');
    expect(await cleo.page.locator('.ProseMirror').textContent()).not.toContain('Cleo typed this');
    expect(await markdown()).toBe(before);
    await expect.poll(() => cleo.page.locator('.sync-indicator').getAttribute('data-status')).toBe('saved');
  });

  it('looks right', async () => {
    await ann.page.setViewportSize({ width: 1280, height: 760 });
    await ben.page.locator('.ProseMirror p').first().click();
    await ben.page.keyboard.press('End');
    await expect.poll(() => ann.page.locator('.ProseMirror-yjs-cursor').count()).toBeGreaterThan(0);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}doc.png` });
  });
});
