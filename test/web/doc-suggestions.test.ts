import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, createWorkspace, insertKey, type TestUser } from '../workspaces/helpers';
import { editorText, launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * Doc suggestions in the browser (issue 25 item 1, web side): an editor
 * switches the doc into suggesting mode and what they type reaches the
 * others as a suggestion (left out of GET /doc until accepted); a commenter
 * may only suggest; an agent's suggestion made over REST shows in the doc
 * with its name, and one click on Accept makes it plain text everywhere.
 */
describe('doc suggestions in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let cid: Person;
  let annCookie: string;
  let agent: { bearer: string };
  let base: string;
  let path: string;

  const editor = (person: Person) => person.page.locator('.ProseMirror');
  const markdown = async (include = false) =>
    (await t.request('GET', `${base}/doc?format=markdown${include ? '&suggestions=include' : ''}`, { as: { cookie: annCookie } })).body.markdown as string;
  const inserted = (person: Person, text?: string) => person.page.locator('.ProseMirror ins.suggestion', text ? { hasText: text } : {});
  // Another person's caret (a widget with their name) can sit inside the text: find a suggestion by its author instead.
  const insertedBy = (person: Person, author: string) => person.page.locator(`.ProseMirror ins.suggestion[title^="Suggested by ${author}"]`);
  /** An element's text without the name tags of other people's carets. */
  const textOf = (locator: Locator) =>
    locator.evaluate((element) => {
      const copy = element.cloneNode(true) as HTMLElement;
      copy.querySelectorAll('.ProseMirror-yjs-cursor').forEach((cursor) => cursor.remove());
      return copy.textContent;
    });
  const agentInserted = (person: Person) => person.page.locator('.ProseMirror ins.suggestion[data-author-type="agent"]');

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    [ann, ben, cid] = await Promise.all(['ann@example.com', 'ben@example.com', 'cid@example.com'].map((email) => signedInPerson(t, browser, email)));
    annCookie = await sessionCookieOf(ann.context);
    const workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch notes', slug: 'launch-notes', mode: 'doc' });
    const users = await t.services.db.selectFrom('users').select(['id', 'email', 'primaryOrgId']).execute();
    const idOf = (email: string) => users.find((u) => u.email === email)!;
    await addMembership(t, workspace.id, idOf('ben@example.com').id, 'editor');
    await addMembership(t, workspace.id, idOf('cid@example.com').id, 'commenter');
    const owner = { userId: idOf('ann@example.com').id, orgId: idOf('ann@example.com').primaryOrgId! } as TestUser;
    const key = await insertKey(t, owner, { role: 'commenter', scopeWorkspaceId: workspace.id, agentName: 'Robot', suggestOnly: true });
    agent = key.as as { bearer: string };
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    path = `/${workspace.org.slug}/${workspace.slug}`;
    const seeded = await t.request('PUT', `${base}/doc`, { as: { cookie: annCookie }, body: { markdown: 'Launch on Thursday.' } });
    expect(seeded.status, seeded.text).toBe(200);
    for (const person of [ann, ben, cid]) {
      person.page.setDefaultTimeout(15_000);
      await person.page.goto(person.origin + path);
      await person.page.locator('.ProseMirror p', { hasText: 'Launch on Thursday.' }).waitFor({ timeout: 60_000 });
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all([ann, ben, cid].map((person) => person?.close()));
    await browser?.close();
    await t?.close();
  });

  it('an editor switches to suggesting: what they type reaches the others as a suggestion, and GET /doc leaves it out', async () => {
    const toggle = ben.page.locator('.doc-mode-toggle');
    expect(await toggle.textContent()).toContain('Editing');
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await toggle.textContent()).toContain('Suggesting');

    await ben.page.locator('.ProseMirror p').click();
    await ben.page.keyboard.press('End');
    await ben.page.keyboard.type(' after the demo');
    await expect.poll(() => textOf(inserted(ben))).toBe(' after the demo');
    await expect.poll(() => textOf(inserted(ann))).toBe(' after the demo');
    expect(await inserted(ann).getAttribute('title')).toMatch(/^Suggested by ben/);
    expect(await inserted(ann).count()).toBe(1);
    await expect.poll(() => markdown(true)).toBe('Launch on Thursday.{++ after the demo++}\n');
    expect(await markdown()).toBe('Launch on Thursday.\n');

    // Delete strikes out someone else's text instead of removing it, and moves on past it.
    // Home moves the caret natively: ProseMirror hears of it through a queued selectionchange, which must come before the first Delete.
    await ben.page.evaluate(() => {
      (window as unknown as { caretHome: Promise<void> }).caretHome = new Promise<void>((resolve) => {
        const onChange = () => {
          const selection = window.getSelection();
          if (!selection?.anchorNode || selection.anchorOffset !== 0 || !document.querySelector('.ProseMirror p')?.contains(selection.anchorNode)) return;
          document.removeEventListener('selectionchange', onChange);
          resolve();
        };
        document.addEventListener('selectionchange', onChange);
      });
    });
    await ben.page.keyboard.press('Home');
    await ben.page.evaluate(() => (window as unknown as { caretHome: Promise<void> }).caretHome);
    for (let i = 0; i < 'Launch '.length; i++) await ben.page.keyboard.press('Delete');
    await expect.poll(() => textOf(ben.page.locator('.ProseMirror del.suggestion'))).toBe('Launch ');
    await expect.poll(() => textOf(ann.page.locator('.ProseMirror del.suggestion'))).toBe('Launch ');
    await expect.poll(() => markdown(true)).toBe('{--Launch --}on Thursday.{++ after the demo++}\n');
    expect(await markdown()).toBe('Launch on Thursday.\n');

    // The listing has it once the server saw it, with Accept / Reject for an editor.
    await ann.page.locator('.doc-suggestions-button').click();
    // Two suggestions: the typed words, and the struck ones (a separate run).
    await expect.poll(() => ann.page.locator('.doc-suggestion').count()).toBe(2);
    for (const text of await ann.page.locator('.doc-suggestion').allTextContents()) expect(text).toContain('ben');
    expect(await ann.page.locator('.doc-suggestion .suggestion-accept').count()).toBe(2);

    // The choice is kept for this doc.
    await ben.page.reload();
    await expect.poll(() => ben.page.locator('.doc-mode-toggle').getAttribute('aria-pressed'), { timeout: 30_000 }).toBe('true');
  });

  it('a commenter may only suggest: their editor opens in suggesting mode and their typing arrives as their suggestion', async () => {
    await expect.poll(() => cid.page.locator('.doc-mode').textContent()).toBe('Suggesting');
    expect(await cid.page.locator('.doc-mode-toggle').count()).toBe(0);
    expect(await editor(cid).getAttribute('contenteditable')).toBe('true');
    await cid.page.locator('.ProseMirror p').click();
    await cid.page.keyboard.press('End');
    await cid.page.keyboard.type(' Maybe.');
    await expect.poll(() => insertedBy(ann, 'cid').count()).toBe(1);
    await expect.poll(() => markdown(true)).toContain('{++ Maybe.++}');
    // The server took it as a suggestion: the connection stays up.
    await expect.poll(() => cid.page.locator('.sync-indicator').getAttribute('data-status')).toBe('saved');
    // A commenter sees who suggested it, not the buttons.
    await insertedBy(cid, 'cid').click();
    await cid.page.locator('.suggestion-popover').waitFor();
    expect(await cid.page.locator('.suggestion-popover .suggestion-accept').count()).toBe(0);

    // Ann rejects it from its popover: gone everywhere.
    await insertedBy(ann, 'cid').click();
    await ann.page.locator('.suggestion-popover .suggestion-reject').click();
    await expect.poll(() => insertedBy(cid, 'cid').count()).toBe(0);
    await expect.poll(() => markdown(true)).not.toContain('Maybe');
  });

  it("shows an agent's suggestion with its name, and one click on Accept makes it plain text everywhere", async () => {
    const suggested = await t.request('PUT', `${base}/doc?mode=suggest`, { as: agent, body: { markdown: 'Launch on Friday.' } });
    expect(suggested.status, suggested.text).toBe(202);
    const id = suggested.body.suggestion.id as string;
    for (const person of [ann, ben]) await expect.poll(() => textOf(agentInserted(person))).toBe('Friday');
    expect(await textOf(ann.page.locator(`.ProseMirror del[data-suggestion-id="${id}"]`))).toBe('Thursday');
    expect(await markdown()).toBe('Launch on Thursday.\n');

    await agentInserted(ann).click();
    const popover = ann.page.locator('.suggestion-popover');
    await popover.waitFor();
    expect(await popover.textContent()).toContain('Suggested by Robot');
    expect(await textOf(popover.locator('del'))).toBe('Thursday');
    expect(await textOf(popover.locator('ins'))).toBe('Friday');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}doc-suggestions.png` });
    await popover.getByRole('button', { name: 'Accept' }).click();

    for (const person of [ann, ben, cid]) {
      await expect.poll(() => person.page.locator(`.ProseMirror [data-suggestion-id="${id}"]`).count()).toBe(0);
      await expect.poll(() => editorText(person.page, 'p')).toBe('Launch on Friday. after the demo');
    }
    // Ben's own suggestion is still open; the agent's is plain text for REST too.
    await expect.poll(() => markdown()).toBe('Launch on Friday.\n');
    expect(await markdown(true)).toBe('{--Launch --}on Friday.{++ after the demo++}\n');
    // The server changes the doc first and records the decision just after: ask until it has.
    const status = async () => (await t.request('GET', `${base}/suggestions?status=all`, { as: { cookie: annCookie } })).body.suggestions.find((s: { id: string }) => s.id === id).status;
    await expect.poll(status).toBe('accepted');
  });

  it("lists the doc's open suggestions in the panel, live, and Accept all decides them in one click", async () => {
    // The panel Ann opened shows Ben's two suggestions (the agent's, decided, is gone from it).
    await expect.poll(() => ann.page.locator('.doc-suggestion').count()).toBe(2);
    await ann.page.getByRole('button', { name: 'Accept all' }).click();
    await expect.poll(() => ann.page.locator('.doc-suggestion').count()).toBe(0);
    for (const person of [ann, ben, cid]) {
      await expect.poll(() => person.page.locator('.ProseMirror [data-suggestion-id]').count()).toBe(0);
      await expect.poll(() => editorText(person.page, 'p')).toBe('on Friday. after the demo');
    }
    await expect.poll(() => markdown(true)).toBe('on Friday. after the demo\n');

    // A suggestion made now reaches the open panel without a reload.
    const suggested = await t.request('POST', `${base}/doc/sections?mode=suggest`, { as: agent, body: { markdown: 'Agenda: demo, then questions.' } });
    expect(suggested.status, suggested.text).toBe(202);
    await expect.poll(() => ann.page.locator('.doc-suggestion').count()).toBe(1);
    expect(await ann.page.locator('.doc-suggestion').textContent()).toContain('Agenda: demo, then questions.');
    expect(await ann.page.locator('.doc-suggestion').textContent()).toContain('Robot');
  });
});
