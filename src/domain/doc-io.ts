import path from 'node:path';
import type { Readable } from 'node:stream';
import * as Y from 'yjs';
import { ApiError, errors, RateLimitedError } from '../errors';
import { bodyUpdateOffThread, exportDocOffThread, readDocFileOffThread, type ReadDocFile } from '../files/doc-conversions';
import { UnreadableFileError, type DocxImages } from '../files/doc-parsed';
import { imageLoader, type ImageSource, type LoadedImage } from '../files/doc-runs';
import { isValidBlobKey } from '../files/blob-store';
import { bodyImageSources, holdsState } from '../model/doc/body-state';
import { BODY_SECTION_PARTS, bodyMark, unchangedSince } from '../model/doc/body-sections';
import type { ReferenceChanges } from '../model/doc/references';
import type { Actor } from '../policy/actor';
import type { Surface, Workspace } from '../persistence/schema';
import { storeDocImage } from './doc-images';
import { docSurfaceForWrite, documentOf, pickDocSurface, type DocSelector } from './docs';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { deleteBlobsQuietly, freeStoredBlobs } from './storage';
import { addSurface, deleteSurface } from './surfaces';
import { findVersionedSurface, nameVersion } from './versions';
import { placeholderContent } from './workspace-content';
import { callerOrigin, type ServerChangeContext, type ServerOrigin } from '../sync/origins';

/**
 * Docs in and out as files (docs/IMPORT-EXPORT.md): a Word file, an HTML
 * page or Markdown becomes a doc's body (replacing it as one attributed
 * change with a named version, or as a new doc surface), and a doc leaves
 * as Word, PDF or an HTML page. The converters are src/files/doc-*.ts,
 * the heavy ones run in worker threads (src/files/doc-conversions.ts);
 * here the images are stored like uploaded ones and the body is written.
 */

export const DOC_FILE_FORMATS = ['docx', 'html', 'markdown'] as const;
export type DocFileFormat = (typeof DOC_FILE_FORMATS)[number];

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const BY_EXTENSION: Record<string, DocFileFormat> = { '.docx': 'docx', '.html': 'html', '.htm': 'html', '.md': 'markdown', '.markdown': 'markdown' };
const BY_TYPE: Record<string, DocFileFormat> = { [DOCX_TYPE]: 'docx', 'text/html': 'html', 'application/xhtml+xml': 'html', 'text/markdown': 'markdown', 'text/x-markdown': 'markdown' };

/** The format of an uploaded file, by its name's extension, else its declared type; 415 for anything else. */
export function docFileFormat(name: string, contentType: string | undefined): DocFileFormat {
  const byName = BY_EXTENSION[path.extname(name).toLowerCase()];
  const byType = BY_TYPE[(contentType ?? '').split(';')[0]!.trim().toLowerCase()];
  const format = byName ?? byType;
  if (!format) {
    throw new ApiError(415, 'unsupported_media_type', 'A doc imports from a Word file (.docx), an HTML page (.html) or Markdown (.md).', {
      name,
      contentType: contentType ?? null,
      accepted: ['.docx', '.html', '.md'],
    });
  }
  return format;
}

/** 422 for a file whose bytes are not what its type says. */
function notWhatItSays(message: string): ApiError {
  return errors.validation(message, [{ path: ['file'], code: 'content_type_mismatch', message }]);
}

/** Text formats must be UTF-8 text: a NUL byte or an invalid sequence is a binary file under a text name. */
function utf8Text(bytes: Buffer, what: string): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (bytes.includes(0) || text.includes('\uFFFD')) throw notWhatItSays(`This file is not UTF-8 text, so it cannot be read as ${what}.`);
  return text.replace(/^\uFEFF/, '');
}

export type IncomingDocFile = { bytes: Buffer; filename: string; contentType?: string };

