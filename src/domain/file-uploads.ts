import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, errors } from '../errors';
import type { Actor, Principal } from '../policy/actor';
import type { Author } from '../model/schemas/common';
import { baseType, ContentMismatchError, extensionFor, isRasterImage, mimeCategory, resolveContentType } from '../files/content-types';
import { processFileImage } from '../files/images';
import { sanitizeSvg } from '../files/sanitize';
import { newId } from '../lib/ids';
import { hashToken, randomToken, safeEqual } from '../lib/secrets';
import { findWorkspacesBySlug } from '../persistence/access';
import type { Tx } from '../persistence/database';
import { deleteUpload, findUpload, insertFile, lockFolder, insertUpload, lockFile, markUploadCompleted, transitionUpload, updateFile } from '../persistence/files';
import type { FileExif, FileRow, FileUploadRow } from '../persistence/schema';
import type { LedgerEntry } from '../persistence/storage';
import { findPrincipals, findSurface } from '../persistence/workspaces';
import type { Services } from './services';
import { commitStorage, deleteBlobsQuietly, freeStoredBlobs, releaseStorage, reserveStorage, type StorageReservation } from './storage';
import {
  byOf,
  checkName,
  FILE_LIMITS,
  fileEvent,
  findFileIn,
  findFilesSurface,
  findTargetFolder,
  viewFile,
  type FilesScope,
  type FileView,
  type WorkspaceRef,
} from './files';
import { transactWithEvents } from './transact';

/**
 * Bytes into files surfaces: proxy uploads (multipart through the server,
 * 25 MB), direct uploads (a one-shot PUT URL: presigned S3, or the
 * server's own on the local store), and new versions of a file.
 *
 * What is stored is never just what was sent:
 * - the declared type is checked against the bytes (./files/content-types.ts;
 *   a contradiction is 422 `validation` with detail code
 *   `content_type_mismatch`);
 * - raster images are re-encoded in their own format without metadata
 *   (orientation applied first), `exif` records their size and original
 *   orientation, and a 256-px webp thumbnail is made; an image sharp
 *   cannot decode is stored as it is, without thumbnail or `exif`;
 * - SVG is sanitised (no scripts, handlers, foreign objects, external refs);
 * - an empty file is refused.
 *
 * Every stored byte counts against the org's quota (./storage.ts): bytes
 * are reserved before they are written, so a refused upload stores nothing.
 */

export type PreparedFile = { bytes: Buffer; contentType: string; sha256: string; exif: FileExif | null; thumbnail: Buffer | null };

const DIRECT_UPLOAD_TTL_MS = 60 * 60 * 1000;
/** A direct upload may complete this long after its URL expired (the PUT may have started just before). */
const DIRECT_UPLOAD_GRACE_MS = 60 * 60 * 1000;

function mismatch(error: ContentMismatchError): ApiError {
  return errors.validation(error.message, [{ path: ['file'], code: 'content_type_mismatch', message: error.message }]);
}

function emptyFile(): ApiError {
  return errors.validation('The file is empty; zero-byte files are not stored.', [{ path: ['file'], code: 'empty', message: 'the file has no bytes' }]);
}

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** What will be stored for these bytes (see the module comment); 422 when the bytes contradict the type, or are none. */
export async function prepareFileBytes(bytes: Buffer, declaredType: string | undefined, name: string): Promise<PreparedFile> {
  if (bytes.byteLength === 0) throw emptyFile();
  let contentType: string;
  try {
    contentType = await resolveContentType(bytes, declaredType, name);
  } catch (error) {
    if (error instanceof ContentMismatchError) throw mismatch(error);
    throw error;
  }
  let stored = bytes;
  let exif: FileExif | null = null;
  let thumbnail: Buffer | null = null;
  if (contentType === 'image/svg+xml') {
    const clean = sanitizeSvg(bytes.toString('utf8'));
    if (!clean) throw mismatch(new ContentMismatchError('The file is declared as an SVG image but holds no <svg> element.'));
    stored = Buffer.from(clean, 'utf8');
  } else if (isRasterImage(contentType)) {
    const image = await processFileImage(bytes);
    if (image) {
      stored = image.bytes;
      contentType = image.contentType;
      exif = image.exif;
      thumbnail = image.thumbnail;
    }
  }
  return { bytes: stored, contentType, sha256: sha256Of(stored), exif, thumbnail };
}

