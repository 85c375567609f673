import type { EventName } from '../model/event-names';
import type { Readable } from 'node:stream';
import { ApiError, errors } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { Actor, Principal } from '../policy/actor';
import type { Author } from '../model/schemas/common';
import type { ResolvedWorkspace } from './resolved-workspace';
import { isTextLike } from '../files/content-types';
import { nameProblem } from '../files/names';
import { uniqueEntryNames, zipStream, type ZipEntry } from '../files/zip';
import {
  findFile,
  findFilesByIds,
  findFolder,
  folderAncestors,
  listFiles,
  listFolders,
  lockFile,
  updateFile,
  type By,
  type FileSort,
} from '../persistence/files';
import type { Executor } from '../persistence/database';
import type { FileRow, FolderRow, Surface } from '../persistence/schema';
import { findPrincipals, findSurface, listSurfaces } from '../persistence/workspaces';
import type { Services } from './services';
import { transactWithEvents, workspaceEvent } from './transact';

/**
 * Files surfaces (SPEC "Files"): the records of files and what can be done
 * to them once they exist. Uploads and versions are in ./file-uploads.ts,
 * folders in ./file-folders.ts, share links in ./file-shares.ts and the
 * trash in ./file-trash.ts.
 *
 * A file belongs to one files surface and sits in a folder of that surface
 * or at its root. Deleting archives it (soft delete); an archived file can
 * be read and restored, and every other write to it answers 404. Its bytes
 * and the storage they count stay until the trash job deletes it for good,
 * 30 days after it was archived.
 */

export const FILE_LIMITS = {
  proxyUploadBytes: 25 * 1024 * 1024,
  /** A single PUT to S3 holds at most 5 GiB; the org's quota is the real bound. */
  directUploadBytes: 5 * 1024 ** 3,
  previewBytes: 256 * 1024,
  zipFiles: 50,
  zipBytes: 500 * 1024 * 1024,
  descriptionChars: 2000,
  tags: 16,
  tagChars: 32,
  trashRetentionDays: 30,
} as const;

/** The workspace a file operation works in (a resolved request, or a workspace loaded for an upload that completes by itself). */
export type WorkspaceRef = Pick<ResolvedWorkspace, 'workspace' | 'orgSlug'>;

/** A files surface and the workspace it belongs to: what every file operation works in. */
export type FilesScope = { resolved: WorkspaceRef; surface: Surface };

export type FileView = FileRow & { surface: Surface; createdBy: Principal | null };
export type FolderView = FolderRow & { createdBy: Principal | null };

export const byOf = (principal: Principal): By => ({ id: principal.id, type: principal.principalType });

/**
 * Where a file's bytes and thumbnail are served. URLs name the workspace by
 * id: stable, never ambiguous between organisations. The thumbnail URL
 * carries the version's hash, so a new version is a new URL and caches
 * never show a stale picture.
 */
export function fileUrls(services: { config: { publicUrl: string } }, file: Pick<FileRow, 'id' | 'workspaceId' | 'thumbKey' | 'sha256'>): { url: string; thumbUrl: string | null } {
  const base = `${services.config.publicUrl}/api/workspaces/${file.workspaceId}/files/${file.id}`;
  return { url: `${base}/content`, thumbUrl: file.thumbKey ? `${base}/thumb?v=${file.sha256.slice(0, 16)}` : null };
}

/** An event about a file, with the fields SPEC requires of every file event (`fileId`, `name`, `surfaceId`). */
export function fileEvent(event: EventName, scope: FilesScope, principal: Author, file: { id: string; name: string }, data: Record<string, unknown> = {}): EventDraft {
  const { workspace, orgSlug } = scope.resolved;
  return {
    ...workspaceEvent(event, { workspace, orgSlug, surface: scope.surface }, { principal }, { fileId: file.id, name: file.name, surfaceId: scope.surface.id, ...data }),
    subjectId: file.id,
  };
}

/** An event about a folder: `folderId`, `name`, `surfaceId`, `parentFolderId` and what the change adds. */
export function folderEvent(event: EventName, scope: FilesScope, principal: Principal, folder: FolderRow, data: Record<string, unknown> = {}): EventDraft {
  const { workspace, orgSlug } = scope.resolved;
  return {
    ...workspaceEvent(
      event,
      { workspace, orgSlug, surface: scope.surface },
      { principal },
      { folderId: folder.id, name: folder.name, surfaceId: scope.surface.id, parentFolderId: folder.parentFolderId, ...data },
    ),
    subjectId: folder.id,
  };
}

