import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { archiveFolder, createFolder, patchFolder } from '../domain/file-folders';
import { listShares, revokeShare, shareFile } from '../domain/file-shares';
import { replaceVersion } from '../domain/file-uploads';
import {
  archiveFile,
  FILE_LIMITS,
  getFile,
  listFilesOf,
  openFileBytes,
  patchFile,
  previewFile,
  updateMetadata,
  zipFiles,
  type FileBytes,
} from '../domain/files';
import { errors } from '../errors';
import { contentDisposition } from '../files/names';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../services';
import {
  FileList,
  FileName,
  FileParams,
  FileRecord,
  fileResponses,
  FolderParams,
  FolderRecord,
  presentFile,
  presentFolder,
  presentShareToken,
  ShareTokenRecord,
  Text,
} from './file-schemas';
import { ErrorBody, errorResponses, Ok } from '../model/schemas/common';
import { flagOn, QueryFlag } from '../operations/workspace-schemas';

/**
 * Files surfaces (SPEC "Files"): listing, records, metadata, share links,
 * versions, zip, preview and the bytes themselves, plus folders. Uploads
 * are in ./file-uploads.ts and the public share pages in ./file-share-pages.ts.
 * Every route needs a member of the workspace: `read_files` to read,
 * `write_files` to change (editors); public readers of a public workspace
 * do not see files (403; a share link makes one file public), and reads
 * without credentials answer as the policy does (404 for a private
 * workspace, 403 for a public one).
 */

const Id = z.string().min(1).max(100);

