import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOrgStorage } from '../../src/persistence/storage';
import { ManualClock, startTestApp } from '../helpers/app';
import { startS3 } from '../helpers/s3';
import { signInUser, type TestUser } from '../workspaces/helpers';
import { fetchRaw, filesWorkspace, photoWithExif, postMultipart, proxyUpload, unzip } from './helpers';

/**
 * The main paths on the S3 store, against a real S3-compatible server
 * (s3rver) started on loopback: proxy uploads with thumbnails, direct
 * uploads through a presigned PUT, versions, zip, share links, doc images,
 * the trash, and nothing left in the bucket by refused uploads.
 */

const clock = new ManualClock(new Date('2027-05-01T08:00:00Z'));
let s3: Awaited<ReturnType<typeof startS3>>;
let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let base: string;

beforeAll(async () => {
  s3 = await startS3();
  t = await startTestApp({ env: s3.env, clock });
  ({ user: ada, base } = await filesWorkspace(t, 'ada@example.com', 's3-drive'));
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
  await s3?.close();
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('files on S3', () => {
  it('stores a proxy upload and its thumbnail in the bucket, EXIF gone', async () => {
    expect(t.services.blobs.kind).toBe('s3');
    const res = await proxyUpload(t, base, ada.as, { bytes: await photoWithExif(400, 300), name: 'photo.jpg', type: 'image/jpeg' });
    expect(res.status, res.text).toBe(200);
    const file = res.body;
    const objects = await s3.objects();
    expect(objects.get(file.blobKey)).toBe(file.size);
    expect(objects.has(`${file.blobKey}.thumb.webp`)).toBe(true);
    const served = await fetchRaw(t, file.url, { as: ada.as });
    expect(sha(served.bytes)).toBe(file.sha256);
    expect(served.bytes.toString('latin1')).not.toContain('secret-copyright');
    expect((await sharp(served.bytes).metadata()).exif).toBeUndefined();
    const thumb = await sharp((await fetchRaw(t, file.thumbUrl, { as: ada.as })).bytes).metadata();
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['webp', 192, 256]);
  });

  it('uploads directly through a presigned PUT, then completes', async () => {
    const bytes = Buffer.from('a direct upload to the bucket\n'.repeat(2000));
    const ticket = await t.request('POST', base, {
      as: ada.as,
      body: { clientPayload: JSON.stringify({ surfaceSlug: 'files', parentFolderId: null, name: 'direct.txt', size: bytes.byteLength, contentType: 'text/plain' }) },
    });
    expect(ticket.status, ticket.text).toBe(200);
    expect(ticket.body.uploadUrl.startsWith(`${s3.endpoint}/trellis-test/`)).toBe(true);
    expect(ticket.body.uploadUrl).toContain('X-Amz-Signature=');
    expect(ticket.body.headers).toEqual({ 'content-type': 'text/plain' });
    // The web app's page may connect to the bucket's origin, or a browser could not PUT there.
    const shell = await fetch(`${t.url}/ada`);
    const connectSrc = shell.headers.get('content-security-policy')!.split('; ').find((directive) => directive.startsWith('connect-src'))!;
    expect(connectSrc.split(' ')).toContain(new URL(ticket.body.uploadUrl).origin);

    const early = await t.request('POST', `${base}/uploads/${ticket.body.uploadId}/complete`, { as: ada.as });
    expect(early.status).toBe(400);
    const put = await fetch(ticket.body.uploadUrl, { method: 'PUT', body: bytes, headers: ticket.body.headers });
    expect(put.status).toBe(200);
    const done = await t.request('POST', `${base}/uploads/${ticket.body.uploadId}/complete`, { as: ada.as });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ name: 'direct.txt', size: bytes.byteLength, sha256: sha(bytes), contentType: 'text/plain' });
    expect((await fetchRaw(t, done.body.url, { as: ada.as })).bytes.equals(bytes)).toBe(true);
    expect((await t.request('POST', `${base}/uploads/${ticket.body.uploadId}/complete`, { as: ada.as })).body.id).toBe(done.body.id);

    // A PUT of the wrong size is caught at completion; a new PUT to the same URL fixes it.
    const short = await t.request('POST', base, { as: ada.as, body: { clientPayload: JSON.stringify({ surfaceSlug: 'files', name: 'short.txt', size: 100, contentType: 'text/plain' }) } });
    await fetch(short.body.uploadUrl, { method: 'PUT', body: 'x'.repeat(60), headers: short.body.headers });
    const mismatch = await t.request('POST', `${base}/uploads/${short.body.uploadId}/complete`, { as: ada.as });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details[0].code).toBe('size_mismatch');
    await fetch(short.body.uploadUrl, { method: 'PUT', body: 'x'.repeat(100), headers: short.body.headers });
    expect((await t.request('POST', `${base}/uploads/${short.body.uploadId}/complete`, { as: ada.as })).status).toBe(200);
  });

  it('processes a directly uploaded image at completion: EXIF stripped in the bucket, thumbnail made', async () => {
    const photo = await photoWithExif(300, 200);
    const ticket = (await t.request('POST', base, { as: ada.as, body: { clientPayload: { surfaceSlug: 'files', name: 'direct.jpg', size: photo.byteLength, contentType: 'image/jpeg' } } })).body;
    await fetch(ticket.uploadUrl, { method: 'PUT', body: new Uint8Array(photo), headers: ticket.headers });
    const file = (await t.request('POST', `${base}/uploads/${ticket.uploadId}/complete`, { as: ada.as })).body;
    expect(file).toMatchObject({ exif: { width: 200, height: 300, orientation: 6 }, thumbUrl: expect.any(String) });
    const objects = await s3.objects();
    expect(objects.get(file.blobKey)).toBe(file.size);
    const stored = await fetchRaw(t, file.url, { as: ada.as });
    expect(stored.bytes.toString('latin1')).not.toContain('secret-copyright');
    expect(await readOrgStorage(t.services.db, ada.orgId).then((s) => s.usedBytes)).toBeGreaterThan(0);
  });

  it('replaces a version, zips, serves share links and doc images from the bucket', async () => {
    const first = (await proxyUpload(t, base, ada.as, { bytes: Buffer.from('version one'), name: 'notes.txt', type: 'text/plain' })).body;
    const second = await postMultipart(t, `${base}/${first.id}/versions`, [{ name: 'file', bytes: Buffer.from('version two!'), filename: 'notes.txt', type: 'text/plain' }], ada.as);
    expect(second.status, second.text).toBe(200);
    const objects = await s3.objects();
    expect(objects.has(first.blobKey)).toBe(false);
    expect(objects.get(second.body.blobKey)).toBe('version two!'.length);

    const other = (await proxyUpload(t, base, ada.as, { bytes: Buffer.from('another'), name: 'notes.txt', type: 'text/plain' })).body;
    const zip = await fetch(`${t.url}${base}/zip`, {
      method: 'POST',
      headers: { cookie: `svc-session=${ada.cookie}`, 'content-type': 'application/json' },
      body: JSON.stringify({ surfaceSlug: 'files', fileIds: [first.id, other.id] }),
    });
    expect(zip.status).toBe(200);
    const entries = await unzip(Buffer.from(await zip.arrayBuffer()));
    expect(Object.fromEntries([...entries].map(([k, v]) => [k, v.toString()]))).toEqual({ 'notes.txt': 'version two!', 'notes (2).txt': 'another' });

    const share = (await t.request('POST', `${base}/${first.id}/share`, { as: ada.as })).body;
    expect((await fetchRaw(t, `${share.url}/raw`)).bytes.toString()).toBe('version two!');

    await t.request('POST', '/api/workspaces', { as: ada.as, body: { name: 'Doc', slug: 's3-doc', mode: 'doc' } });
    const image = await postMultipart(t, '/api/workspaces/s3-doc/upload', [{ name: 'file', bytes: await photoWithExif(20, 20), filename: 'x.jpg', type: 'image/jpeg' }], ada.as);
    expect(image.status, image.text).toBe(200);
    const blob = await fetchRaw(t, image.body.url);
    expect(blob.status).toBe(200);
    expect((await s3.objects()).get(image.body.url.split('/').pop())).toBe(image.body.size);
  });

  it('leaves nothing in the bucket for refused uploads, and the trash deletes objects after 30 days', async () => {
    const before = await s3.objects();
    const refused = await proxyUpload(t, base, ada.as, { bytes: Buffer.from('%PDF-1.4 not a png'), name: 'x.png', type: 'image/png' });
    expect(refused.status).toBe(422);
    const big = await proxyUpload(t, base, ada.as, { bytes: Buffer.alloc(25 * 1024 * 1024 + 1, 1), name: 'big.bin', type: 'application/octet-stream' });
    expect(big.status).toBe(413);
    const pdf = (await t.request('POST', base, { as: ada.as, body: { clientPayload: { surfaceSlug: 'files', name: 'fake.pdf', size: 5, contentType: 'application/pdf' } } })).body;
    await fetch(pdf.uploadUrl, { method: 'PUT', body: 'hello', headers: pdf.headers });
    expect((await t.request('POST', `${base}/uploads/${pdf.uploadId}/complete`, { as: ada.as })).status).toBe(422);
    expect(await s3.objects()).toEqual(before);

    const doomed = (await proxyUpload(t, base, ada.as, { bytes: await photoWithExif(50, 50), name: 'doomed.jpg', type: 'image/jpeg' })).body;
    expect((await s3.objects()).has(`${doomed.blobKey}.thumb.webp`)).toBe(true);
    await t.request('DELETE', `${base}/${doomed.id}`, { as: ada.as });
    clock.advance(31 * 24 * 60 * 60 * 1000);
    await t.app.fileTrash.runOnce();
    const after = await s3.objects();
    expect(after.has(doomed.blobKey)).toBe(false);
    expect(after.has(`${doomed.blobKey}.thumb.webp`)).toBe(false);
    const fresh = await signInUser(t, 'ada@example.com');
    expect((await t.request('GET', `${base}/${doomed.id}`, { as: fresh.as })).status).toBe(404);
  }, 180_000); // 25 MB through multipart: slow on a loaded machine, never wrong
});
