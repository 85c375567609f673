import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setStorageQuota, storageUsage } from '../../src/domain/storage';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow } from '../../src/model/table/document';
import { ManualClock, startTestApp, type TestResponse } from '../helpers/app';
import { acknowledged, connectClient, synced } from '../helpers/sync';
import { png, postMultipart, proxyUpload } from '../files/helpers';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { updateRowCells } from '../../src/model/table/document';

/**
 * Attachment cells and gallery views over HTTP and sync (issue 37 item 2,
 * docs/TABLES.md "Attachments" and "Gallery"): a file uploaded into a cell
 * in one step, or uploaded first and named as `[{ fileId }]`; the cell
 * reads as the files' records; a file of another workspace is refused; a
 * file two rows hold stays when one of them is deleted, and goes to the
 * trash a day after the last one is; it counts against the quota once.
 */

const DAY = 86_400_000;
const clock = new ManualClock();
let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
const base = '/api/workspaces/shop';

function ok(res: TestResponse | { status: number; body: any; text: string }, status = 200) {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

const text = (body: string) => new TextEncoder().encode(body);

beforeAll(async () => {
  t = await startTestApp({ clock });
  ada = await signInUser(t, 'ada@attach.test');
  workspaceId = (await createWorkspace(t, ada, { name: 'Shop', slug: 'shop' })).id;
  ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'photos', label: 'Photos', type: 'attachment' } } }));
  ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'link', label: 'Link', type: 'url' } } }));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('attachment cells', () => {
  it('uploads a file into a cell in one step, into a files surface made for it, and reads it as the file’s record', async () => {
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Chair' } } }));
    const image = await png(64, 48);
    const uploaded = ok(await postMultipart(t, `${base}/rows/${row.id}/attachments/photos`, [{ name: 'file', bytes: image, filename: 'chair.png', type: 'image/png' }], ada.as));
    expect(uploaded.id).toBe(row.id);
    expect(uploaded.data.photos).toEqual([
      {
        fileId: expect.stringMatching(/^fil_/),
        name: 'chair.png',
        contentType: 'image/png',
        size: expect.any(Number),
        url: expect.stringContaining(`/api/workspaces/${workspaceId}/files/`),
        thumbnailUrl: expect.stringContaining('/thumb?v='),
      },
    ]);
    const [photo] = uploaded.data.photos;
    // The file is in the workspace's file store, which the upload made, and its thumbnail is served.
    const surfaces = ok(await t.request('GET', `${base}/surfaces`, { as: ada.as })).surfaces;
    expect(surfaces).toContainEqual(expect.objectContaining({ kind: 'files', name: 'Files' }));
    expect(ok(await t.request('GET', `${base}/files/${photo.fileId}`, { as: ada.as }))).toMatchObject({ name: 'chair.png', contentType: 'image/png' });
    const thumb = await fetch(photo.thumbnailUrl.replace(/^https?:\/\/[^/]+/, t.url), { headers: { cookie: `svc-session=${ada.cookie}` } });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    // GET and the listing read it alike; the document holds the id.
    expect(ok(await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).data.photos).toEqual([photo]);
    expect(ok(await t.request('GET', `${base}/rows`, { as: ada.as })).rows.find((r: { id: string }) => r.id === row.id).data.photos).toEqual([photo]);
    const stored = await t.services.sync.read(tablesDocumentName(workspaceId), (doc) => getRow(doc, row.id)!.data.photos);
    expect(stored).toEqual([photo.fileId]);
    // A second upload goes after the first.
    const again = ok(await postMultipart(t, `${base}/rows/${row.id}/attachments/photos`, [{ name: 'file', bytes: text('specs'), filename: 'specs.txt', type: 'text/plain' }], ada.as));
    expect(again.data.photos.map((file: { name: string }) => file.name)).toEqual(['chair.png', 'specs.txt']);
    expect(again.data.photos[1]).not.toHaveProperty('thumbnailUrl');
  });

  it('writes files uploaded first as `[{ fileId }]`, and reads them back the same', async () => {
    const file = ok(await proxyUpload(t, `${base}/files`, ada.as, { bytes: text('manual'), name: 'manual.txt', type: 'text/plain' }));
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Table', photos: [{ fileId: file.id }] } } }));
    expect(row.data.photos).toEqual([expect.objectContaining({ fileId: file.id, name: 'manual.txt', contentType: 'text/plain' })]);
    // A cell read can be written back as it is.
    const back = ok(await t.request('PATCH', `${base}/rows/${row.id}`, { as: ada.as, body: { data: { photos: row.data.photos } } }));
    expect(back.data.photos).toEqual(row.data.photos);
    const bulk = ok(await t.request('PATCH', `${base}/rows/bulk`, { as: ada.as, body: { updates: [{ id: row.id, data: { photos: [] } }] } }));
    expect(bulk.rows[0].data.photos).toEqual([]);
  });

  it('refuses a cell naming a file of another workspace, an unknown file or a value of the wrong shape (422 at the cell), and an upload into a column that is not an attachment', async () => {
    const bob = await signInUser(t, 'bob@attach.test');
    await createWorkspace(t, bob, { name: 'Other', slug: 'other' });
    ok(await t.request('POST', '/api/workspaces/other/surfaces', { as: bob.as, body: { kind: 'files', slug: 'files', name: 'Files' } }));
    const theirs = ok(await proxyUpload(t, '/api/workspaces/other/files', bob.as, { bytes: text('secret'), name: 'secret.txt', type: 'text/plain' }));
    for (const photos of [[{ fileId: theirs.id }], [{ fileId: 'fil_nosuchfile00000' }]]) {
      const refused = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Stolen', photos } } });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ path: ['data', 'photos'], code: 'file_not_found' })]);
    }
    const shape = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { photos: 42 } } });
    expect(shape.status).toBe(422);
    expect(shape.body.error.details).toEqual([expect.objectContaining({ path: ['data', 'photos'], code: 'invalid_type' })]);
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Lamp' } } }));
    const wrongColumn = await postMultipart(t, `${base}/rows/${row.id}/attachments/title`, [{ name: 'file', bytes: text('x'), filename: 'x.txt', type: 'text/plain' }], ada.as);
    expect(wrongColumn.status, wrongColumn.text).toBe(422);
    expect(wrongColumn.body.error.details).toEqual([expect.objectContaining({ path: ['columnKey'], code: 'not_attachment_column' })]);
    expect((await postMultipart(t, `${base}/rows/no-such-row/attachments/photos`, [{ name: 'file', bytes: text('x'), filename: 'x.txt', type: 'text/plain' }], ada.as)).status).toBe(404);
    // A viewer may not attach.
    const vic = await signInUser(t, 'vic@attach.test');
    await t.services.db.insertInto('memberships').values({ workspaceId, principalId: vic.userId, principalType: 'user', role: 'viewer', viaUserId: null }).execute();
    expect((await postMultipart(t, `${base}/rows/${row.id}/attachments/photos`, [{ name: 'file', bytes: text('x'), filename: 'x.txt', type: 'text/plain' }], vic.as)).status).toBe(403);
  });

  it('keeps a file two rows hold when one is deleted, and sends it to the trash a day after the last one is', async () => {
    const first = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Sofa' } } }));
    const uploaded = ok(await postMultipart(t, `${base}/rows/${first.id}/attachments/photos`, [{ name: 'file', bytes: await png(32, 32), filename: 'sofa.png', type: 'image/png' }], ada.as));
    const fileId = uploaded.data.photos[0].fileId;
    const second = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Sofa, blue', photos: [{ fileId }] } } }));
    const used = (await storageUsage(t.services, ada.orgId)).used;

    ok(await t.request('DELETE', `${base}/rows/${first.id}`, { as: ada.as }));
    clock.advance(2 * DAY);
    const pass = await t.app.fileTrash.runOnce();
    expect(ok(await t.request('GET', `${base}/files/${fileId}`, { as: ada.as })).archivedAt).toBeNull();
    expect(ok(await t.request('GET', `${base}/rows/${second.id}`, { as: ada.as })).data.photos).toEqual([expect.objectContaining({ fileId, name: 'sofa.png' })]);
    expect((await storageUsage(t.services, ada.orgId)).used).toBe(used);

    // A sync client clears the last cell naming it: a day on, the trash takes it, and the cell reads without it.
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: ada.cookie });
    try {
      await synced(client);
      updateRowCells(client.doc, second.id, { photos: null }, 'test');
      await acknowledged(client);
    } finally {
      client.destroy();
    }
    await t.services.sync.changesCommitted(tablesDocumentName(workspaceId));
    ada.as = (await signInUser(t, 'ada@attach.test')).as;
    clock.advance(2 * DAY);
    const later = await t.app.fileTrash.runOnce();
    expect(later.unusedAttachments).toBeGreaterThanOrEqual(1);
    expect(pass.unusedAttachments).toBe(0);
    const archived = ok(await t.request('GET', `${base}/files/${fileId}`, { as: ada.as }));
    expect(archived.archivedAt).not.toBeNull();
    const events = ok(await t.request('GET', `${base}/events?action=file.archived`, { as: ada.as })).events;
    expect(events[0]).toMatchObject({ principal: null, data: { fileId, unused: true } });
  });

  it('counts a file once however many cells hold it, and refuses an upload past the quota with nothing stored', async () => {
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Desk' } } }));
    const uploaded = ok(await postMultipart(t, `${base}/rows/${row.id}/attachments/photos`, [{ name: 'file', bytes: text('x'.repeat(5000)), filename: 'desk.txt', type: 'text/plain' }], ada.as));
    const fileId = uploaded.data.photos[0].fileId;
    const before = (await storageUsage(t.services, ada.orgId)).used;
    for (let i = 0; i < 3; i++) ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: `Desk ${i}`, photos: [{ fileId }] } } }));
    expect((await storageUsage(t.services, ada.orgId)).used).toBe(before);

    await setStorageQuota(t.services, ada.orgId, before + 1000);
    const refused = await postMultipart(t, `${base}/rows/${row.id}/attachments/photos`, [{ name: 'file', bytes: text('y'.repeat(5000)), filename: 'big.txt', type: 'text/plain' }], ada.as);
    expect(refused.status, refused.text).toBe(413);
    expect(refused.body.error).toMatchObject({ code: 'storage_quota', details: { current: before, cap: before + 1000 } });
    expect(ok(await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).data.photos).toHaveLength(1);
    expect((await storageUsage(t.services, ada.orgId)).used).toBe(before);
    await setStorageQuota(t.services, ada.orgId, null);
  });
});

