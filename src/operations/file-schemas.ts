import { z } from 'zod';
import type { FileView, FolderView } from '../domain/files';
import type { ShareTokenView } from '../domain/file-shares';
import { WorkspaceParams } from './workspace-routes';
import { ErrorBody, errorResponses, IsoDateTime, Principal, toIso } from '../model/schemas/common';

/** Schemas and presenters of the files routes, operations and custom ones alike (SPEC "Files"; API-DECISIONS "Files"). */

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

const Exif = z
  .object({
    width: z.number().int().describe('Displayed width in pixels (after the orientation was applied)'),
    height: z.number().int().describe('Displayed height in pixels'),
    orientation: z.number().int().describe('The EXIF orientation the upload carried (1 to 8; 1 when none); the stored image is already upright'),
  })
  .meta({ id: 'FileExif' });

export const FileRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    size: z.number().int().describe('Bytes stored (after EXIF stripping or SVG sanitising)'),
    contentType: z.string(),
    surface: z.object({ id: z.string(), slug: z.string() }),
    surfaceId: z.string(),
    parentFolderId: z.string().nullable().describe('Null at the root of the surface'),
    url: z.string().describe('The bytes, for members: `GET .../files/{id}/content` (`?inline=1` to display rather than download)'),
    thumbUrl: z.string().nullable().describe('256-px webp for raster images; null otherwise'),
    starred: z.boolean(),
    starredAt: IsoDateTime.nullable(),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    exif: Exif.nullable().describe('Raster images only'),
    blobKey: z.string().describe('Changes with each version'),
    sha256: z.string().describe('Hex SHA-256 of the stored bytes; changes with each version'),
    version: z.number().int().describe('1 for the first upload, +1 per new version'),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
    createdBy: Principal.nullable(),
    archivedAt: IsoDateTime.nullable(),
    archivedByPrincipalId: z.string().nullable(),
    archivedByPrincipalType: z.enum(['user', 'agent']).nullable(),
  })
  .meta({ id: 'File' });

export const FolderRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    surfaceId: z.string(),
    parentFolderId: z.string().nullable(),
    createdAt: IsoDateTime,
    createdBy: Principal.nullable(),
    archivedAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'Folder' });

export const ShareTokenRecord = z
  .object({
    id: z.string(),
    url: z.string().describe('The public page; `{url}/raw` serves the bytes'),
    createdAt: IsoDateTime,
    revokedAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'FileShareToken' });

export const ClientPayload = z
  .strictObject({
    surfaceSlug: Id.describe('Files surface slug (or id)'),
    parentFolderId: Id.nullable().optional().describe('Null or absent for the root'),
    name: FileName,
    size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('Exact byte count the PUT will carry (at most 5 GiB)'),
    contentType: z.string().max(255).optional().describe('Declared type; absent or application/octet-stream lets the bytes decide'),
  })
  .meta({ id: 'FileClientPayload' });

export const DirectUploadTicket = z
  .object({
    uploadId: z.string(),
    uploadUrl: z.string().describe('PUT the bytes here (presigned S3 URL, or this server’s one-shot URL on the local store)'),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).describe('Send these headers with the PUT'),
    expiresAt: IsoDateTime,
  })
  .meta({ id: 'DirectUploadTicket' });

export const FileList = z
  .object({
    folders: z.array(FolderRecord).describe('Empty in the starred and recent views and the trash'),
    files: z.array(FileRecord),
    nextOffset: z.number().int().nullable().describe('Offset of the next page of files; null on the last'),
  })
  .meta({ id: 'FileList' });

/** The responses of a hand-written route answering a File (operations list only the extra 413). */
export const fileResponses = { 200: FileRecord, ...errorResponses, 413: ErrorBody };

/**
 * URLs name the workspace by id: stable, never ambiguous between
 * organisations. The thumbnail URL carries the version's hash, so a new
 * version is a new URL and caches never show a stale picture.
 */
export function presentFile(services: { config: { publicUrl: string } }, view: FileView) {
  const base = `${services.config.publicUrl}/api/workspaces/${view.workspaceId}/files/${view.id}`;
  return {
    id: view.id,
    name: view.name,
    size: view.size,
    contentType: view.contentType,
    surface: { id: view.surface.id, slug: view.surface.slug },
    surfaceId: view.surfaceId,
    parentFolderId: view.parentFolderId,
    url: `${base}/content`,
    thumbUrl: view.thumbKey ? `${base}/thumb?v=${view.sha256.slice(0, 16)}` : null,
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
