/**
 * Row reads and writes. Every write checks its whole input first and throws
 * a TableDocumentError before touching the document, then makes its changes
 * in one transaction with the caller's origin, so a batch is all-or-nothing
 * and the observer sees it as one unit.
 */
import * as Y from 'yjs';
import { builtTableIndex, invalidateTableIndex, tableIndex, transactTable } from './row-index.js';
import { copyCellValue, isCellValue, orderOf, readRowData, rowMapOf, rowsRoot, sameCellValue, sheetMapOf, type RowMap } from './layout.js';
import { dropLinksToDeleted } from './links.js';
import { requireSheet } from './sheets.js';
import { TableDocumentError, type CellValue, type RowData, type TableIssue, type TableRow } from './types.js';

export interface NewRow {
  id: string;
  surfaceId: string;
  data: Partial<RowData>;
  /** Index to insert at among the sheet's rows; the tail when omitted or past the end. */
  position?: number;
}

export interface RowUpdate {
  id: string;
  data: Partial<RowData>;
}

// ---------------------------------------------------------------------------
// Reads

/** The row if it exists and a sheet holds it. A row map no sheet lists is not (yet) a row. */
export function getRow(doc: Y.Doc, rowId: string): TableRow | null {
  const placement = tableIndex(doc).placements.get(rowId);
  const rowMap = placement ? rowMapOf(doc, rowId) : null;
  if (!placement || !rowMap) return null;
  return { id: rowId, surfaceId: placement.surfaceId, position: placement.position, data: readRowData(rowMap) };
}

/** The sheet a row is on when `getRow` would find it, without reading its cells (null: no such row). */
export function sheetOfExistingRow(doc: Y.Doc, rowId: string): string | null {
  const placement = tableIndex(doc).placements.get(rowId);
  return placement && rowMapOf(doc, rowId) ? placement.surfaceId : null;
}

export function rowExists(doc: Y.Doc, rowId: string): boolean {
  return tableIndex(doc).placements.has(rowId);
}

export function countRows(doc: Y.Doc, surfaceId?: string): number {
  const index = tableIndex(doc);
  return surfaceId === undefined ? index.placements.size : (index.rowsBySheet.get(surfaceId)?.length ?? 0);
}

// ---------------------------------------------------------------------------
// Inserts

export function insertRow(doc: Y.Doc, row: NewRow, origin: unknown): TableRow {
  return insertRows(doc, [row], origin)[0]!;
}

/** Inserts rows in the order given (each position is read after the previous inserts). */
export function insertRows(doc: Y.Doc, rows: readonly NewRow[], origin: unknown): TableRow[] {
  checkNewRows(doc, rows);
  transactTable(doc, origin, () => {
    const pendingAppends = new Map<string, string[]>();
    for (const row of rows) {
      rowsRoot(doc).set(row.id, newRowMap(row.data));
      const queue = pendingAppends.get(row.surfaceId) ?? [];
      if (row.position === undefined || row.position >= countRows(doc, row.surfaceId) + queue.length) {
        queue.push(row.id);
        pendingAppends.set(row.surfaceId, queue);
      } else {
        // A positioned insert counts the rows appended before it.
        appendToSheet(doc, row.surfaceId, pendingAppends.get(row.surfaceId) ?? []);
        pendingAppends.delete(row.surfaceId);
        insertIntoSheet(doc, row.surfaceId, [row.id], row.position!);
      }
    }
    for (const [surfaceId, rowIds] of pendingAppends) appendToSheet(doc, surfaceId, rowIds);
  });
  return rows.map((row) => getRow(doc, row.id)!);
}