/** 422 naming the field when a file or folder name is not one path segment of printable text. */
export function checkName(name: string, field: string[] = ['name']): string {
  const trimmed = name.trim();
  const problem = nameProblem(trimmed);
  if (problem) throw errors.validation(`Invalid name: it ${problem}.`, [{ path: field, code: 'invalid_name', message: problem }]);
  return trimmed;
}

/**
 * The files surface a request names (slug or id), or, when it names none,
 * the workspace's first files surface. 404 when there is no such files
 * surface: file routes work only where a files surface exists.
 */
export async function findFilesSurface(services: Services, resolved: WorkspaceRef, slugOrId: string | undefined): Promise<FilesScope> {
  const surface = slugOrId
    ? await findSurface(services.db, resolved.workspace.id, slugOrId)
    : (await listSurfaces(services.db, resolved.workspace.id)).find((s) => s.kind === 'files');
  if (!surface || surface.kind !== 'files') throw errors.notFound('Files surface');
  return { resolved, surface };
}

/** The file and its (live) surface; 404 when either is missing, or when `live` and the file is archived. */
export async function findFileIn(services: Services, resolved: WorkspaceRef, fileId: string, options: { live: boolean }): Promise<{ scope: FilesScope; file: FileRow }> {
  const file = await findFile(services.db, resolved.workspace.id, fileId);
  if (!file || (options.live && file.archivedAt)) throw errors.notFound('File');
  const surface = await findSurface(services.db, resolved.workspace.id, file.surfaceId);
  if (!surface) throw errors.notFound('File');
  return { scope: { resolved, surface }, file };
}

/**
 * What a comment on a file (target type `file`) anchors to: a live file of
 * the workspace, its files surface (comments list under it and carry its
 * slug) and its uploader (the thread's default audience). 404 otherwise.
 */
export async function fileCommentTarget(services: Services, workspaceId: string, fileId: string): Promise<{ surface: Surface; uploaderId: string | null }> {
  const file = await findFile(services.db, workspaceId, fileId);
  const surface = file && !file.archivedAt ? await findSurface(services.db, workspaceId, file.surfaceId) : undefined;
  if (!file || !surface) throw errors.notFound('File');
  return { surface, uploaderId: file.createdById };
}

/**
 * A live folder of the scope's surface, or null for the root. A folder of
 * another surface is 400 (files do not move between surfaces); a missing
 * or archived one is 404.
 */
export async function findTargetFolder(services: Services, scope: FilesScope, folderId: string | null | undefined): Promise<FolderRow | null> {
  if (!folderId) return null;
  const folder = await findFolder(services.db, scope.resolved.workspace.id, folderId);
  if (!folder || folder.archivedAt) throw errors.notFound('Folder');
  if (folder.surfaceId !== scope.surface.id) {
    throw errors.badRequest('That folder belongs to another files surface; files and folders do not move between surfaces.', [
      { path: ['parentFolderId'], code: 'other_surface', message: 'the folder is in another files surface' },
    ]);
  }
  return folder;
}

/** Records with their creators. Inside a transaction pass it: PGlite is one session, a query outside the transaction would wait for it. */
export async function viewFiles(db: Executor, surface: Surface, files: FileRow[]): Promise<FileView[]> {
  const principals = await findPrincipals(db, files.flatMap((f) => (f.createdById ? [f.createdById] : [])));
  return files.map((file) => ({ ...file, surface, createdBy: file.createdById ? (principals.get(file.createdById) ?? null) : null }));
}

export async function viewFile(db: Executor, scope: FilesScope, file: FileRow): Promise<FileView> {
  return (await viewFiles(db, scope.surface, [file]))[0]!;
}

export async function viewFolders(db: Executor, folders: FolderRow[]): Promise<FolderView[]> {
  const principals = await findPrincipals(db, folders.flatMap((f) => (f.createdById ? [f.createdById] : [])));
  return folders.map((folder) => ({ ...folder, createdBy: folder.createdById ? (principals.get(folder.createdById) ?? null) : null }));
}

// ------------------------------------------------------------------ listing