function blobKeysFor(workspaceId: string, ownerId: string, contentType: string) {
  const ext = extensionFor(contentType);
  const blobKey = `files/${workspaceId}/${ownerId}/${randomToken(12)}${ext ? `.${ext}` : ''}`;
  return { blobKey, thumbKey: `${blobKey}.thumb.webp` };
}

/** Writes the file's blob and thumbnail; the reservation covers both keys, so a failure leaves nothing once released. */
async function putPrepared(services: Services, keys: { blobKey: string; thumbKey: string }, prepared: PreparedFile): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = [];
  const { size } = await services.blobs.put(keys.blobKey, prepared.bytes, prepared.contentType);
  entries.push({ key: keys.blobKey, size, kind: 'file' });
  if (prepared.thumbnail) {
    const thumb = await services.blobs.put(keys.thumbKey, prepared.thumbnail, 'image/webp');
    entries.push({ key: keys.thumbKey, size: thumb.size, kind: 'thumbnail' });
  }
  return entries;
}

/** A folder checked at the start may have been archived meanwhile: checked again, under its lock, in the writing transaction. */
async function assertFolderStillLive(tx: Tx, workspaceId: string, folderId: string | null) {
  if (!folderId) return;
  const folder = await lockFolder(tx, workspaceId, folderId);
  if (!folder || folder.archivedAt) throw errors.notFound('Folder');
}

type NewFileInput = {
  scope: FilesScope;
  /** A principal, or a form uploading what someone attached to their answer. */
  principal: Author;
  /** Uploaded into a cell (or a form), not into the drive: trashed once no row names it. */
  cellUpload?: boolean;
  fileId: string;
  name: string;
  parentFolderId: string | null;
  prepared: Omit<PreparedFile, 'bytes'> & { size: number };
  blobKey: string;
  thumbKey: string | null;
};

/** Inserts the file row with its `file.uploaded` event, in the transaction that commits its storage. */
async function insertNewFile(services: Services, tx: Tx, input: NewFileInput): Promise<FileRow> {
  await assertFolderStillLive(tx, input.scope.resolved.workspace.id, input.parentFolderId);
  const now = services.clock.now();
  const by = { id: input.principal.id, type: input.principal.principalType };
  return insertFile(tx, {
    id: input.fileId,
    orgId: input.scope.resolved.workspace.orgId,
    workspaceId: input.scope.resolved.workspace.id,
    surfaceId: input.scope.surface.id,
    parentFolderId: input.parentFolderId,
    name: input.name,
    size: input.prepared.size,
    contentType: input.prepared.contentType,
    blobKey: input.blobKey,
    thumbKey: input.thumbKey,
    sha256: input.prepared.sha256,
    exif: input.prepared.exif,
    createdAt: now,
    createdById: by.id,
    createdByType: by.type,
    updatedAt: now,
    updatedById: by.id,
    updatedByType: by.type,
    cellUpload: input.cellUpload ?? false,
  });
}

function uploadedEvent(scope: FilesScope, principal: Author, file: FileRow) {
  return fileEvent('file.uploaded', scope, principal, file, {
    parentFolderId: file.parentFolderId,
    size: file.size,
    contentType: file.contentType,
    sha256: file.sha256,
  });
}

/** Reserve, write, then record in one transaction; on any failure the reservation is released and its blobs deleted. */
async function storeNewFile(
  services: Services,
  scope: FilesScope,
  principal: Author,
  input: { name: string; parentFolderId: string | null; prepared: PreparedFile; cellUpload?: boolean },
): Promise<FileView> {
  const fileId = newId('fil');
  const keys = blobKeysFor(scope.resolved.workspace.id, fileId, input.prepared.contentType);
  const bytes = input.prepared.bytes.byteLength + (input.prepared.thumbnail?.byteLength ?? 0);
  const reservation = await reserveStorage(services, scope.resolved.workspace.orgId, bytes, { blobKeys: [keys.blobKey, keys.thumbKey] });
  try {
    const entries = await putPrepared(services, keys, input.prepared);
    return await transactWithEvents(services, async (tx, events) => {
      await commitStorage(services, tx, reservation, entries);
      const file = await insertNewFile(services, tx, {
        scope,
        principal,
        fileId,
        name: input.name,
        parentFolderId: input.parentFolderId,
        prepared: { ...input.prepared, size: entries[0]!.size },
        blobKey: keys.blobKey,
        thumbKey: input.prepared.thumbnail ? keys.thumbKey : null,
        cellUpload: input.cellUpload,
      });
      events.push(uploadedEvent(scope, principal, file));
      return viewFile(tx, scope, file);
    });
  } catch (error) {
    await releaseStorage(services, reservation);
    throw error;
  }
}

