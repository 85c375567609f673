import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { archiveFolder, createFolder, patchFolder } from '../domain/file-folders';
import { listShares, revokeShare, shareFile } from '../domain/file-shares';
import { archiveFile, FILE_LIMITS, getFile, listFilesOf, patchFile, updateMetadata } from '../domain/files';
import { errors } from '../errors';
import { ErrorBody, flagOn, Ok, QueryFlag } from '../model/schemas/common';
import {
  FileList,
  FileName,
  FileParams,
  FileRecord,
  FolderParams,
  FolderRecord,
  presentFile,
  presentFolder,
  presentShareToken,
  ShareTokenRecord,
  Text,
} from './file-schemas';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { ShareTokenList } from '../model/schemas/files';

/**
 * Files surfaces (SPEC "Files"): listing, records, metadata, share links and
 * folders. The bytes (content, thumbnail, preview, zip) and a new version
 * (multipart) are hand-written routes in src/api/files.ts, uploads are in
 * ./file-uploads.ts and src/api/file-uploads.ts, the public share pages in
 * src/api/file-share-pages.ts. Every route needs a member of the workspace:
 * `read_files` to read, `write_files` to change (editors); public readers of
 * a public workspace do not see files (403; a share link makes one file
 * public), and reads without credentials answer as the policy does (404 for
 * a private workspace, 403 for a public one).
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

const RevokeQuery = z.strictObject({ tokenId: Id });

const NewFolder = z.strictObject({
  surfaceSlug: Id.optional().describe('The first files surface when absent'),
  parentFolderId: Id.nullable().optional().describe('Null or absent for the root'),
  name: FileName,
});
const FolderPatch = z.strictObject({ name: FileName.optional(), parentFolderId: Id.nullable().optional() });

/** `write_files` routes refuse a body that asks for nothing. */
function requireSomething(body: Record<string, unknown>, fields: string) {
  if (Object.values(body).every((v) => v === undefined)) {
    throw errors.badRequest(`Nothing to change: send at least one of ${fields}.`, [{ path: [], code: 'invalid_type', message: `expected at least one of ${fields}` }]);
  }
}

const FileWriteResponses = { 413: ErrorBody };