export type FileListRequest = {
  surfaceSlug?: string;
  parentFolderId?: string | null;
  view?: 'starred' | 'recent';
  q?: string;
  sort?: Exclude<FileSort, 'starred' | 'recent'>;
  order?: 'asc' | 'desc';
  archived?: boolean;
  limit: number;
  offset: number;
};

/**
 * One folder's folders and files, or, with `view` (starred, recent), `q`
 * or `archived`, a flat list across the surface (folders are listed for a
 * search but not for the views or the trash). A workspace without a files
 * surface lists nothing when no surface is named.
 */
export async function listFilesOf(
  services: Services,
  resolved: WorkspaceRef,
  request: FileListRequest,
): Promise<{ folders: FolderView[]; files: FileView[]; nextOffset: number | null }> {
  if (!request.surfaceSlug && !(await listSurfaces(services.db, resolved.workspace.id)).some((s) => s.kind === 'files')) {
    return { folders: [], files: [], nextOffset: null };
  }
  const scope = await findFilesSurface(services, resolved, request.surfaceSlug);
  const q = request.q?.trim() || undefined;
  const flat = Boolean(request.view || q || request.archived);
  if (!flat && request.parentFolderId) await findTargetFolder(services, scope, request.parentFolderId);
  const sort: FileSort = request.sort ?? (request.view === 'starred' ? 'starred' : request.view === 'recent' ? 'recent' : 'name');
  const files = await listFiles(services.db, {
    surfaceId: scope.surface.id,
    parentFolderId: flat ? undefined : (request.parentFolderId ?? null),
    starredOnly: request.view === 'starred',
    archived: Boolean(request.archived),
    q,
    sort,
    direction: request.order,
    limit: request.limit + 1,
    offset: request.offset,
  });
  const more = files.length > request.limit;
  const page = files.slice(0, request.limit);
  const withFolders = !request.view && !request.archived && request.offset === 0;
  const folders = withFolders
    ? await listFolders(services.db, {
        surfaceId: scope.surface.id,
        parentFolderId: q ? undefined : (request.parentFolderId ?? null),
        q,
        byCreation: sort === 'newest' || sort === 'oldest',
        direction: request.order ?? (sort === 'name_desc' || sort === 'newest' ? 'desc' : 'asc'),
      })
    : [];
  return {
    folders: await viewFolders(services.db, folders),
    files: await viewFiles(services.db, scope.surface, page),
    nextOffset: more ? request.offset + request.limit : null,
  };
}

export async function getFile(services: Services, resolved: WorkspaceRef, fileId: string): Promise<FileView> {
  const { scope, file } = await findFileIn(services, resolved, fileId, { live: false });
  return viewFile(services.db, scope, file);
}

// ------------------------------------------------------------------ rename, move, archive, restore

export type FilePatchRequest = { name?: string; parentFolderId?: string | null; restore?: true };

/**
 * Rename (the blob key stays), move within the surface, or restore. A
 * restore is alone in its request. Writes to an archived file are 404,
 * restore excepted; restoring a live file changes nothing. A file whose
 * folder was archived meanwhile is restored to the root.
 */
export async function patchFile(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string, patch: FilePatchRequest): Promise<FileView> {
  if (patch.restore) return restoreFile(services, actor, resolved, fileId);
  const { scope, file } = await findFileIn(services, resolved, fileId, { live: true });
  const name = patch.name === undefined ? undefined : checkName(patch.name);
  const target = patch.parentFolderId === undefined ? undefined : await findTargetFolder(services, scope, patch.parentFolderId);
  return transactWithEvents(services, async (tx, events) => {
    const current = await lockFile(tx, resolved.workspace.id, fileId);
    if (!current || current.archivedAt) throw errors.notFound('File');
    let updated = current;
    const now = services.clock.now();
    const by = byOf(actor.principal);
    if (name !== undefined && name !== current.name) {
      updated = await updateFile(tx, fileId, { name, updatedAt: now, updatedById: by.id, updatedByType: by.type });
      events.push(fileEvent('file.renamed', scope, actor.principal, updated, { previousName: current.name }));
    }
    const toFolderId = target === undefined ? undefined : (target?.id ?? null);
    if (toFolderId !== undefined && toFolderId !== current.parentFolderId) {
      updated = await updateFile(tx, fileId, { parentFolderId: toFolderId, updatedAt: now, updatedById: by.id, updatedByType: by.type });
      events.push(fileEvent('file.moved', scope, actor.principal, updated, { fromFolderId: current.parentFolderId, toFolderId }));
    }
    return viewFile(tx, scope, updated);
  });
}

