import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountedBytes, readOrgStorage } from '../../src/persistence/storage';
import { setStorageQuota, storageUsage } from '../../src/domain/storage';
import { ManualClock, startTestApp } from '../helpers/app';
import { createWorkspace, signInUser } from '../workspaces/helpers';
import { auditEvents, fetchRaw, filesWorkspace, localBlobFiles, postMultipart, proxyUpload } from './helpers';

/**
 * The organisation's storage quota (SPEC "Plan caps", rule 6), the direct
 * upload handshake on the local store, and the trash job, with a fake clock.
 */

const clock = new ManualClock(new Date('2027-03-01T09:00:00Z'));
let t: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

const DAY = 24 * 60 * 60 * 1000;

/** The counter, the ledger plus live reservations, and the bytes of every file row of the org. */
async function storageOf(orgId: string) {
  const { usedBytes } = await readOrgStorage(t.services.db, orgId);
  const { stored, reserved } = await accountedBytes(t.services.db, orgId);
  return { usedBytes, stored, reserved };
}

describe('storage quota', () => {
  it('lets exactly 10 of 20 parallel uploads through a quota that fits 10, and the counter equals the bytes stored', async () => {
    const { user, base, workspaceId } = await filesWorkspace(t, 'quota@example.com', 'quota');
    const size = 100_000;
    await setStorageQuota(t.services, user.orgId, size * 10 + size / 2);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => proxyUpload(t, base, user.as, { bytes: Buffer.alloc(size, 65 + i), name: `part-${i}.txt`, type: 'text/plain' })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 413)).toHaveLength(10);
    const refused = results.find((r) => r.status === 413)!;
    expect(refused.body.error).toMatchObject({ code: 'storage_quota', details: { current: expect.any(Number), cap: size * 10 + size / 2 } });
    expect(refused.body.error.details.current).toBeGreaterThanOrEqual(size * 10);

    const listed = (await t.request('GET', base, { as: user.as })).body.files;
    expect(listed).toHaveLength(10);
    const storage = await storageOf(user.orgId);
    expect(storage).toEqual({ usedBytes: size * 10, stored: size * 10, reserved: 0 });
    const onDisk = await localBlobFiles(t);
    expect(onDisk.filter((f) => f.startsWith(`files/${workspaceId}/`)).sort()).toEqual(listed.map((f: any) => f.blobKey).sort());
    expect(onDisk.filter((f) => f.startsWith('.tmp'))).toEqual([]);
    expect(await storageUsage(t.services, user.orgId)).toEqual({ used: size * 10, cap: size * 10 + size / 2 });
  });

  it('counts thumbnails, new versions (minus the replaced ones), doc images and avatars', async () => {
    const { user, base } = await filesWorkspace(t, 'counted@example.com', 'counted');
    const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: 'red' } }).jpeg().toBuffer();
    const file = (await proxyUpload(t, base, user.as, { bytes: photo, name: 'p.jpg', type: 'image/jpeg' })).body;
    const thumb = await fetchRaw(t, file.thumbUrl, { as: user.as });
    let storage = await storageOf(user.orgId);
    expect(storage.usedBytes).toBe(file.size + thumb.bytes.byteLength);
    expect(storage.stored).toBe(storage.usedBytes);

    const next = await sharp({ create: { width: 80, height: 60, channels: 3, background: 'blue' } }).jpeg().toBuffer();
    const v2 = (await postMultipart(t, `${base}/${file.id}/versions`, [{ name: 'file', bytes: next, filename: 'p.jpg', type: 'image/jpeg' }], user.as)).body;
    const thumb2 = await fetchRaw(t, v2.thumbUrl, { as: user.as });
    storage = await storageOf(user.orgId);
    expect(storage.usedBytes).toBe(v2.size + thumb2.bytes.byteLength);

    await createWorkspace(t, user, { name: 'Doc', slug: 'counted-doc', mode: 'doc' });
    const docImage = await postMultipart(t, '/api/workspaces/counted-doc/upload', [{ name: 'file', bytes: next, filename: 'x.jpg', type: 'image/jpeg' }], user.as);
    expect(docImage.status, docImage.text).toBe(200);
    storage = await storageOf(user.orgId);
    expect(storage.usedBytes).toBe(v2.size + thumb2.bytes.byteLength + docImage.body.size);

    const avatar = await postMultipart(t, '/api/me/avatar', [{ name: 'file', bytes: photo, filename: 'me.jpg', type: 'image/jpeg' }], user.as);
    expect(avatar.status, avatar.text).toBe(200);
    expect(avatar.body).toMatchObject({ contentType: 'image/webp', width: 512, height: 512 });
    expect((await t.request('GET', '/api/me', { as: user.as })).body.user.avatarUrl).toBe(avatar.body.url);
    const served = await fetchRaw(t, avatar.body.url);
    expect(served.status).toBe(200);
    expect((await sharp(served.bytes).metadata()).format).toBe('webp');
    const second = await postMultipart(t, '/api/me/avatar', [{ name: 'file', bytes: next, filename: 'me2.jpg', type: 'image/jpeg' }], user.as);
    expect((await fetchRaw(t, avatar.body.url)).status).toBe(404);
    storage = await storageOf(user.orgId);
    expect(storage.usedBytes).toBe(v2.size + thumb2.bytes.byteLength + docImage.body.size + second.body.size);
    expect(storage.stored).toBe(storage.usedBytes);
    expect((await postMultipart(t, '/api/me/avatar', [{ name: 'file', bytes: Buffer.from('not an image'), filename: 'x.png', type: 'image/png' }], user.as)).status).toBe(415);

    // At the cap, a doc image is refused like a file.
    await setStorageQuota(t.services, user.orgId, storage.usedBytes + 10);
    const refused = await postMultipart(t, '/api/workspaces/counted-doc/upload', [{ name: 'file', bytes: next, filename: 'x.jpg', type: 'image/jpeg' }], user.as);
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('storage_quota');
    expect((await storageOf(user.orgId)).usedBytes).toBe(storage.usedBytes);
  });

  it('keeps archived files counting until the trash job deletes them after 30 days', async () => {
    const { user, base } = await filesWorkspace(t, 'trash@example.com', 'trash');
    const keep = (await proxyUpload(t, base, user.as, { bytes: Buffer.alloc(1000, 1), name: 'keep.bin', type: 'application/octet-stream' })).body;
    const gone = (await proxyUpload(t, base, user.as, { bytes: Buffer.alloc(3000, 2), name: 'gone.bin', type: 'application/octet-stream' })).body;
    const folder = (await t.request('POST', `${base}/folders`, { as: user.as, body: { name: 'Old' } })).body;
    const share = (await t.request('POST', `${base}/${gone.id}/share`, { as: user.as })).body;
    expect((await t.request('DELETE', `${base}/${gone.id}`, { as: user.as })).status).toBe(200);
    expect((await t.request('DELETE', `${base}/folders/${folder.id}`, { as: user.as })).status).toBe(200);
    expect((await storageOf(user.orgId)).usedBytes).toBe(4000);

    clock.advance(29 * DAY);
    await t.app.fileTrash.runOnce();
    expect((await storageOf(user.orgId)).usedBytes).toBe(4000);
    expect((await t.request('GET', `${base}/${gone.id}`, { as: user.as })).status).toBe(200);

    clock.advance(1 * DAY + 60_000);
    const pass = await t.app.fileTrash.runOnce();
    user.as = (await signInUser(t, 'trash@example.com')).as; // the session of 30 days ago has expired
    expect(pass.files).toBeGreaterThanOrEqual(1);
    expect(pass.folders).toBeGreaterThanOrEqual(1);
    expect(await storageOf(user.orgId)).toEqual({ usedBytes: 1000, stored: 1000, reserved: 0 });
    expect((await t.request('GET', `${base}/${gone.id}`, { as: user.as })).status).toBe(404);
    expect((await t.request('GET', `${base}/${keep.id}`, { as: user.as })).status).toBe(200);
    expect((await localBlobFiles(t)).includes(gone.blobKey)).toBe(false);
    expect((await fetchRaw(t, share.url)).status).toBe(404);
    expect((await t.request('PATCH', `${base}/${gone.id}`, { as: user.as, body: { restore: true } })).status).toBe(404);
    const [purged] = await auditEvents(t, 'trash', user.as, 'file.purged');
    expect(purged).toMatchObject({ principal: null, data: { fileId: gone.id, name: 'gone.bin', surfaceId: gone.surfaceId } });
  });
});