export type IncomingFile = { bytes: Buffer; filename: string; mimetype: string | undefined };

/** `POST /files/proxy-upload`: the bytes came through the server (at most 25 MB, enforced by the route). */
export async function proxyUpload(
  services: Services,
  actor: Actor,
  resolved: WorkspaceRef,
  input: { surfaceSlug: string; parentFolderId: string | null; file: IncomingFile },
): Promise<FileView> {
  const scope = await findFilesSurface(services, resolved, input.surfaceSlug);
  const folder = await findTargetFolder(services, scope, input.parentFolderId);
  const name = checkName(input.file.filename, ['file']);
  const prepared = await prepareFileBytes(input.file.bytes, input.file.mimetype, name);
  return storeNewFile(services, scope, actor.principal, { name, parentFolderId: folder?.id ?? null, prepared });
}

/**
 * A file uploaded into an attachment cell, or attached to a form's answer:
 * checked and processed as a proxy upload, stored at the root of the files
 * surface `scope` names, and marked as a cell's (`cell_upload`), so the
 * trash takes it once no row names it (file-trash.ts).
 */
export async function uploadCellFile(services: Services, principal: Author, scope: FilesScope, file: IncomingFile): Promise<FileView> {
  const name = checkName(file.filename, ['file']);
  const prepared = await prepareFileBytes(file.bytes, file.mimetype, name);
  return storeNewFile(services, scope, principal, { name, parentFolderId: null, prepared, cellUpload: true });
}

/**
 * `POST /files/{id}/versions`: new bytes for the same file. The id, name,
 * folder, comments and share links stay; `blobKey`, `sha256`, `size`,
 * `contentType`, `exif` and the thumbnail change and `version` goes up.
 * The new bytes must be of the file's MIME category (image, text, video,
 * ...; 400 otherwise). The previous version's bytes are deleted and stop
 * counting against the quota.
 */
export async function replaceVersion(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string, upload: IncomingFile): Promise<FileView> {
  const { scope, file } = await findFileIn(services, resolved, fileId, { live: true });
  const prepared = await prepareFileBytes(upload.bytes, upload.mimetype, upload.filename || file.name);
  const assertSameCategory = (current: FileRow) => {
    if (mimeCategory(prepared.contentType) !== mimeCategory(current.contentType)) {
      throw errors.badRequest(
        `A new version must be of the same kind as the file (${mimeCategory(current.contentType)}: ${current.contentType}); this upload is ${prepared.contentType}. Upload it as a new file instead.`,
        [{ path: ['file'], code: 'mime_category_mismatch', message: `expected a ${mimeCategory(current.contentType)} file` }],
      );
    }
  };
  assertSameCategory(file);
  const keys = blobKeysFor(resolved.workspace.id, fileId, prepared.contentType);
  const bytes = prepared.bytes.byteLength + (prepared.thumbnail?.byteLength ?? 0);
  const reservation = await reserveStorage(services, resolved.workspace.orgId, bytes, { blobKeys: [keys.blobKey, keys.thumbKey] });
  try {
    const entries = await putPrepared(services, keys, prepared);
    const { view, replacedKeys } = await transactWithEvents(services, async (tx, events) => {
      const current = await lockFile(tx, resolved.workspace.id, fileId);
      if (!current || current.archivedAt) throw errors.notFound('File');
      assertSameCategory(current);
      await commitStorage(services, tx, reservation, entries);
      const by = byOf(actor.principal);
      const updated = await updateFile(tx, fileId, {
        blobKey: keys.blobKey,
        thumbKey: prepared.thumbnail ? keys.thumbKey : null,
        sha256: prepared.sha256,
        size: entries[0]!.size,
        contentType: prepared.contentType,
        exif: prepared.exif,
        version: current.version + 1,
        updatedAt: services.clock.now(),
        updatedById: by.id,
        updatedByType: by.type,
      });
      const replacedKeys = [current.blobKey, ...(current.thumbKey ? [current.thumbKey] : [])];
      await freeStoredBlobs(tx, replacedKeys);
      events.push(
        fileEvent('file.version_replaced', scope, actor.principal, updated, {
          version: updated.version,
          previousSha256: current.sha256,
          sha256: updated.sha256,
          size: updated.size,
          contentType: updated.contentType,
        }),
      );
      return { view: await viewFile(tx, scope, updated), replacedKeys };
    });
    await deleteBlobsQuietly(services, replacedKeys);
    return view;
  } catch (error) {
    await releaseStorage(services, reservation);
    throw error;
  }
}