/** Reads a file into a doc body in a conversion thread (images not stored yet); Word images come back by their `docx-image:N` source. */
export async function parseDocFile(file: IncomingDocFile): Promise<ReadDocFile> {
  const format = docFileFormat(file.filename, file.contentType);
  if (file.bytes.length === 0) throw errors.validation('The file is empty.', [{ path: ['file'], code: 'empty', message: 'zero bytes' }]);
  try {
    if (format === 'docx') return await readDocFileOffThread({ format, bytes: file.bytes });
    return await readDocFileOffThread({ format, text: utf8Text(file.bytes, format === 'html' ? 'HTML' : 'Markdown') });
  } catch (error) {
    if (error instanceof UnreadableFileError) throw notWhatItSays(error.message);
    throw error;
  }
}

/** Where the bytes of an image named by a relative path come from (an archive's entry), if anywhere. */
export type ImagePathSource = (src: string) => Promise<{ bytes: Buffer; contentType: string } | null>;

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i;

function blobKeyOf(services: Services, src: string): string | null {
  const prefixes = [`${services.config.publicUrl}/api/blobs/`, '/api/blobs/'];
  const prefix = prefixes.find((p) => src.startsWith(p));
  const key = prefix ? src.slice(prefix.length) : null;
  return key && isValidBlobKey(key) ? key : null;
}

/** Where each image source of a doc goes once its image is stored (null: left out for its alt text), what to tell, and the keys stored. */
export type StoredImages = { images: Record<string, string | null>; warnings: string[]; storedKeys: string[] };

/**
 * Stores the images a parsed file brought (a Word file's own, `data:`
 * URLs, paths an archive holds) as doc images of the organisation, and
 * says where the doc's images should point. Images of this server stay as
 * they are; images on other sites stay linked (they are not fetched: the
 * server does not reach out for a file's links); an image that cannot be
 * found or read is replaced by its alt text, with a warning. Over the
 * storage quota, what was stored is freed again and the 413 goes up.
 */
export async function storeImportedImages(
  services: Services,
  orgId: string,
  imageSources: readonly string[],
  sources: { docx?: DocxImages; paths?: ImagePathSource },
): Promise<StoredImages> {
  const replaced: Record<string, string | null> = {};
  const storedKeys: string[] = [];
  let linked = 0;
  const missing: string[] = [];
  const unreadable: string[] = [];
  try {
    for (const src of new Set(imageSources)) {
      if (blobKeyOf(services, src)) continue;
      if (/^https?:\/\//i.test(src)) {
        linked += 1;
        continue;
      }
      const found = await imageBytes(src, sources);
      if (!found) {
        missing.push(src);
        replaced[src] = null;
        continue;
      }
      try {
        const stored = await storeDocImage(services, orgId, { bytes: found.bytes, mimetype: found.contentType });
        storedKeys.push(stored.key);
        replaced[src] = stored.url;
      } catch (error) {
        if (!(error instanceof ApiError) || error.code === 'storage_quota') throw error;
        unreadable.push(src.startsWith('data:') || src.startsWith('docx-image:') ? 'an embedded image' : src);
        replaced[src] = null;
      }
    }
  } catch (error) {
    await forgetImages(services, storedKeys);
    throw error;
  }
  const warnings: string[] = [];
  if (linked) warnings.push(`${linked} × image linked from another site is kept as a link, not copied`);
  if (missing.length) warnings.push(`image not found in the file, left out: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`);
  if (unreadable.length) warnings.push(`${unreadable.length} × image that could not be read, left out`);
  return { images: replaced, warnings, storedKeys };
}

async function imageBytes(src: string, sources: { docx?: DocxImages; paths?: ImagePathSource }): Promise<{ bytes: Buffer; contentType: string } | null> {
  const embedded = sources.docx?.get(src);
  if (embedded) return { bytes: await embedded.read(), contentType: embedded.contentType };
  const data = DATA_URL.exec(src);
  if (data) return { bytes: Buffer.from(data[2]!.replace(/\s/g, ''), 'base64'), contentType: data[1]!.toLowerCase() };
  if (/^[a-z][a-z0-9+.-]*:/i.test(src) || !sources.paths) return null;
  return sources.paths(src);
}