describe('direct upload (local store)', () => {
  it('reserves on the handshake, takes the bytes at the one-shot URL and completes by itself', async () => {
    const { user, base, workspaceId } = await filesWorkspace(t, 'direct@example.com', 'direct');
    const folder = (await t.request('POST', `${base}/folders`, { as: user.as, body: { name: 'Inbox' } })).body;
    const bytes = Buffer.from('direct bytes, streamed\n'.repeat(1000));
    const clientPayload = JSON.stringify({ surfaceSlug: 'files', parentFolderId: folder.id, name: 'streamed.txt', size: bytes.byteLength, contentType: 'text/plain' });
    const ticket = await t.request('POST', base, { as: user.as, body: { clientPayload } });
    expect(ticket.status, ticket.text).toBe(200);
    expect(ticket.body).toEqual({
      uploadId: expect.stringMatching(/^upl_/),
      uploadUrl: expect.stringMatching(new RegExp(`^${t.url}/api/file-uploads/upl_\\w+\\?token=`)),
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      expiresAt: new Date(clock.now().getTime() + 60 * 60 * 1000).toISOString(),
    });
    expect(await storageOf(user.orgId)).toMatchObject({ usedBytes: bytes.byteLength, reserved: bytes.byteLength });

    const put = await fetch(ticket.body.uploadUrl, { method: 'PUT', body: bytes, headers: ticket.body.headers });
    const file = await put.json();
    expect(put.status, JSON.stringify(file)).toBe(200);
    expect(file).toMatchObject({ name: 'streamed.txt', size: bytes.byteLength, parentFolderId: folder.id, contentType: 'text/plain', createdBy: { id: user.userId } });
    expect(file.url).toContain(`/api/workspaces/${workspaceId}/files/${file.id}/content`);
    expect((await fetchRaw(t, file.url, { as: user.as })).bytes.equals(bytes)).toBe(true);
    expect(await storageOf(user.orgId)).toEqual({ usedBytes: bytes.byteLength, stored: bytes.byteLength, reserved: 0 });
    expect((await auditEvents(t, 'direct', user.as, 'file.uploaded')).find((e) => e.data.fileId === file.id).principal.id).toBe(user.userId);

    // The URL works once; complete answers the same file again.
    expect((await fetch(ticket.body.uploadUrl, { method: 'PUT', body: bytes })).status).toBe(404);
    const complete = await t.request('POST', `${base}/uploads/${ticket.body.uploadId}/complete`, { as: user.as });
    expect(complete.body.id).toBe(file.id);
    expect((await t.request('GET', base, { as: user.as, body: undefined })).status).toBe(200);
  });

  it('refuses wrong sizes, bad payloads, other people and contradicted types, releasing what was reserved', async () => {
    const { user, base } = await filesWorkspace(t, 'direct-bad@example.com', 'direct-bad');
    const handshake = (payload: unknown, as = user.as) => t.request('POST', base, { as, body: { clientPayload: typeof payload === 'string' ? payload : JSON.stringify(payload) } });
    const good = { surfaceSlug: 'files', parentFolderId: null, name: 'x.txt', size: 10, contentType: 'text/plain' };

    expect((await handshake('not json')).status).toBe(400);
    expect((await handshake({ ...good, size: 0 })).status).toBe(422);
    expect((await handshake({ ...good, name: '../x' })).body.error.details[0]).toMatchObject({ path: ['clientPayload', 'name'], code: 'invalid_name' });
    expect((await handshake({ ...good, size: 'ten' })).body.error.details[0].path).toEqual(['clientPayload', 'size']);
    expect((await handshake({ ...good, extra: 1 })).status).toBe(400);
    expect((await handshake({ ...good, surfaceSlug: 'nope' })).status).toBe(404);
    expect((await t.request('POST', base, { as: user.as, body: { clientPayload: good } })).status).toBe(200);
    expect((await t.request('POST', base, { as: user.as, body: {} })).status).toBe(400);
    await setStorageQuota(t.services, user.orgId, 1000);
    const over = await handshake({ ...good, size: 5000 });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: 'storage_quota', details: { cap: 1000 } });
    await setStorageQuota(t.services, user.orgId, null);

    const ticket = (await handshake(good)).body;
    const longer = await fetch(ticket.uploadUrl, { method: 'PUT', body: 'x'.repeat(11) });
    expect(longer.status).toBe(413);
    const shorter = await fetch(ticket.uploadUrl, { method: 'PUT', body: 'x'.repeat(9) });
    expect(shorter.status).toBe(400);
    expect((await fetch(ticket.uploadUrl.replace(/token=[^&]+/, 'token=wrong'), { method: 'PUT', body: 'x'.repeat(10) })).status).toBe(404);
    const stranger = await signInUser(t, 'someone-else@example.com');
    expect((await t.request('POST', `${base}/uploads/${ticket.uploadId}/complete`, { as: stranger.as })).status).toBe(404);
    const done = await fetch(ticket.uploadUrl, { method: 'PUT', body: 'x'.repeat(10) });
    expect(done.status).toBe(200);

    const pdf = (await handshake({ ...good, name: 'doc.pdf', contentType: 'application/pdf', size: 4 })).body;
    const before = (await storageOf(user.orgId)).usedBytes;
    const mismatch = await fetch(pdf.uploadUrl, { method: 'PUT', body: 'text' });
    expect(mismatch.status).toBe(422);
    expect((await mismatch.json()).error.details[0].code).toBe('content_type_mismatch');
    expect((await storageOf(user.orgId)).usedBytes).toBe(before - 4);
    expect((await localBlobFiles(t)).some((f) => f.includes(pdf.uploadId))).toBe(false);
  });

  it('gives back the storage of an abandoned upload when its reservation expires', async () => {
    const { user, base } = await filesWorkspace(t, 'abandon@example.com', 'abandon');
    const ticket = await t.request('POST', base, { as: user.as, body: { clientPayload: JSON.stringify({ surfaceSlug: 'files', name: 'never.bin', size: 5000 }) } });
    expect(ticket.status).toBe(200);
    expect((await storageOf(user.orgId)).usedBytes).toBe(5000);
    clock.advance(61 * 60 * 1000);
    expect((await fetch(ticket.body.uploadUrl, { method: 'PUT', body: Buffer.alloc(5000) })).status).toBe(404);
    clock.advance(60 * 60 * 1000);
    const pass = await t.app.fileTrash.runOnce();
    expect(pass.reservations).toBeGreaterThanOrEqual(1);
    expect(await storageOf(user.orgId)).toEqual({ usedBytes: 0, stored: 0, reserved: 0 });
    expect((await t.request('POST', `${base}/uploads/${ticket.body.uploadId}/complete`, { as: user.as })).status).toBe(409);
  });
});
