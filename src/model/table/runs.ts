/**
 * What a run did to the table document, and undoing it (docs/RUNS.md).
 *
 * `recordTableTransaction` runs inside afterTransaction beside
 * `diffTableTransaction` (./changes.ts), whose changes it details from the
 * transaction's own items while their content is still there: each changed
 * cell's value before and after, a deleted row's cells and the row it
 * followed, a moved row's old sheet and neighbour, and each sheet's columns
 * before and after. `foldTableRecords` folds a run's records per row and
 * column (before of the first change, after of the last), and
 * `planTableRevert` / `applyTableRevert` undo them where the document still
 * holds what the run left, reporting the rest as conflicts.
 */
import * as Y from 'yjs';
import { aliveBefore, entryValue, forEachRemovedItem, mapContent, UNKNOWN, wasAliveBefore } from './changes.js';
import { readColumns, replaceColumns } from './columns.js';
import { COLUMNS_FIELD, ORDER_FIELD, copyCellValue, existingRoots, orderOf, rowMapOf, rowsRoot, sameCellValue, sameJson, sheetMapOf, type RowMap } from './layout.js';
import { dropLinksToDeleted } from './links.js';
import { invalidateTableIndex, tableIndex, transactTable } from './row-index.js';
import { deleteRowCells, getRow, removeOrderEntries, updateRows } from './rows.js';
import type { CellValue, ColumnDef, RowData, TableChange, TableRow } from './types.js';

/** A cell's value on either side of a change; a side that is absent had no cell. */
export type CellChange = { before?: CellValue; after?: CellValue };

export type TableRunRecord =
  | { kind: 'row.created'; rowId: string; surfaceId: string; data: RowData; position: number }
  | { kind: 'row.updated'; rowId: string; surfaceId: string; cells: Record<string, CellChange> }
  /** `after`: the row it followed in its sheet (null: it was first), so it goes back there. */
  | { kind: 'row.deleted'; rowId: string; surfaceId: string; data: RowData; after: string | null }
  | { kind: 'row.moved'; rowId: string; fromSurfaceId: string; toSurfaceId: string; after: string | null; position: number }
  | { kind: 'column.created'; surfaceId: string; column: ColumnDef }
  | { kind: 'column.updated'; surfaceId: string; before: ColumnDef; after: ColumnDef }
  | { kind: 'column.deleted'; surfaceId: string; column: ColumnDef };

// ----------------------------------------------------------------- recording

/** The details of `changes` (what `diffTableTransaction` found in `transaction`), with `rows` as they read right after it. */
export function recordTableTransaction(transaction: Y.Transaction, changes: readonly TableChange[], rows: ReadonlyMap<string, TableRow | null>): TableRunRecord[] {
  const doc = transaction.doc;
  const records: TableRunRecord[] = [];
  const rowsMap = existingRoots(doc).rows;
  const needsAnchors = changes.some((change) => change.kind === 'row.deleted' || change.kind === 'row.moved_surface' || (change.kind === 'row.updated' && change.positionChanged));
  const anchors = needsAnchors ? removedEntries(transaction) : new Map<string, string | null>();
  const rowMapsOf = (rowId: string) => {
    const head = rowsMap?._map.get(rowId);
    return { before: mapContent(aliveBefore(head, transaction)), after: mapContent(head && !head.deleted ? head : null) };
  };
  for (const change of changes) {
    switch (change.kind) {
      case 'row.created': {
        const row = rows.get(change.rowId);
        if (row) records.push({ kind: 'row.created', rowId: row.id, surfaceId: row.surfaceId, data: row.data, position: row.position });
        break;
      }
      case 'row.updated': {
        const maps = rowMapsOf(change.rowId);
        if (change.changedKeys.length > 0 && maps.after) {
          const cells: Record<string, CellChange> = {};
          for (const key of change.changedKeys) cells[key] = cellChange(maps.before, maps.after, key, transaction);
          records.push({ kind: 'row.updated', rowId: change.rowId, surfaceId: change.surfaceId, cells });
        }
        if (change.positionChanged) {
          const row = rows.get(change.rowId);
          const after = anchors.get(`${change.surfaceId}\u0000${change.rowId}`) ?? null;
          records.push({ kind: 'row.moved', rowId: change.rowId, fromSurfaceId: change.surfaceId, toSurfaceId: change.surfaceId, after, position: row?.position ?? 0 });
        }
        break;
      }
      case 'row.deleted': {
        if (!change.surfaceId) break;
        const { before } = rowMapsOf(change.rowId);
        const after = anchors.get(`${change.surfaceId}\u0000${change.rowId}`) ?? null;
        records.push({ kind: 'row.deleted', rowId: change.rowId, surfaceId: change.surfaceId, data: before ? mapBefore(before, transaction) : {}, after });
        break;
      }
      case 'row.moved_surface': {
        const row = rows.get(change.rowId);
        const after = anchors.get(`${change.fromSurfaceId}\u0000${change.rowId}`) ?? null;
        records.push({ kind: 'row.moved', rowId: change.rowId, fromSurfaceId: change.fromSurfaceId, toSurfaceId: change.toSurfaceId, after, position: row?.position ?? 0 });
        break;
      }
      case 'columns.updated':
        records.push(...columnRecords(change.surfaceId, columnsBefore(transaction, change.surfaceId), readColumns(doc, change.surfaceId)));
        break;
      default:
        break;
    }
  }
  return records;
}

