import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type Credential, type TestApp } from '../helpers/app';
import { createWorkspace, insertKey, type TestUser } from '../workspaces/helpers';
import { launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

// Generous: the machine may be loaded.
const POLL = { timeout: 20_000 };

/**
 * The Activity panel's runs (docs/RUNS.md, "In the web app"): an agent's
 * run listed with its summary, its changes marked in the grid and the doc,
 * and "Revert run" showing the preview (counts and conflicts) in the app's
 * dialog before anything changes, then reverting while the person's later
 * edit stays.
 */
describe('runs in the Activity panel', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let as: Credential;
  let base: string;
  let path: string;
  let runId: string;
  const rows: Record<string, string> = {};
  const consoleErrors: string[] = [];

  const call = async (method: string, url: string, who: Credential, body?: unknown, run?: string) => {
    const res = await t.request(method, url, { as: who, ...(body === undefined ? {} : { body }), ...(run ? { headers: { 'trellis-run': run } } : {}) });
    expect(res.status, `${method} ${url}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const title = async (rowId: string) => {
    const res = await t.request('GET', `${base}/rows/${rowId}`, { as });
    return res.status === 200 ? (res.body.data.title as string) : null;
  };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    ann.page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    ann.page.on('pageerror', (error) => consoleErrors.push(error.message));
    const cookie = await sessionCookieOf(ann.context);
    as = { cookie };
    const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', 'ann@example.com').executeTakeFirstOrThrow();
    const annUser: TestUser = { as, cookie, orgSlug: '', orgId: user.primaryOrgId!, userId: user.id, email: 'ann@example.com' };
    const workspace = await createWorkspace(t, { as }, { name: 'Launch', slug: 'launch' });
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    path = `/${workspace.org.slug}/${workspace.slug}`;
    await call('POST', `${base}/surfaces`, as, { kind: 'doc', slug: 'notes', name: 'Notes' });
    await call('PUT', `${base}/doc?surface=notes`, as, { markdown: 'Ann wrote this.\n' });
    rows.ann = (await call('POST', `${base}/rows`, as, { data: { title: 'Ann’s row', status: 'todo' } })).id;
    rows.edited = (await call('POST', `${base}/rows`, as, { data: { title: 'Plan the launch', status: 'todo' } })).id;

    // The agent's run: a row made, a cell of Ann's row set, a paragraph added to the doc.
    const agent = await insertKey(t, annUser, { role: 'editor', scopeWorkspaceId: workspace.id, agentName: 'Tidy bot' });
    runId = (await call('POST', `${base}/runs`, agent.as, { name: 'Tidy the plan' })).run.id;
    rows.made = (await call('POST', `${base}/rows`, agent.as, { data: { title: 'Made by the bot' } }, runId)).id;
    await call('PATCH', `${base}/rows/${rows.edited}`, agent.as, { data: { title: 'Plan the launch (tidied)', status: 'done' } }, runId);
    await call('PUT', `${base}/doc?surface=notes`, agent.as, { markdown: 'Ann wrote this.\n\nThe bot added this line.\n' }, runId);
    await call('PATCH', `${base}/runs/${runId}`, agent.as, { status: 'ended' });
    // Ann, after the run: the title the run set is hers now (a conflict); the status the run set is not.
    await call('PATCH', `${base}/rows/${rows.edited}`, as, { data: { title: 'Launch plan, by Ann' } });

    await ann.page.goto(`${ann.origin}${path}`);
    await ann.page.locator(`[data-row-id="${rows.made}"]`).waitFor();
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await browser?.close();
    await t?.close();
  });

  it('lists the run with its agent, name and summary, and marks its changes in the grid and the doc', async () => {
    await ann.page.getByRole('button', { name: 'Activity' }).click();
    const run = ann.page.locator('.runs-list > li', { hasText: 'Tidy the plan' });
    await run.waitFor(POLL);
    expect(await run.locator('.run-who').textContent()).toContain('Tidy bot');
    expect(await run.locator('.run-summary').textContent()).toBe('1 row added, 1 row edited, 2 cells, 1 doc edited');

    await run.locator('.run-item').click();
    await expect.poll(() => ann.page.locator(`[data-row-id="${rows.made}"].is-run-row`).count(), POLL).toBe(1);
    const marked = ann.page.locator(`[data-row-id="${rows.edited}"] .grid-cell.is-run-cell`);
    await expect.poll(() => marked.evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-key')).sort()), POLL).toEqual(['status', 'title']);
    expect(await ann.page.locator(`[data-row-id="${rows.ann}"] .is-run-cell, [data-row-id="${rows.ann}"].is-run-row`).count()).toBe(0);

    await ann.page.getByRole('tab', { name: 'Notes', exact: true }).click();
    await expect.poll(() => ann.page.locator('.ProseMirror .run-inserted').allTextContents(), POLL).toEqual(['The bot added this line.']);
  });

  it('previews the revert in its dialog (counts and conflicts) and changes nothing until confirmed', async () => {
    await ann.page.getByRole('tab', { name: 'Table', exact: true }).click();
    await ann.page.locator('.runs-list').getByRole('button', { name: 'Revert run' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Revert “Tidy the plan”?' });
    await dialog.waitFor(POLL);
    expect(await dialog.locator('.run-preview-counts li').allTextContents()).toEqual(['1 row removed', '1 cell restored', '1 doc changed']);
    expect(await dialog.locator('.run-conflicts tbody tr').count()).toBe(1);
    expect(await dialog.locator('.run-conflicts tbody td').allTextContents()).toEqual(['table · title', 'Plan the launch', 'Plan the launch (tidied)', 'Launch plan, by Ann']);
    // The preview is a dry run: nothing has changed yet.
    expect(await title(rows.made)).toBe('Made by the bot');
    expect((await call('GET', `${base}/runs/${runId}`, as)).run.revertedBy).toBeNull();

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.count(), POLL).toBe(0);
    expect(await title(rows.made)).toBe('Made by the bot');
  });

  it('reverts the run: its row and status go, Ann’s title and the rest stay, and the grid follows', async () => {
    await ann.page.locator('.runs-list').getByRole('button', { name: 'Revert run' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Revert “Tidy the plan”?' });
    await dialog.getByRole('button', { name: 'Revert run' }).click();
    await expect.poll(() => dialog.count(), POLL).toBe(0);

    await expect.poll(() => title(rows.made), POLL).toBeNull();
    const edited = await call('GET', `${base}/rows/${rows.edited}`, as);
    expect(edited.data).toMatchObject({ title: 'Launch plan, by Ann', status: 'todo' });
    expect(await title(rows.ann)).toBe('Ann’s row');
    expect((await call('GET', `${base}/doc?surface=notes&format=markdown`, as)).markdown).toBe('Ann wrote this.\n');
    await expect.poll(() => ann.page.locator(`[data-row-id="${rows.made}"]`).count(), POLL).toBe(0);
    // The revert is a run of Ann's, listed above the one it undid.
    const listed = ann.page.locator('.runs-list > li');
    await expect.poll(() => listed.first().locator('.run-name').textContent(), POLL).toBe('Revert of Tidy the plan');
    await expect.poll(() => ann.page.locator('.runs-list > li', { hasText: 'Tidy the plan' }).last().textContent(), POLL).toContain('reverted');
  });

  it('shows no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
