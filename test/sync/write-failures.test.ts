import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { getRow, listRows } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { readLoggedUpdates } from '../../src/persistence/document-log';

/**
 * One bad write never breaks a document (issue 8): a server change reaches
 * clients only once it is committed, a failed commit leaves nothing behind
 * on any client and closes no connection, and a sync client's change whose
 * derived data cannot be written leaves the others syncing.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: TestUser;
let tables: { slug: string; docName: string; surfaceId: string };

beforeAll(async () => {
  t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '100000' } });
  owner = await signInUser(t, 'owner@example.com');
  const workspace = await createWorkspace(t, owner, { name: 'Failures', slug: 'failures' });
  const surfaces = (await t.request('GET', '/api/workspaces/failures/surfaces', { as: owner.as })).body.surfaces;
  tables = { slug: 'failures', docName: surfaces[0].syncDocument, surfaceId: surfaces[0].id };
  expect(workspace.slug).toBe('failures');
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

function watchClose(client: SyncClient) {
  const state = { closed: false };
  void client.closed.then(() => (state.closed = true));
  return state;
}

async function projectedIds(): Promise<string[]> {
  const rows = await t.services.db
    .selectFrom('tableRows')
    .innerJoin('workspaces', 'workspaces.id', 'tableRows.workspaceId')
    .select('tableRows.id')
    .where('workspaces.slug', '=', tables.slug)
    .execute();
  return rows.map((r) => r.id).sort();
}

function rowIdsOf(doc: Y.Doc): string[] {
  return listRows(doc, { surfaceId: tables.surfaceId })
    .rows.map((r) => r.id)
    .sort();
}

describe('a REST write whose commit fails', () => {
  it('answers an error with the request id, closes no connection, and no client ever sees the change', async () => {
    const a = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    const b = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await Promise.all([synced(a), synced(b)]);
    const aState = watchClose(a);
    const bState = watchClose(b);
    const seen = new Set<string>();
    for (const client of [a, b]) {
      client.doc.on('update', () => {
        for (const id of rowIdsOf(client.doc)) seen.add(id);
      });
    }

    const before = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'kept' } } });
    expect(before.status).toBe(200);
    await eventually(() => getRow(a.doc, before.body.id) && getRow(b.doc, before.body.id));

    t.services.failpoints.arm('document.commit');
    const failed = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'never stored' } } });
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('internal');
    expect(failed.body.requestId).toBe(failed.headers.get('x-request-id'));
    expect(failed.text).not.toMatch(/failpoint|stack|at \//);

    const after = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'after the failure' } } });
    expect(after.status).toBe(200);
    await eventually(() => getRow(a.doc, after.body.id) && getRow(b.doc, after.body.id));

    // Neither client ever held a row titled "never stored", and both stayed connected.
    const titles = (doc: Y.Doc) => listRows(doc).rows.map((r) => r.data.title);
    expect(titles(a.doc)).not.toContain('never stored');
    expect(titles(b.doc)).not.toContain('never stored');
    for (const id of seen) expect([...rowIdsOf(a.doc)]).toContain(id);
    expect(aState.closed || bState.closed).toBe(false);

    // The server's document, its REST view and its projection all agree with the clients.
    const listed = await t.request('GET', `/api/workspaces/${tables.slug}/rows`, { as: owner.as });
    expect(listed.body.rows.map((r: { id: string }) => r.id).sort()).toEqual(rowIdsOf(a.doc));
    expect(rowIdsOf(b.doc)).toEqual(rowIdsOf(a.doc));
    expect(await projectedIds()).toEqual(rowIdsOf(a.doc));

    // A client edit after the failure still reaches the other client and the server.
    a.doc.transact(() => {
      const row = a.doc.getMap('rows').get(after.body.id) as Y.Map<unknown>;
      row.set('title', 'edited by a');
    });
    await acknowledged(a);
    await eventually(() => getRow(b.doc, after.body.id)?.data.title === 'edited by a');
    const read = await t.request('GET', `/api/workspaces/${tables.slug}/rows/${after.body.id}`, { as: owner.as });
    expect(read.body.data.title).toBe('edited by a');
    a.destroy();
    b.destroy();
  });

  it('fails the writes in flight behind it, keeps the document equal to its log, and recovers for the next write', async () => {
    const watcher = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await synced(watcher);
    const closeState = watchClose(watcher);
    // Twice: concurrent writes share one commit, and a failed batch is retried change by change; the first of those fails too.
    t.services.failpoints.arm('document.commit', 'error', 2);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: `burst ${i}` } } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses).toContain(500);
    for (const status of statuses) expect([200, 500]).toContain(status);
    const stored = results.filter((r) => r.status === 200).map((r) => r.body.id as string);

    const next = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'next' } } });
    expect(next.status).toBe(200);
    await eventually(() => getRow(watcher.doc, next.body.id));
    for (const id of stored) expect(getRow(watcher.doc, id)).not.toBeNull();
    const titles = listRows(watcher.doc).rows.map((r) => String(r.data.title));
    const failedTitles = results.map((r, i) => (r.status === 500 ? `burst ${i}` : null)).filter(Boolean);
    for (const title of failedTitles) expect(titles).not.toContain(title);
    expect(closeState.closed).toBe(false);

    // The log alone rebuilds exactly what the clients hold.
    const fromLog = new Y.Doc();
    const log = await readLoggedUpdates(t.services.db, tables.docName);
    const snapshot = await t.services.db.selectFrom('documentSnapshots').select('state').where('document', '=', tables.docName).executeTakeFirst();
    if (snapshot) Y.applyUpdateV2(fromLog, snapshot.state);
    for (const { update } of log) Y.applyUpdate(fromLog, update);
    expect(rowIdsOf(fromLog)).toEqual(rowIdsOf(watcher.doc));
    expect(await projectedIds()).toEqual(rowIdsOf(watcher.doc));
    watcher.destroy();
  });
});

describe('a sync client editing while its document is rebuilt after a failed commit', () => {
  it('loses no edit: after the rebuild the server, REST, another client and the log all hold it', async () => {
    const created = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'before the rebuild' } } });
    expect(created.status).toBe(200);
    const editor = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await synced(editor);
    await eventually(() => getRow(editor.doc, created.body.id));
    const logged = async () => (await readLoggedUpdates(t.services.db, tables.docName)).length;

    // A REST write fails to commit: the document is rebuilt from its log, held once it read the log.
    t.services.failpoints.arm('document.commit');
    const release = t.services.failpoints.hold('document.recovery');
    let failed: Promise<{ status: number }> | undefined;
    try {
      failed = t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'never stored' } } });
      await t.services.failpoints.reached('document.recovery');
      // The client edits meanwhile: the rebuild already read the log, so the edit must not reach the state it replaces.
      const logBefore = await logged();
      editor.doc.transact(() => (editor.doc.getMap('rows').get(created.body.id) as Y.Map<unknown>).set('title', 'edited during the rebuild'));
      // Give the edit its chance to be logged and applied before the rebuild goes on (it may wait, as it should).
      await eventually(async () => (await logged()) > logBefore, 2_000).catch(() => {});
    } finally {
      release();
    }
    expect((await failed!).status).toBe(500);
    await acknowledged(editor);

    const read = await t.request('GET', `/api/workspaces/${tables.slug}/rows/${created.body.id}`, { as: owner.as });
    expect(read.body.data.title).toBe('edited during the rebuild');
    const other = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await synced(other);
    expect(getRow(other.doc, created.body.id)?.data.title).toBe('edited during the rebuild');
    expect(listRows(other.doc).rows.map((r) => r.data.title)).not.toContain('never stored');

    // A later edit from the other client reaches the editor: the rebuilt document is the one both sync with.
    other.doc.transact(() => (other.doc.getMap('rows').get(created.body.id) as Y.Map<unknown>).set('status', 'after'));
    await acknowledged(other);
    await eventually(() => getRow(editor.doc, created.body.id)?.data.status === 'after');

    // The log alone (what a restarted server loads) holds the edit.
    const fromLog = new Y.Doc();
    const log = await readLoggedUpdates(t.services.db, tables.docName);
    const snapshot = await t.services.db.selectFrom('documentSnapshots').select('state').where('document', '=', tables.docName).executeTakeFirst();
    if (snapshot) Y.applyUpdateV2(fromLog, snapshot.state);
    for (const { update } of log) Y.applyUpdate(fromLog, update);
    expect(getRow(fromLog, created.body.id)?.data.title).toBe('edited during the rebuild');
    editor.destroy();
    other.destroy();
  });
});

describe("a sync client's change whose events and projections cannot be written", () => {
  it('stays applied and logged, the others keep syncing, and its events and projection are derived again', async () => {
    const writer = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    const other = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await Promise.all([synced(writer), synced(other)]);
    const writerState = watchClose(writer);
    const otherState = watchClose(other);

    t.services.failpoints.arm('document.derived.commit', 'error', 1);
    const rows = writer.doc.getMap('rows');
    const order = (writer.doc.getMap('sheets').get(tables.surfaceId) as Y.Map<Y.Array<string>>).get('order')!;
    writer.doc.transact(() => {
      const row = new Y.Map<unknown>();
      row.set('title', 'typed while the database refused its events');
      rows.set('client-row-1', row);
      order.push(['client-row-1']);
    });
    await acknowledged(writer);
    await eventually(() => getRow(other.doc, 'client-row-1'));

    // Later edits from either side still flow.
    writer.doc.transact(() => (rows.get('client-row-1') as Y.Map<unknown>).set('notes', 'second edit'));
    await acknowledged(writer);
    await eventually(() => getRow(other.doc, 'client-row-1')?.data.notes === 'second edit');
    const rest = await t.request('POST', `/api/workspaces/${tables.slug}/rows`, { as: owner.as, body: { data: { title: 'rest after' } } });
    expect(rest.status).toBe(200);
    await eventually(() => getRow(writer.doc, rest.body.id) && getRow(other.doc, rest.body.id));

    const read = await t.request('GET', `/api/workspaces/${tables.slug}/rows/client-row-1`, { as: owner.as });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ title: 'typed while the database refused its events', notes: 'second edit' });
    await eventually(async () => JSON.stringify(await projectedIds()) === JSON.stringify(rowIdsOf(other.doc)));
    // Its events were derived again from the log: recorded once, attributed to the client.
    const created = await eventually(async () => {
      const rows = await t.services.db.selectFrom('events').select(['principalId']).where('subjectId', '=', 'client-row-1').where('event', '=', 'row.created').execute();
      return rows.length > 0 ? rows : null;
    });
    expect(created).toEqual([{ principalId: owner.userId }]);
    expect(writerState.closed || otherState.closed).toBe(false);
    writer.destroy();
    other.destroy();
  });

  it('stores text Postgres refuses (U+0000) with U+FFFD in the projection, and events still flow', async () => {
    const writer = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    const other = connectClient(t.url, tables.docName, { cookie: owner.cookie });
    await Promise.all([synced(writer), synced(other)]);
    const rows = writer.doc.getMap('rows');
    const order = (writer.doc.getMap('sheets').get(tables.surfaceId) as Y.Map<Y.Array<string>>).get('order')!;
    writer.doc.transact(() => {
      const row = new Y.Map<unknown>();
      row.set('title', 'nul\u0000inside');
      row.set('key\u0000with-nul', 'value');
      rows.set('nul-row', row);
      order.push(['nul-row']);
    });
    await acknowledged(writer);
    await eventually(() => getRow(other.doc, 'nul-row'));
    const projected = await eventually(() =>
      t.services.db.selectFrom('tableRows').select('data').where('id', '=', 'nul-row').executeTakeFirst(),
    );
    expect(projected.data).toMatchObject({ title: 'nul\uFFFDinside', 'key\uFFFDwith-nul': 'value' });
    await eventually(() =>
      t.services.db.selectFrom('events').select('seq').where('subjectId', '=', 'nul-row').where('event', '=', 'row.created').executeTakeFirst(),
    );
    // A later REST write to the same document still commits and reaches both clients.
    const rest = await t.request('PATCH', `/api/workspaces/${tables.slug}/rows/nul-row`, { as: owner.as, body: { data: { status: 'done' } } });
    expect(rest.status).toBe(200);
    await eventually(() => getRow(other.doc, 'nul-row')?.data.status === 'done');
    writer.destroy();
    other.destroy();
  });
});

describe('text inside sync updates', () => {
  it('turns a lone surrogate in a formatting attribute into U+FFFD before it is applied, logged or relayed', async () => {
    await t.request('POST', `/api/workspaces/${tables.slug}/surfaces`, { as: owner.as, body: { kind: 'doc', slug: 'notes', name: 'Notes' } });
    const surfaces = (await t.request('GET', `/api/workspaces/${tables.slug}/surfaces`, { as: owner.as })).body.surfaces;
    const notes = surfaces.find((s: { slug: string }) => s.slug === 'notes');
    const writer = connectClient(t.url, notes.syncDocument, { cookie: owner.cookie });
    const reader = connectClient(t.url, notes.syncDocument, { cookie: owner.cookie });
    await Promise.all([synced(writer), synced(reader)]);

    writer.doc.transact(() => {
      const paragraph = new Y.XmlElement('paragraph');
      const text = new Y.XmlText();
      paragraph.insert(0, [text]);
      writer.doc.getXmlFragment('default').insert(0, [paragraph]);
      text.insert(0, 'a link\ud800 here', { link: { href: 'https://example.com/\ud800' } });
    });
    await acknowledged(writer);

    const doc = await eventually(async () => {
      const res = await t.request('GET', `/api/workspaces/${tables.slug}/doc?surface=notes`, { as: owner.as });
      return res.body?.content?.content?.length ? res : null;
    });
    expect(doc.text.includes('\\ud800')).toBe(false);
    expect(JSON.stringify(doc.body)).toContain('https://example.com/\uFFFD');
    const logged = await readLoggedUpdates(t.services.db, notes.syncDocument);
    const fromLog = new Y.Doc();
    for (const { update } of logged) Y.applyUpdate(fromLog, update);
    const delta = (fromLog.getXmlFragment('default').get(0) as Y.XmlElement).get(0) as Y.XmlText;
    expect(JSON.stringify(delta.toDelta())).toContain('https://example.com/\uFFFD');
    await eventually(() => JSON.stringify(((reader.doc.getXmlFragment('default').get(0) as Y.XmlElement)?.get(0) as Y.XmlText)?.toDelta() ?? '').includes('\uFFFD'));
    writer.destroy();
    reader.destroy();
  });
});
