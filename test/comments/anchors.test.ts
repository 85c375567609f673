import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docSchema } from '../../src/model/doc/schema';
import { rangeText } from '../../src/sync/doc-anchors';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { addComment, expectStatus, rangeOf } from './helpers';

/**
 * Anchors that survive editing, end to end: a doc-range comment follows a
 * sync client's typing and reports drift once its words change; a cell
 * comment follows its column through a key rename.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
const clients: SyncClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

async function bodyText(slug: string, anchor: { from: number; to: number }) {
  const content = (await expectStatus(t.request('GET', `/api/workspaces/${slug}/doc`, { as: ada.as }), 200)).body.content;
  return rangeText(docSchema.nodeFromJSON(content), anchor.from, anchor.to);
}

describe('a doc_range comment', () => {
  it('still points at the same words after a sync client types before them, and reports drift once they change', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Launch', slug: 'launch', mode: 'doc', initialMarkdown: 'Intro paragraph.\n\nThe launch date is Friday the 13th.' });
    const content = (await t.request('GET', '/api/workspaces/launch/doc', { as: ada.as })).body.content;
    const range = rangeOf(content, 'Friday');
    const comment = await addComment(t, ada.as, 'launch', {
      target: { type: 'doc_range', surfaceSlug: ws.primarySurface.slug, anchor: { ...range, text: 'Friday' } },
      body: 'Which Friday?',
    });
    expect(comment.anchor).toEqual({ ...range, text: 'Friday' });

    const client = connectClient(t.url, ws.primarySurface.syncDocument, { cookie: ada.cookie });
    clients.push(client);
    await synced(client);
    paragraphText(client.doc, 0).insert(0, 'Urgent: ');
    paragraphText(client.doc, 1).insert(0, 'Note that ');
    await acknowledged(client);

    const moved = await expectStatus(t.request('GET', `/api/comments/${comment.id}`, { as: ada.as }), 200);
    const shift = 'Urgent: '.length + 'Note that '.length;
    expect(moved.body.anchor).toEqual({ from: range.from + shift, to: range.to + shift, text: 'Friday' });
    expect(moved.body.target.anchor).toEqual(moved.body.anchor);
    expect(moved.body).not.toHaveProperty('currentText');
    expect(await bodyText('launch', moved.body.anchor)).toBe('Friday');

    // A REST write that adds a block before it moves it too (unchanged blocks are not rewritten).
    await expectStatus(
      t.request('PUT', '/api/workspaces/launch/doc', { as: ada.as, body: { markdown: '# Title\n\nUrgent: Intro paragraph.\n\nNote that The launch date is Friday the 13th.' } }),
      200,
    );
    const afterPut = (await t.request('GET', `/api/comments/${comment.id}`, { as: ada.as })).body;
    expect(await bodyText('launch', afterPut.anchor)).toBe('Friday');
    expect(afterPut).not.toHaveProperty('currentText');

    // The words under the anchor change: the read carries what is there now and what was expected.
    const text = paragraphText(client.doc, 2);
    const at = text.toString().indexOf('Friday');
    client.doc.transact(() => {
      text.delete(at, 6);
      text.insert(at, 'Monday');
    });
    await acknowledged(client);
    const drifted = await expectStatus(t.request('GET', `/api/comments/${comment.id}`, { as: ada.as }), 200);
    expect(drifted.body).toMatchObject({ currentText: 'Monday', expectedText: 'Friday', anchor: { text: 'Friday' } });
    expect(await bodyText('launch', drifted.body.anchor)).toBe('Monday');
    const listed = (await t.request('GET', '/api/workspaces/launch/comments?target_type=doc_range', { as: ada.as })).body.comments;
    expect(listed).toEqual([expect.objectContaining({ id: comment.id, currentText: 'Monday', expectedText: 'Friday' })]);
  });

  it('collapses to where its paragraph was when the paragraph is deleted', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Gone', slug: 'gone', mode: 'doc', initialMarkdown: 'Keep this.\n\nDelete this paragraph.\n\nKeep that.' });
    const content = (await t.request('GET', '/api/workspaces/gone/doc', { as: ada.as })).body.content;
    const comment = await addComment(t, ada.as, 'gone', {
      target: { type: 'doc_range', surfaceSlug: 'doc', anchor: { ...rangeOf(content, 'Delete this'), text: 'Delete this' } },
      body: 'Really?',
    });
    await expectStatus(t.request('PUT', '/api/workspaces/gone/doc', { as: ada.as, body: { markdown: 'Keep this.\n\nKeep that.' } }), 200);
    const read = (await t.request('GET', `/api/comments/${comment.id}`, { as: ada.as })).body;
    expect(read).toMatchObject({ currentText: '', expectedText: 'Delete this' });
    expect(read.anchor.from).toBe(read.anchor.to);
    expect(ws.primarySurface.slug).toBe('doc');
  });
});

describe('a cell comment', () => {
  it('keeps resolving after its column key is renamed through PUT /columns, and replies use the new key', async () => {
    await createWorkspace(t, ada, { name: 'Cells', slug: 'cells' });
    const row = (await expectStatus(t.request('POST', '/api/workspaces/cells/rows', { as: ada.as, body: { data: { title: 'A', status: 'todo' } } }), 200)).body;
    const comment = await addComment(t, ada.as, 'cells', { target: { type: 'cell', rowId: row.id, columnKey: 'status' }, body: 'Status?' });
    const columnId = comment.target.columnId;
    expect(columnId).toEqual(expect.any(String));

    const columns = (await t.request('GET', '/api/workspaces/cells/columns', { as: ada.as })).body.columns;
    const renamed = columns.map((c: { key: string }) => (c.key === 'status' ? { ...c, key: 'state', label: 'State' } : c));
    await expectStatus(t.request('PUT', '/api/workspaces/cells/columns', { as: ada.as, body: { columns: renamed } }), 200);
    expect((await t.request('GET', `/api/workspaces/cells/rows/${row.id}`, { as: ada.as })).body.data).toMatchObject({ state: 'todo' });

    const read = await expectStatus(t.request('GET', `/api/comments/${comment.id}`, { as: ada.as }), 200);
    expect(read.body.target).toEqual({ type: 'cell', rowId: row.id, columnKey: 'state', columnId });
    const reply = await addComment(t, ada.as, 'cells', { target: { type: 'cell', rowId: row.id, columnKey: 'state' }, body: 'Renamed', parentId: comment.id });
    expect(reply.target.columnKey).toBe('state');
    const stale = await t.request('POST', '/api/workspaces/cells/comments', {
      as: ada.as,
      body: { target: { type: 'cell', rowId: row.id, columnKey: 'status' }, body: 'old key', parentId: comment.id },
    });
    expect(stale.status).toBe(400);
    const listed = (await t.request('GET', `/api/workspaces/cells/comments?target_type=cell&target_id=${row.id}`, { as: ada.as })).body.comments;
    expect(listed.map((c: { target: { columnKey: string } }) => c.target.columnKey)).toEqual(['state', 'state']);
    // A new thread on the old key finds no such column any more.
    expect((await t.request('POST', '/api/workspaces/cells/comments', { as: ada.as, body: { target: { type: 'cell', rowId: row.id, columnKey: 'status' }, body: 'x' } })).status).toBe(404);
  });
});
