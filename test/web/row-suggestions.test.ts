import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { actorFromBearer, actorFromSessionToken } from '../../src/access/callers';
import { resolveWorkspace } from '../../src/access/workspace-access';
import { decideRowSuggestion, suggestRowCreate, suggestRowDelete, suggestRowUpdate } from '../../src/domain/row-suggestions';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRowSuggestion } from '../../src/model/table/suggestions';
import type { Actor } from '../../src/policy/actor';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, createWorkspace, insertKey, type TestUser } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * Row suggestions in the grid (issue 25 item 2): an agent's suggested cell
 * value, new row and delete appear live in an editor's grid (old value
 * struck beside the new one, a tinted ghost row, a struck row, each with
 * the agent's name), one click on Accept applies a change and one on
 * Reject drops one; a commenter sees them without the buttons.
 */
describe('row suggestions in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let cid: Person;
  let annCookie: string;
  let robot: Actor;
  let workspace: { id: string; slug: string; org: { slug: string } };
  let path: string;
  const rows: Record<string, string> = {};

  const rest = (method: string, suffix: string, body?: unknown) =>
    t.request(method, `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}${suffix}`, { as: { cookie: annCookie }, ...(body ? { body } : {}) });
  const asRobot = () => resolveWorkspace(t.services, robot, { slug: workspace.slug }, 'suggest');
  const row = (person: Person, rowId: string) => person.page.locator(`.grid-row[data-row-id="${rowId}"]`);

  beforeAll(async () => {
    t = await startTestApp({
      // Until the suggestion routes land (src/operations/suggestions.ts), the two decisions the grid calls, through the domain function they call.
      routes: (app, services) => {
        for (const decision of ['accept', 'reject'] as const) {
          if (app.hasRoute({ method: 'POST', url: `/api/suggestions/:id/${decision}` })) continue;
          app.post<{ Params: { id: string } }>(`/api/suggestions/:id/${decision}`, async (request) => {
            const cookie = /svc-session=([^;]+)/.exec(request.headers.cookie ?? '')?.[1] ?? '';
            const actor = (await actorFromSessionToken(services, cookie))!;
            const resolved = await resolveWorkspace(services, actor, { slug: workspace.slug }, 'decide_suggestions');
            const entry = await services.sync.read(tablesDocumentName(workspace.id), (doc) => getRowSuggestion(doc, request.params.id));
            return { suggestion: await decideRowSuggestion(services, actor, resolved, entry!.sheetId, request.params.id, decision) };
          });
        }
      },
    });
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    cid = await signedInPerson(t, browser, 'cid@example.com');
    annCookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch plan', slug: 'launch-plan' });
    const cidUser = await t.services.db.selectFrom('users').select('id').where('email', '=', 'cid@example.com').executeTakeFirstOrThrow();
    await addMembership(t, workspace.id, cidUser.id, 'commenter');
    const annUser = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', 'ann@example.com').executeTakeFirstOrThrow();
    const owner = { userId: annUser.id, orgId: annUser.primaryOrgId! } as TestUser;
    const key = await insertKey(t, owner, { role: 'commenter', scopeWorkspaceId: workspace.id, agentName: 'Robot' });
    robot = (await actorFromBearer(t.services, (key.as as { bearer: string }).bearer))!;
    for (const title of ['Write the announcement', 'Record the demo video', 'Book the launch call']) {
      const created = await rest('POST', '/rows', { data: { title } });
      expect(created.status, created.text).toBe(200);
      rows[title] = created.body.id;
    }
    path = `/${workspace.org.slug}/${workspace.slug}`;
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await cid?.close();
    await browser?.close();
    await t?.close();
  });

  it("shows an agent's suggestions live: old value struck beside the new one, a ghost row, a struck row, with its name", async () => {
    for (const person of [ann, cid]) {
      await person.page.goto(person.origin + path);
      await person.page.waitForSelector('.grid-row');
    }
    await suggestRowUpdate(t.services, robot, await asRobot(), rows['Write the announcement']!, { title: 'Write the launch post' });
    await suggestRowCreate(t.services, robot, await asRobot(), {}, { title: 'Draft the FAQ' });
    await suggestRowDelete(t.services, robot, await asRobot(), rows['Book the launch call']!);

    for (const person of [ann, cid]) {
      const changed = row(person, rows['Write the announcement']!);
      await expect.poll(() => changed.locator('[data-key="title"] .suggested-old').textContent()).toBe('Write the announcement');
      expect(await changed.locator('[data-key="title"] .suggested-new').textContent()).toBe('Write the launch post');
      expect(await changed.locator('.suggestion-author').textContent()).toContain('Robot');
      await expect.poll(() => person.page.locator('.grid-row.is-suggested-create [data-key="title"]').textContent()).toBe('Draft the FAQ');
      expect(await row(person, rows['Book the launch call']!).getAttribute('class')).toContain('is-suggested-delete');
    }
    // Deciding is for editors: the commenter sees the suggestions, not the buttons.
    expect(await ann.page.getByRole('button', { name: 'Accept the suggestion of Robot' }).count()).toBe(3);
    expect(await cid.page.getByRole('button', { name: 'Accept the suggestion of Robot' }).count()).toBe(0);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-suggestions.png` });
  });

  it('accepts a suggested value with one click: the row changes for everyone and over REST', async () => {
    const rowId = rows['Write the announcement']!;
    await row(ann, rowId).getByRole('button', { name: 'Accept the suggestion of Robot' }).click();
    for (const person of [ann, cid]) {
      await expect.poll(() => row(person, rowId).locator('[data-key="title"] .cell-content').textContent()).toBe('Write the launch post');
      expect(await row(person, rowId).locator('.suggested-old').count()).toBe(0);
    }
    expect((await rest('GET', `/rows/${rowId}`)).body.data.title).toBe('Write the launch post');
  });

  it('accepts a suggested row and rejects a suggested delete', async () => {
    await ann.page.locator('.grid-row.is-suggested-create').getByRole('button', { name: 'Accept the suggestion of Robot' }).click();
    await expect.poll(() => ann.page.locator('.grid-row.is-suggested-create').count()).toBe(0);
    await expect.poll(async () => (await rest('GET', '/rows')).body.rows.map((r: { data: { title: string } }) => r.data.title)).toContain('Draft the FAQ');

    const doomed = rows['Book the launch call']!;
    await row(ann, doomed).getByRole('button', { name: 'Reject the suggestion of Robot' }).click();
    await expect.poll(() => row(ann, doomed).getAttribute('class')).not.toContain('is-suggested-delete');
    expect((await rest('GET', `/rows/${doomed}`)).status).toBe(200);
  });
});
