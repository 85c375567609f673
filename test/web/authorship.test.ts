import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually } from '../helpers/sync';
import { createWorkspace, insertKey, type TestUser } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * Issue 25, item 3 in the browser: a person types, an agent writes over
 * REST; the doc's Authorship view tints each span by its author and labels
 * the agent with its owner; a grid cell shows its last writer on hover.
 */
describe('authorship in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let annUser: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    const cookie = await sessionCookieOf(ann.context);
    const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', 'ann@example.com').executeTakeFirstOrThrow();
    annUser = { as: { cookie }, cookie, orgSlug: '', orgId: user.primaryOrgId!, userId: user.id, email: 'ann@example.com' };
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it("shows the doc by author, the agent's span labelled with its owner", async () => {
    const workspace = await createWorkspace(t, annUser, { name: 'Byline', slug: 'byline', mode: 'doc' });
    const agent = await insertKey(t, annUser, { role: 'editor', scopeWorkspaceId: workspace.id, agentName: 'scribe' });
    const base = `/api/workspaces/${workspace.slug}`;
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    // The editor (the Authorship view draws the doc with a read-only ProseMirror of its own).
    const editor = ann.page.locator('.doc-page .ProseMirror');
    await editor.waitFor();
    await editor.click();
    await ann.page.keyboard.type('Typed by Ann in the browser.');
    await eventually(async () => (await t.request('GET', `${base}/doc?format=text`, { as: annUser.as })).body.text === 'Typed by Ann in the browser.', 10_000);
    expect((await t.request('POST', `${base}/doc/sections`, { as: agent.as, body: { markdown: 'Added by the agent.' } })).status).toBe(200);
    await expect.poll(() => editor.innerText()).toContain('Added by the agent.');

    await ann.page.getByRole('button', { name: 'Authorship' }).click();
    const spans = ann.page.locator('.authorship-span');
    await expect.poll(() => spans.count()).toBe(2);
    expect(await spans.nth(0).getAttribute('data-author')).toBe('ann');
    expect(await spans.nth(0).textContent()).toBe('Typed by Ann in the browser.');
    expect(await spans.nth(1).getAttribute('data-author')).toBe('scribe (agent of ann)');
    expect((await spans.nth(1).textContent())?.trim()).toBe('Added by the agent.');
    expect(await spans.nth(1).getAttribute('class')).toContain('is-agent');
    expect(await ann.page.locator('.authorship-legend li').allInnerTexts()).toEqual(['ann', 'scribe (agent of ann)']);
    // People and agents are tinted from different palettes.
    const tints = await spans.evaluateAll((all) => all.map((span) => getComputedStyle(span).backgroundColor));
    expect(tints[0]).not.toBe(tints[1]);
    expect(await editor.isVisible()).toBe(false);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}authorship.png` });

    // Turned off, the editor is back as it was.
    await ann.page.getByRole('button', { name: 'Authorship' }).click();
    await expect.poll(() => editor.isVisible()).toBe(true);
  });

  it("shows a cell's last writer on hover", async () => {
    const workspace = await createWorkspace(t, annUser, { name: 'Hover', slug: 'hover', mode: 'table' });
    const agent = await insertKey(t, annUser, { role: 'editor', scopeWorkspaceId: workspace.id, agentName: 'filler' });
    const base = `/api/workspaces/${workspace.slug}`;
    const row = await t.request('POST', `${base}/rows`, { as: annUser.as, body: { data: { title: 'Written by Ann' } } });
    expect(row.status).toBe(200);
    expect((await t.request('PATCH', `${base}/rows/${row.body.id}`, { as: agent.as, body: { data: { status: 'doing' } } })).status).toBe(200);
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    const cell = (key: string) => ann.page.locator(`[data-row-id="${row.body.id}"] [data-key="${key}"]`);
    await cell('title').waitFor();
    await cell('title').hover();
    await expect.poll(() => cell('title').getAttribute('title')).toBe('Last changed by ann');
    await cell('status').hover();
    await expect.poll(() => cell('status').getAttribute('title')).toBe('Last changed by filler (agent of ann)');
  });
});
