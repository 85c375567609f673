import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import type { TestUser } from '../workspaces/helpers';
import { auditEvents, fetchRaw, filesWorkspace, localBlobFiles, png, postMultipart, proxyUpload, unzip } from './helpers';

/**
 * Share links and their public pages, new versions of a file, the streamed
 * zip and the text preview, on the local disk store.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let base: string;
const slug = 'shares';

beforeAll(async () => {
  t = await startTestApp();
  ({ user: ada, base } = await filesWorkspace(t, 'ada@example.com', slug));
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

const text = (s: string) => Buffer.from(s, 'utf8');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function upload(name: string, bytes: Uint8Array, type?: string) {
  const res = await proxyUpload(t, base, ada.as, { bytes, name, type });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('share links', () => {
  it('creates 32-byte tokens, lists active ones, serves the page and the bytes, and revokes idempotently', async () => {
    const file = await upload('report <draft>.txt', text('Line one & <b>two</b>\n'), 'text/plain');
    const created = await t.request('POST', `${base}/${file.id}/share`, { as: ada.as });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^shr_/), url: expect.stringMatching(new RegExp(`^${t.url}/share/files/[A-Za-z0-9_-]{43}$`)), createdAt: expect.any(String), revokedAt: null });
    const token = created.body.url.split('/').pop();
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const second = (await t.request('POST', `${base}/${file.id}/share`, { as: ada.as })).body;
    const listed = await t.request('GET', `${base}/${file.id}/share`, { as: ada.as });
    expect(listed.body.tokens.map((x: any) => x.id).sort()).toEqual([created.body.id, second.id].sort());

    const page = await fetchRaw(t, created.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = page.bytes.toString('utf8');
    expect(html).toContain('report &#60;draft&#62;.txt');
    expect(html).toContain('Line one &#38; &#60;b&#62;two&#60;/b&#62;');
    expect(html).not.toContain('<b>two</b>');
    expect(html).toContain(`href="${token}/raw?download=1"`);
    const raw = await fetchRaw(t, `${created.body.url}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.bytes.toString('utf8')).toBe('Line one & <b>two</b>\n');
    expect(raw.headers.get('content-type')).toBe('text/plain');
    expect(raw.headers.get('content-security-policy')).toContain('sandbox');
    expect(raw.headers.get('cache-control')).toContain('no-store');
    expect((await fetchRaw(t, `${created.body.url}/raw?download=1`)).headers.get('content-disposition')).toBe(`attachment; filename="report <draft>.txt"; filename*=UTF-8''report%20%3Cdraft%3E.txt`);

    const event = (await auditEvents(t, slug, ada.as, 'file.shared')).find((e) => e.data.shareTokenId === created.body.id);
    expect(event.data).toEqual({ fileId: file.id, name: file.name, surfaceId: file.surfaceId, shareTokenId: created.body.id, url: created.body.url });

    const revoke = await t.request('DELETE', `${base}/${file.id}/share?tokenId=${created.body.id}`, { as: ada.as });
    expect(revoke.body).toEqual({ ok: true });
    expect((await t.request('DELETE', `${base}/${file.id}/share?tokenId=${created.body.id}`, { as: ada.as })).status).toBe(200);
    expect((await t.request('DELETE', `${base}/${file.id}/share?tokenId=shr_unknown`, { as: ada.as })).status).toBe(404);
    expect((await t.request('DELETE', `${base}/${file.id}/share`, { as: ada.as })).status).toBe(400);
    expect((await fetchRaw(t, created.body.url)).status).toBe(404);
    expect((await fetchRaw(t, `${created.body.url}/raw`)).status).toBe(404);
    expect((await fetchRaw(t, `${t.url}/share/files/not-a-token`)).status).toBe(404);
    expect((await t.request('GET', `${base}/${file.id}/share`, { as: ada.as })).body.tokens.map((x: any) => x.id)).toEqual([second.id]);
    const revokedEvents = (await auditEvents(t, slug, ada.as, 'file.share_revoked')).filter((e) => e.data.shareTokenId === created.body.id);
    expect(revokedEvents).toHaveLength(1);
    expect(revokedEvents[0].data).toEqual({ fileId: file.id, name: file.name, surfaceId: file.surfaceId, shareTokenId: created.body.id });

    // Archived: the link stops working; restored: it works again.
    await t.request('DELETE', `${base}/${file.id}`, { as: ada.as });
    expect((await fetchRaw(t, second.url)).status).toBe(404);
    await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { restore: true } });
    expect((await fetchRaw(t, second.url)).status).toBe(200);
  });

  it('shows an image inline on the page', async () => {
    const file = await upload('pic.png', await png(30, 30), 'image/png');
    const share = (await t.request('POST', `${base}/${file.id}/share`, { as: ada.as })).body;
    const html = (await fetchRaw(t, share.url)).bytes.toString('utf8');
    expect(html).toMatch(/<img src="[A-Za-z0-9_-]{43}\/raw" alt="pic.png">/);
    const raw = await fetchRaw(t, `${share.url}/raw`);
    expect(raw.headers.get('content-type')).toBe('image/png');
    expect(raw.headers.get('content-disposition')).toMatch(/^inline;/);
  });
});

describe('versions', () => {
  it('replaces the bytes: same id, new blobKey and sha256; share links and name stay; old bytes are gone', async () => {
    const first = await upload('chart.png', await png(50, 50), 'image/png');
    const share = (await t.request('POST', `${base}/${first.id}/share`, { as: ada.as })).body;
    const next = await png(300, 100);
    const res = await postMultipart(t, `${base}/${first.id}/versions`, [{ name: 'file', bytes: next, filename: 'chart-v2.png', type: 'image/png' }], ada.as);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: first.id, name: 'chart.png', version: 2, exif: { width: 300, height: 100, orientation: 1 } });
    expect(res.body.blobKey).not.toBe(first.blobKey);
    expect(res.body.sha256).not.toBe(first.sha256);
    expect(res.body.thumbUrl).not.toBe(first.thumbUrl);
    const served = await fetchRaw(t, res.body.url, { as: ada.as });
    expect(sha(served.bytes)).toBe(res.body.sha256);
    expect((await sharp(served.bytes).metadata()).width).toBe(300);
    expect((await fetchRaw(t, `${share.url}/raw`)).bytes.equals(served.bytes)).toBe(true);
    expect((await localBlobFiles(t)).some((f) => f.includes(first.blobKey.split('/').pop()!))).toBe(false);

    const event = (await auditEvents(t, slug, ada.as, 'file.version_replaced')).find((e) => e.data.fileId === first.id);
    expect(event.data).toMatchObject({ fileId: first.id, name: 'chart.png', surfaceId: first.surfaceId, previousSha256: first.sha256, sha256: res.body.sha256, version: 2 });

    const pdf = await postMultipart(t, `${base}/${first.id}/versions`, [{ name: 'file', bytes: text('%PDF-1.4 doc'), filename: 'x.pdf', type: 'application/pdf' }], ada.as);
    expect(pdf.status).toBe(400);
    expect(pdf.body.error.details[0].code).toBe('mime_category_mismatch');
    const jpeg = await sharp(next).jpeg().toBuffer();
    const sameCategory = await postMultipart(t, `${base}/${first.id}/versions`, [{ name: 'file', bytes: jpeg, filename: 'chart.jpg', type: 'image/jpeg' }], ada.as);
    expect(sameCategory.status).toBe(200);
    expect(sameCategory.body).toMatchObject({ contentType: 'image/jpeg', version: 3 });
    const missing = await postMultipart(t, `${base}/fil_nope/versions`, [{ name: 'file', bytes: next, filename: 'x.png', type: 'image/png' }], ada.as);
    expect(missing.status).toBe(404);
    const noFile = await postMultipart(t, `${base}/${first.id}/versions`, [{ name: 'other', value: 'x' }], ada.as);
    expect(noFile.status).toBe(400);
  });

  it('counts text, JSON and YAML as one category', async () => {
    const file = await upload('config.json', text('{"a":1}'), 'application/json');
    const res = await postMultipart(t, `${base}/${file.id}/versions`, [{ name: 'file', bytes: text('a: 1\n'), filename: 'config.yaml', type: 'application/yaml' }], ada.as);
    expect(res.status, res.text).toBe(200);
    expect(res.body.contentType).toBe('application/yaml');
  });
});

describe('zip', () => {
  it('streams the files as a zip with unique entry names and a Content-Disposition', async () => {
    const a = await upload('same.txt', text('first'), 'text/plain');
    const b = await upload('same.txt', text('second'), 'text/plain');
    const c = await upload('SAME.txt', text('third'), 'text/plain');
    const d = await upload('photo.png', await png(20, 20), 'image/png');
    const res = await fetch(`${t.url}${base}/zip`, {
      method: 'POST',
      headers: { cookie: `svc-session=${ada.cookie}`, 'content-type': 'application/json' },
      body: JSON.stringify({ surfaceSlug: 'files', fileIds: [a.id, b.id, c.id, d.id, a.id] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="files.zip"/);
    const entries = await unzip(Buffer.from(await res.arrayBuffer()));
    expect([...entries.keys()]).toEqual(['same.txt', 'same (2).txt', 'SAME (3).txt', 'photo.png']);
    expect(entries.get('same.txt')!.toString()).toBe('first');
    expect(entries.get('same (2).txt')!.toString()).toBe('second');
    expect(sha(entries.get('photo.png')!)).toBe(d.sha256);
  });

  it('refuses more than 50 files, unknown or archived ids, and another surface', async () => {
    const file = await upload('z.txt', text('z'), 'text/plain');
    const tooMany = await t.request('POST', `${base}/zip`, { as: ada.as, body: { surfaceSlug: 'files', fileIds: Array.from({ length: 51 }, (_, i) => `fil_${i}`) } });
    expect(tooMany.status).toBe(422);
    const unknown = await t.request('POST', `${base}/zip`, { as: ada.as, body: { surfaceSlug: 'files', fileIds: [file.id, 'fil_nope'] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toEqual({ missing: ['fil_nope'] });
    await t.request('DELETE', `${base}/${file.id}`, { as: ada.as });
    expect((await t.request('POST', `${base}/zip`, { as: ada.as, body: { surfaceSlug: 'files', fileIds: [file.id] } })).status).toBe(404);
    expect((await t.request('POST', `${base}/zip`, { as: ada.as, body: { surfaceSlug: 'nope', fileIds: [file.id] } })).status).toBe(404);
    expect((await t.request('POST', `${base}/zip`, { as: ada.as, body: { surfaceSlug: 'files', fileIds: [] } })).status).toBe(422);
  });
});

describe('preview and bytes', () => {
  it('previews text-like files up to 256 KB as text/plain, and refuses the rest with 400', async () => {
    const html = await upload('page.html', text('<script>alert(1)</script>'), 'text/html');
    const preview = await fetchRaw(t, `${base}/${html.id}/preview`, { as: ada.as });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(preview.bytes.toString()).toBe('<script>alert(1)</script>');
    const json = await upload('data.json', text('{"ok":true}'), 'application/json');
    expect((await fetchRaw(t, `${base}/${json.id}/preview`, { as: ada.as })).bytes.toString()).toBe('{"ok":true}');
    const yaml = await upload('compose.yaml', text('a: 1\n'), 'application/octet-stream');
    expect((await fetchRaw(t, `${base}/${yaml.id}/preview`, { as: ada.as })).status).toBe(200);

    const image = await upload('p.png', await png(2, 2), 'image/png');
    const refused = await t.request('GET', `${base}/${image.id}/preview`, { as: ada.as });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('bad_request');
    const big = await upload('big.txt', Buffer.alloc(256 * 1024 + 1, 97), 'text/plain');
    expect((await t.request('GET', `${base}/${big.id}/preview`, { as: ada.as })).status).toBe(400);
    const edge = await upload('edge.txt', Buffer.alloc(256 * 1024, 97), 'text/plain');
    expect((await fetchRaw(t, `${base}/${edge.id}/preview`, { as: ada.as })).bytes.byteLength).toBe(256 * 1024);
  });

  it('serves bytes inline on request, with a sandboxing CSP, and 404 for a missing thumbnail', async () => {
    const html = await upload('inline.html', text('<h1>hi</h1>'), 'text/html');
    const inline = await fetchRaw(t, `${html.url}?inline=1`, { as: ada.as });
    expect(inline.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(inline.headers.get('content-security-policy')).toContain('sandbox');
    expect((await t.request('GET', `${base}/${html.id}/thumb`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${base}/${html.id}/content`)).status).toBe(404); // without credentials a private workspace does not exist
  });
});
