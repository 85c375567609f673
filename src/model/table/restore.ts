/**
 * Makes one sheet equal to an earlier state of it (a version), in one
 * transaction, changing only what differs: columns are replaced field by
 * field (`replaceColumns`), rows no longer wanted are deleted, missing rows
 * are re-created under their old ids, rows that moved to another sheet are
 * moved back, cells are set or removed where they differ, and the order is
 * repaired with as few moves as a longest common subsequence allows. Rows of
 * other sheets are not touched (except rows that belong here by the version).
 */
import type * as Y from 'yjs';
import { matchKeys } from '../doc/sequence-merge.js';
import { readColumns, replaceColumns } from './columns.js';
import { invalidateTableIndex, tableIndex, transactTable } from './row-index.js';
import { orderOf, readRowData, rowMapOf, sameCellValue, sheetMapOf } from './layout.js';
import { deleteRow, deleteRowCells, insertRows, moveRows, setRowPosition, updateRows } from './rows.js';
import { ensureSheet } from './sheets.js';
import type { ColumnDef, RowData } from './types.js';

export type SheetState = { columns: ColumnDef[]; rows: Array<{ id: string; data: RowData }> };

/** Past this many rows out of place, the order is rewritten in one go instead of row by row. */
const REWRITE_ORDER_ABOVE = 200;

/** How many rows restoring `state` adds to the whole table document (for the plan's row cap). */
export function rowsAddedByRestore(doc: Y.Doc, surfaceId: string, state: SheetState): number {
  const index = tableIndex(doc);
  const wanted = new Set(state.rows.map((row) => row.id));
  const created = state.rows.filter((row) => !index.placements.has(row.id)).length;
  const removed = (index.rowsBySheet.get(surfaceId) ?? []).filter((rowId) => !wanted.has(rowId)).length;
  return created - removed;
}

export function restoreSheet(doc: Y.Doc, surfaceId: string, state: SheetState, origin: unknown): void {
  transactTable(doc, origin, () => {
    ensureSheet(doc, surfaceId, origin);
    if (!sameColumns(readColumns(doc, surfaceId), state.columns)) {
      replaceColumns(doc, surfaceId, state.columns.map((column, position) => ({ ...column, position })), origin);
    }
    const wanted = new Set(state.rows.map((row) => row.id));
    for (const rowId of [...(tableIndex(doc).rowsBySheet.get(surfaceId) ?? [])]) {
      if (!wanted.has(rowId)) deleteRow(doc, rowId, origin);
    }
    const placements = tableIndex(doc).placements;
    const elsewhere = state.rows.filter((row) => {
      const placement = placements.get(row.id);
      return placement !== undefined && placement.surfaceId !== surfaceId;
    });
    if (elsewhere.length > 0) moveRows(doc, elsewhere.map((row) => row.id), surfaceId, origin);
    // A row map no sheet lists (a peer's leftover) would block re-creating the row under its id.
    const missing = state.rows.filter((row) => !tableIndex(doc).placements.has(row.id));
    for (const row of missing) if (rowMapOf(doc, row.id)) deleteRow(doc, row.id, origin);
    if (missing.length > 0) insertRows(doc, missing.map((row) => ({ id: row.id, surfaceId, data: row.data })), origin);
    restoreCells(doc, state.rows.filter((row) => !missing.includes(row)), origin);
    restoreOrder(doc, surfaceId, state.rows.map((row) => row.id), origin);
  });
}

function sameColumns(a: ColumnDef[], b: ColumnDef[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function restoreCells(doc: Y.Doc, rows: SheetState['rows'], origin: unknown): void {
  const updates: Array<{ id: string; data: RowData }> = [];
  for (const row of rows) {
    const current = readRowData(rowMapOf(doc, row.id)!);
    const changed: RowData = {};
    for (const [key, value] of Object.entries(row.data)) {
      if (!(key in current) || !sameCellValue(current[key], value)) changed[key] = value;
    }
    if (Object.keys(changed).length > 0) updates.push({ id: row.id, data: changed });
    const extra = Object.keys(current).filter((key) => !(key in row.data));
    if (extra.length > 0) deleteRowCells(doc, row.id, extra, origin);
  }
  if (updates.length > 0) updateRows(doc, updates, origin);
}

/**
 * Rows kept in place are a longest common subsequence of the current and
 * wanted orders; the others go to the tail, then each is put at its wanted
 * position in ascending order, which leaves every earlier position settled.
 */
function restoreOrder(doc: Y.Doc, surfaceId: string, wanted: string[], origin: unknown): void {
  const current = [...(tableIndex(doc).rowsBySheet.get(surfaceId) ?? [])];
  if (current.length === wanted.length && current.every((rowId, i) => rowId === wanted[i])) return;
  const kept = new Set(matchKeys(current, wanted).map(([, at]) => wanted[at]!));
  const misplaced = wanted.filter((rowId) => !kept.has(rowId));
  if (misplaced.length > REWRITE_ORDER_ABOVE) {
    const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
    order.delete(0, order.length);
    order.insert(0, wanted);
    invalidateTableIndex(doc);
    return;
  }
  const tail = () => (tableIndex(doc).rowsBySheet.get(surfaceId) ?? []).length;
  for (const rowId of misplaced) setRowPosition(doc, rowId, tail(), origin);
  wanted.forEach((rowId, position) => {
    if (!kept.has(rowId)) setRowPosition(doc, rowId, position, origin);
  });
}
