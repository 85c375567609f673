import { z } from 'zod';
import { fileUrls, type FileView, type FolderView } from '../domain/files';
import type { ShareTokenView } from '../domain/file-shares';
import { WorkspaceParams } from './workspace-routes';
import { ErrorBody, errorResponses, toIso } from '../model/schemas/common';
import { FileRecord } from '../model/schemas/files';

/** Request schemas and presenters of the files routes, operations and custom ones alike (SPEC "Files"; API-DECISIONS "Files"); the records they answer are in src/model/schemas/files.ts (re-exported here). */

export * from '../model/schemas/files';

const Id = z.string().min(1).max(100);

/** Text that is well-formed Unicode (a lone surrogate cannot be stored or shown faithfully). */
export const Text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/\p{Cs}/u.test(s), { message: 'must be well-formed Unicode (no lone surrogates)' });

export const FileName = Text(1000).describe(
  'One path segment of at most 255 characters after trimming: no `/` or `\\`, not `.` or `..`, no control characters (422 otherwise)',
);

export const FileParams = WorkspaceParams.extend({ fileId: Id.describe('File id') });
export const FolderParams = WorkspaceParams.extend({ folderId: Id.describe('Folder id') });
export const UploadParams = WorkspaceParams.extend({ uploadId: Id.describe('The uploadId of the handshake') });

export const ClientPayload = z
  .strictObject({
    surfaceSlug: Id.describe('Files surface slug (or id)'),
    parentFolderId: Id.nullable().optional().describe('Null or absent for the root'),
    name: FileName,
    size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('Exact byte count the PUT will carry (at most 5 GiB)'),
    contentType: z.string().max(255).optional().describe('Declared type; absent or application/octet-stream lets the bytes decide'),
  })
  .meta({ id: 'FileClientPayload' });

/** The responses of a hand-written route answering a File (operations list only the extra 413). */
export const fileResponses = { 200: FileRecord, ...errorResponses, 413: ErrorBody };

/** A File record; its URLs are `fileUrls`'. */
export function presentFile(services: { config: { publicUrl: string } }, view: FileView) {
  const { url, thumbUrl } = fileUrls(services, view);
  return {
    id: view.id,
    name: view.name,
    size: view.size,
    contentType: view.contentType,
    surface: { id: view.surface.id, slug: view.surface.slug },
    surfaceId: view.surfaceId,
    parentFolderId: view.parentFolderId,
    url,
    thumbUrl,
    starred: view.starred,
    starredAt: toIso(view.starredAt),
    description: view.description,
    tags: view.tags,
    exif: view.exif,
    blobKey: view.blobKey,
    sha256: view.sha256,
    version: view.version,
    createdAt: toIso(view.createdAt)!,
    updatedAt: toIso(view.updatedAt)!,
    createdBy: view.createdBy,
    archivedAt: toIso(view.archivedAt),
    archivedByPrincipalId: view.archivedAt ? view.archivedById : null,
    archivedByPrincipalType: view.archivedAt ? view.archivedByType : null,
  };
}

export function presentFolder(view: FolderView) {
  return {
    id: view.id,
    name: view.name,
    surfaceId: view.surfaceId,
    parentFolderId: view.parentFolderId,
    createdAt: toIso(view.createdAt)!,
    createdBy: view.createdBy,
    archivedAt: toIso(view.archivedAt),
  };
}

export function presentShareToken(view: ShareTokenView) {
  return { id: view.id, url: view.url, createdAt: toIso(view.createdAt)!, revokedAt: toIso(view.revokedAt) };
}
