import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { tablesDocumentName } from '../model/document-names';
import { getRow, readColumns, updateRows, type RowData } from '../model/table/document';
import { MAX_ATTACHMENTS_PER_CELL } from '../model/table/validation';
import { callerOrigin } from '../sync/origins';
import { uploadCellFile, type IncomingFile } from './file-uploads';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { ensureSurfaceOfKind } from './surfaces';
import { lookUpPassedRows, namedTableSurface, passedRow, present, seenAs, tableError, type RowRecord, type SurfaceSelector } from './tables';

/**
 * `POST /rows/{id}/attachments/{columnKey}`: uploads a file and adds it to
 * the row's attachment cell in one step (docs/TABLES.md "Attachments"). The
 * file goes into the workspace's first files surface (made, named "Files",
 * when it has none), checked, processed and counted against the quota as
 * every upload; then one attributed change appends its id to the cell.
 *
 * The row and column are checked before any byte is stored. Should the row
 * be deleted between the upload and the change, the file stays in the
 * files surface, named by no row, and the trash takes it a day later.
 */
export async function uploadToCell(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  target: SurfaceSelector & { rowId: string; columnKey: string },
  file: IncomingFile,
): Promise<RowRecord> {
  const { workspace } = resolved;
  const document = tablesDocumentName(workspace.id);
  const sheet = await namedTableSurface(services, workspace, target);
  await lookUpPassedRows(services, workspace.id);
  const checkTarget = (doc: Parameters<typeof passedRow>[0]) => {
    const row = passedRow(doc, target.rowId);
    if (!row || (sheet && row.surfaceId !== sheet.id)) throw errors.notFound('Row');
    const column = readColumns(doc, row.surfaceId).find((candidate) => candidate.key === target.columnKey);
    if (!column || column.type !== 'attachment') {
      const message = column ? `"${target.columnKey}" is a ${column.type} column; files go into an attachment column.` : `This row's sheet has no column "${target.columnKey}".`;
      throw errors.validation(message, [{ path: ['columnKey'], code: column ? 'not_attachment_column' : 'unknown_column', message }]);
    }
    const held = Array.isArray(row.data[target.columnKey]) ? (row.data[target.columnKey] as string[]) : [];
    if (held.length >= MAX_ATTACHMENTS_PER_CELL) {
      throw errors.validation(`${target.columnKey} already holds ${MAX_ATTACHMENTS_PER_CELL} files, the most a cell holds.`, [
        { path: ['columnKey'], code: 'too_many', message: `at most ${MAX_ATTACHMENTS_PER_CELL} files a cell` },
      ]);
    }
    return held;
  };
  await services.sync.read(document, checkTarget);
  const surface = await ensureSurfaceOfKind(services, actor, resolved, 'files');
  const stored = await uploadCellFile(services, actor.principal, { resolved, surface }, file);
  const { result: row, receipt } = await services.sync
    .transactWithReceipt(document, callerOrigin(actor), (doc) => {
      const held = checkTarget(doc);
      updateRows(doc, [{ id: target.rowId, data: { [target.columnKey]: [...held.filter((id) => id !== stored.id), stored.id] } as RowData }], null);
      return seenAs(services, doc, getRow(doc, target.rowId)!);
    })
    .catch(tableError);
  return (await present(services, workspace.id, [row], receipt.rows))[0]!;
}