function checkNewRows(doc: Y.Doc, rows: readonly NewRow[]): void {
  const issues: TableIssue[] = [];
  const batchIds = new Set<string>();
  rows.forEach((row, i) => {
    if (typeof row.id !== 'string' || row.id === '') {
      issues.push({ path: [String(i), 'id'], code: 'invalid_type', message: 'A row id must be a non-empty string.' });
    } else if (batchIds.has(row.id) || rowMapOf(doc, row.id)) {
      issues.push({ path: [String(i), 'id'], code: 'row_exists', message: `Row ${row.id} already exists.` });
    }
    batchIds.add(row.id);
    issues.push(...cellShapeIssues(row.data, [String(i), 'data']));
  });
  if (issues.some((issue) => issue.code === 'row_exists')) throw new TableDocumentError('row_exists', 'A row with this id already exists.', issues);
  if (issues.length > 0) throw new TableDocumentError('invalid_row', 'Row data holds values a cell cannot store.', issues);
  for (const surfaceId of new Set(rows.map((row) => row.surfaceId))) requireSheet(doc, surfaceId);
}

function newRowMap(data: Partial<RowData>): RowMap {
  const rowMap: RowMap = new Y.Map();
  for (const [key, value] of Object.entries(data)) {
    if (value !== undefined) rowMap.set(key, copyCellValue(value));
  }
  return rowMap;
}

/**
 * Appends ids at the sheet's tail in one call, so they become one Yjs item
 * (cheaper to store and load than one item per row), and extends the cached
 * index in place instead of dropping it: appends are the common write, and
 * a rebuild would cost a pass over every order.
 *
 * `insert(length)` rather than `push`: push walks the whole list from its
 * start unless an index lookup left a search marker, which made 50,000
 * one-row appends take two minutes; insert finds and keeps a marker.
 */
function appendToSheet(doc: Y.Doc, surfaceId: string, rowIds: string[]): void {
  if (rowIds.length === 0) return;
  const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
  extendIndexWithAppends(doc, surfaceId, rowIds, order.length);
  order.insert(order.length, rowIds);
}

function extendIndexWithAppends(doc: Y.Doc, surfaceId: string, rowIds: string[], firstRawIndex: number): void {
  const index = builtTableIndex(doc);
  const placed = index?.rowsBySheet.get(surfaceId);
  if (!index || !placed) return;
  // A stray entry naming one of these ids (left by a peer) would place the
  // row there on a rebuild, not at the tail: let the rebuild decide.
  if (index.strayEntries.length > 0) {
    invalidateTableIndex(doc);
    return;
  }
  rowIds.forEach((rowId, i) => {
    index.placements.set(rowId, { surfaceId, position: placed.length, rawIndex: firstRawIndex + i });
    placed.push(rowId);
  });
}

/** Inserts ids before the row now at `position` (clamped), so they take positions from `position` on. */
function insertIntoSheet(doc: Y.Doc, surfaceId: string, rowIds: string[], position: number): void {
  const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
  order.insert(rawIndexAt(doc, surfaceId, position, order.length), rowIds);
  invalidateTableIndex(doc);
}

function rawIndexAt(doc: Y.Doc, surfaceId: string, position: number, tail: number): number {
  const index = tableIndex(doc);
  const rowIdThere = index.rowsBySheet.get(surfaceId)?.[Math.max(0, position)];
  return rowIdThere === undefined ? tail : index.placements.get(rowIdThere)!.rawIndex;
}

// ---------------------------------------------------------------------------
// Cell updates

/**
 * Partial merge: keys given are set (`null` stores null), keys absent are
 * kept. Values equal to the stored ones are not written, so a PATCH that
 * repeats the row creates no Yjs items and no event. Returns the keys written.
 */
export function updateRowCells(doc: Y.Doc, rowId: string, data: Partial<RowData>, origin: unknown): string[] {
  return updateRows(doc, [{ id: rowId, data }], origin)[0]!.changedKeys;
}

