import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
const upload = '/api/workspaces/images/upload';

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  workspaceId = (await createWorkspace(t, ada, { name: 'Images', slug: 'images', mode: 'doc' })).id;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function post(bytes: Uint8Array, type: string, options: { name?: string; field?: string; cookie?: string } = {}) {
  const form = new FormData();
  form.append(options.field ?? 'file', new Blob([new Uint8Array(bytes)], { type }), options.name ?? 'upload.bin');
  const response = await fetch(`${t.url}${upload}`, { method: 'POST', body: form, headers: { cookie: `svc-session=${options.cookie ?? ada.cookie}` } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function fetchBlob(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function blobFiles(): Promise<string[]> {
  const root = path.join(t.dataDir, 'blobs');
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('POST /upload', () => {
  it('re-encodes a JPEG without its EXIF, upright, and serves it with its type', async () => {
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .jpeg()
      .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'secret', Artist: 'Ada' } } })
      .toBuffer();
    const original = await sharp(photo).metadata();
    expect(original.exif).toBeDefined();
    expect(original.exif!.toString('latin1')).toContain('secret');

    const res = await post(photo, 'image/jpeg', { name: 'photo.jpg' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: expect.stringMatching(new RegExp(`^${t.url}/api/blobs/img_[A-Za-z0-9_-]{24}\\.jpg$`)), contentType: 'image/jpeg', size: expect.any(Number), width: 48, height: 64 });

    const served = await fetchBlob(res.body.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Number(served.headers.get('content-length'))).toBe(res.body.size);
    expect(served.bytes.byteLength).toBe(res.body.size);
    const metadata = await sharp(served.bytes).metadata();
    expect(metadata.format).toBe('jpeg');
    expect(metadata.exif).toBeUndefined();
    expect(metadata.orientation).toBeUndefined();
    expect([metadata.width, metadata.height]).toEqual([48, 64]);
    expect(served.bytes.toString('latin1')).not.toContain('secret');
  });

  it('keeps PNG as PNG and takes the format from the bytes, not the declared type', async () => {
    const png = await sharp({ create: { width: 10, height: 5, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } } }).png().toBuffer();
    const res = await post(png, 'image/jpeg', { name: 'lies.jpg' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ contentType: 'image/png', width: 10, height: 5 });
    expect(res.body.url).toMatch(/\.png$/);
    const served = await fetchBlob(res.body.url);
    expect((await sharp(served.bytes).metadata()).hasAlpha).toBe(true);
  });

  it('sanitises an SVG: no script, no event handlers, no foreign objects, no javascript: links', async () => {
    const svg = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="20" height="10" onload="alert('onload')">
  <script>alert('script')</script>
  <rect width="20" height="10" fill="teal" onclick="alert('click')"/>
  <a xlink:href="javascript:alert('href')"><text x="1" y="8">link</text></a>
  <image href="https://tracker.example/pixel.png" width="1" height="1"/>
  <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
</svg>`;
    const res = await post(Buffer.from(svg), 'image/svg+xml', { name: 'logo.svg' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ contentType: 'image/svg+xml', width: 20, height: 10 });
    const served = await fetchBlob(res.body.url);
    expect(served.headers.get('content-type')).toBe('image/svg+xml');
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    const text = served.bytes.toString('utf8');
    expect(text).toContain('<rect');
    expect(text).toContain('fill="teal"');
    for (const gone of ['<script', 'onload', 'onclick', 'alert', 'javascript:', 'foreignObject', 'tracker.example']) expect(text).not.toContain(gone);
    // Still an image a renderer accepts.
    expect((await sharp(served.bytes).metadata()).format).toBe('svg');
  });

  it('refuses files over 10 MB with 413 and stores nothing', async () => {
    const before = await blobFiles();
    const big = Buffer.alloc(11 * 1024 * 1024, 7);
    const res = await post(big, 'image/png', { name: 'huge.png' });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    // Just over the limit: the declared length passes the early check, the stream limit catches it.
    const barely = await post(Buffer.alloc(10 * 1024 * 1024 + 1, 7), 'image/png', { name: 'barely.png' });
    expect(barely.status).toBe(413);
    expect(barely.body.error.code).toBe('payload_too_large');
    expect(await blobFiles()).toEqual(before);
  });

  it('refuses what is not an image (415), a missing file (400), and callers without edit_doc (403)', async () => {
    const before = await blobFiles();
    const pdf = await post(Buffer.from('%PDF-1.4 not an image'), 'application/pdf', { name: 'doc.pdf' });
    expect(pdf.status).toBe(415);
    expect(pdf.body.error.code).toBe('unsupported_media_type');
    const fake = await post(Buffer.from('not really a png'), 'image/png', { name: 'fake.png' });
    expect(fake.status).toBe(415);
    const html = await post(Buffer.from('<html><script>alert(1)</script></html>'), 'image/svg+xml', { name: 'x.svg' });
    expect(html.status).toBe(415);
    const wrongField = await post(Buffer.from('x'), 'image/png', { field: 'image' });
    expect(wrongField.status).toBe(400);
    const json = await t.request('POST', upload, { as: ada.as, body: { file: 'x' } });
    expect(json.status).toBe(400);

    const viewer = await signInUser(t, 'viewer@example.com');
    await addMembership(t, workspaceId, viewer.userId, 'viewer');
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: 'white' } }).png().toBuffer();
    expect((await post(png, 'image/png', { cookie: viewer.cookie })).status).toBe(403);
    const anonymous = await fetch(`${t.url}${upload}`, { method: 'POST', body: new FormData() });
    expect(anonymous.status).toBe(401);
    expect(await blobFiles()).toEqual(before);
  });

  it('answers 404 for unknown or malformed blob keys', async () => {
    expect((await fetchBlob(`${t.url}/api/blobs/img_doesnotexist.png`)).status).toBe(404);
    expect((await fetchBlob(`${t.url}/api/blobs/..%2F..%2Fpglite`)).status).toBe(404);
    expect((await fetchBlob(`${t.url}/api/blobs/.meta`)).status).toBe(404);
  });
});