function cellChange(before: Y.Map<unknown> | null, after: Y.Map<unknown>, key: string, transaction: Y.Transaction): CellChange {
  const change: CellChange = {};
  const was = before ? entryValue(aliveBefore(before._map.get(key), transaction)) : undefined;
  if (was !== undefined && was !== UNKNOWN) change.before = plain(was);
  const head = after._map.get(key);
  if (head && !head.deleted) change.after = plain(entryValue(head));
  return change;
}

/** A map's entries as they were before the transaction. */
function mapBefore(map: Y.Map<unknown>, transaction: Y.Transaction): RowData {
  const data: RowData = {};
  for (const [key, head] of map._map) {
    const value = entryValue(aliveBefore(head, transaction));
    if (value !== undefined && value !== UNKNOWN) data[key] = plain(value);
  }
  return data;
}

function plain(value: unknown): CellValue {
  if (value instanceof Y.AbstractType) return value.toJSON() as CellValue;
  return copyCellValue(value as CellValue);
}

/**
 * For each order entry the transaction removed (`surfaceId\0rowId`), the row
 * listed before it then (null: it was first): where the row goes back.
 */
function removedEntries(transaction: Y.Transaction): Map<string, string | null> {
  const anchors = new Map<string, string | null>();
  const sheets = existingRoots(transaction.doc).sheets;
  forEachRemovedItem(transaction, (item, from, to) => {
    const order = item.parent;
    const field = order instanceof Y.AbstractType ? order._item : null;
    if (!field || field.parentSub !== ORDER_FIELD || !(field.parent instanceof Y.AbstractType) || field.parent._item?.parent !== sheets) return;
    const surfaceId = field.parent._item!.parentSub!;
    const ids = item.content.getContent();
    for (let i = from; i < to; i++) {
      if (typeof ids[i] !== 'string') continue;
      anchors.set(`${surfaceId}\u0000${ids[i]}`, i > 0 ? entryBefore(ids, i) ?? previousEntry(item, transaction) : previousEntry(item, transaction));
    }
  });
  return anchors;
}

function entryBefore(ids: unknown[], i: number): string | null {
  for (let j = i - 1; j >= 0; j--) if (typeof ids[j] === 'string') return ids[j] as string;
  return null;
}

/** The last row id listed before `item` in its order array before the transaction. */
function previousEntry(item: Y.Item, transaction: Y.Transaction): string | null {
  for (let left = item.left; left !== null; left = left.left) {
    if (!wasAliveBefore(left, transaction)) continue;
    const ids = left.content.getContent();
    const id = entryBefore(ids, ids.length);
    if (id !== null) return id;
  }
  return null;
}

