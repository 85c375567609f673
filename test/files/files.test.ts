import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { auditEvents, fetchRaw, filesWorkspace, localBlobFiles, photoWithExif, png, postMultipart, proxyUpload } from './helpers';

/**
 * Files surfaces on the local disk store: proxy uploads and what is stored
 * (EXIF gone, thumbnails, sanitised SVG, sniffed types), bad input that
 * stores nothing, the file records (list, rename, move, archive, restore,
 * metadata), folders, access and the events every change records.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
let base: string;
const slug = 'drive';

beforeAll(async () => {
  t = await startTestApp();
  ({ user: ada, workspaceId, base } = await filesWorkspace(t, 'ada@example.com', slug));
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

const text = (s: string) => Buffer.from(s, 'utf8');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function upload(name: string, bytes: Uint8Array, type?: string, folder?: string | null) {
  const res = await proxyUpload(t, base, ada.as, { bytes, name, type }, { folder });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('proxy upload', () => {
  it('stores a text file as it is and answers the File record', async () => {
    const bytes = text('hello, files\n');
    const sse = openSse(`${t.url}/api/workspaces/${slug}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    expect(await sse.ready).toBe(200);
    const file = await upload('notes.txt', bytes, 'text/plain');
    expect(file).toMatchObject({
      id: expect.stringMatching(/^fil_/),
      name: 'notes.txt',
      size: bytes.byteLength,
      contentType: 'text/plain',
      surface: { slug: 'files' },
      parentFolderId: null,
      thumbUrl: null,
      starred: false,
      starredAt: null,
      description: null,
      tags: [],
      exif: null,
      sha256: sha(bytes),
      version: 1,
      archivedAt: null,
      createdBy: { principalType: 'user', id: ada.userId },
    });
    expect(file.surfaceId).toBe(file.surface.id);
    expect(file.url).toBe(`${t.url}/api/workspaces/${workspaceId}/files/${file.id}/content`);
    const content = await fetchRaw(t, file.url, { as: ada.as });
    expect(content.status).toBe(200);
    expect(content.bytes.equals(bytes)).toBe(true);
    expect(content.headers.get('content-disposition')).toContain('attachment; filename="notes.txt"');
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(content.headers.get('etag')).toBe(`"${sha(bytes)}"`);
    const again = await fetchRaw(t, file.url, { as: ada.as, headers: { 'if-none-match': `"${sha(bytes)}"` } });
    expect(again.status).toBe(304);

    await expect.poll(() => sse.frames.find((f) => f.event === 'file.uploaded' && f.data.data.fileId === file.id)).toBeTruthy();
    sse.close();
    const [event] = await auditEvents(t, slug, ada.as, 'file.uploaded');
    expect(event).toMatchObject({
      event: 'file.uploaded',
      surface: { id: file.surfaceId, slug: 'files' },
      principal: { id: ada.userId },
      data: { fileId: file.id, name: 'notes.txt', surfaceId: file.surfaceId, size: bytes.byteLength, contentType: 'text/plain', sha256: sha(bytes), parentFolderId: null },
    });
  });

  it('rotates a JPEG upright, strips its EXIF, records exif and makes a 256-px webp thumbnail', async () => {
    const photo = await photoWithExif(640, 480);
    expect((await sharp(photo).metadata()).exif!.toString('latin1')).toContain('secret-copyright');
    const file = await upload('photo.jpg', photo, 'image/jpeg');
    expect(file.contentType).toBe('image/jpeg');
    expect(file.exif).toEqual({ width: 480, height: 640, orientation: 6 });
    expect(file.thumbUrl).toMatch(new RegExp(`/files/${file.id}/thumb\\?v=`));

    const stored = await fetchRaw(t, file.url, { as: ada.as });
    expect(stored.bytes.byteLength).toBe(file.size);
    expect(sha(stored.bytes)).toBe(file.sha256);
    expect(stored.bytes.toString('latin1')).not.toContain('secret-copyright');
    expect(stored.bytes.toString('latin1')).not.toContain('Ada Lovelace');
    const meta = await sharp(stored.bytes).metadata();
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect([meta.width, meta.height]).toEqual([480, 640]);

    const thumb = await fetchRaw(t, file.thumbUrl, { as: ada.as });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    const thumbMeta = await sharp(thumb.bytes).metadata();
    expect(thumbMeta.format).toBe('webp');
    expect([thumbMeta.width, thumbMeta.height]).toEqual([192, 256]);
  });

  it('keeps a small image at its size in the thumbnail, and PNG stays PNG', async () => {
    const file = await upload('icon.png', await png(40, 20), 'image/png');
    expect(file).toMatchObject({ contentType: 'image/png', exif: { width: 40, height: 20, orientation: 1 } });
    const thumb = await sharp((await fetchRaw(t, file.thumbUrl, { as: ada.as })).bytes).metadata();
    expect([thumb.width, thumb.height]).toEqual([40, 20]);
  });

  it('sanitises an SVG: no <script>, no onload, no handlers; no thumbnail', async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10" onload="alert('onload')">
  <script>alert('script')</script>
  <rect width="20" height="10" fill="teal" onclick="alert('click')"/>
  <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>
</svg>`;
    const file = await upload('logo.svg', text(svg), 'image/svg+xml');
    expect(file).toMatchObject({ contentType: 'image/svg+xml', thumbUrl: null, exif: null });
    const stored = (await fetchRaw(t, file.url, { as: ada.as })).bytes.toString('utf8');
    expect(stored).toContain('<rect');
    for (const gone of ['<script', 'onload', 'onclick', 'alert', 'foreignObject']) expect(stored).not.toContain(gone);
  });

  it('stores an image sharp cannot decode as a plain file, without a thumbnail', async () => {
    const photo = await photoWithExif(64, 64);
    const truncated = photo.subarray(0, 200); // a JPEG signature, then nothing decodable
    const file = await upload('broken.jpg', truncated, 'image/jpeg');
    expect(file).toMatchObject({ contentType: 'image/jpeg', size: 200, thumbUrl: null, exif: null, sha256: sha(truncated) });
  });

  it('takes the type from the bytes when none is declared, and from the extension for text', async () => {
    const pngFile = await upload('mystery', await png(4, 4), 'application/octet-stream');
    expect(pngFile.contentType).toBe('image/png');
    const md = await upload('readme.md', text('# Title\n'), 'application/octet-stream');
    expect(md.contentType).toBe('text/markdown');
  });

  it('refuses a declared type the bytes contradict, and stores nothing', async () => {
    const before = await localBlobFiles(t);
    const pdfAsPng = await proxyUpload(t, base, ada.as, { bytes: text('%PDF-1.4 a document'), name: 'x.png', type: 'image/png' });
    expect(pdfAsPng.status).toBe(422);
    expect(pdfAsPng.body.error).toMatchObject({ code: 'validation', details: [{ path: ['file'], code: 'content_type_mismatch' }] });
    expect(pdfAsPng.body.error.message).toContain('application/pdf');
    const pngAsText = await proxyUpload(t, base, ada.as, { bytes: await png(4, 4), name: 'x.txt', type: 'text/plain' });
    expect(pngAsText.status).toBe(422);
    const textAsPdf = await proxyUpload(t, base, ada.as, { bytes: text('just words'), name: 'x.pdf', type: 'application/pdf' });
    expect(textAsPdf.status).toBe(422);
    const htmlAsSvg = await proxyUpload(t, base, ada.as, { bytes: text('<html><script>alert(1)</script></html>'), name: 'x.svg', type: 'image/svg+xml' });
    expect(htmlAsSvg.status).toBe(422);
    const binaryAsText = await proxyUpload(t, base, ada.as, { bytes: Buffer.from([1, 0, 2, 0, 3]), name: 'x.csv', type: 'text/csv' });
    expect(binaryAsText.status).toBe(422);
    expect(await localBlobFiles(t)).toEqual(before);
  });

  it('refuses bad input with clear errors and stores nothing', async () => {
    const before = await localBlobFiles(t);
    const listBefore = (await t.request('GET', `${base}?archived=0`, { as: ada.as })).body.files.length;
    const bytes = text('x');
    const empty = await proxyUpload(t, base, ada.as, { bytes: Buffer.alloc(0), name: 'empty.txt', type: 'text/plain' });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details).toEqual([expect.objectContaining({ path: ['file'], code: 'empty' })]);
    for (const name of ['../etc/passwd', 'a/b.txt', 'a\\b.txt', '..', '.', 'tab\there.txt']) {
      const res = await proxyUpload(t, base, ada.as, { bytes, name, type: 'text/plain' });
      expect(res.status, name).toBe(422);
      expect(res.body.error.details[0]).toMatchObject({ path: ['file'], code: 'invalid_name' });
    }
    const noFile = await postMultipart(t, `${base}/proxy-upload`, [{ name: 'surface_slug', value: 'files' }], ada.as);
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.details[0].path).toEqual(['file']);
    const wrongField = await postMultipart(t, `${base}/proxy-upload`, [{ name: 'surface_slug', value: 'files' }, { name: 'upload', bytes, filename: 'a.txt', type: 'text/plain' }], ada.as);
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error.details[0].path).toEqual(['upload']);
    const unknownField = await postMultipart(t, `${base}/proxy-upload`, [{ name: 'surface_slug', value: 'files' }, { name: 'colour', value: 'red' }, { name: 'file', bytes, filename: 'a.txt' }], ada.as);
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.details[0].path).toEqual(['colour']);
    const noSurface = await postMultipart(t, `${base}/proxy-upload`, [{ name: 'file', bytes, filename: 'a.txt', type: 'text/plain' }], ada.as);
    expect(noSurface.status).toBe(400);
    expect(noSurface.body.error.details[0].path).toEqual(['surface_slug']);
    const twoFiles = await postMultipart(t, `${base}/proxy-upload`, [{ name: 'surface_slug', value: 'files' }, { name: 'file', bytes, filename: 'a.txt' }, { name: 'file', bytes, filename: 'b.txt' }], ada.as);
    expect(twoFiles.status).toBe(400);
    const json = await t.request('POST', `${base}/proxy-upload`, { as: ada.as, body: { file: 'x' } });
    expect(json.status).toBe(400);
    const otherSurface = await proxyUpload(t, base, ada.as, { bytes, name: 'a.txt', type: 'text/plain' }, { surface: 'nope' });
    expect(otherSurface.status).toBe(404);
    const noFolder = await proxyUpload(t, base, ada.as, { bytes, name: 'a.txt', type: 'text/plain' }, { folder: 'fld_missing' });
    expect(noFolder.status).toBe(404);
    expect(await localBlobFiles(t)).toEqual(before);
    expect((await t.request('GET', base, { as: ada.as })).body.files.length).toBe(listBefore);
  });

  it('refuses a body over 25 MB with 413 payload_too_large and leaves nothing in the store', async () => {
    const before = await localBlobFiles(t);
    const big = await proxyUpload(t, base, ada.as, { bytes: Buffer.alloc(26 * 1024 * 1024, 97), name: 'big.txt', type: 'text/plain' });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    // Just over: the declared length passes the early check, the stream limit catches it.
    const barely = await proxyUpload(t, base, ada.as, { bytes: Buffer.alloc(25 * 1024 * 1024 + 1, 97), name: 'barely.txt', type: 'text/plain' });
    expect(barely.status).toBe(413);
    expect(barely.body.error.code).toBe('payload_too_large');
    expect(await localBlobFiles(t)).toEqual(before);
  }, 180_000); // 51 MB through multipart: slow on a loaded machine, never wrong
});

describe('file records', () => {
  it('renames keeping the blob key, moves between folders of the surface, refuses other surfaces', async () => {
    const file = await upload('draft.txt', text('draft'), 'text/plain');
    const renamed = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { name: '  final.txt ' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id: file.id, name: 'final.txt', blobKey: file.blobKey, sha256: file.sha256 });
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { name: 'a/b' } })).status).toBe(422);
    // A lone surrogate is repaired at the entrance (U+FFFD), as for all free text.
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { name: 'bad\ud800name' } })).body.name).toBe('bad\uFFFDname');
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { name: 'final.txt' } })).status).toBe(200);

    const folder = (await t.request('POST', `${base}/folders`, { as: ada.as, body: { surfaceSlug: 'files', parentFolderId: null, name: 'Reports' } })).body;
    const moved = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { parentFolderId: folder.id } });
    expect(moved.body.parentFolderId).toBe(folder.id);
    const inFolder = await t.request('GET', `${base}?surfaceSlug=files&parentFolderId=${folder.id}`, { as: ada.as });
    expect(inFolder.body.files.map((f: any) => f.id)).toEqual([file.id]);

    await t.request('POST', `/api/workspaces/${slug}/surfaces`, { as: ada.as, body: { kind: 'files', slug: 'archive-drive', name: 'Archive' } });
    const elsewhere = (await t.request('POST', `${base}/folders`, { as: ada.as, body: { surfaceSlug: 'archive-drive', name: 'Elsewhere' } })).body;
    const across = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { parentFolderId: elsewhere.id } });
    expect(across.status).toBe(400);
    expect(across.body.error.details[0]).toMatchObject({ path: ['parentFolderId'], code: 'other_surface' });
    const back = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { parentFolderId: null } });
    expect(back.body.parentFolderId).toBeNull();

    const renamedEvent = (await auditEvents(t, slug, ada.as, 'file.renamed')).find((e) => e.data.fileId === file.id && e.data.previousName === 'draft.txt');
    expect(renamedEvent.data).toMatchObject({ fileId: file.id, name: 'final.txt', previousName: 'draft.txt', surfaceId: file.surfaceId });
    const movedEvents = (await auditEvents(t, slug, ada.as, 'file.moved')).filter((e) => e.data.fileId === file.id);
    expect(movedEvents.map((e) => [e.data.fromFolderId, e.data.toFolderId])).toEqual([
      [folder.id, null],
      [null, folder.id],
    ]);
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: {} })).status).toBe(400);
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { surfaceSlug: 'archive-drive' } })).status).toBe(400);
  });

  it('archives (soft delete) and restores; writes to an archived file are 404; restore with name is 400', async () => {
    const file = await upload('old.txt', text('old'), 'text/plain');
    expect((await t.request('DELETE', `${base}/${file.id}`, { as: ada.as })).body).toEqual({ ok: true });
    const got = await t.request('GET', `${base}/${file.id}`, { as: ada.as });
    expect(got.body).toMatchObject({ archivedAt: expect.any(String), archivedByPrincipalId: ada.userId, archivedByPrincipalType: 'user' });
    expect((await t.request('GET', base, { as: ada.as })).body.files.some((f: any) => f.id === file.id)).toBe(false);
    expect((await t.request('GET', `${base}?archived=1`, { as: ada.as })).body.files.map((f: any) => f.id)).toContain(file.id);

    for (const [method, path, body] of [
      ['PATCH', `${base}/${file.id}`, { name: 'x.txt' }],
      ['PATCH', `${base}/${file.id}/metadata`, { starred: true }],
      ['POST', `${base}/${file.id}/share`, undefined],
      ['DELETE', `${base}/${file.id}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { as: ada.as, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const versions = await postMultipart(t, `${base}/${file.id}/versions`, [{ name: 'file', bytes: text('new'), filename: 'old.txt', type: 'text/plain' }], ada.as);
    expect(versions.status).toBe(404);

    const both = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { restore: true, name: 'x.txt' } });
    expect(both.status).toBe(400);
    expect(both.body.error.details[0].path).toEqual(['restore']);
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { restore: false } })).status).toBe(400);
    const restored = await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { restore: true } });
    expect(restored.body).toMatchObject({ archivedAt: null, archivedByPrincipalId: null, name: 'old.txt' });
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: ada.as, body: { restore: true } })).status).toBe(200);
    expect((await auditEvents(t, slug, ada.as, 'file.archived')).find((e) => e.data.fileId === file.id).data).toMatchObject({ name: 'old.txt', surfaceId: file.surfaceId });
    expect((await auditEvents(t, slug, ada.as, 'file.restored')).filter((e) => e.data.fileId === file.id)).toHaveLength(1);
  });

  it('stars, describes and tags (normalised), with one event per changed field', async () => {
    const file = await upload('tagged.txt', text('t'), 'text/plain');
    const res = await t.request('PATCH', `${base}/${file.id}/metadata`, {
      as: ada.as,
      body: { starred: true, description: 'Quarterly numbers', tags: ['  Finance ', 'finance', '', 'Q3', '   '] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ starred: true, starredAt: expect.any(String), description: 'Quarterly numbers', tags: ['finance', 'q3'] });
    const again = await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { starred: true, tags: ['Q3', 'finance'] } });
    expect(again.body.tags).toEqual(['q3', 'finance']);
    const cleared = await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { description: '' } });
    expect(cleared.body.description).toBeNull();

    for (const [event, data] of [
      ['file.starred', { starred: true }],
      ['file.described', { description: 'Quarterly numbers' }],
      ['file.tagged', { tags: ['finance', 'q3'] }],
    ] as const) {
      const events = (await auditEvents(t, slug, ada.as, event)).filter((e) => e.data.fileId === file.id);
      expect(events.at(-1)!.data, event).toMatchObject({ fileId: file.id, name: 'tagged.txt', surfaceId: file.surfaceId, ...data });
    }
    expect((await auditEvents(t, slug, ada.as, 'file.starred')).filter((e) => e.data.fileId === file.id)).toHaveLength(1);

    const tooMany = await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) } });
    expect(tooMany.status).toBe(422);
    const tooLong = await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { tags: ['x'.repeat(33)] } });
    expect(tooLong.status).toBe(422);
    expect((await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { description: 'x'.repeat(2001) } })).status).toBe(422);
    expect((await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { starred: 'yes' } })).status).toBe(400);
    expect((await t.request('PATCH', `${base}/${file.id}/metadata`, { as: ada.as, body: { __proto__: { starred: true } } })).status).toBe(400);
    expect((await t.request('GET', `${base}/${file.id}`, { as: ada.as })).body.tags).toEqual(['q3', 'finance']);
  });

  it('lists with views, search, sorting and order', async () => {
    const list = await t.request('POST', `/api/workspaces/${slug}/surfaces`, { as: ada.as, body: { kind: 'files', slug: 'listing', name: 'Listing' } });
    expect(list.status).toBe(200);
    const listBase = base;
    const up = async (name: string, size: number) => {
      const res = await proxyUpload(t, listBase, ada.as, { bytes: Buffer.alloc(size, 120), name, type: 'text/plain' }, { surface: 'listing' });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const folder = (await t.request('POST', `${base}/folders`, { as: ada.as, body: { surfaceSlug: 'listing', name: 'Budget folder' } })).body;
    const b = await up('beta.txt', 30);
    const a = await up('Alpha.txt', 10);
    const c = await up('gamma budget.txt', 20);
    const nested = (await proxyUpload(t, listBase, ada.as, { bytes: text('in folder'), name: 'budget-nested.txt', type: 'text/plain' }, { surface: 'listing', folder: folder.id })).body;
    const names = async (query: string) => (await t.request('GET', `${base}?surfaceSlug=listing&${query}`, { as: ada.as })).body;

    const root = await names('');
    expect(root.folders.map((f: any) => f.name)).toEqual(['Budget folder']);
    expect(root.files.map((f: any) => f.name)).toEqual(['Alpha.txt', 'beta.txt', 'gamma budget.txt']);
    expect((await names('sort=name_desc')).files.map((f: any) => f.id)).toEqual([c.id, b.id, a.id]);
    expect((await names('sort=largest')).files.map((f: any) => f.id)).toEqual([b.id, c.id, a.id]);
    expect((await names('sort=smallest')).files.map((f: any) => f.id)).toEqual([a.id, c.id, b.id]);
    expect((await names('sort=newest')).files.map((f: any) => f.id)).toEqual([c.id, a.id, b.id]);
    expect((await names('sort=oldest')).files.map((f: any) => f.id)).toEqual([b.id, a.id, c.id]);
    expect((await names('sort=largest&order=asc')).files.map((f: any) => f.id)).toEqual([a.id, c.id, b.id]);
    const search = await names('q=BUDGET');
    expect(search.files.map((f: any) => f.id).sort()).toEqual([c.id, nested.id].sort());
    expect(search.folders.map((f: any) => f.id)).toEqual([folder.id]);
    expect((await names('q=%25')).files).toEqual([]);

    await t.request('PATCH', `${base}/${a.id}/metadata`, { as: ada.as, body: { starred: true } });
    await t.request('PATCH', `${base}/${nested.id}/metadata`, { as: ada.as, body: { starred: true } });
    const starred = await names('view=starred');
    expect(starred.folders).toEqual([]);
    expect(starred.files.map((f: any) => f.id)).toEqual([nested.id, a.id]);
    const recent = await names('view=recent');
    expect(recent.folders).toEqual([]);
    expect(recent.files[0].id).toBe(nested.id);
    expect(recent.files).toHaveLength(4);

    const paged = await names('limit=2');
    expect(paged.files).toHaveLength(2);
    expect(paged.nextOffset).toBe(2);
    const page2 = await names('limit=2&offset=2');
    expect(page2.files.map((f: any) => f.id)).toEqual([c.id]);
    expect(page2.nextOffset).toBeNull();

    expect((await t.request('GET', `${base}?view=all`, { as: ada.as })).status).toBe(400);
    expect((await t.request('GET', `${base}?sort=size`, { as: ada.as })).status).toBe(400);
    expect((await t.request('GET', `${base}?surfaceSlug=nope`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${base}?surfaceSlug=listing&parentFolderId=fld_nope`, { as: ada.as })).status).toBe(404);
  });
});

describe('folders', () => {
  it('creates, renames, moves (never into itself) and archives with what they hold', async () => {
    const create = (name: string, parentFolderId: string | null = null) =>
      t.request('POST', `${base}/folders`, { as: ada.as, body: { surfaceSlug: 'files', parentFolderId, name } });
    const top = await create('Projects');
    expect(top.status, top.text).toBe(200);
    expect(top.body).toMatchObject({ name: 'Projects', surfaceId: expect.any(String), parentFolderId: null, archivedAt: null, createdBy: { id: ada.userId } });
    const child = (await create('Apollo', top.body.id)).body;
    const grandchild = (await create('Specs', child.id)).body;
    expect((await create('../up')).status).toBe(422);
    expect((await create('x', 'fld_missing')).status).toBe(404);

    const renamed = await t.request('PATCH', `${base}/folders/${child.id}`, { as: ada.as, body: { name: 'Apollo 11' } });
    expect(renamed.body.name).toBe('Apollo 11');
    const cycle = await t.request('PATCH', `${base}/folders/${top.body.id}`, { as: ada.as, body: { parentFolderId: grandchild.id } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.details[0].code).toBe('cycle');
    expect((await t.request('PATCH', `${base}/folders/${top.body.id}`, { as: ada.as, body: { parentFolderId: top.body.id } })).status).toBe(400);
    const moved = await t.request('PATCH', `${base}/folders/${grandchild.id}`, { as: ada.as, body: { parentFolderId: top.body.id } });
    expect(moved.body.parentFolderId).toBe(top.body.id);

    const inChild = await upload('plan.txt', text('plan'), 'text/plain', child.id);
    const inGrand = await upload('spec.txt', text('spec'), 'text/plain', grandchild.id);
    const outside = await upload('outside.txt', text('out'), 'text/plain');
    expect((await t.request('DELETE', `${base}/folders/${top.body.id}`, { as: ada.as })).body).toEqual({ ok: true });
    expect((await t.request('GET', base, { as: ada.as })).body.folders.some((f: any) => f.id === top.body.id)).toBe(false);
    for (const id of [inChild.id, inGrand.id]) expect((await t.request('GET', `${base}/${id}`, { as: ada.as })).body.archivedAt).not.toBeNull();
    expect((await t.request('GET', `${base}/${outside.id}`, { as: ada.as })).body.archivedAt).toBeNull();
    expect((await t.request('DELETE', `${base}/folders/${top.body.id}`, { as: ada.as })).status).toBe(404);
    expect((await t.request('PATCH', `${base}/folders/${child.id}`, { as: ada.as, body: { name: 'x' } })).status).toBe(404);

    const [archivedEvent] = (await auditEvents(t, slug, ada.as, 'folder.archived')).filter((e) => e.data.folderId === top.body.id);
    expect(archivedEvent.data).toMatchObject({ folderId: top.body.id, name: 'Projects', surfaceId: top.body.surfaceId });
    expect(archivedEvent.data.archivedFileIds.sort()).toEqual([inChild.id, inGrand.id].sort());
    expect(archivedEvent.data.archivedFolderIds.sort()).toEqual([child.id, grandchild.id].sort());
    const fileEvents = (await auditEvents(t, slug, ada.as, 'file.archived')).filter((e) => e.data.withFolderId === top.body.id);
    expect(fileEvents.map((e) => e.data.fileId).sort()).toEqual([inChild.id, inGrand.id].sort());
    expect((await auditEvents(t, slug, ada.as, 'folder.created')).find((e) => e.data.folderId === top.body.id).data).toMatchObject({ name: 'Projects', surfaceId: top.body.surfaceId });

    // A file restored while its folder stays archived comes back at the root.
    const restored = await t.request('PATCH', `${base}/${inGrand.id}`, { as: ada.as, body: { restore: true } });
    expect(restored.body).toMatchObject({ archivedAt: null, parentFolderId: null });
  });
});

describe('access', () => {
  it('lets viewers read and not write, refuses public readers and anonymous callers', async () => {
    const file = await upload('shared-read.txt', text('read me'), 'text/plain');
    const viewer = await signInUser(t, 'viewer@example.com');
    await addMembership(t, workspaceId, viewer.userId, 'viewer');
    expect((await t.request('GET', base, { as: viewer.as })).status).toBe(200);
    expect((await fetchRaw(t, file.url, { as: viewer.as })).status).toBe(200);
    expect((await t.request('PATCH', `${base}/${file.id}`, { as: viewer.as, body: { name: 'mine.txt' } })).status).toBe(403);
    expect((await proxyUpload(t, base, viewer.as, { bytes: text('x'), name: 'v.txt', type: 'text/plain' })).status).toBe(403);
    expect((await t.request('POST', `${base}/folders`, { as: viewer.as, body: { name: 'v' } })).status).toBe(403);

    // A public workspace: readers see rows and docs, not files; its SSE stream carries no file events for them.
    const owner = await signInUser(t, 'pub-owner@example.com');
    await createWorkspace(t, owner, { name: 'Public', slug: 'public-drive', visibility: 'public' });
    await t.request('POST', '/api/workspaces/public-drive/surfaces', { as: owner.as, body: { kind: 'files', slug: 'files', name: 'Files' } });
    const reader = await signInUser(t, 'reader@example.com');
    const refused = await t.request('GET', '/api/workspaces/public-drive/files', { as: reader.as });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('share link');
    expect((await t.request('GET', '/api/workspaces/public-drive/files')).status).toBe(403);
    expect((await t.request('POST', '/api/workspaces/public-drive/files/folders', { body: { name: 'x' } })).status).toBe(401);
    expect((await t.request('GET', '/api/workspaces/public-drive/rows')).status).toBe(200);
    const sse = openSse(`${t.url}/api/workspaces/public-drive/subscribe`);
    expect(await sse.ready).toBe(200);
    const ownerFile = await proxyUpload(t, '/api/workspaces/public-drive/files', owner.as, { bytes: text('secret name'), name: 'private-name.txt', type: 'text/plain' });
    expect(ownerFile.status).toBe(200);
    await t.request('POST', '/api/workspaces/public-drive/rows', { as: owner.as, body: { data: { title: 'after the file' } } });
    await expect.poll(() => sse.frames.some((f) => f.event === 'row.created')).toBe(true);
    expect(sse.frames.some((f) => f.event?.startsWith('file.'))).toBe(false);
    sse.close();
    expect((await t.request('GET', `/api/workspaces/public-drive/events?action=file.uploaded`, { as: reader.as })).body.events).toEqual([]);
    // A stranger to a private workspace does not learn it exists.
    expect((await t.request('GET', base, { as: reader.as })).status).toBe(404);
  });
});
