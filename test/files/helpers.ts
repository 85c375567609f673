import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { Credential, TestApp } from '../helpers/app';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/** A signed-in owner with a workspace holding a files surface `files`. */
export async function filesWorkspace(t: TestApp, email: string, slug: string): Promise<{ user: TestUser; workspaceId: string; base: string }> {
  const user = await signInUser(t, email);
  const workspace = await createWorkspace(t, user, { name: `Files ${slug}`, slug });
  const surface = await t.request('POST', `/api/workspaces/${slug}/surfaces`, { as: user.as, body: { kind: 'files', slug: 'files', name: 'Files' } });
  if (surface.status !== 200) throw new Error(`POST /surfaces answered ${surface.status}: ${surface.text}`);
  return { user, workspaceId: workspace.id, base: `/api/workspaces/${slug}/files` };
}

export type Response = { status: number; headers: Headers; body: any; text: string };

function credentialHeaders(as?: Credential): Record<string, string> {
  if (!as) return {};
  return 'cookie' in as ? { cookie: `svc-session=${as.cookie}` } : { authorization: `Bearer ${as.bearer}` };
}

async function toResponse(response: globalThis.Response): Promise<Response> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

export type Part = { name: string; value: string } | { name: string; bytes: Uint8Array; filename: string; type?: string };

/** A multipart POST built part by part (fields in the order given). */
export async function postMultipart(t: TestApp, urlPath: string, parts: Part[], as?: Credential): Promise<Response> {
  const form = new FormData();
  for (const part of parts) {
    if ('value' in part) form.append(part.name, part.value);
    else form.append(part.name, new Blob([new Uint8Array(part.bytes)], part.type === undefined ? {} : { type: part.type }), part.filename);
  }
  return toResponse(await fetch(`${t.url}${urlPath}`, { method: 'POST', body: form, headers: credentialHeaders(as) }));
}

/** `POST /files/proxy-upload` of one file at the root (or `folder`) of the surface `files`. */
export async function proxyUpload(
  t: TestApp,
  base: string,
  as: Credential,
  file: { bytes: Uint8Array; name: string; type?: string },
  options: { folder?: string | null; surface?: string } = {},
): Promise<Response> {
  return postMultipart(
    t,
    `${base}/proxy-upload`,
    [
      { name: 'surface_slug', value: options.surface ?? 'files' },
      { name: 'parent_folder_id', value: options.folder ?? '' },
      { name: 'file', bytes: file.bytes, filename: file.name, type: file.type },
    ],
    as,
  );
}

export async function fetchRaw(t: TestApp, urlOrPath: string, init: RequestInit & { as?: Credential } = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const url = urlOrPath.startsWith('http') ? urlOrPath : `${t.url}${urlOrPath}`;
  const response = await fetch(url, { ...init, headers: { ...credentialHeaders(init.as), ...(init.headers as Record<string, string>) } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Every file under the local blob store (the temp dir of in-flight writes included). */
export async function localBlobFiles(t: TestApp): Promise<string[]> {
  const root = path.join(t.dataDir, 'blobs');
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

/** Entries of a zip: name → bytes. */
/** A zip of the given entries (name, content), as an archiver would write it. */
export function zipOf(files: Array<[string, Buffer | string]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of files) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

export async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))));
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
        stream.on('error', reject);
      });
    });
    zip.readEntry();
  });
  return entries;
}

/** A JPEG with EXIF (orientation 6, a copyright string and a GPS-like comment) to prove stripping. */
export async function photoWithExif(width = 640, height = 480): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .jpeg()
    .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'secret-copyright', Artist: 'Ada Lovelace' } } })
    .toBuffer();
}

export async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 10, g: 200, b: 90, alpha: 1 } } }).png().toBuffer();
}

/** Audit log entries of one action, newest first. */
export async function auditEvents(t: TestApp, slug: string, as: Credential, action: string): Promise<any[]> {
  const res = await t.request('GET', `/api/workspaces/${slug}/events?action=${action}&limit=100`, { as });
  if (res.status !== 200) throw new Error(`GET /events answered ${res.status}: ${res.text}`);
  return res.body.events;
}
