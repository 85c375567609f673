import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, createWorkspace } from '../workspaces/helpers';
import { launchBrowser, openRowMenu, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** The comments panel: threads on rows, cells and doc ranges; replies, reactions, resolve; an agent's reply arriving live. */
describe('comments in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cora: Person;
  let annCookie: string;
  let agentKey: string;
  let workspace: { id: string; slug: string; org: { slug: string } };
  let api: string;
  const rows: Record<string, string> = {};

  const panel = (person: Person) => person.page.getByRole('complementary', { name: 'Comments' });
  const comments = async (query: string) => (await t.request('GET', `${api}/comments?${query}`, { as: { cookie: annCookie } })).body.comments as Array<Record<string, any>>;
  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    cora = await signedInPerson(t, browser, 'cora@example.com');
    annCookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch plan', slug: 'launch-plan' });
    api = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    const coraUser = await t.services.db.selectFrom('users').select('id').where('email', '=', 'cora@example.com').executeTakeFirstOrThrow();
    await addMembership(t, workspace.id, coraUser.id, 'commenter');
    for (const data of [
      { title: 'Write the announcement', status: 'doing' },
      { title: 'Record the demo video', status: 'todo' },
    ]) {
      const created = await t.request('POST', `${api}/rows`, { as: { cookie: annCookie }, body: { data } });
      expect(created.status).toBe(200);
      rows[data.title] = created.body.id;
    }
    expect((await t.request('POST', '/api/me/elevate', { as: { cookie: annCookie }, body: { scope: 'keys' } })).status).toBe(200);
    const minted = await t.request('POST', '/api/keys', { as: { cookie: annCookie }, body: { name: 'Reviewer', agentName: 'Review bot', role: 'editor', scopeSlug: workspace.slug } });
    expect(minted.status).toBe(200);
    agentKey = minted.body.secret;
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}`);
    await ann.page.waitForSelector('.grid-row');
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await cora?.close();
    await browser?.close();
    await t?.close();
  });

  it('starts a thread on a row, and an agent’s reply over REST appears live', async () => {
    await openRowMenu(ann, rows['Write the announcement']!);
    await ann.page.getByRole('menuitem', { name: 'Comment on row' }).click();
    const comments$ = panel(ann);
    await comments$.locator('.comment-focus').getByText('Write the announcement').waitFor();
    await comments$.getByLabel('Add a comment').fill('Can this go out on Friday?');
    await comments$.getByRole('button', { name: 'Comment', exact: true }).click();
    await comments$.locator('.thread .comment-body', { hasText: 'Can this go out on Friday?' }).waitFor();
    const [root] = await comments(`target_type=row&target_id=${rows['Write the announcement']}`);
    expect(root).toMatchObject({ body: 'Can this go out on Friday?', target: { type: 'row', rowId: rows['Write the announcement'] }, author: { name: 'ann' } });

    const reply = await t.request('POST', `${api}/comments`, {
      as: { bearer: agentKey },
      body: { parentId: root!.id, target: { type: 'row', rowId: rows['Write the announcement'] }, body: 'Yes: the draft is done, only the screenshots are missing.' },
    });
    expect(reply.status).toBe(200);
    const shown = comments$.locator(`[data-comment="${reply.body.id}"]`);
    await expect.poll(() => shown.locator('.comment-body').textContent(), { timeout: 10_000 }).toBe('Yes: the draft is done, only the screenshots are missing.');
    expect(await shown.locator('header').textContent()).toContain('Review bot');
    expect(await shown.locator('.badge-agent').count()).toBe(1);
  });

  it('reacts, replies and resolves', async () => {
    const comments$ = panel(ann);
    const thread = comments$.locator('.thread').first();
    const agentReply = thread.locator('.comment').last();
    await agentReply.hover();
    await agentReply.getByRole('button', { name: 'Add reaction' }).click();
    await thread.getByRole('button', { name: 'React ❤️' }).click();
    await thread.getByRole('button', { name: '❤️ 1' }).waitFor();
    await expect.poll(async () => (await comments(`target_type=row`)).find((c) => c.parentId)?.reactions).toEqual([{ emoji: '❤️', count: 1, principalIds: [expect.any(String)] }]);

    await thread.getByRole('button', { name: 'Reply' }).click();
    await thread.getByLabel('Reply').fill('Great, then Friday it is.');
    await thread.getByLabel('Reply').press('Control+Enter');
    await thread.locator('.comment-body', { hasText: 'Great, then Friday it is.' }).waitFor();
    await ann.page.mouse.move(0, 0);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}comments.png` });

    await thread.getByRole('button', { name: 'Resolve' }).click();
    await comments$.getByText('No open comments').waitFor();
    const resolved = await comments('status=resolved');
    expect(resolved).toHaveLength(3);
    expect(resolved.every((c) => c.resolvedAt !== null)).toBe(true);
    await comments$.getByRole('tab', { name: 'Resolved' }).click();
    await comments$.getByText('Resolved by ann').waitFor();
    await comments$.getByRole('button', { name: 'Reopen' }).click();
    await comments$.getByText('No resolved comments').waitFor();
    expect(await comments('status=open')).toHaveLength(3);
    await comments$.getByRole('tab', { name: 'Open' }).click();
  });

  it('comments on a cell through the row menu', async () => {
    const rowId = rows['Record the demo video']!;
    await ann.page.locator(`[data-row-id="${rowId}"] [data-key="status"]`).click();
    await openRowMenu(ann, rowId);
    await ann.page.getByRole('menuitem', { name: 'Comment on “Status”' }).click();
    const comments$ = panel(ann);
    await comments$.locator('.comment-focus').getByText('Record the demo video · Status').waitFor();
    await comments$.getByLabel('Add a comment').fill('Should this be doing?');
    await comments$.getByRole('button', { name: 'Comment', exact: true }).click();
    await comments$.locator('.thread .comment-body', { hasText: 'Should this be doing?' }).waitFor();
    const [cellComment] = await comments(`target_type=cell&target_id=${rowId}`);
    expect(cellComment!.target).toMatchObject({ type: 'cell', rowId, columnKey: 'status' });
  });

  it('lets a commenter comment on a selection in a doc they cannot edit', async () => {
    const doc = await t.request('POST', `${api}/surfaces`, { as: { cookie: annCookie }, body: { kind: 'doc', slug: 'brief', name: 'Brief' } });
    expect(doc.status).toBe(200);
    const written = await t.request('PUT', `${api}/doc?surface=brief`, { as: { cookie: annCookie }, body: { markdown: 'The launch plan is ready for review.' } });
    expect(written.status).toBe(200);

    await cora.page.goto(`${cora.origin}/${workspace.org.slug}/${workspace.slug}/brief`);
    const paragraph = cora.page.locator('.ProseMirror p', { hasText: 'The launch plan is ready for review.' });
    await paragraph.waitFor();
    // Select "launch plan" in the read-only editor.
    await paragraph.evaluate((p) => {
      const text = p.firstChild!;
      const range = document.createRange();
      range.setStart(text, 4);
      range.setEnd(text, 15);
      const selection = window.getSelection()!;
      selection.removeAllRanges();
      selection.addRange(range);
    });
    await cora.page.locator('.comment-bubble').click();
    const comments$ = panel(cora);
    await comments$.locator('.comment-focus').getByText('launch plan').waitFor();
    await comments$.getByLabel('Add a comment').fill('Which date do we announce?');
    await comments$.getByRole('button', { name: 'Comment', exact: true }).click();
    await comments$.locator('.thread .comment-body', { hasText: 'Which date do we announce?' }).waitFor();
    const [range] = await comments('target_type=doc_range');
    expect(range).toMatchObject({ author: { name: 'cora' }, target: { type: 'doc_range', surfaceSlug: 'brief', anchor: { text: 'launch plan' } } });
    expect(range!.currentText).toBeUndefined();

    // Ann, on the doc, sees Cora's thread when she opens the comments.
    await ann.page.goto(`${ann.origin}/${workspace.org.slug}/${workspace.slug}/brief`);
    await ann.page.getByRole('button', { name: 'Comments' }).click();
    await panel(ann).locator('.thread', { hasText: 'Which date do we announce?' }).getByText('“launch plan”').waitFor();
  });
});
