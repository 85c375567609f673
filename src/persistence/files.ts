import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from './database';
import type { FileFoldersTable, FileRow, FilesTable, FileUploadRow, FileUploadsTable, FolderRow, PrincipalKind } from './schema';

/** Files, folders, share tokens and direct uploads of files surfaces. */

export type By = { id: string; type: PrincipalKind };

// ------------------------------------------------------------------ files

export type NewFile = Omit<Insertable<FilesTable>, 'exif' | 'tags'> & { exif: FilesTable['exif']['__select__']; tags?: string[] };

export async function insertFile(db: Executor, file: NewFile): Promise<FileRow> {
  return db
    .insertInto('files')
    .values({ ...file, exif: file.exif ? JSON.stringify(file.exif) : null, tags: JSON.stringify(file.tags ?? []) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findFile(db: Executor, workspaceId: string, fileId: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('workspaceId', '=', workspaceId).where('id', '=', fileId).executeTakeFirst();
}

/** The live files of the workspace among `ids` (any files surface); other workspaces' files and unknown ids are not found. */
export async function findLiveFilesIn(db: Executor, workspaceId: string, ids: readonly string[]): Promise<FileRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('files').selectAll().where('workspaceId', '=', workspaceId).where('id', 'in', ids).where('archivedAt', 'is', null).execute();
}

/**
 * Sends to the trash the files uploaded into cells (`cell_upload`) before
 * `before` that no row names any more (row_files, beside the row
 * projection); returns them.
 */
export async function archiveUnusedCellUploads(db: Executor, before: Date, at: Date, limit: number): Promise<FileRow[]> {
  return db
    .updateTable('files')
    .set({ archivedAt: at, archivedById: null, archivedByType: null, updatedAt: at })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('files as f')
        .select('f.id')
        .where('f.cellUpload', '=', true)
        .where('f.archivedAt', 'is', null)
        .where('f.createdAt', '<', before)
        .where((inner) => inner.not(inner.exists(inner.selectFrom('rowFiles as r').select('r.fileId').whereRef('r.workspaceId', '=', 'f.workspaceId').whereRef('r.fileId', '=', 'f.id'))))
        .limit(limit),
    )
    .where('archivedAt', 'is', null)
    .returningAll()
    .execute();
}

/** The row under a lock, for changes that read then write (versions, restore). */
export async function lockFile(db: Executor, workspaceId: string, fileId: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('workspaceId', '=', workspaceId).where('id', '=', fileId).forUpdate().executeTakeFirst();
}

export type FilePatch = Omit<Updateable<FilesTable>, 'exif' | 'tags'> & { exif?: FilesTable['exif']['__select__']; tags?: string[] };

export async function updateFile(db: Executor, fileId: string, patch: FilePatch): Promise<FileRow> {
  const { exif, tags, ...rest } = patch;
  return db
    .updateTable('files')
    .set({
      ...rest,
      ...(exif !== undefined ? { exif: exif ? JSON.stringify(exif) : null } : {}),
      ...(tags !== undefined ? { tags: JSON.stringify(tags) } : {}),
    })
    .where('id', '=', fileId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type FileSort = 'name' | 'name_desc' | 'newest' | 'oldest' | 'largest' | 'smallest' | 'starred' | 'recent';

export type FileListQuery = {
  surfaceId: string;
  /** undefined: every folder (surface-wide); null: the root. */
  parentFolderId: string | null | undefined;
  starredOnly: boolean;
  archived: boolean;
  q: string | undefined;
  sort: FileSort;
  direction: 'asc' | 'desc' | undefined;
  limit: number;
  offset: number;
};

/** `%` and `_` in a search are literal characters, not patterns. */
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const SORTS: Record<FileSort, { column: 'name' | 'createdAt' | 'size' | 'starredAt' | 'updatedAt'; direction: 'asc' | 'desc' }> = {
  name: { column: 'name', direction: 'asc' },
  name_desc: { column: 'name', direction: 'desc' },
  newest: { column: 'createdAt', direction: 'desc' },
  oldest: { column: 'createdAt', direction: 'asc' },
  largest: { column: 'size', direction: 'desc' },
  smallest: { column: 'size', direction: 'asc' },
  starred: { column: 'starredAt', direction: 'desc' },
  recent: { column: 'updatedAt', direction: 'desc' },
};

export async function listFiles(db: Executor, query: FileListQuery): Promise<FileRow[]> {
  let select = db.selectFrom('files').selectAll().where('surfaceId', '=', query.surfaceId);
  select = query.archived ? select.where('archivedAt', 'is not', null) : select.where('archivedAt', 'is', null);
  if (query.parentFolderId === null) select = select.where('parentFolderId', 'is', null);
  else if (query.parentFolderId !== undefined) select = select.where('parentFolderId', '=', query.parentFolderId);
  if (query.starredOnly) select = select.where('starred', '=', true);
  if (query.q) select = select.where(sql<boolean>`name ilike ${likePattern(query.q)}`);
  const sort = SORTS[query.sort];
  const direction = query.direction ?? sort.direction;
  const ordered = sort.column === 'name' ? select.orderBy(sql`lower(name)`, direction).orderBy('name', direction) : select.orderBy(sort.column, direction);
  return ordered.orderBy('id', direction).limit(query.limit).offset(query.offset).execute();
}

export async function findFilesByIds(db: Executor, surfaceId: string, ids: string[]): Promise<FileRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('files').selectAll().where('surfaceId', '=', surfaceId).where('id', 'in', ids).where('archivedAt', 'is', null).execute();
}

/** Archives the live files of these folders (a folder archive takes them along). */
export async function archiveFilesInFolders(db: Executor, folderIds: string[], by: By, at: Date, rootFolderId: string): Promise<FileRow[]> {
  if (folderIds.length === 0) return [];
  return db
    .updateTable('files')
    .set({ archivedAt: at, archivedById: by.id, archivedByType: by.type, archivedWithFolderId: rootFolderId, updatedAt: at })
    .where('parentFolderId', 'in', folderIds)
    .where('archivedAt', 'is', null)
    .returningAll()
    .execute();
}

/** Removes files archived before `before`, returning them (their blobs are the caller's to delete). */
export async function deleteArchivedFiles(db: Executor, before: Date, limit: number): Promise<FileRow[]> {
  return db
    .deleteFrom('files')
    .where('id', 'in', (eb) => eb.selectFrom('files').select('id').where('archivedAt', '<', before).orderBy('archivedAt').limit(limit))
    .returningAll()
    .execute();
}

// ------------------------------------------------------------------ folders

export async function insertFolder(db: Executor, folder: Insertable<FileFoldersTable>): Promise<FolderRow> {
  return db.insertInto('fileFolders').values(folder).returningAll().executeTakeFirstOrThrow();
}

export async function findFolder(db: Executor, workspaceId: string, folderId: string): Promise<FolderRow | undefined> {
  return db.selectFrom('fileFolders').selectAll().where('workspaceId', '=', workspaceId).where('id', '=', folderId).executeTakeFirst();
}

/** The folder row under a lock: an upload into it and an archive of it do not interleave. */
export async function lockFolder(db: Executor, workspaceId: string, folderId: string): Promise<FolderRow | undefined> {
  return db.selectFrom('fileFolders').selectAll().where('workspaceId', '=', workspaceId).where('id', '=', folderId).forUpdate().executeTakeFirst();
}

export async function updateFolder(db: Executor, folderId: string, patch: Updateable<FileFoldersTable>): Promise<FolderRow> {
  return db.updateTable('fileFolders').set(patch).where('id', '=', folderId).returningAll().executeTakeFirstOrThrow();
}

export async function listFolders(
  db: Executor,
  query: { surfaceId: string; parentFolderId: string | null | undefined; q: string | undefined; direction: 'asc' | 'desc'; byCreation: boolean },
): Promise<FolderRow[]> {
  let select = db.selectFrom('fileFolders').selectAll().where('surfaceId', '=', query.surfaceId).where('archivedAt', 'is', null);
  if (query.parentFolderId === null) select = select.where('parentFolderId', 'is', null);
  else if (query.parentFolderId !== undefined) select = select.where('parentFolderId', '=', query.parentFolderId);
  if (query.q) select = select.where(sql<boolean>`name ilike ${likePattern(query.q)}`);
  const ordered = query.byCreation ? select.orderBy('createdAt', query.direction) : select.orderBy(sql`lower(name)`, query.direction).orderBy('name', query.direction);
  return ordered.orderBy('id', query.direction).execute();
}

/** The folder and every folder below it, live or not (a recursive walk down `parent_folder_id`). */
export async function folderSubtreeIds(db: Executor, folderId: string): Promise<string[]> {
  const result = await sql<{ id: string }>`
    with recursive tree(id) as (
      select id from file_folders where id = ${folderId}
      union
      select f.id from file_folders f join tree t on f.parent_folder_id = t.id
    )
    select id from tree
  `.execute(db);
  return result.rows.map((r) => r.id);
}

/** The folder's ancestors, nearest first (for cycle checks and restores). */
export async function folderAncestors(db: Executor, folderId: string): Promise<FolderRow[]> {
  const result = await sql<{ id: string }>`
    with recursive up(id, parent_folder_id, depth) as (
      select id, parent_folder_id, 0 from file_folders where id = ${folderId}
      union all
      select f.id, f.parent_folder_id, u.depth + 1 from file_folders f join up u on f.id = u.parent_folder_id where u.depth < 1000
    )
    select id from up order by depth
  `.execute(db);
  const ids = result.rows.map((r) => r.id);
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('fileFolders').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)!);
}