// ------------------------------------------------------------------ direct uploads

export type DirectUploadRequest = { surfaceSlug: string; parentFolderId: string | null; name: string; size: number; contentType: string };
export type DirectUploadTicket = { uploadId: string; uploadUrl: string; method: 'PUT'; headers: Record<string, string>; expiresAt: Date };

const reservationOf = (upload: FileUploadRow): StorageReservation => ({
  id: upload.reservationId,
  orgId: upload.orgId,
  bytes: upload.size,
  blobKeys: [upload.blobKey, `${upload.blobKey}.thumb.webp`],
});

/**
 * The handshake: checks the target and the name, reserves the declared
 * size against the quota (413 when it does not fit) and hands out a URL
 * to PUT the bytes to within an hour: presigned S3, or on the local store
 * this server's one-shot URL, which completes the upload by itself.
 */
export async function startDirectUpload(services: Services, actor: Actor, resolved: WorkspaceRef, request: DirectUploadRequest): Promise<DirectUploadTicket> {
  const scope = await findFilesSurface(services, resolved, request.surfaceSlug);
  const folder = await findTargetFolder(services, scope, request.parentFolderId);
  const name = checkName(request.name, ['clientPayload', 'name']);
  if (request.size === 0) throw errors.validation('The file is empty; zero-byte files are not stored.', [{ path: ['clientPayload', 'size'], code: 'empty', message: 'size must be at least 1' }]);
  const contentType = baseType(request.contentType) || 'application/octet-stream';
  const uploadId = newId('upl');
  const token = randomToken();
  const { blobKey } = blobKeysFor(resolved.workspace.id, uploadId, contentType);
  const now = services.clock.now();
  const expiresAt = new Date(now.getTime() + DIRECT_UPLOAD_TTL_MS);
  const reservation = await reserveStorage(services, resolved.workspace.orgId, request.size, {
    blobKeys: [blobKey, `${blobKey}.thumb.webp`],
    ttlMs: DIRECT_UPLOAD_TTL_MS + DIRECT_UPLOAD_GRACE_MS,
  });
  try {
    const by = byOf(actor.principal);
    await insertUpload(services.db, {
      id: uploadId,
      tokenHash: hashToken(token),
      orgId: resolved.workspace.orgId,
      workspaceId: resolved.workspace.id,
      surfaceId: scope.surface.id,
      parentFolderId: folder?.id ?? null,
      name,
      size: request.size,
      contentType,
      blobKey,
      reservationId: reservation.id,
      createdById: by.id,
      createdByType: by.type,
      createdAt: now,
      expiresAt,
    });
    const headers = { 'content-type': contentType };
    if (services.blobs.presignPut) {
      const signed = await services.blobs.presignPut(blobKey, { contentType, contentLength: request.size, expiresInSeconds: DIRECT_UPLOAD_TTL_MS / 1000 });
      return { uploadId, uploadUrl: signed.url, method: 'PUT', headers: signed.headers, expiresAt };
    }
    return { uploadId, uploadUrl: `${services.config.publicUrl}/api/file-uploads/${uploadId}?token=${token}`, method: 'PUT', headers, expiresAt };
  } catch (error) {
    await releaseStorage(services, reservation);
    throw error;
  }
}

