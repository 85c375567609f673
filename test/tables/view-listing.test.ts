import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { createView, updateView } from '../../src/model/table/views';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';

/**
 * `GET /rows?view=<id>` and `POST /rows/query { view }` apply a saved view
 * that a sync client wrote into the table document: its sheet, filter and
 * sort, with the request's own filter narrowing it and its sort replacing it.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string; orgSlug: string };
let client: SyncClient;
let surfaceId: string;
let otherSurfaceId: string;
const base = '/api/workspaces/welcome';
const as = () => ({ as: { cookie: owner.cookie } });
const titles = (res: { body: { rows: Array<{ data: { title: string } }> } }) => res.body.rows.map((row) => row.data.title);

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'view-listing@example.com');
  const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  for (const [title, status] of [['Plan', 'todo'], ['Build', 'doing'], ['Ship', 'done'], ['Announce', 'todo'], ['Review', 'doing']]) {
    const created = await t.request('POST', `${base}/rows`, { body: { data: { title, status } }, ...as() });
    expect(created.status).toBe(200);
    surfaceId = created.body.surfaceId;
  }
  const sheet = await t.request('POST', `${base}/surfaces`, { body: { kind: 'table', name: 'Bugs', slug: 'bugs' }, ...as() });
  expect(sheet.status, sheet.text).toBe(200);
  otherSurfaceId = sheet.body.id;
  expect((await t.request('POST', `${base}/rows?surface=bugs`, { body: { data: { title: 'Crash on save' } }, ...as() })).status).toBe(200);
  client = connectClient(t.url, tablesDocumentName(ws.id), { cookie: owner.cookie });
  await synced(client);
});
afterAll(async () => {
  client?.destroy();
  await t.close();
  await t.store.dispose();
});

describe('listing rows through a saved view', () => {
  it('applies the filter and sort of a view a sync client saved, and follows its edits', async () => {
    const view = createView(
      client.doc,
      surfaceId,
      { name: 'Open work', filter: { and: [{ column: 'status', op: 'in', value: ['todo', 'doing'] }] }, sort: [{ column: 'title', direction: 'asc' }] },
      'test',
    );
    await acknowledged(client);
    const listed = await t.request('GET', `${base}/rows?view=${view.id}`, as());
    expect(listed.status, listed.text).toBe(200);
    expect(titles(listed)).toEqual(['Announce', 'Build', 'Plan', 'Review']);

    // The request's filter narrows the view's; its sort replaces the view's.
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}&filter[status][eq]=doing&sort=-title`, as()))).toEqual(['Review', 'Build']);
    const posted = await t.request('POST', `${base}/rows/query`, { body: { view: view.id, filter: { or: [{ column: 'title', op: 'starts', value: 'p' }] } }, ...as() });
    expect(titles(posted)).toEqual(['Plan']);

    updateView(client.doc, view.id, { filter: { and: [{ column: 'status', op: 'eq', value: 'done' }] } }, 'test');
    await acknowledged(client);
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}`, as()))).toEqual(['Ship']);
  });

  it('lists the view’s own sheet; naming another sheet is 400, an unknown view 404', async () => {
    const view = createView(client.doc, otherSurfaceId, { name: 'All bugs' }, 'test');
    await acknowledged(client);
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}`, as()))).toEqual(['Crash on save']);
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}&surface=bugs`, as()))).toEqual(['Crash on save']);
    const conflicting = await t.request('GET', `${base}/rows?view=${view.id}&surfaceId=${surfaceId}`, as());
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.error.details[0]).toMatchObject({ path: ['view'], code: 'conflicting_surface' });
    const unknown = await t.request('GET', `${base}/rows?view=nope`, as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });

  it('exports a view as CSV: its rows in its order, its visible columns in its column order', async () => {
    const view = createView(
      client.doc,
      surfaceId,
      {
        name: 'Export',
        filter: { and: [{ column: 'status', op: 'eq', value: 'todo' }] },
        sort: [{ column: 'title', direction: 'desc' }],
        columnOrder: ['status', 'title'],
        hiddenColumns: ['notes'],
      },
      'test',
    );
    await acknowledged(client);
    const csv = await t.request('GET', `${base}/rows.csv?view=${view.id}`, as());
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n').map((line: string) => line.split(',').slice(1).join(','));
    expect(lines).toEqual(['status,title', 'todo,Plan', 'todo,Announce']);
    const filtered = await t.request('GET', `${base}/rows?view=${view.id}&format=csv&filter[title][starts]=a`, as());
    expect(filtered.text.trim().split('\r\n')).toHaveLength(2);
  });

  it('a condition on a column deleted since the view was saved no longer applies', async () => {
    const added = await t.request('POST', `${base}/columns`, { body: { column: { key: 'priority', label: 'Priority', type: 'number' } }, ...as() });
    expect(added.status).toBe(200);
    const view = createView(
      client.doc,
      surfaceId,
      { name: 'Urgent todo', filter: { and: [{ column: 'status', op: 'eq', value: 'todo' }, { column: 'priority', op: 'gt', value: 3 }] } },
      'test',
    );
    await acknowledged(client);
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}`, as()))).toEqual([]);
    const columns = (await t.request('GET', `${base}/columns`, as())).body.columns.filter((column: { key: string }) => column.key !== 'priority');
    expect((await t.request('PUT', `${base}/columns`, { body: { columns }, ...as() })).status).toBe(200);
    expect(titles(await t.request('GET', `${base}/rows?view=${view.id}`, as()))).toEqual(['Plan', 'Announce']);
  });
});