export const fileOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: ListQuery, response: FileList,
      rest: {
        method: 'GET',
        workspacePath: '/files',
        summary: 'List files and folders',
        description:
          'One folder of a files surface (the root by default): `{ folders, files }`. `view` (starred, recent), `q` and `archived=1` give flat lists across the surface; folders are omitted in the views and the trash. Members only.',
        tags: ['files'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(params), 'read_files');
      const { parentFolderId, archived, ...rest } = query;
      const list = await listFilesOf(services, { workspace, orgSlug }, {
        ...rest,
        parentFolderId: !parentFolderId || parentFolderId === 'null' ? null : parentFolderId,
        archived: flagOn(archived),
      });
      return { folders: list.folders.map(presentFolder), files: list.files.map((f) => presentFile(services, f)), nextOffset: list.nextOffset };
    },
  ),
  get: defineOperation(
    {
      params: FileParams, response: FileRecord,
      rest: { method: 'GET', workspacePath: '/files/:fileId', summary: 'One file', description: 'Archived files too (with `archivedAt`).', tags: ['files'], config: { auth: 'optional' } },
    },
    async (services, actor, { params }) => {
      const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(params), 'read_files');
      return presentFile(services, await getFile(services, { workspace, orgSlug }, params.fileId));
    },
  ),
  update: defineOperation(
    {
      params: FileParams, body: FilePatch, response: FileRecord,
      rest: {
        method: 'PATCH',
        workspacePath: '/files/:fileId',
        summary: 'Rename, move or restore a file',
        description:
          '`{ name }` renames (the blob key stays); `{ parentFolderId }` moves within the surface (a folder of another surface is 400); both may go together. `{ restore: true }` restores an archived file and must be alone (400 with anything else); a file whose folder is archived comes back at the root. Any other write to an archived file is 404.',
        tags: ['files'],
        responses: FileWriteResponses,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      const { restore, ...rest } = body;
      if (restore && Object.values(rest).some((v) => v !== undefined)) {
        throw errors.badRequest('`restore` must be alone: restore first, then rename or move.', [{ path: ['restore'], code: 'invalid_combination', message: 'restore cannot be combined with other changes' }]);
      }
      requireSomething(body, '`name`, `parentFolderId` or `restore`');
      return presentFile(services, await patchFile(services, caller, { workspace, orgSlug }, params.fileId, body));
    },
  ),
  archive: defineOperation(
    {
      params: FileParams, response: Ok,
      rest: {
        method: 'DELETE',
        workspacePath: '/files/:fileId',
        summary: 'Archive (soft-delete) a file',
        description: 'The file goes to the trash (`GET /files?archived=1`): restorable with `PATCH { restore: true }`; its bytes keep counting against the storage quota until it is deleted for good 30 days later. `file.archived`.',
        tags: ['files'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      await archiveFile(services, caller, { workspace, orgSlug }, params.fileId);
      return { ok: true as const };
    },
  ),
  updateMetadata: defineOperation(
    {
      params: FileParams, body: MetadataPatch, response: FileRecord,
      rest: {
        method: 'PATCH',
        workspacePath: '/files/:fileId/metadata',
        summary: 'Star, describe or tag a file',
        description: 'Any subset of `{ starred, description, tags }`; each field that changes records `file.starred`, `file.described` or `file.tagged`.',
        tags: ['files'],
        responses: FileWriteResponses,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      requireSomething(body, '`starred`, `description` or `tags`');
      return presentFile(services, await updateMetadata(services, caller, { workspace, orgSlug }, params.fileId, body));
    },
  ),
  share: defineOperation(
    {
      params: FileParams, response: ShareTokenRecord,
      rest: {
        method: 'POST',
        workspacePath: '/files/:fileId/share',
        summary: 'Create a share link',
        description: 'Anyone with `url` (the page `/share/files/{token}`, and `{url}/raw` for the bytes) can read this file without an account until the link is revoked. `file.shared` carries `shareTokenId` and `url`.',
        tags: ['files'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      return presentShareToken(await shareFile(services, caller, { workspace, orgSlug }, params.fileId));
    },
  ),
  listShares: defineOperation(
    {
      params: FileParams, response: ShareTokenList,
      rest: { method: 'GET', workspacePath: '/files/:fileId/share', summary: 'Active share links of a file', tags: ['files'], config: { auth: 'optional' } },
    },
    async (services, actor, { params }) => {
      const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(params), 'read_files');
      return { tokens: (await listShares(services, { workspace, orgSlug }, params.fileId)).map(presentShareToken) };
    },
  ),
  revokeShare: defineOperation(
    {
      params: FileParams, query: RevokeQuery, response: Ok,
      rest: {
        method: 'DELETE',
        workspacePath: '/files/:fileId/share',
        summary: 'Revoke a share link',
        description: 'Idempotent: revoking a revoked link answers 200 again. An unknown `tokenId` is 404. `file.share_revoked`.',
        tags: ['files'],
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      await revokeShare(services, caller, { workspace, orgSlug }, params.fileId, query.tokenId);
      return { ok: true as const };
    },
  ),
  createFolder: defineOperation(
    {
      params: WorkspaceParams, body: NewFolder, response: FolderRecord,
      rest: { method: 'POST', workspacePath: '/files/folders', summary: 'Create a folder', description: '`folder.created`.', tags: ['files'] },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      return presentFolder(await createFolder(services, caller, { workspace, orgSlug }, body));
    },
  ),
  updateFolder: defineOperation(
    {
      params: FolderParams, body: FolderPatch, response: FolderRecord,
      rest: {
        method: 'PATCH',
        workspacePath: '/files/folders/:folderId',
        summary: 'Rename or move a folder',
        description: 'Within its surface; never into itself or below itself (400). `folder.renamed`, `folder.moved`.',
        tags: ['files'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      requireSomething(body, '`name` or `parentFolderId`');
      return presentFolder(await patchFolder(services, caller, { workspace, orgSlug }, params.folderId, body));
    },
  ),
  archiveFolder: defineOperation(
    {
      params: FolderParams, response: Ok,
      rest: {
        method: 'DELETE',
        workspacePath: '/files/folders/:folderId',
        summary: 'Archive a folder and what it holds',
        description: 'Its subfolders and files are archived with it: `folder.archived` (listing what went along) and one `file.archived` per file.',
        tags: ['files'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      await archiveFolder(services, caller, { workspace, orgSlug }, params.folderId);
      return { ok: true as const };
    },
  ),
};
