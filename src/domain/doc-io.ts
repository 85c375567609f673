import path from 'node:path';
import { Readable } from 'node:stream';
import type { Node as PMNode } from 'prosemirror-model';
import { ApiError, errors, RateLimitedError } from '../errors';
import { docxToDocOffThread, htmlToDocOffThread, writeDocOffThread } from '../files/doc-conversions';
import { docToHtmlPage } from '../files/doc-html';
import { UnreadableFileError, type DocxImages, type ParsedImport } from '../files/doc-parsed';
import { imageLoader, type ImageSource } from '../files/doc-runs';
import { isValidBlobKey } from '../files/blob-store';
import { docFromJSON, markdownToDoc } from '../model/doc/markdown';
import { withSuggestionsRejected } from '../model/doc/suggestions';
import type { Actor } from '../policy/actor';
import type { Surface, Workspace } from '../persistence/schema';
import { storeDocImage } from './doc-images';
import { readDoc, replaceDoc, type DocSelector } from './docs';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { deleteBlobsQuietly, freeStoredBlobs } from './storage';
import { addSurface, deleteSurface } from './surfaces';
import { findVersionedSurface, nameVersion } from './versions';
import { placeholderContent } from './workspace-content';
import type { ServerChangeContext } from '../sync/origins';

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

/** Reads a file into a doc (images not stored yet); Word images come back by their `docx-image:N` source. */
export async function parseDocFile(file: IncomingDocFile): Promise<ParsedImport & { images: DocxImages }> {
  const format = docFileFormat(file.filename, file.contentType);
  if (file.bytes.length === 0) throw errors.validation('The file is empty.', [{ path: ['file'], code: 'empty', message: 'zero bytes' }]);
  if (format === 'docx') {
    try {
      return await docxToDocOffThread(file.bytes);
    } catch (error) {
      if (error instanceof UnreadableFileError) throw notWhatItSays(error.message);
      throw error;
    }
  }
  if (format === 'html') return htmlToDocOffThread(utf8Text(file.bytes, 'HTML'));
  return { doc: markdownToDoc(utf8Text(file.bytes, 'Markdown')), warnings: [], images: new Map() };
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

export type StoredImages = { doc: PMNode; warnings: string[]; storedKeys: string[] };

/**
 * Stores the images a parsed file brought (a Word file's own, `data:`
 * URLs, paths an archive holds) as doc images of the organisation, and
 * points the doc at them. Images of this server stay as they are; images
 * on other sites stay linked (they are not fetched: the server does not
 * reach out for a file's links); an image that cannot be found or read is
 * replaced by its alt text, with a warning. Over the storage quota, what
 * was stored is freed again and the 413 goes up.
 */
export async function storeImportedImages(
  services: Services,
  orgId: string,
  doc: PMNode,
  sources: { docx?: DocxImages; paths?: ImagePathSource },
): Promise<StoredImages> {
  const srcs = new Set<string>();
  doc.descendants((node) => {
    if (node.type.name === 'image' && node.attrs.src) srcs.add(String(node.attrs.src));
  });
  const replaced = new Map<string, string | null>();
  const storedKeys: string[] = [];
  let linked = 0;
  const missing: string[] = [];
  const unreadable: string[] = [];
  try {
    for (const src of srcs) {
      if (blobKeyOf(services, src)) continue;
      if (/^https?:\/\//i.test(src)) {
        linked += 1;
        continue;
      }
      const found = await imageBytes(src, sources);
      if (!found) {
        missing.push(src);
        replaced.set(src, null);
        continue;
      }
      try {
        const stored = await storeDocImage(services, orgId, { bytes: found.bytes, mimetype: found.contentType });
        storedKeys.push(stored.key);
        replaced.set(src, stored.url);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code === 'storage_quota') throw error;
        unreadable.push(src.startsWith('data:') || src.startsWith('docx-image:') ? 'an embedded image' : src);
        replaced.set(src, null);
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
  return { doc: replaced.size ? withImageSources(doc, replaced) : doc, warnings, storedKeys };
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

/** The doc with image sources replaced; an image whose source maps to null becomes its alt text (or nothing). */
function withImageSources(doc: PMNode, sources: Map<string, string | null>): PMNode {
  const rewrite = (node: Record<string, unknown>): Array<Record<string, unknown>> => {
    if (node.type === 'image') {
      const attrs = node.attrs as Record<string, unknown>;
      const next = sources.get(String(attrs.src));
      if (next === undefined) return [node];
      if (next !== null) return [{ ...node, attrs: { ...attrs, src: next } }];
      const alt = typeof attrs.alt === 'string' ? attrs.alt.trim() : '';
      return alt ? [{ type: 'text', text: `[${alt}]`, ...(node.marks ? { marks: node.marks } : {}) }] : [];
    }
    const content = node.content as Array<Record<string, unknown>> | undefined;
    return [content ? { ...node, content: content.flatMap(rewrite) } : node];
  };
  const json = rewrite(doc.toJSON() as Record<string, unknown>)[0]!;
  return docFromJSON(fillEmptyTextblocks(json));
}

/** A textblock may hold nothing, but a block that must hold a block (a cell, a list item) gets an empty paragraph. */
function fillEmptyTextblocks(node: Record<string, unknown>): Record<string, unknown> {
  const content = node.content as Array<Record<string, unknown>> | undefined;
  if (!content) return node;
  const filled = content.map(fillEmptyTextblocks);
  const needsBlock = ['doc', 'tableCell', 'tableHeader', 'blockquote'].includes(String(node.type));
  return { ...node, content: filled.length === 0 && needsBlock ? [{ type: 'paragraph' }] : filled };
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
  const images = await storeImportedImages(services, resolved.workspace.orgId, parsed.doc, { docx: parsed.images });
  let created: Surface | null = null;
  try {
    if (request.mode === 'new') created = await addSurface(services, actor, resolved, { kind: 'doc', name: nameFromFile(request.file.filename) });
    const selector = created ? { surfaceId: created.id } : { surface: request.surface, surfaceId: request.surfaceId };
    const { surface } = await replaceDoc(services, actor, resolved, selector, { content: images.doc.toJSON() }, via);
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

/** A doc body (open suggestions rejected) as a file, streamed. */
export async function exportDocBody(services: Services, body: PMNode, title: string, format: DocExportFormat): Promise<Readable> {
  const loadImage = imageLoader(blobImages(services));
  if (format === 'pdf' || format === 'docx') return writeDocOffThread(format, body, { title, loadImage });
  return Readable.from(docToHtmlPage(body, title));
}

/** The named (or primary) doc surface as a Word file, a PDF or an HTML page. */
export async function exportDoc(services: Services, workspace: Workspace, selector: DocSelector, format: DocExportFormat): Promise<DocExport> {
  const { surface, body } = await readDoc(services, workspace, selector);
  const stream = await exportDocBody(services, withSuggestionsRejected(body), surface.name, format);
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