/**
 * The body, failing as soon as more than `limit` bytes arrived. A generator
 * rather than a piped transform: nothing is read (and nothing can fail
 * unobserved) until the store's pipeline consumes it. Failing leaves the
 * body to its owner: a request's body destroyed here is cut from its
 * connection, which then can no longer be closed after the 413 and lingers
 * until the keep-alive timeout.
 */
async function* atMost(body: Readable, limit: number, onCount: (n: number) => void): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    seen += chunk.byteLength;
    onCount(seen);
    if (seen > limit) throw errors.payloadTooLarge(`The upload was declared as ${limit} bytes; more were sent.`);
    yield chunk;
  }
}

/**
 * The local store's one-shot URL: the body is streamed into the store
 * (never held in memory) and must be exactly the declared size; then the
 * upload completes as `complete` would, attributed to whoever started it.
 * The URL works once: a second PUT after completion is 404.
 */
export async function receiveDirectUpload(services: Services, uploadId: string, token: string, body: Readable): Promise<FileView> {
  const upload = await findUpload(services.db, uploadId);
  if (!upload || !safeEqual(hashToken(token), upload.tokenHash) || upload.state === 'completed') throw errors.notFound('Upload');
  if (upload.expiresAt.getTime() < services.clock.now().getTime()) throw errors.notFound('Upload');
  if (!(await transitionUpload(services.db, uploadId, 'pending', 'receiving'))) {
    throw errors.conflict('This upload is already being received.');
  }
  let received = 0;
  try {
    await services.blobs.put(upload.blobKey, Readable.from(atMost(body, upload.size, (n) => (received = n))), upload.contentType);
  } catch (error) {
    await transitionUpload(services.db, uploadId, 'receiving', 'pending');
    if (error instanceof ApiError) throw error;
    throw errors.badRequest(`The upload was interrupted after ${received} bytes; PUT the whole file again.`);
  }
  const [workspace] = await findWorkspacesBySlug(services.db, upload.workspaceId, { onlyWorkspaceId: upload.workspaceId });
  const principal = (await findPrincipals(services.db, [upload.createdById])).get(upload.createdById);
  if (!workspace || !principal) throw errors.notFound('Upload');
  const { orgSlug, orgPlan: _plan, ...row } = workspace;
  return finishDirectUpload(services, { workspace: row, orgSlug }, principal, upload);
}

/**
 * `POST /files/uploads/{uploadId}/complete`: checks that the bytes at the
 * upload URL are there and of the declared size, checks and processes them
 * like a proxy upload, and creates the file (`file.uploaded`). Completing a
 * completed upload answers the same file again. Only the principal who
 * started the upload can complete it.
 */
export async function completeDirectUpload(services: Services, actor: Actor, resolved: WorkspaceRef, uploadId: string): Promise<FileView> {
  const upload = await findUpload(services.db, uploadId);
  if (!upload || upload.workspaceId !== resolved.workspace.id || upload.createdById !== actor.principal.id) throw errors.notFound('Upload');
  if (upload.state === 'completed') {
    const { scope, file } = await findFileIn(services, resolved, upload.fileId!, { live: false });
    return viewFile(services.db, scope, file);
  }
  if (upload.expiresAt.getTime() + DIRECT_UPLOAD_GRACE_MS < services.clock.now().getTime()) {
    throw errors.conflict('This upload expired before it was completed; start a new one.');
  }
  if (!(await transitionUpload(services.db, uploadId, 'pending', 'receiving'))) {
    throw errors.conflict('This upload is being received or completed by another request; try again in a moment.');
  }
  return finishDirectUpload(services, resolved, actor.principal, upload);
}