describe('gallery views', () => {
  it('saves a gallery with its cover column and card fields, lists its rows with their files, and refuses a cover that is not an attachment or url column', async () => {
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Catalogue', kind: 'gallery', coverColumn: 'photos', cardFields: ['title', 'status'] } }));
    expect(view).toMatchObject({ kind: 'gallery', coverColumn: 'photos', cardFields: ['title', 'status'] });
    expect(view).not.toHaveProperty('dateColumn');
    const rows = ok(await t.request('GET', `${base}/rows?view=${view.id}&filter[photos][empty]=false`, { as: ada.as })).rows;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row: { data: { photos: unknown[] } }) => row.data.photos.every((file: any) => typeof file.fileId === 'string' && typeof file.url === 'string'))).toBe(true);
    // A url column may give the covers; a text column may not.
    expect(ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { coverColumn: 'link' } })).view.coverColumn).toBe('link');
    const refused = await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { coverColumn: 'title' } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ path: ['coverColumn'], code: 'not_cover_column' })]);
    const unknown = await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { cardFields: ['ghost'] } });
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ path: ['cardFields', '0'], code: 'unknown_column' })]);
    // No cover at all is a gallery of cards.
    expect(ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { coverColumn: null } })).view).toMatchObject({ coverColumn: null, cardFields: ['title', 'status'] });
  });
});