/** Un-counts and deletes images stored for an import that did not go in. */
export async function forgetImages(services: Services, keys: string[]) {
  if (keys.length === 0) return;
  await services.db.transaction().execute((tx) => freeStoredBlobs(tx, keys));
  await deleteBlobsQuietly(services, keys);
}

/**
 * Writes a doc read by `parseDocFile` (its images and links changed as
 * `changes` says) over the body of `document` as one change by `origin`,
 * as a plain write would (`replaceDoc`): the replacement is computed in a
 * conversion thread on a copy of the document's state, and this thread
 * only applies the one update that makes it. Should the live document
 * have lost part of the state the update was made on meanwhile (a failed
 * server change taken back out), it is made again on the state as it is.
 */
export async function writeBodyOffThread(services: Services, document: string, origin: ServerOrigin, doc: string, changes: ReferenceChanges): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { state, stateVector, mark } = await services.sync.read(document, (live) => ({
      state: Y.encodeStateAsUpdate(live),
      stateVector: Y.encodeStateVector(live),
      mark: bodyMark(live),
    }));
    const replacement = await bodyUpdateOffThread(state, doc, changes);
    if (!replacement) return;
    const sectionParts = JSON.parse(replacement.sectionParts) as unknown;
    const applied = await services.sync.transact(document, origin, (live) => {
      if (!holdsState(live, stateVector)) return false;
      // Still the state the thread worked on: the body it made is the one the update makes here, and so are its sections.
      if (unchangedSince(live, mark)) live.transact((transaction) => transaction.meta.set(BODY_SECTION_PARTS, sectionParts));
      Y.applyUpdate(live, replacement.update, origin);
      return true;
    });
    if (applied) return;
    if (attempt >= 2) throw new Error(`The document ${document} kept changing its state under an import; nothing was written.`);
  }
}

export type DocImportRequest = DocSelector & { mode: 'replace' | 'new'; file: IncomingDocFile };

/** A new surface's name: the file's name without its extension. */
export function nameFromFile(filename: string): string {
  const base = path.basename(filename.replace(/\\/g, '/'));
  const stem = base.slice(0, base.length - path.extname(base).length).trim();
  return (stem || 'Imported doc').slice(0, 200);
}

/**
 * Imports a file into a doc. `replace` (the default) writes it over the
 * named (or primary) doc surface as one change by the caller, then names
 * a version "Imported <file>"; `new` makes a doc surface named after the
 * file. The file is read and its images stored before anything is
 * written; if the write fails, the images and a new surface go again.
 */
export async function importDocFile(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  request: DocImportRequest,
  via: ServerChangeContext['via'] = 'rest',
): Promise<{ surface: Surface; warnings: string[] }> {
  return inConversionSlot(services, resolved.workspace.orgId, () => importDocFileNow(services, actor, resolved, request, via));
}

async function importDocFileNow(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  request: DocImportRequest,
  via: ServerChangeContext['via'],
): Promise<{ surface: Surface; warnings: string[] }> {
  const parsed = await parseDocFile(request.file);
  const images = await storeImportedImages(services, resolved.workspace.orgId, parsed.imageSources, { docx: parsed.images });
  let created: Surface | null = null;
  try {
    if (request.mode === 'new') created = await addSurface(services, actor, resolved, { kind: 'doc', name: nameFromFile(request.file.filename) });
    const selector = created ? { surfaceId: created.id } : { surface: request.surface, surfaceId: request.surfaceId };
    const surface = await docSurfaceForWrite(services, actor, resolved, selector);
    await writeBodyOffThread(services, documentOf(surface), callerOrigin(actor, via), parsed.doc, { images: images.images });
    const versioned = await findVersionedSurface(services, resolved.workspace, surface.id);
    await nameVersion(services, actor, resolved, versioned, `Imported ${path.basename(request.file.filename.replace(/\\/g, '/')).slice(0, 180)}`);
    return { surface, warnings: [...parsed.warnings, ...images.warnings] };
  } catch (error) {
    await forgetImages(services, images.storedKeys);
    if (created) await deleteSurface(services, actor, resolved, created, { force: true, content: placeholderContent }).catch(() => {});
    throw error;
  }
}