async function restoreFile(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string): Promise<FileView> {
  const { scope } = await findFileIn(services, resolved, fileId, { live: false });
  return transactWithEvents(services, async (tx, events) => {
    const current = await lockFile(tx, resolved.workspace.id, fileId);
    if (!current) throw errors.notFound('File');
    if (!current.archivedAt) return viewFile(tx, scope, current);
    const folderLive = current.parentFolderId ? (await folderAncestors(tx, current.parentFolderId)).every((f) => !f.archivedAt) : true;
    const by = byOf(actor.principal);
    const restored = await updateFile(tx, fileId, {
      archivedAt: null,
      archivedById: null,
      archivedByType: null,
      archivedWithFolderId: null,
      parentFolderId: folderLive ? current.parentFolderId : null,
      updatedAt: services.clock.now(),
      updatedById: by.id,
      updatedByType: by.type,
    });
    events.push(fileEvent('file.restored', scope, actor.principal, restored, { parentFolderId: restored.parentFolderId, ...(folderLive ? {} : { movedToRoot: true }) }));
    return viewFile(tx, scope, restored);
  });
}

/** Soft delete: archived, bytes kept until the trash job. An archived file is 404 here like any write. */
export async function archiveFile(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string): Promise<void> {
  const { scope } = await findFileIn(services, resolved, fileId, { live: true });
  await transactWithEvents(services, async (tx, events) => {
    const current = await lockFile(tx, resolved.workspace.id, fileId);
    if (!current || current.archivedAt) throw errors.notFound('File');
    const by = byOf(actor.principal);
    const now = services.clock.now();
    const archived = await updateFile(tx, fileId, { archivedAt: now, archivedById: by.id, archivedByType: by.type, updatedAt: now });
    events.push(fileEvent('file.archived', scope, actor.principal, archived, { parentFolderId: archived.parentFolderId }));
  });
}

// ------------------------------------------------------------------ metadata

export type MetadataRequest = { starred?: boolean; description?: string | null; tags?: string[] };

/** Tags as stored: trimmed, lowercased, without empties or repeats; then at most 16 of at most 32 characters (422 otherwise). */
export function normalizeTags(tags: string[]): string[] {
  const out: string[] = [];
  for (const [index, raw] of tags.entries()) {
    const tag = raw.trim().toLowerCase();
    if (!tag || out.includes(tag)) continue;
    if (tag.length > FILE_LIMITS.tagChars) {
      throw errors.validation(`Tags are at most ${FILE_LIMITS.tagChars} characters.`, [
        { path: ['tags', String(index)], code: 'too_big', message: `at most ${FILE_LIMITS.tagChars} characters` },
      ]);
    }
    out.push(tag);
  }
  if (out.length > FILE_LIMITS.tags) {
    throw errors.validation(`A file has at most ${FILE_LIMITS.tags} tags.`, [{ path: ['tags'], code: 'too_big', message: `at most ${FILE_LIMITS.tags} distinct tags` }]);
  }
  return out;
}

/** Star, describe and tag; each field that really changes records its event (`file.starred`, `file.described`, `file.tagged`). */
export async function updateMetadata(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string, request: MetadataRequest): Promise<FileView> {
  const { scope } = await findFileIn(services, resolved, fileId, { live: true });
  const tags = request.tags === undefined ? undefined : normalizeTags(request.tags);
  const description = request.description === undefined ? undefined : request.description || null;
  return transactWithEvents(services, async (tx, events) => {
    const current = await lockFile(tx, resolved.workspace.id, fileId);
    if (!current || current.archivedAt) throw errors.notFound('File');
    const now = services.clock.now();
    const by = byOf(actor.principal);
    const stamp = { updatedAt: now, updatedById: by.id, updatedByType: by.type };
    let file = current;
    if (request.starred !== undefined && request.starred !== current.starred) {
      file = await updateFile(tx, fileId, { starred: request.starred, starredAt: request.starred ? now : null, ...stamp });
      events.push(fileEvent('file.starred', scope, actor.principal, file, { starred: request.starred }));
    }
    if (description !== undefined && description !== current.description) {
      file = await updateFile(tx, fileId, { description, ...stamp });
      events.push(fileEvent('file.described', scope, actor.principal, file, { description }));
    }
    if (tags !== undefined && JSON.stringify(tags) !== JSON.stringify(current.tags)) {
      file = await updateFile(tx, fileId, { tags, ...stamp });
      events.push(fileEvent('file.tagged', scope, actor.principal, file, { tags, previousTags: current.tags }));
    }
    return viewFile(tx, scope, file);
  });
}