export async function archiveFolders(db: Executor, folderIds: string[], by: By, at: Date, rootFolderId: string): Promise<FolderRow[]> {
  if (folderIds.length === 0) return [];
  return db
    .updateTable('fileFolders')
    .set((eb) => ({
      archivedAt: at,
      archivedById: by.id,
      archivedByType: by.type,
      archivedWithId: eb.case().when('id', '=', rootFolderId).then(sql<string | null>`null`).else(rootFolderId).end(),
      updatedAt: at,
    }))
    .where('id', 'in', folderIds)
    .where('archivedAt', 'is', null)
    .returningAll()
    .execute();
}

/** Removes folders archived before `before` that hold no file any more (deleting one cascades to its archived subfolders). */
export async function deleteEmptyArchivedFolders(db: Executor, before: Date, limit: number): Promise<number> {
  const rows = await db
    .deleteFrom('fileFolders')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('fileFolders as f')
        .select('f.id')
        .where('f.archivedAt', '<', before)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('files').select('files.id').whereRef('files.parentFolderId', '=', 'f.id'))))
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('fileFolders as c').select('c.id').whereRef('c.parentFolderId', '=', 'f.id').where('c.archivedAt', 'is', null))),
        )
        .limit(limit),
    )
    .returning('id')
    .execute();
  return rows.length;
}