/** A sheet's columns as they read before the transaction (the rules of `readColumns`). */
function columnsBefore(transaction: Y.Transaction, surfaceId: string): ColumnDef[] {
  const sheet = mapContent(aliveBefore(existingRoots(transaction.doc).sheets?._map.get(surfaceId), transaction));
  const array = sheet ? aliveBefore(sheet._map.get(COLUMNS_FIELD), transaction) : null;
  const columns = array?.content instanceof Y.ContentType ? array.content.type : null;
  if (!columns) return [];
  const stored: Array<{ fields: Record<string, unknown>; index: number }> = [];
  let index = 0;
  for (let item = columns._start; item !== null; item = item.right) {
    if (!wasAliveBefore(item, transaction)) continue;
    const map = mapContent(item);
    if (map) stored.push({ fields: mapBefore(map, transaction) as Record<string, unknown>, index });
    index++;
  }
  return stored
    .filter(({ fields }) => typeof fields.key === 'string')
    .map(({ fields, index }) => ({ fields, index, position: typeof fields.position === 'number' ? fields.position : Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.position - b.position || a.index - b.index)
    .map(({ fields }, position) => ({ ...(fields as unknown as ColumnDef), id: typeof fields.id === 'string' && fields.id !== '' ? fields.id : (fields.key as string), position }));
}

function columnRecords(surfaceId: string, before: ColumnDef[], after: ColumnDef[]): TableRunRecord[] {
  const records: TableRunRecord[] = [];
  const old = new Map(before.map((column) => [column.id, column]));
  for (const column of after) {
    const was = old.get(column.id);
    old.delete(column.id);
    if (!was) records.push({ kind: 'column.created', surfaceId, column });
    else if (!sameColumn(was, column) || was.position !== column.position) records.push({ kind: 'column.updated', surfaceId, before: was, after: column });
  }
  for (const column of old.values()) records.push({ kind: 'column.deleted', surfaceId, column });
  return records;
}

/** Same definition, wherever it stands. */
function sameColumn(a: ColumnDef, b: ColumnDef): boolean {
  const { position: _a, ...restA } = a;
  const { position: _b, ...restB } = b;
  return sameJson(restA, restB);
}

// ------------------------------------------------------------------- folding

/** A row as the run found it and left it; `data` sides hold the cells the run touched (all of them for a row it created or deleted). */
export type FoldedRow = {
  rowId: string;
  existedBefore: boolean;
  existsAfter: boolean;
  /**
   * `after`: the row it followed before the run first took it out of its place (a delete or a move), null when it was first,
   * undefined when the run never did; `placedAt`: that record's number in the run, which orders the rows going back after one row.
   */
  before: { surfaceId: string | null; after?: string | null; placedAt: number; cells: Map<string, CellValue | undefined>; complete: boolean };
  after: { surfaceId: string | null; position: number | null; cells: Map<string, CellValue | undefined> };
  moved: boolean;
};

export type FoldedColumn = { surfaceId: string; id: string; before: ColumnDef | null; after: ColumnDef | null };

export type FoldedTable = { rows: Map<string, FoldedRow>; columns: Map<string, FoldedColumn> };

export function foldTableRecords(records: readonly TableRunRecord[]): FoldedTable {
  const rows = new Map<string, FoldedRow>();
  const columns = new Map<string, FoldedColumn>();
  const rowOf = (rowId: string, existedBefore: boolean, surfaceId: string | null) => {
    let row = rows.get(rowId);
    if (!row) {
      row = {
        rowId,
        existedBefore,
        existsAfter: existedBefore,
        before: { surfaceId: existedBefore ? surfaceId : null, placedAt: 0, cells: new Map(), complete: !existedBefore },
        after: { surfaceId, position: null, cells: new Map() },
        moved: false,
      };
      rows.set(rowId, row);
    }
    return row;
  };
  const tookOut = (row: FoldedRow, after: string | null, at: number) => {
    if (!row.existedBefore || row.before.after !== undefined) return;
    row.before.after = after;
    row.before.placedAt = at;
  };
  for (const [at, record] of records.entries()) {
    switch (record.kind) {
      case 'row.created': {
        const row = rowOf(record.rowId, false, record.surfaceId);
        // Made again after the run deleted it: every cell it had is gone unless the new row has it.
        for (const key of row.before.cells.keys()) row.after.cells.set(key, undefined);
        for (const [key, value] of Object.entries(record.data)) {
          if (row.existedBefore && !row.before.cells.has(key)) row.before.cells.set(key, undefined);
          row.after.cells.set(key, value);
        }
        row.existsAfter = true;
        row.after.surfaceId = record.surfaceId;
        row.after.position = record.position;
        break;
      }
      case 'row.updated': {
        const row = rowOf(record.rowId, true, record.surfaceId);
        for (const [key, cell] of Object.entries(record.cells)) {
          if (!row.before.cells.has(key) && !row.before.complete) row.before.cells.set(key, cell.before);
          row.after.cells.set(key, cell.after);
        }
        break;
      }
      case 'row.deleted': {
        const row = rowOf(record.rowId, true, record.surfaceId);
        tookOut(row, record.after, at);
        if (!row.before.complete) {
          for (const [key, value] of Object.entries(record.data)) if (!row.before.cells.has(key)) row.before.cells.set(key, value);
          row.before.complete = true;
        }
        for (const key of row.after.cells.keys()) row.after.cells.set(key, undefined);
        for (const key of Object.keys(record.data)) row.after.cells.set(key, undefined);
        row.existsAfter = false;
        row.after.surfaceId = null;
        break;
      }
      case 'row.moved': {
        const row = rowOf(record.rowId, true, record.fromSurfaceId);
        tookOut(row, record.after, at);
        row.after.surfaceId = record.toSurfaceId;
        row.after.position = record.position;
        row.moved = true;
        break;
      }
      case 'column.created':
      case 'column.updated':
      case 'column.deleted': {
        const key = `${record.surfaceId}\u0000${record.kind === 'column.updated' ? record.after.id : record.column.id}`;
        const before = record.kind === 'column.created' ? null : record.kind === 'column.updated' ? record.before : record.column;
        const after = record.kind === 'column.deleted' ? null : record.kind === 'column.updated' ? record.after : record.column;
        const column = columns.get(key);
        if (column) column.after = after;
        else columns.set(key, { surfaceId: record.surfaceId, id: (after ?? before)!.id, before, after });
        break;
      }
    }
  }
  for (const [key, column] of columns) {
    if (column.before && column.after && sameColumn(column.before, column.after)) columns.delete(key);
    if (!column.before && !column.after) columns.delete(key);
  }
  return { rows, columns };
}

/** The cells a folded row changed: before the run's first change and after its last, where they differ. */
export function changedCells(row: FoldedRow): Map<string, CellChange> {
  const cells = new Map<string, CellChange>();
  for (const [key, after] of row.after.cells) {
    const before = row.before.cells.get(key);
    if (!sameCellValue(before, after)) cells.set(key, { ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) });
  }
  return cells;
}

/** The row's cells before the run (a row it deleted) or after it (a row it created). */
export function cellsOf(cells: Map<string, CellValue | undefined>): RowData {
  const data: RowData = {};
  for (const [key, value] of cells) if (value !== undefined) data[key] = value;
  return data;
}

// ------------------------------------------------------------------ undoing

export type TableConflict = { surfaceId: string; rowId?: string; column?: string; before: unknown; run: unknown; now: unknown };

export type TableRevertPlan = {
  removeRows: string[];
  /** Rows going back where they stood: rows the run deleted (`data`: made again with these cells) and rows it moved. */
  place: Array<{ id: string; surfaceId: string; after: string | null; placedAt: number; data?: RowData }>;
  cells: Array<{ rowId: string; key: string; value: CellValue | undefined }>;
  /** Sheets whose columns change: the whole list they end with. */
  columns: Map<string, ColumnDef[]>;
  columnsRestored: number;
  conflicts: TableConflict[];
};

/**
 * What undoing the folded run would do to the table now, writing nothing:
 * a row it created goes unless someone changed it since (a conflict), a row
 * it deleted comes back with its cells after the row it followed, a cell it
 * set goes back unless someone set it since (a conflict with the three
 * values), a row it moved goes back, a column it added goes unless it holds
 * cells the revert does not take out, one it removed comes back, one it
 * changed goes back unless changed since.
 */
export function planTableRevert(doc: Y.Doc, folded: FoldedTable): TableRevertPlan {
  const plan: TableRevertPlan = { removeRows: [], place: [], cells: [], columns: new Map(), columnsRestored: 0, conflicts: [] };
  const sheets = new Set(tableIndex(doc).sheetIds);
  for (const row of folded.rows.values()) {
    const now = getRow(doc, row.rowId);
    if (!row.existedBefore) {
      if (!row.existsAfter || !now) continue;
      const left = cellsOf(row.after.cells);
      if (sameData(left, now.data)) plan.removeRows.push(row.rowId);
      else plan.conflicts.push({ surfaceId: now.surfaceId, rowId: row.rowId, before: null, run: left, now: now.data });
      continue;
    }
    const back = { id: row.rowId, surfaceId: row.before.surfaceId!, after: row.before.after ?? null, placedAt: row.before.placedAt };
    if (!row.existsAfter) {
      if (now) continue;
      if (sheets.has(back.surfaceId) && !rowMapOf(doc, row.rowId)) plan.place.push({ ...back, data: cellsOf(row.before.cells) });
      else plan.conflicts.push({ surfaceId: back.surfaceId, rowId: row.rowId, before: cellsOf(row.before.cells), run: null, now: null });
      continue;
    }
    const cells = changedCells(row);
    if (!now) {
      if (cells.size > 0 || row.moved) plan.conflicts.push({ surfaceId: row.after.surfaceId ?? back.surfaceId, rowId: row.rowId, before: beforeCells(cells), run: afterCells(cells), now: null });
      continue;
    }
    for (const [key, cell] of cells) {
      const current = now.data[key];
      if (sameCellValue(current, cell.after)) plan.cells.push({ rowId: row.rowId, key, value: cell.before });
      else plan.conflicts.push({ surfaceId: now.surfaceId, rowId: row.rowId, column: key, before: cell.before ?? null, run: cell.after ?? null, now: current ?? null });
    }
    if (!row.moved) continue;
    if (now.surfaceId !== row.after.surfaceId) plan.conflicts.push({ surfaceId: now.surfaceId, rowId: row.rowId, before: back.surfaceId, run: row.after.surfaceId, now: now.surfaceId });
    else if (sheets.has(back.surfaceId)) plan.place.push(back);
  }
  planColumns(doc, folded, plan);
  return plan;
}

function planColumns(doc: Y.Doc, folded: FoldedTable, plan: TableRevertPlan) {
  const bySheet = new Map<string, FoldedColumn[]>();
  for (const column of folded.columns.values()) bySheet.set(column.surfaceId, [...(bySheet.get(column.surfaceId) ?? []), column]);
  const removing = new Set(plan.removeRows);
  const clearing = new Set(plan.cells.filter((cell) => cell.value === undefined).map((cell) => `${cell.rowId}\u0000${cell.key}`));
  const index = tableIndex(doc);
  for (const [surfaceId, changes] of bySheet) {
    if (!index.sheetIds.includes(surfaceId)) {
      for (const change of changes) plan.conflicts.push({ surfaceId, column: (change.after ?? change.before)!.key, before: change.before, run: change.after, now: null });
      continue;
    }
    let columns = readColumns(doc, surfaceId);
    let changed = false;
    for (const change of changes) {
      const now = columns.find((column) => column.id === change.id) ?? null;
      const conflict = () => plan.conflicts.push({ surfaceId, column: (now ?? change.after ?? change.before)!.key, before: change.before, run: change.after, now });
      if (!change.before) {
        if (!now) continue;
        const foreign = (index.rowsBySheet.get(surfaceId) ?? []).some((rowId) => {
          const value = rowMapOf(doc, rowId)?.get(now.key);
          return value !== undefined && !removing.has(rowId) && !clearing.has(`${rowId}\u0000${now.key}`);
        });
        if (!sameColumn(now, change.after!) || foreign) conflict();
        else {
          columns = columns.filter((column) => column.id !== change.id);
          changed = true;
          plan.columnsRestored++;
        }
      } else if (!change.after) {
        if (now) continue;
        if (columns.some((column) => column.key === change.before!.key)) conflict();
        else {
          columns = [...columns.slice(0, change.before.position), change.before, ...columns.slice(change.before.position)];
          changed = true;
          plan.columnsRestored++;
        }
      } else if (!now || !sameColumn(now, change.after)) {
        conflict();
      } else {
        columns = columns.map((column) => (column.id === change.id ? { ...change.before!, position: column.position } : column));
        changed = true;
        plan.columnsRestored++;
      }
    }
    if (changed) plan.columns.set(surfaceId, columns.map((column, position) => ({ ...column, position })));
  }
}

/** Applies a plan made by `planTableRevert`, in the caller's transaction. */
export function applyTableRevert(doc: Y.Doc, plan: TableRevertPlan): void {
  transactTable(doc, null, () => {
    // Columns first, without moving cells between keys: the run's renames were recorded cell by cell, and those cells go back below.
    for (const [surfaceId, columns] of plan.columns) replaceColumns(doc, surfaceId, columns, null, { renameCells: false });
    placeRows(doc, plan.place);
    const byRow = new Map<string, Array<{ key: string; value: CellValue | undefined }>>();
    for (const cell of plan.cells) {
      const cells = byRow.get(cell.rowId);
      if (cells) cells.push(cell);
      else byRow.set(cell.rowId, [cell]);
    }
    const sets = [...byRow].map(([id, cells]) => ({ id, data: Object.fromEntries(cells.filter((c) => c.value !== undefined).map((c) => [c.key, c.value!])) }));
    updateRows(doc, sets.filter((set) => Object.keys(set.data).length > 0), null);
    for (const [rowId, cells] of byRow) {
      const removed = cells.filter((cell) => cell.value === undefined).map((cell) => cell.key);
      if (removed.length > 0) deleteRowCells(doc, rowId, removed, null);
    }
    deleteRows(doc, plan.removeRows);
  });
}

/**
 * Puts rows back after the row each followed. Rows that go back after the
 * same row go in the order the run took them out, later ones first: a row
 * taken out after its neighbour had gone names the row before both, so the
 * earlier one goes nearer. A row that followed another row going back
 * follows it again. Each group is one insert into its sheet's order.
 */
function placeRows(doc: Y.Doc, place: TableRevertPlan['place']) {
  if (place.length === 0) return;
  const index = tableIndex(doc);
  const leaving = place.flatMap((row) => {
    const placement = row.data ? undefined : index.placements.get(row.id);
    return placement ? [{ surfaceId: placement.surfaceId, rawIndex: placement.rawIndex }] : [];
  });
  removeOrderEntries(doc, leaving);
  for (const row of place) if (row.data) rowsRoot(doc).set(row.id, newRowMap(row.data));
  invalidateTableIndex(doc);
  const byId = new Map(place.map((row) => [row.id, row]));
  const followers = new Map<string, typeof place>();
  const groups = new Map<string, typeof place>();
  for (const row of place) {
    const before = row.after !== null && row.after !== row.id ? byId.get(row.after) : undefined;
    const [map, key] = before && before.surfaceId === row.surfaceId ? [followers, before.id] : [groups, `${row.surfaceId}\u0000${row.after ?? ''}`];
    // Appended in place: copying the list per row was quadratic (rows a run deleted one by one share their anchor: 20,000 of them held the thread 5 s).
    const list = map.get(key);
    if (list) list.push(row);
    else map.set(key, [row]);
  }
  const placed = new Set<string>();
  const sequence = (rows: typeof place): string[] =>
    [...rows]
      .sort((a, b) => a.placedAt - b.placedAt)
      .flatMap((row) => {
        if (placed.has(row.id)) return [];
        placed.add(row.id);
        return [row.id, ...sequence(followers.get(row.id) ?? [])];
      });
  const insert = (surfaceId: string, after: string | null, ids: string[]) => {
    if (ids.length === 0) return;
    const sheetRows = tableIndex(doc).rowsBySheet.get(surfaceId) ?? [];
    const at = after === null ? 0 : sheetRows.indexOf(after) + 1 || sheetRows.length;
    const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
    order.insert(at < sheetRows.length ? tableIndex(doc).placements.get(sheetRows[at]!)!.rawIndex : order.length, ids);
    invalidateTableIndex(doc);
  };
  for (const rows of groups.values()) insert(rows[0]!.surfaceId, rows[0]!.after, sequence(rows));
  // Rows that followed each other round in a circle (moved and deleted in turns): at the end of their sheet.
  for (const row of place) if (!placed.has(row.id)) insert(row.surfaceId, row.id, sequence([row]));
}

function newRowMap(data: RowData): RowMap {
  const map: RowMap = new Y.Map();
  for (const [key, value] of Object.entries(data)) map.set(key, copyCellValue(value));
  return map;
}

/** Deletes rows as `deleteRow` does, all in one pass over the index. */
function deleteRows(doc: Y.Doc, rowIds: readonly string[]) {
  if (rowIds.length === 0) return;
  const index = tableIndex(doc);
  const gone = new Set(rowIds);
  const entries = index.strayEntries.filter((entry) => typeof entry.rowId === 'string' && gone.has(entry.rowId));
  for (const rowId of rowIds) {
    const placement = index.placements.get(rowId);
    if (placement) entries.push({ surfaceId: placement.surfaceId, rawIndex: placement.rawIndex, rowId });
  }
  dropLinksToDeleted(doc, rowIds);
  removeOrderEntries(doc, entries);
  for (const rowId of rowIds) rowsRoot(doc).delete(rowId);
  invalidateTableIndex(doc);
}

function sameData(a: RowData, b: RowData): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => sameCellValue(a[key], b[key]));
}

function beforeCells(cells: Map<string, CellChange>): RowData {
  return Object.fromEntries([...cells].map(([key, cell]) => [key, cell.before ?? null]));
}

function afterCells(cells: Map<string, CellChange>): RowData {
  return Object.fromEntries([...cells].map(([key, cell]) => [key, cell.after ?? null]));
}
