import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { createView, getView, listViews, updateView } from '../../src/model/table/views';
import { startTestApp, type TestResponse } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Saved views live in the table document (issue 24 item 2): REST and sync
 * clients see each other's views, two clients see each other's edits live,
 * and a client's edit made offline reaches the server when it reconnects.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
let surfaceId: string;
let docName: string;
const base = '/api/workspaces/synced-views';
const clients: SyncClient[] = [];

function ok(res: TestResponse) {
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function connected(): Promise<SyncClient> {
  const client = connectClient(t.url, docName, { cookie: ada.cookie });
  clients.push(client);
  await synced(client);
  return client;
}

async function restViews() {
  return ok(await t.request('GET', `${base}/views`, { as: ada.as })).views as Array<{ id: string; name: string }>;
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  const workspace = await createWorkspace(t, ada, { name: 'Synced views', slug: 'synced-views', mode: 'table' });
  workspaceId = workspace.id;
  surfaceId = ok(await t.request('GET', base, { as: ada.as })).primarySurface.id;
  docName = tablesDocumentName(workspaceId);
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

describe('saved views over sync', () => {
  it('shows a view created over REST in a connected client’s document', async () => {
    const client = await connected();
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'From REST', kind: 'board', groupBy: 'status', hiddenColumns: ['notes'] } }));
    const seen = await eventually(() => getView(client.doc, view.id));
    expect(seen).toEqual(view);
    expect(listViews(client.doc, surfaceId).map((v) => v.id)).toContain(view.id);
  });

  it('shows a view a sync client created over REST, with its view.created event attributed to the client’s user', async () => {
    const client = await connected();
    const made = createView(client.doc, surfaceId, { name: 'From sync', sort: [{ column: 'title', direction: 'desc' }], rowHeight: 'tall' }, null);
    await acknowledged(client);
    const listed = await eventually(async () => (await restViews()).find((v) => v.id === made.id));
    expect(listed).toEqual(made);
    // A sync client's change becomes events in the commit that follows its append to the log.
    const event = await eventually(async () =>
      (ok(await t.request('GET', `${base}/events?action=view.created`, { as: ada.as })).events as Array<{ data: { id: string } }>).find((e) => e.data.id === made.id),
    );
    expect(event).toMatchObject({ event: 'view.created', principal: { id: ada.userId }, data: { id: made.id, view: made } });
  });

  it('lets two clients see each other’s edits to one view live, keeping both when they change different fields', async () => {
    const a = await connected();
    const b = await connected();
    const made = createView(a.doc, surfaceId, { name: 'Shared' }, null);
    await eventually(() => getView(b.doc, made.id));
    updateView(b.doc, made.id, { name: 'Renamed by b' }, null);
    await eventually(() => getView(a.doc, made.id)?.name === 'Renamed by b');
    // Both change a different field before either hears of the other's change.
    updateView(a.doc, made.id, { hiddenColumns: ['notes'] }, null);
    updateView(b.doc, made.id, { rowHeight: 'extra' }, null);
    await Promise.all([acknowledged(a), acknowledged(b)]);
    const merged = { ...made, name: 'Renamed by b', hiddenColumns: ['notes'], rowHeight: 'extra' };
    await eventually(() => JSON.stringify(getView(a.doc, made.id)) === JSON.stringify(merged) && JSON.stringify(getView(b.doc, made.id)) === JSON.stringify(merged));
    expect((await restViews()).find((v) => v.id === made.id)).toEqual(merged);
  });

  it('takes an edit made offline to the server when the client reconnects', async () => {
    const client = await connected();
    const watcher = await connected();
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Before the trip' } }));
    await eventually(() => getView(client.doc, view.id));
    client.socket.disconnect();
    await eventually(() => client.provider.isSynced === false || client.socket.status === 'disconnected');
    updateView(client.doc, view.id, { name: 'Edited on the train', columnOrder: ['status', 'title'] }, null);
    const offline = createView(client.doc, surfaceId, { name: 'Made offline' }, null);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Nothing reached the server while offline.
    expect((await restViews()).find((v) => v.id === view.id)?.name).toBe('Before the trip');
    expect((await restViews()).map((v) => v.id)).not.toContain(offline.id);

    await client.socket.connect();
    await synced(client);
    await acknowledged(client);
    const after = await eventually(async () => {
      const views = await restViews();
      const edited = views.find((v) => v.id === view.id);
      return edited?.name === 'Edited on the train' && views.some((v) => v.id === offline.id) ? views : null;
    });
    expect(after.find((v) => v.id === view.id)).toEqual({ ...view, name: 'Edited on the train', columnOrder: ['status', 'title'] });
    // ...and other clients.
    await eventually(() => getView(watcher.doc, offline.id) && getView(watcher.doc, view.id)?.name === 'Edited on the train');
  });

  it('shows a view deleted over REST as gone in a client, and one a client deletes as gone over REST', async () => {
    const client = await connected();
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Doomed' } }));
    await eventually(() => getView(client.doc, view.id));
    ok(await t.request('DELETE', `${base}/views/${view.id}`, { as: ada.as }));
    await eventually(() => getView(client.doc, view.id) === null);

    const mine = createView(client.doc, surfaceId, { name: 'Mine, briefly' }, null);
    await acknowledged(client);
    await eventually(async () => (await restViews()).some((v) => v.id === mine.id));
    client.doc.getMap('views').delete(mine.id);
    await acknowledged(client);
    await eventually(async () => !(await restViews()).some((v) => v.id === mine.id));
    await eventually(async () => {
      const deleted = ok(await t.request('GET', `${base}/events?action=view.deleted`, { as: ada.as })).events as Array<{ data: { id: string } }>;
      const ids = deleted.map((e) => e.data.id);
      return ids.includes(view.id) && ids.includes(mine.id);
    });
  });
});