/** From a received upload (state `receiving`) to a file. A refused upload is forgotten and its bytes released. */
async function finishDirectUpload(services: Services, resolved: WorkspaceRef, principal: Principal, upload: FileUploadRow): Promise<FileView> {
  const reservation = reservationOf(upload);
  let outcome: 'retry' | 'dead' = 'retry';
  try {
    const surface = await findSurface(services.db, upload.workspaceId, upload.surfaceId);
    if (!surface) {
      outcome = 'dead';
      throw errors.notFound('Files surface');
    }
    const scope: FilesScope = { resolved, surface };
    const stat = await services.blobs.stat(upload.blobKey);
    if (!stat) throw errors.badRequest('Nothing has been uploaded to the upload URL yet: PUT the bytes first, then complete.');
    if (stat.size !== upload.size) {
      await services.blobs.delete(upload.blobKey);
      throw errors.badRequest(`The uploaded object has ${stat.size} bytes but ${upload.size} were declared; PUT the whole file again.`, [
        { path: ['size'], code: 'size_mismatch', message: `declared ${upload.size}, stored ${stat.size}` },
      ]);
    }
    outcome = 'dead';
    const checked = await checkStoredUpload(services, upload);
    const fileId = newId('fil');
    const view = await transactWithEvents(services, async (tx, events) => {
      const leftovers = await commitStorage(services, tx, reservation, checked.entries);
      const file = await insertNewFile(services, tx, {
        scope,
        principal,
        fileId,
        name: upload.name,
        parentFolderId: upload.parentFolderId,
        prepared: checked.prepared,
        blobKey: upload.blobKey,
        thumbKey: checked.thumbKey,
      });
      await markUploadCompleted(tx, upload.id, file.id);
      events.push(uploadedEvent(scope, principal, file));
      return { file: await viewFile(tx, scope, file), leftovers };
    });
    await deleteBlobsQuietly(services, view.leftovers);
    return view.file;
  } catch (error) {
    if (outcome === 'dead') {
      await releaseStorage(services, reservation);
      await deleteUpload(services.db, upload.id);
    } else {
      await transitionUpload(services.db, upload.id, 'receiving', 'pending');
    }
    throw error;
  }
}

/**
 * The stored bytes of a direct upload, checked and processed in place: a
 * file up to the proxy limit is read whole and prepared like a proxy upload
 * (a processed image or SVG is written back over the upload); a larger one
 * is streamed once to hash it, its head sniffed (large images are kept as
 * they are, without a thumbnail; large SVG is refused, as it cannot be
 * sanitised here).
 */
async function checkStoredUpload(
  services: Services,
  upload: FileUploadRow,
): Promise<{ prepared: Omit<PreparedFile, 'bytes'> & { size: number }; entries: LedgerEntry[]; thumbKey: string | null }> {
  const thumbKey = `${upload.blobKey}.thumb.webp`;
  const blob = await services.blobs.get(upload.blobKey);
  if (!blob) throw errors.badRequest('The uploaded object disappeared; start the upload again.');
  if (upload.size <= FILE_LIMITS.proxyUploadBytes) {
    const bytes = Buffer.concat(await blob.body.toArray());
    const prepared = await prepareFileBytes(bytes, upload.contentType, upload.name);
    const changed = prepared.bytes.byteLength !== bytes.byteLength || !prepared.bytes.equals(bytes);
    const entries: LedgerEntry[] = [{ key: upload.blobKey, size: prepared.bytes.byteLength, kind: 'file' }];
    if (changed) await services.blobs.put(upload.blobKey, prepared.bytes, prepared.contentType);
    if (prepared.thumbnail) {
      const thumb = await services.blobs.put(thumbKey, prepared.thumbnail, 'image/webp');
      entries.push({ key: thumbKey, size: thumb.size, kind: 'thumbnail' });
    }
    return { prepared: { ...prepared, size: prepared.bytes.byteLength }, entries, thumbKey: prepared.thumbnail ? thumbKey : null };
  }
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  let size = 0;
  await pipeline(blob.body, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      hash.update(chunk);
      size += chunk.byteLength;
      if (headBytes < 256 * 1024) {
        head.push(chunk);
        headBytes += chunk.byteLength;
      }
    }
  });
  let contentType: string;
  try {
    contentType = await resolveContentType(Buffer.concat(head), upload.contentType, upload.name);
  } catch (error) {
    if (error instanceof ContentMismatchError) throw mismatch(error);
    throw error;
  }
  if (contentType === 'image/svg+xml') {
    throw errors.validation(`SVG images are sanitised before they are stored, which is done for files up to ${FILE_LIMITS.proxyUploadBytes / 1024 ** 2} MB.`, [
      { path: ['file'], code: 'too_big', message: 'SVG files are limited to 25 MB' },
    ]);
  }
  return {
    prepared: { contentType, sha256: hash.digest('hex'), exif: null, thumbnail: null, size },
    entries: [{ key: upload.blobKey, size, kind: 'file' }],
    thumbKey: null,
  };
}
