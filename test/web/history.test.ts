import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace } from '../workspaces/helpers';
import { editorText, launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

// Generous: the first list runs a history pass, and the machine may be loaded.
const POLL = { timeout: 20_000 };

/** The History panel: a doc's versions listed, one previewed, and restored into the open editor. */
describe('version history in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cookie: string;
  let base: string;

  const markdown = async () => (await t.request('GET', `${base}/doc?format=markdown`, { as: { cookie } })).body.markdown as string;

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    cookie = await sessionCookieOf(ann.context);
    const workspace = await createWorkspace(t, { as: { cookie } }, { name: 'Plans', slug: 'plans', mode: 'doc', initialMarkdown: '# Plans\n\nThe first draft.\n' });
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    // A later session rewrites the draft (the log aged past the 10-minute session window).
    await sql`update document_updates set created_at = created_at - interval '30 minutes' where document = ${workspace.primarySurface.syncDocument}`.execute(t.services.db);
    const put = await t.request('PUT', `${base}/doc`, { as: { cookie }, body: { markdown: '# Plans\n\nA rewrite nobody liked.\n' } });
    expect(put.status).toBe(200);
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    await ann.page.locator('.ProseMirror').waitFor();
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it('lists the versions, previews one and restores it into the open editor', async () => {
    await ann.page.getByRole('button', { name: 'History' }).click();
    const items = ann.page.locator('.history-list > li');
    await expect.poll(() => items.count(), POLL).toBe(2);
    await items.nth(1).locator('.history-item').click();
    await expect.poll(() => ann.page.locator('.history-text').textContent(), POLL).toBe('# Plans\n\nThe first draft.\n');

    ann.page.once('dialog', (dialog) => void dialog.accept());
    await items.nth(1).getByRole('button', { name: 'Restore this version' }).click();
    await expect.poll(() => editorText(ann.page, 'p'), POLL).toBe('The first draft.');
    await expect.poll(markdown, POLL).toBe('# Plans\n\nThe first draft.\n');
    // The restore is itself in the history (a new version on top).
    await expect.poll(() => items.count(), POLL).toBe(3);
  });

  it('names the current state', async () => {
    await ann.page.getByLabel('Version name').fill('Before the offsite');
    await ann.page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => ann.page.locator('.history-list > li strong').first().textContent(), POLL).toBe('Before the offsite');
    const listed = await t.request('GET', `${base}/surfaces/doc/versions`, { as: { cookie } });
    expect(listed.body.versions[0]).toMatchObject({ kind: 'named', name: 'Before the offsite' });
  });
});
