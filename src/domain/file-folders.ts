import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { newId } from '../lib/ids';
import { archiveFilesInFolders, archiveFolders, findFolder, folderAncestors, folderSubtreeIds, insertFolder, lockFolder, updateFolder } from '../persistence/files';
import type { Executor } from '../persistence/database';
import type { FolderRow } from '../persistence/schema';
import { findSurface } from '../persistence/workspaces';
import type { Services } from './services';
import { byOf, checkName, fileEvent, findFilesSurface, findTargetFolder, folderEvent, viewFolders, type FilesScope, type FolderView, type WorkspaceRef } from './files';
import { transactWithEvents } from './transact';

/**
 * Folders of a files surface (API-DECISIONS "Files"): create, rename, move
 * within the surface (never into itself or below itself), and archive with
 * everything they hold. Names may repeat within a folder, as file names may.
 */

async function findLiveFolder(services: Services, resolved: WorkspaceRef, folderId: string): Promise<{ scope: FilesScope; folder: FolderRow }> {
  const folder = await findFolder(services.db, resolved.workspace.id, folderId);
  if (!folder || folder.archivedAt) throw errors.notFound('Folder');
  const surface = await findSurface(services.db, resolved.workspace.id, folder.surfaceId);
  if (!surface) throw errors.notFound('Folder');
  return { scope: { resolved, surface }, folder };
}

async function view(db: Executor, folder: FolderRow): Promise<FolderView> {
  return (await viewFolders(db, [folder]))[0]!;
}

/** Records `folder.created`. */
export async function createFolder(
  services: Services,
  actor: Actor,
  resolved: WorkspaceRef,
  request: { surfaceSlug?: string; parentFolderId?: string | null; name: string },
): Promise<FolderView> {
  const scope = await findFilesSurface(services, resolved, request.surfaceSlug);
  const parent = await findTargetFolder(services, scope, request.parentFolderId);
  const name = checkName(request.name);
  return transactWithEvents(services, async (tx, events) => {
    const now = services.clock.now();
    const by = byOf(actor.principal);
    const folder = await insertFolder(tx, {
      id: newId('fld'),
      workspaceId: resolved.workspace.id,
      surfaceId: scope.surface.id,
      parentFolderId: parent?.id ?? null,
      name,
      createdAt: now,
      createdById: by.id,
      createdByType: by.type,
      updatedAt: now,
    });
    events.push(folderEvent('folder.created', scope, actor.principal, folder));
    return view(tx, folder);
  });
}

/**
 * Rename and/or move. Moving under itself or one of its own subfolders is
 * 400; into another surface's folder 400; into a missing folder 404.
 * Records `folder.renamed` and `folder.moved` for what really changed.
 */
export async function patchFolder(
  services: Services,
  actor: Actor,
  resolved: WorkspaceRef,
  folderId: string,
  patch: { name?: string; parentFolderId?: string | null },
): Promise<FolderView> {
  const { scope, folder } = await findLiveFolder(services, resolved, folderId);
  const name = patch.name === undefined ? undefined : checkName(patch.name);
  const target = patch.parentFolderId === undefined ? undefined : await findTargetFolder(services, scope, patch.parentFolderId);
  return transactWithEvents(services, async (tx, events) => {
    let current = folder;
    const now = services.clock.now();
    if (name !== undefined && name !== current.name) {
      const previousName = current.name;
      current = await updateFolder(tx, folderId, { name, updatedAt: now });
      events.push(folderEvent('folder.renamed', scope, actor.principal, current, { previousName }));
    }
    const toFolderId = target === undefined ? undefined : (target?.id ?? null);
    if (toFolderId !== undefined && toFolderId !== current.parentFolderId) {
      if (toFolderId && (await folderAncestors(tx, toFolderId)).some((f) => f.id === folderId)) {
        throw errors.badRequest('A folder cannot move into itself or one of its own subfolders.', [
          { path: ['parentFolderId'], code: 'cycle', message: 'the target is this folder or lies inside it' },
        ]);
      }
      const fromFolderId = current.parentFolderId;
      current = await updateFolder(tx, folderId, { parentFolderId: toFolderId, updatedAt: now });
      events.push(folderEvent('folder.moved', scope, actor.principal, current, { fromFolderId, toFolderId }));
    }
    return view(tx, current);
  });
}

/**
 * Archives the folder, its subfolders and every live file in them, in one
 * transaction: `folder.archived` (with the ids taken along) and one
 * `file.archived` per file. The files go to the trash like any archived
 * file (restorable; a restored file whose folder stays archived lands at
 * the root).
 */
export async function archiveFolder(services: Services, actor: Actor, resolved: WorkspaceRef, folderId: string): Promise<void> {
  const { scope } = await findLiveFolder(services, resolved, folderId);
  await transactWithEvents(services, async (tx, events) => {
    await lockFolder(tx, resolved.workspace.id, folderId);
    const subtree = await folderSubtreeIds(tx, folderId);
    const by = byOf(actor.principal);
    const now = services.clock.now();
    const folders = await archiveFolders(tx, subtree, by, now, folderId);
    const root = folders.find((f) => f.id === folderId);
    if (!root) throw errors.notFound('Folder'); // archived by a concurrent request
    const files = await archiveFilesInFolders(tx, subtree, by, now, folderId);
    events.push(
      folderEvent('folder.archived', scope, actor.principal, root, {
        archivedFolderIds: folders.filter((f) => f.id !== folderId).map((f) => f.id),
        archivedFileIds: files.map((f) => f.id),
      }),
    );
    for (const file of files) events.push(fileEvent('file.archived', scope, actor.principal, file, { parentFolderId: file.parentFolderId, withFolderId: folderId }));
  });
}
