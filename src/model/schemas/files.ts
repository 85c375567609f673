import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** File, folder and share-link records (SPEC "Files"), as the files routes answer them and the web app's files view reads them; the presenters are in src/api/file-schemas.ts. */

export const Exif = z
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

export type FileRecord = z.infer<typeof FileRecord>;
export type FolderRecord = z.infer<typeof FolderRecord>;
export type ShareTokenRecord = z.infer<typeof ShareTokenRecord>;
export type DirectUploadTicket = z.infer<typeof DirectUploadTicket>;
/** Named apart from the DOM's `FileList`. */
export type FileListing = z.infer<typeof FileList>;

export const ShareTokenList = z.object({ tokens: z.array(ShareTokenRecord) });
export type ShareTokenList = z.infer<typeof ShareTokenList>;

/** A doc image or avatar as stored. */
export const UploadedImage = z
  .object({
    url: z.string().describe('Absolute URL of the stored image, for the `src` of an image node'),
    contentType: z.string(),
    size: z.number().int().describe('Bytes stored (after re-encoding or sanitising)'),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
  })
  .meta({ id: 'UploadedImage' });
export type UploadedImage = z.infer<typeof UploadedImage>;