export const DOC_EXPORT_FORMATS = ['docx', 'pdf', 'html'] as const;
export type DocExportFormat = (typeof DOC_EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<DocExportFormat, string> = {
  docx: DOCX_TYPE,
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
};

export type DocExport = { filename: string; contentType: string; stream: Readable };

/** Reads an image of this server's blob store by its URL; other images are not fetched. */
export function blobImages(services: Services): ImageSource {
  return async (src) => {
    const key = blobKeyOf(services, src);
    const blob = key ? await services.blobs.get(key) : null;
    if (!blob) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of blob.body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  };
}

/** Every image the body shows, loaded once here (they come from the blob store), for the conversion thread. */
async function loadImages(services: Services, sources: readonly string[]): Promise<Record<string, LoadedImage | null>> {
  const loadImage = imageLoader(blobImages(services));
  const images: Record<string, LoadedImage | null> = {};
  for (const src of sources) images[src] = await loadImage(src);
  return images;
}

/**
 * The named (or primary) doc surface as a Word file, a PDF or an HTML page,
 * open suggestions rejected. This thread takes only the document's encoded
 * state and the images it shows; the body is read from that state and
 * written in a conversion thread.
 */
export async function exportDoc(services: Services, workspace: Workspace, selector: DocSelector, format: DocExportFormat): Promise<DocExport> {
  const surface = await pickDocSurface(services, workspace, selector);
  const { state, imageSources } = await services.sync.read(documentOf(surface), (doc) => ({ state: Y.encodeStateAsUpdate(doc), imageSources: bodyImageSources(doc) }));
  const images = await loadImages(services, imageSources);
  const stream = exportDocOffThread(format, { state, title: surface.name, images });
  return { filename: `${surface.name || surface.slug}.${format}`, contentType: EXPORT_CONTENT_TYPES[format], stream };
}

/**
 * Conversions (imports and exports of docs) an organisation may run at
 * once in this process: each holds a doc and its images in memory and a
 * place in the process's conversion threads (src/files/doc-conversions.ts),
 * so a team exporting a hundred PDFs waits its turn (429) rather than
 * making every other organisation's conversions wait behind theirs.
 */
export const DOC_CONVERSIONS_AT_ONCE = 2;

function conversionSlot(services: Services, orgId: string): () => void {
  const release = services.limits.running.tryAcquire(`doc_conversion:${orgId}`, DOC_CONVERSIONS_AT_ONCE);
  if (release) return release;
  const now = services.clock.now();
  throw new RateLimitedError(
    'doc_conversions',
    DOC_CONVERSIONS_AT_ONCE,
    'concurrent',
    new Date(now.getTime() + 2000),
    now,
    `This organisation is already converting ${DOC_CONVERSIONS_AT_ONCE} docs, the most it may at once; nothing was read or written.`,
  );
}

/** Runs `work` in one of the organisation's conversion slots (429 when none is free). */
export async function inConversionSlot<T>(services: Services, orgId: string, work: () => Promise<T>): Promise<T> {
  const release = conversionSlot(services, orgId);
  try {
    return await work();
  } finally {
    release();
  }
}

/** Runs `open` in one of the organisation's conversion slots, held until the stream it opens has been read or dropped. */
export async function streamInConversionSlot<T extends { stream: NodeJS.ReadableStream }>(services: Services, orgId: string, open: () => Promise<T>): Promise<T> {
  const release = conversionSlot(services, orgId);
  try {
    const opened = await open();
    for (const event of ['close', 'end', 'error']) opened.stream.once(event, release);
    return opened;
  } catch (error) {
    release();
    throw error;
  }
}

/** `exportDoc` holding a conversion slot until the file has been sent (or the client went away). */
export async function exportDocFile(services: Services, workspace: Workspace, selector: DocSelector, format: DocExportFormat): Promise<DocExport> {
  return streamInConversionSlot(services, workspace.orgId, () => exportDoc(services, workspace, selector, format));
}