/** Several rows in one transaction; an unknown id fails the batch before anything is written. */
export function updateRows(doc: Y.Doc, updates: readonly RowUpdate[], origin: unknown): Array<{ id: string; changedKeys: string[] }> {
  checkUpdates(doc, updates);
  const writes = updates.map((update) => {
    const rowMap = rowMapOf(doc, update.id)!;
    return { id: update.id, rowMap, cells: changedCells(rowMap, update.data) };
  });
  if (writes.some((write) => write.cells.length > 0)) {
    transactTable(doc, origin, () => {
      for (const { rowMap, cells } of writes) {
        for (const [key, value] of cells) rowMap.set(key, copyCellValue(value));
      }
    });
  }
  return writes.map((write) => ({ id: write.id, changedKeys: write.cells.map(([key]) => key) }));
}

function checkUpdates(doc: Y.Doc, updates: readonly RowUpdate[]): void {
  const index = tableIndex(doc);
  const missing: TableIssue[] = [];
  const shapes: TableIssue[] = [];
  updates.forEach((update, i) => {
    if (!index.placements.has(update.id)) missing.push({ path: [String(i), 'id'], code: 'row_not_found', message: `No row ${update.id}.` });
    shapes.push(...cellShapeIssues(update.data, [String(i), 'data']));
  });
  if (missing.length > 0) throw new TableDocumentError('row_not_found', 'A row in the update does not exist.', missing);
  if (shapes.length > 0) throw new TableDocumentError('invalid_row', 'Row data holds values a cell cannot store.', shapes);
}

function changedCells(rowMap: RowMap, data: Partial<RowData>): Array<[string, CellValue]> {
  const cells: Array<[string, CellValue]> = [];
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    if (rowMap.has(key) && sameCellValue(rowMap.get(key), value)) continue;
    cells.push([key, value]);
  }
  return cells;
}

/** Removes cell keys from a row (unlike setting null, the key disappears). Returns the keys that were there. */
export function deleteRowCells(doc: Y.Doc, rowId: string, keys: readonly string[], origin: unknown): string[] {
  const rowMap = rowExists(doc, rowId) ? rowMapOf(doc, rowId) : null;
  if (!rowMap) throw rowNotFound(rowId);
  const present = [...new Set(keys)].filter((key) => rowMap.has(key));
  if (present.length > 0) {
    transactTable(doc, origin, () => {
      for (const key of present) rowMap.delete(key);
    });
  }
  return present;
}

// ---------------------------------------------------------------------------
// Deletes and moves

/**
 * Deletes the row map and every `order` entry naming it, and takes the row
 * out of every link cell that held it (links.ts). Returns false when there
 * was no row (a row map no sheet lists is still cleaned up).
 */
export function deleteRow(doc: Y.Doc, rowId: string, origin: unknown): boolean {
  const index = tableIndex(doc);
  const placement = index.placements.get(rowId);
  const entries = index.strayEntries.filter((entry) => entry.rowId === rowId);
  if (placement) entries.push({ surfaceId: placement.surfaceId, rawIndex: placement.rawIndex, rowId });
  const hasMap = rowsRoot(doc).has(rowId);
  if (!hasMap && entries.length === 0) return false;
  transactTable(doc, origin, () => {
    dropLinksToDeleted(doc, [rowId]);
    removeOrderEntries(doc, entries);
    if (hasMap) rowsRoot(doc).delete(rowId);
    invalidateTableIndex(doc);
  });
  return placement !== undefined;
}

export interface MoveResult {
  /** Ids that changed sheet, in the order supplied. */
  moved: string[];
  /** Ids already on the target (or repeated in the request). */
  skipped: number;
}

/**
 * Moves rows to another sheet in one transaction: rows already there are
 * skipped, the rest land together at the target's tail (or at `position`)
 * in the order supplied. An unknown id or sheet fails before any write.
 */