const ListQuery = z.strictObject({
  surfaceSlug: Id.optional().describe('Files surface slug (or id); the first files surface when absent'),
  parentFolderId: z.string().max(100).optional().describe('A folder id; absent, empty or `null` for the root'),
  view: z.enum(['starred', 'recent']).optional().describe('Flat surface-wide lists: starred files (latest starred first) or recently changed files'),
  q: Text(200).optional().describe('Case-insensitive substring of the name, surface-wide (folders too)'),
  sort: z.enum(['name', 'name_desc', 'newest', 'oldest', 'largest', 'smallest']).optional().describe('Default `name` (or the view’s own order)'),
  order: z.enum(['asc', 'desc']).optional().describe('Overrides the direction of `sort`'),
  archived: QueryFlag.optional().describe('`1` lists the trash: archived files of the surface, restorable for 30 days'),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

const FilePatch = z.strictObject({
  name: FileName.optional().describe('Rename; the blob key stays'),
  parentFolderId: Id.nullable().optional().describe('Move to a folder of the same surface, or null for the root'),
  restore: z.literal(true).optional().describe('Restore an archived file; must be alone in the body'),
});

const MetadataPatch = z.strictObject({
  starred: z.boolean().optional(),
  description: Text(FILE_LIMITS.descriptionChars).nullable().optional().describe('At most 2000 characters; null or empty clears it'),
  tags: z
    .array(Text(200))
    .max(64)
    .optional()
    .describe('Stored trimmed, lowercased, without empties or repeats; then at most 16 tags of at most 32 characters (422)'),
});

const ZipBody = z.strictObject({
  fileIds: z.array(Id).min(1).max(FILE_LIMITS.zipFiles).describe('At most 50 live files of the surface, 500 MB in total before compression'),
  surfaceSlug: Id,
});

const ContentQuery = z.strictObject({ inline: QueryFlag.optional().describe('`1`: display (`Content-Disposition: inline`) rather than download') });
const ThumbQuery = z.strictObject({ v: z.string().max(64).optional().describe('Cache key; the thumbUrl carries it') });
const RevokeQuery = z.strictObject({ tokenId: Id });

const NewFolder = z.strictObject({
  surfaceSlug: Id.optional().describe('The first files surface when absent'),
  parentFolderId: Id.nullable().optional().describe('Null or absent for the root'),
  name: FileName,
});
const FolderPatch = z.strictObject({ name: FileName.optional(), parentFolderId: Id.nullable().optional() });

const BytesResponses = { 200: z.string().describe('The bytes'), 304: z.null().describe('Not modified'), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

/**
 * Served bytes never run in our origin: `nosniff`, and a CSP sandbox that
 * stops scripts in HTML or SVG opened directly (PDF viewers need no CSP of
 * ours and would break under `sandbox`).
 */
export const SANDBOX_CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox";

export function sendBytes(request: FastifyRequest, reply: FastifyReply, bytes: FileBytes, options: { disposition: 'inline' | 'attachment' | null; cache: string; etag: string }) {
  reply.header('etag', `"${options.etag}"`);
  reply.header('cache-control', options.cache);
  reply.header('x-content-type-options', 'nosniff');
  if (bytes.contentType !== 'application/pdf') reply.header('content-security-policy', SANDBOX_CSP);
  if (request.headers['if-none-match'] === `"${options.etag}"`) {
    bytes.body.destroy();
    return reply.status(304).send();
  }
  reply.header('content-type', bytes.contentType);
  reply.header('content-length', String(bytes.size));
  if (options.disposition) reply.header('content-disposition', contentDisposition(options.disposition, bytes.file.name));
  return reply.send(bytes.body as never); // a stream: the response schema describes the rest
}

/** `write_files` routes refuse a body that asks for nothing. */
function requireSomething(body: Record<string, unknown>, fields: string) {
  if (Object.values(body).every((v) => v === undefined)) {
    throw errors.badRequest(`Nothing to change: send at least one of ${fields}.`, [{ path: [], code: 'invalid_type', message: `expected at least one of ${fields}` }]);
  }
}

export async function fileRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/files')) {
    app.get(
      url,
      {
        schema: {
          summary: 'List files and folders',
          description:
            'One folder of a files surface (the root by default): `{ folders, files }`. `view` (starred, recent), `q` and `archived=1` give flat lists across the surface; folders are omitted in the views and the trash. Members only.',
          tags: ['files'],
          params: WorkspaceParams,
          querystring: ListQuery,
          response: { 200: FileList, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const { parentFolderId, archived, ...query } = request.query;
        const list = await listFilesOf(services, { workspace, orgSlug }, {
          ...query,
          parentFolderId: !parentFolderId || parentFolderId === 'null' ? null : parentFolderId,
          archived: flagOn(archived),
        });
        return { folders: list.folders.map(presentFolder), files: list.files.map((f) => presentFile(services, f)), nextOffset: list.nextOffset };
      },
    );
  }

  for (const url of workspacePaths('/files/zip')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Download files as a zip',
          description:
            '`application/zip`, streamed while it is built, with `Content-Disposition: attachment; filename=<surface>.zip`. At most 50 live files of one surface and 500 MB before compression (422 beyond); an unknown or archived id is 404 (`details.missing`). Duplicate names become `name (2).ext`.',
          tags: ['files'],
          params: WorkspaceParams,
          body: ZipBody,
          response: { 200: z.string().describe('application/zip'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, requireActor(request), addressOf(request.params), 'read_files');
        const zip = await zipFiles(services, { workspace, orgSlug }, request.body);
        zip.stream.on('error', (error) => request.log.warn({ err: error }, 'zip stream failed'));
        reply.header('content-type', 'application/zip');
        reply.header('content-disposition', contentDisposition('attachment', zip.filename));
        reply.header('cache-control', 'no-store');
        return reply.send(zip.stream as never);
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId')) {
    app.get(
      url,
      {
        schema: { summary: 'One file', description: 'Archived files too (with `archivedAt`).', tags: ['files'], params: FileParams, response: { 200: FileRecord, ...errorResponses } },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        return presentFile(services, await getFile(services, { workspace, orgSlug }, request.params.fileId));
      },
    );

    app.patch(
      url,
      {
        schema: {
          summary: 'Rename, move or restore a file',
          description:
            '`{ name }` renames (the blob key stays); `{ parentFolderId }` moves within the surface (a folder of another surface is 400); both may go together. `{ restore: true }` restores an archived file and must be alone (400 with anything else); a file whose folder is archived comes back at the root. Any other write to an archived file is 404.',
          tags: ['files'],
          params: FileParams,
          body: FilePatch,
          response: fileResponses,
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        const { restore, ...rest } = request.body;
        if (restore && Object.values(rest).some((v) => v !== undefined)) {
          throw errors.badRequest('`restore` must be alone: restore first, then rename or move.', [{ path: ['restore'], code: 'invalid_combination', message: 'restore cannot be combined with other changes' }]);
        }
        requireSomething(request.body, '`name`, `parentFolderId` or `restore`');
        return presentFile(services, await patchFile(services, actor, { workspace, orgSlug }, request.params.fileId, request.body));
      },
    );

    app.delete(
      url,
      {
        schema: {
          summary: 'Archive (soft-delete) a file',
          description: 'The file goes to the trash (`GET /files?archived=1`): restorable with `PATCH { restore: true }`; its bytes keep counting against the storage quota until it is deleted for good 30 days later. `file.archived`.',
          tags: ['files'],
          params: FileParams,
          response: { 200: Ok, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        await archiveFile(services, actor, { workspace, orgSlug }, request.params.fileId);
        return { ok: true as const };
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/metadata')) {
    app.patch(
      url,
      {
        schema: {
          summary: 'Star, describe or tag a file',
          description: 'Any subset of `{ starred, description, tags }`; each field that changes records `file.starred`, `file.described` or `file.tagged`.',
          tags: ['files'],
          params: FileParams,
          body: MetadataPatch,
          response: fileResponses,
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        requireSomething(request.body, '`starred`, `description` or `tags`');
        return presentFile(services, await updateMetadata(services, actor, { workspace, orgSlug }, request.params.fileId, request.body));
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/share')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Create a share link',
          description: 'Anyone with `url` (the page `/share/files/{token}`, and `{url}/raw` for the bytes) can read this file without an account until the link is revoked. `file.shared` carries `shareTokenId` and `url`.',
          tags: ['files'],
          params: FileParams,
          response: { 200: ShareTokenRecord, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        return presentShareToken(await shareFile(services, actor, { workspace, orgSlug }, request.params.fileId));
      },
    );

    app.get(
      url,
      {
        schema: {
          summary: 'Active share links of a file',
          tags: ['files'],
          params: FileParams,
          response: { 200: z.object({ tokens: z.array(ShareTokenRecord) }), ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        return { tokens: (await listShares(services, { workspace, orgSlug }, request.params.fileId)).map(presentShareToken) };
      },
    );

    app.delete(
      url,
      {
        schema: {
          summary: 'Revoke a share link',
          description: 'Idempotent: revoking a revoked link answers 200 again. An unknown `tokenId` is 404. `file.share_revoked`.',
          tags: ['files'],
          params: FileParams,
          querystring: RevokeQuery,
          response: { 200: Ok, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        await revokeShare(services, actor, { workspace, orgSlug }, request.params.fileId, request.query.tokenId);
        return { ok: true as const };
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/content')) {
    app.get(
      url,
      {
        schema: {
          summary: 'The bytes of a file',
          description: 'With the stored content type, `ETag` (the sha256), `nosniff` and a sandboxing CSP. A download (`attachment`) unless `inline=1`.',
          tags: ['files'],
          params: FileParams,
          querystring: ContentQuery,
          response: BytesResponses,
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await openFileBytes(services, { workspace, orgSlug }, request.params.fileId, 'content');
        const disposition = flagOn(request.query.inline) ? 'inline' : 'attachment';
        return sendBytes(request, reply, bytes, { disposition, cache: 'private, no-cache', etag: bytes.file.sha256 });
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/thumb')) {
    app.get(
      url,
      {
        schema: {
          summary: 'The 256-px webp thumbnail of a raster image',
          description: '404 for files without one. Not counted against the monthly API calls (a file grid loads many).',
          tags: ['files'],
          params: FileParams,
          querystring: ThumbQuery,
          response: BytesResponses,
        },
        config: { auth: 'optional', metered: false },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await openFileBytes(services, { workspace, orgSlug }, request.params.fileId, 'thumbnail');
        return sendBytes(request, reply, bytes, { disposition: null, cache: 'private, max-age=31536000, immutable', etag: `thumb-${bytes.file.sha256}` });
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/preview')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Preview a text-like file',
          description: 'The raw bytes of a text-like file (text/*, JSON, YAML, XML, scripts) of at most 256 KB, as `text/plain; charset=utf-8` whatever its type, so nothing renders. Other types or larger files: 400.',
          tags: ['files'],
          params: FileParams,
          response: BytesResponses,
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await previewFile(services, { workspace, orgSlug }, request.params.fileId);
        return sendBytes(request, reply, { ...bytes, contentType: 'text/plain; charset=utf-8' }, { disposition: 'inline', cache: 'private, no-cache', etag: bytes.file.sha256 });
      },
    );
  }

  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/files/:fileId/versions')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload a new version of a file',
            description:
              'multipart/form-data, one field `file` (25 MB; 413 `payload_too_large` beyond). Same id, name, folder, comments and share links; new `blobKey`, `sha256`, `version`. The MIME category (image, text, video, audio, other application types) must match the current version, else 400. Processed like a proxy upload. `file.version_replaced` carries the previous and new `sha256`.',
            tags: ['files'],
            consumes: ['multipart/form-data'],
            params: FileParams,
            response: fileResponses,
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
          const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: FILE_LIMITS.proxyUploadBytes, tooLarge: 'Uploads through the server are limited to 25 MB; use a direct upload (POST /files).' });
          return presentFile(services, await replaceVersion(services, actor, { workspace, orgSlug }, request.params.fileId, file));
        },
      );
    }
  });

  for (const url of workspacePaths('/files/folders')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Create a folder',
          description: '`folder.created`.',
          tags: ['files'],
          params: WorkspaceParams,
          body: NewFolder,
          response: { 200: FolderRecord, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        return presentFolder(await createFolder(services, actor, { workspace, orgSlug }, request.body));
      },
    );
  }

  for (const url of workspacePaths('/files/folders/:folderId')) {
    app.patch(
      url,
      {
        schema: {
          summary: 'Rename or move a folder',
          description: 'Within its surface; never into itself or below itself (400). `folder.renamed`, `folder.moved`.',
          tags: ['files'],
          params: FolderParams,
          body: FolderPatch,
          response: { 200: FolderRecord, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        requireSomething(request.body, '`name` or `parentFolderId`');
        return presentFolder(await patchFolder(services, actor, { workspace, orgSlug }, request.params.folderId, request.body));
      },
    );

    app.delete(
      url,
      {
        schema: {
          summary: 'Archive a folder and what it holds',
          description: 'Its subfolders and files are archived with it: `folder.archived` (listing what went along) and one `file.archived` per file.',
          tags: ['files'],
          params: FolderParams,
          response: { 200: Ok, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        await archiveFolder(services, actor, { workspace, orgSlug }, request.params.folderId);
        return { ok: true as const };
      },
    );
  }
}
