import { findLiveFilesIn } from '../persistence/files';
import type { FileRow } from '../persistence/schema';
import { fileUrls } from './files';
import type { Services } from './services';

/**
 * Attachment cells (docs/TABLES.md "Attachments"). The table document keeps
 * an attachment cell as an array of file ids, files of the workspace's file
 * store; a file named by several cells is one file, stored and counted
 * once. REST and MCP show each as `{ fileId, name, contentType, size, url,
 * thumbnailUrl? }` and take `[{ fileId }]`; a write may name only live files
 * of its own workspace.
 */

/** Most distinct file ids a write's cells may name (a bulk update of 500 rows with a few files each). */
const MAX_NAMED_FILES = 10_000;

export type AttachmentRead = { fileId: string; name: string; contentType: string; size: number; url: string; thumbnailUrl?: string };

/** What a write's cells might name as files: ids and `{ fileId }`, alone or in arrays; the columns decide later which cells are attachments. */
function namedFileIds(datas: ReadonlyArray<Record<string, unknown>>): string[] {
  const ids = new Set<string>();
  const take = (item: unknown) => {
    if (typeof item === 'string' && item.startsWith('fil_')) ids.add(item);
    else if (item !== null && typeof item === 'object' && !Array.isArray(item) && typeof (item as { fileId?: unknown }).fileId === 'string') ids.add((item as { fileId: string }).fileId);
  };
  for (const data of datas) {
    for (const value of Object.values(data)) {
      if (Array.isArray(value)) value.forEach(take);
      else take(value);
      if (ids.size > MAX_NAMED_FILES) break;
    }
  }
  return [...ids].slice(0, MAX_NAMED_FILES);
}

/** Which files named in the write's cells are live files of the workspace: the check an attachment cell gets. */
export async function liveFilesNamedIn(services: Services, workspaceId: string, datas: ReadonlyArray<Record<string, unknown>>): Promise<{ isLiveFile(fileId: string): boolean }> {
  const live = new Set((await findLiveFilesIn(services.db, workspaceId, namedFileIds(datas))).map((file) => file.id));
  return { isLiveFile: (fileId) => live.has(fileId) };
}

export function presentAttachment(services: Services, file: FileRow): AttachmentRead {
  const { url, thumbUrl } = fileUrls(services, file);
  return { fileId: file.id, name: file.name, contentType: file.contentType, size: Number(file.size), url, ...(thumbUrl ? { thumbnailUrl: thumbUrl } : {}) };
}

/**
 * The attachment cells of rows as readers see them: each id that names a
 * live file of the workspace as its record, in the stored order; ids of
 * files that are gone (in the trash, purged, of another workspace) are
 * left out, as link cells leave out rows that are gone.
 */
export async function showAttachmentCells<R extends { surfaceId: string; data: Record<string, unknown> }>(
  services: Services,
  workspaceId: string,
  rows: R[],
  attachmentKeys: (surfaceId: string) => readonly string[],
): Promise<R[]> {
  const cells = rows.map((row) => attachmentKeys(row.surfaceId).filter((key) => Array.isArray(row.data[key])));
  const ids = new Set(cells.flatMap((keys, i) => keys.flatMap((key) => (rows[i]!.data[key] as unknown[]).filter((id): id is string => typeof id === 'string'))));
  if (ids.size === 0) return rows;
  const files = new Map((await findLiveFilesIn(services.db, workspaceId, [...ids])).map((file) => [file.id, presentAttachment(services, file)]));
  return rows.map((row, i) => {
    if (cells[i]!.length === 0) return row;
    const data = { ...row.data };
    for (const key of cells[i]!) data[key] = (data[key] as unknown[]).flatMap((id) => (typeof id === 'string' && files.has(id) ? [files.get(id)!] : []));
    return { ...row, data } as R;
  });
}