export function moveRows(
  doc: Y.Doc,
  rowIds: readonly string[],
  targetSurfaceId: string,
  origin: unknown,
  options: { position?: number } = {},
): MoveResult {
  requireSheet(doc, targetSurfaceId);
  const index = tableIndex(doc);
  const missing = rowIds.flatMap((rowId, i): TableIssue[] =>
    index.placements.has(rowId) ? [] : [{ path: ['rowIds', String(i)], code: 'row_not_found', message: `No row ${rowId}.` }],
  );
  if (missing.length > 0) throw new TableDocumentError('row_not_found', 'A row to move does not exist.', missing);

  const moved = [...new Set(rowIds)].filter((rowId) => index.placements.get(rowId)!.surfaceId !== targetSurfaceId);
  const skipped = rowIds.length - moved.length;
  if (moved.length === 0) return { moved, skipped };

  const target = orderOf(sheetMapOf(doc, targetSurfaceId)!)!;
  // Computed before the removals, which only touch other sheets' orders.
  const insertAt = options.position === undefined ? target.length : rawIndexAt(doc, targetSurfaceId, options.position, target.length);
  const sources = moved.map((rowId) => ({ ...index.placements.get(rowId)!, rowId }));
  transactTable(doc, origin, () => {
    removeOrderEntries(doc, sources);
    target.insert(insertAt, moved);
    invalidateTableIndex(doc);
  });
  return { moved, skipped };
}

/** Moves a row within its sheet so that it ends at `position` (clamped). Returns false when it was already there. */
export function setRowPosition(doc: Y.Doc, rowId: string, position: number, origin: unknown): boolean {
  const index = tableIndex(doc);
  const placement = index.placements.get(rowId);
  if (!placement) throw rowNotFound(rowId);
  const others = index.rowsBySheet.get(placement.surfaceId)!.filter((id) => id !== rowId);
  const finalPosition = Math.min(Math.max(0, Math.trunc(position)), others.length);
  if (finalPosition === placement.position) return false;
  const order = orderOf(sheetMapOf(doc, placement.surfaceId)!)!;
  const rowIdAfter = others[finalPosition];
  transactTable(doc, origin, () => {
    order.delete(placement.rawIndex, 1);
    // Raw indexes past the removed entry shift down by one.
    const rawAfter = rowIdAfter === undefined ? order.length : index.placements.get(rowIdAfter)!.rawIndex;
    order.insert(rowIdAfter !== undefined && rawAfter > placement.rawIndex ? rawAfter - 1 : rawAfter, [rowId]);
    invalidateTableIndex(doc);
  });
  return true;
}

/** Deletes entries from the orders, highest index first per sheet so the others stay valid, contiguous runs at once. */
export function removeOrderEntries(doc: Y.Doc, entries: ReadonlyArray<{ surfaceId: string; rawIndex: number }>): void {
  const bySheet = new Map<string, number[]>();
  for (const { surfaceId, rawIndex } of entries) {
    const rawIndexes = bySheet.get(surfaceId) ?? [];
    rawIndexes.push(rawIndex);
    bySheet.set(surfaceId, rawIndexes);
  }
  for (const [surfaceId, rawIndexes] of bySheet) {
    const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
    const descending = [...new Set(rawIndexes)].sort((a, b) => b - a);
    let runEnd = 0;
    while (runEnd < descending.length) {
      let runStart = runEnd;
      while (runStart + 1 < descending.length && descending[runStart + 1] === descending[runStart]! - 1) runStart++;
      order.delete(descending[runStart]!, runStart - runEnd + 1);
      runEnd = runStart + 1;
    }
  }
}

// ---------------------------------------------------------------------------

function rowNotFound(rowId: string): TableDocumentError {
  return new TableDocumentError('row_not_found', `No row ${rowId}.`, [{ path: ['id'], code: 'row_not_found', message: `No row ${rowId}.` }]);
}

/** Values a cell cannot hold (objects, nested arrays, NaN), which the document must never receive. */
export function cellShapeIssues(data: Partial<RowData>, path: string[]): TableIssue[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return [{ path, code: 'invalid_type', message: 'Row data must be an object keyed by column key.' }];
  }
  return Object.entries(data)
    .filter(([, value]) => value !== undefined && !isCellValue(value))
    .map(([key]) => ({
      path: [...path, key],
      code: 'invalid_type',
      message: 'A cell holds a string, a finite number, a boolean, null or an array of strings.',
    }));
}