// ------------------------------------------------------------------ bytes out

export type FileBytes = { file: FileRow; body: Readable; size: number; contentType: string };

/** The bytes of a file (or of its thumbnail); 404 when there are none. */
export async function openFileBytes(services: Services, resolved: WorkspaceRef, fileId: string, which: 'content' | 'thumbnail'): Promise<FileBytes> {
  const { file } = await findFileIn(services, resolved, fileId, { live: false });
  const key = which === 'content' ? file.blobKey : file.thumbKey;
  const blob = key ? await services.blobs.get(key) : null;
  if (!blob) throw errors.notFound(which === 'content' ? 'File content' : 'Thumbnail');
  return { file, body: blob.body, size: blob.size, contentType: which === 'content' ? file.contentType : 'image/webp' };
}

/** The raw bytes of a text-like file of at most 256 KB; 400 for other types or larger files. */
export async function previewFile(services: Services, resolved: WorkspaceRef, fileId: string): Promise<FileBytes> {
  const { file } = await findFileIn(services, resolved, fileId, { live: false });
  if (!isTextLike(file.contentType)) {
    throw errors.badRequest(`Only text-like files have a preview (text/*, JSON, YAML, XML, scripts); this one is ${file.contentType}.`);
  }
  if (file.size > FILE_LIMITS.previewBytes) {
    throw errors.badRequest(`Previews are limited to ${FILE_LIMITS.previewBytes / 1024} KB; this file has ${file.size} bytes. Download it instead.`);
  }
  return openFileBytes(services, resolved, fileId, 'content');
}

/**
 * A zip of up to 50 live files of one surface, at most 500 MB before
 * compression, streamed as it is built. Every id must name a live file of
 * that surface (404 naming the others); entries are the files' names, made
 * unique as `name (2).ext`.
 */
export async function zipFiles(services: Services, resolved: WorkspaceRef, request: { surfaceSlug: string; fileIds: string[] }): Promise<{ filename: string; stream: Readable }> {
  const scope = await findFilesSurface(services, resolved, request.surfaceSlug);
  const ids = [...new Set(request.fileIds)];
  if (ids.length > FILE_LIMITS.zipFiles) {
    throw errors.validation(`A zip holds at most ${FILE_LIMITS.zipFiles} files.`, [{ path: ['fileIds'], code: 'too_big', message: `at most ${FILE_LIMITS.zipFiles} files` }]);
  }
  const found = await findFilesByIds(services.db, scope.surface.id, ids);
  const byId = new Map(found.map((f) => [f.id, f]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) {
    throw new ApiError(404, 'not_found', `No live file of this surface has the id ${missing.map((id) => JSON.stringify(id)).join(', ')}.`, { missing });
  }
  const files = ids.map((id) => byId.get(id)!);
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total > FILE_LIMITS.zipBytes) {
    throw errors.validation(`A zip holds at most ${FILE_LIMITS.zipBytes / 1024 ** 2} MB before compression; these files hold ${total} bytes.`, [
      { path: ['fileIds'], code: 'too_big', message: `at most ${FILE_LIMITS.zipBytes} bytes in total` },
    ]);
  }
  const names = uniqueEntryNames(files.map((f) => f.name));
  const entries: ZipEntry[] = files.map((file, i) => ({
    name: names[i]!,
    size: file.size,
    mtime: file.updatedAt,
    compress: isTextLike(file.contentType),
    open: async () => {
      const blob = await services.blobs.get(file.blobKey);
      if (!blob) throw new Error(`blob ${file.blobKey} of file ${file.id} is missing`);
      return blob.body;
    },
  }));
  return { filename: `${scope.surface.slug}.zip`, stream: zipStream(entries) };
}
