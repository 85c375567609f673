import { publishEvents, recordEvents } from '../events/emit';
import type { EventDraft } from '../model/event-record';
import { findWorkspacesBySlug } from '../persistence/access';
import { archiveUnusedCellUploads, deleteArchivedFiles, deleteEmptyArchivedFolders, deleteExpiredUploads } from '../persistence/files';
import type { Executor } from '../persistence/database';
import type { FileRow } from '../persistence/schema';
import { findSurface } from '../persistence/workspaces';
import type { Services } from './services';
import { FILE_LIMITS } from './files';
import { deleteBlobsQuietly, freeStoredBlobs, sweepExpiredReservations } from './storage';
import { PeriodicJob } from '../lib/periodic-job';

/**
 * The trash: files archived more than 30 days ago are deleted for good
 * (row, share links, blob and thumbnail), their bytes stop counting against
 * the quota, and `file.purged` is recorded (no principal: the service did
 * it). Archived folders left empty by that go too. The same pass gives back
 * the storage of reservations that expired uncommitted (abandoned direct
 * uploads, crashes between write and commit) and forgets expired uploads.
 * Files uploaded into attachment cells (or through forms) that no row has
 * named for a day go to the trash (`file.archived` with `unused: true`), so
 * deleting the last row that held a file frees its storage 30 days later;
 * a file another row still names stays.
 *
 * `FileTrashJob` runs the pass on a timer in the process (every instance
 * may run it: each deletion is one `DELETE ... RETURNING`, so two passes
 * never free the same bytes twice). Time comes from `services.clock`.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 100;

export type TrashPass = { files: number; folders: number; reservations: number; uploads: number; unusedAttachments: number };

/** How long a file uploaded into a cell may be named by no row before it goes to the trash: its upload and the cell's change are two steps. */
const UNUSED_ATTACHMENT_GRACE_MS = DAY_MS;

export async function purgeTrash(services: Services): Promise<TrashPass> {
  const now = services.clock.now();
  const before = new Date(now.getTime() - FILE_LIMITS.trashRetentionDays * DAY_MS);
  let files = 0;
  for (;;) {
    const { purged, records } = await services.db.transaction().execute(async (tx) => {
      const purged = await deleteArchivedFiles(tx, before, BATCH);
      await freeStoredBlobs(tx, purged.flatMap((f) => [f.blobKey, ...(f.thumbKey ? [f.thumbKey] : [])]));
      const records = await recordEvents(services, tx, await purgedEvents(tx, purged));
      return { purged, records };
    });
    publishEvents(services, records);
    await deleteBlobsQuietly(services, purged.flatMap((f) => [f.blobKey, ...(f.thumbKey ? [f.thumbKey] : [])]));
    files += purged.length;
    if (purged.length < BATCH) break;
  }
  let folders = 0;
  for (let removed = -1; removed !== 0; folders += removed) removed = await deleteEmptyArchivedFolders(services.db, before, 1000);
  const reservations = await sweepExpiredReservations(services);
  const uploads = await deleteExpiredUploads(services.db, new Date(now.getTime() - DAY_MS));
  let unusedAttachments = 0;
  for (;;) {
    const { archived, records } = await services.db.transaction().execute(async (tx) => {
      const archived = await archiveUnusedCellUploads(tx, new Date(now.getTime() - UNUSED_ATTACHMENT_GRACE_MS), now, BATCH);
      const records = await recordEvents(services, tx, await fileEvents(tx, archived, 'file.archived', (file) => ({ parentFolderId: file.parentFolderId, unused: true })));
      return { archived, records };
    });
    publishEvents(services, records);
    unusedAttachments += archived.length;
    if (archived.length < BATCH) break;
  }
  return { files, folders, reservations, uploads, unusedAttachments };
}

async function purgedEvents(tx: Executor, files: FileRow[]): Promise<EventDraft[]> {
  return fileEvents(tx, files, 'file.purged', (file) => ({ archivedAt: file.archivedAt?.toISOString() ?? null, size: file.size }));
}

/** Events of the trash about files (no principal: the service did it), with what each event adds to the file's id, name and surface. */
async function fileEvents(tx: Executor, files: FileRow[], event: 'file.purged' | 'file.archived', extra: (file: FileRow) => Record<string, unknown>): Promise<EventDraft[]> {
  const drafts: EventDraft[] = [];
  for (const file of files) {
    const [workspace] = await findWorkspacesBySlug(tx, file.workspaceId, { onlyWorkspaceId: file.workspaceId });
    if (!workspace) continue;
    const surface = await findSurface(tx, file.workspaceId, file.surfaceId);
    drafts.push({
      event,
      orgId: file.orgId,
      workspace: { id: workspace.id, slug: workspace.slug, org: { slug: workspace.orgSlug } },
      ...(surface ? { surface: { id: surface.id, slug: surface.slug } } : {}),
      subjectId: file.id,
      principal: null,
      data: { fileId: file.id, name: file.name, surfaceId: file.surfaceId, ...extra(file) },
    });
  }
  return drafts;
}

/** The trash pass on a timer (hourly, first a minute after start): started and stopped with the app. */
export class FileTrashJob extends PeriodicJob<TrashPass> {
  constructor(services: Services, timing = { intervalMs: 60 * 60 * 1000, firstRunAfterMs: 60 * 1000 }) {
    super(() => purgeTrash(services), (error) => services.log.error({ err: error }, 'file trash pass failed'), timing);
  }
}
