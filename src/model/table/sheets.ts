/**
 * Sheets: one per table surface, all in the workspace's one table document
 * so that a move between them is a single transaction.
 */
import * as Y from 'yjs';
import { tableIndex, invalidateTableIndex, transactTable } from './row-index.js';
import { COLUMNS_FIELD, ORDER_FIELD, canonicalSheetIds, newSheetMap, rowsRoot, sheetMapOf, sheetsRoot } from './layout.js';
import { dropLinksToDeleted } from './links.js';
import { TableDocumentError } from './types.js';

/**
 * Makes sure the sheet exists with both its arrays. Returns true when it
 * wrote anything. A sheet map a peer left without `columns` or `order` is
 * completed rather than replaced, so what it holds is kept.
 */
export function ensureSheet(doc: Y.Doc, surfaceId: string, origin: unknown): boolean {
  const existing = sheetMapOf(doc, surfaceId);
  if (existing && existing.get(COLUMNS_FIELD) instanceof Y.Array && existing.get(ORDER_FIELD) instanceof Y.Array) return false;
  transactTable(doc, origin, () => {
    if (!existing) {
      sheetsRoot(doc).set(surfaceId, newSheetMap());
    } else {
      if (!(existing.get(COLUMNS_FIELD) instanceof Y.Array)) existing.set(COLUMNS_FIELD, new Y.Array());
      if (!(existing.get(ORDER_FIELD) instanceof Y.Array)) existing.set(ORDER_FIELD, new Y.Array());
    }
    invalidateTableIndex(doc);
  });
  return true;
}

/**
 * Removes the sheet and deletes the rows it holds, in one transaction, so no
 * row map is left behind that no sheet lists, and takes those rows out of
 * the link cells of the other sheets. Returns how many rows went.
 */
export function removeSheet(doc: Y.Doc, surfaceId: string, origin: unknown): { removed: boolean; deletedRows: number } {
  if (!sheetMapOf(doc, surfaceId)) return { removed: false, deletedRows: 0 };
  const rowIds = tableIndex(doc).rowsBySheet.get(surfaceId) ?? [];
  transactTable(doc, origin, () => {
    dropLinksToDeleted(doc, rowIds);
    const rows = rowsRoot(doc);
    for (const rowId of rowIds) rows.delete(rowId);
    sheetsRoot(doc).delete(surfaceId);
    invalidateTableIndex(doc);
  });
  return { removed: true, deletedRows: rowIds.length };
}

/** Surface ids of the sheets, in id order (the same on every peer; see `canonicalSheetIds`). */
export function listSheetIds(doc: Y.Doc): string[] {
  return canonicalSheetIds(doc);
}

export function requireSheet(doc: Y.Doc, surfaceId: string): void {
  if (!sheetMapOf(doc, surfaceId)) {
    throw new TableDocumentError('sheet_not_found', `No sheet for surface ${surfaceId} in this table document.`, [
      { path: ['surfaceId'], code: 'sheet_not_found', message: `Unknown surface ${surfaceId}.` },
    ]);
  }
}