// ------------------------------------------------------------------ share tokens

export async function insertShareToken(db: Executor, token: { id: string; fileId: string; token: string; createdAt: Date; createdBy: By }) {
  const row = await db
    .insertInto('fileShareTokens')
    .values({ id: token.id, fileId: token.fileId, token: token.token, createdAt: token.createdAt, createdById: token.createdBy.id, createdByType: token.createdBy.type })
    .returningAll()
    .executeTakeFirstOrThrow();
  return row;
}

export async function listActiveShareTokens(db: Executor, fileId: string) {
  return db.selectFrom('fileShareTokens').selectAll().where('fileId', '=', fileId).where('revokedAt', 'is', null).orderBy('createdAt', 'desc').orderBy('id').execute();
}

export async function findShareToken(db: Executor, fileId: string, tokenId: string) {
  return db.selectFrom('fileShareTokens').selectAll().where('fileId', '=', fileId).where('id', '=', tokenId).executeTakeFirst();
}

/** Revokes an active token; undefined when it was already revoked (or is unknown). */
export async function revokeShareToken(db: Executor, tokenId: string, at: Date) {
  return db.updateTable('fileShareTokens').set({ revokedAt: at }).where('id', '=', tokenId).where('revokedAt', 'is', null).returningAll().executeTakeFirst();
}

/** The live file behind an active token, in a live workspace and surface; undefined otherwise. */
export async function findSharedFile(db: Executor, token: string): Promise<FileRow | undefined> {
  return db
    .selectFrom('fileShareTokens as t')
    .innerJoin('files', 'files.id', 't.fileId')
    .innerJoin('workspaces as w', 'w.id', 'files.workspaceId')
    .innerJoin('surfaces as s', 's.id', 'files.surfaceId')
    .selectAll('files')
    .where('t.token', '=', token)
    .where('t.revokedAt', 'is', null)
    .where('files.archivedAt', 'is', null)
    .where('w.archivedAt', 'is', null)
    .where('s.deletedAt', 'is', null)
    .executeTakeFirst();
}

// ------------------------------------------------------------------ direct uploads

export async function insertUpload(db: Executor, upload: Insertable<FileUploadsTable>) {
  await db.insertInto('fileUploads').values(upload).execute();
}

export async function findUpload(db: Executor, uploadId: string): Promise<FileUploadRow | undefined> {
  return db.selectFrom('fileUploads').selectAll().where('id', '=', uploadId).executeTakeFirst();
}

/** Moves an upload from one state to another; false when it was not in `from` (someone else got there first). */
export async function transitionUpload(db: Executor, uploadId: string, from: 'pending' | 'receiving', to: 'pending' | 'receiving'): Promise<boolean> {
  const row = await db.updateTable('fileUploads').set({ state: to }).where('id', '=', uploadId).where('state', '=', from).returning('id').executeTakeFirst();
  return Boolean(row);
}

export async function markUploadCompleted(db: Executor, uploadId: string, fileId: string) {
  await db.updateTable('fileUploads').set({ state: 'completed', fileId }).where('id', '=', uploadId).execute();
}

export async function deleteUpload(db: Executor, uploadId: string) {
  await db.deleteFrom('fileUploads').where('id', '=', uploadId).execute();
}

/** Forgets uploads that expired before `before` (their reservations are swept separately). */
export async function deleteExpiredUploads(db: Executor, before: Date): Promise<number> {
  const rows = await db.deleteFrom('fileUploads').where('expiresAt', '<', before).returning('id').execute();
  return rows.length;
}
