/**
 * The grid's view of a table document. The Y layout is known only to the
 * server's `src/model/table/*.ts` modules (browser-safe: Yjs and Web Crypto
 * only), so the web app calls the same functions the REST routes call and a
 * change made here is exactly what a REST write would make. Nothing else in
 * the web app imports those modules.
 */
import * as Y from 'yjs';
import {
  addColumn,
  createTableId,
  deleteRow,
  ensureSheet,
  insertRow,
  moveRows,
  readColumns,
  replaceColumns,
  resolveLinkedCells,
  rowTitle,
  setRowPosition,
  sheetOfRow,
  updateRowCells,
  type CellValue,
  type ColumnDef,
  type ColumnOption,
  type ColumnType,
  type LookupValue,
  type ReadRowData,
  type RowData,
} from '../../../src/model/table/document';
import { tableIndex } from '../../../src/model/table/row-index';
import { readRowData, rowMapOf, rowsRoot, sheetsRoot } from '../../../src/model/table/layout';
import { isAbsoluteWebUrl, isIsoDateOrDateTime } from '../../../src/model/table/validation';

export type { CellValue, ColumnDef, ColumnOption, ColumnType, LookupValue, ReadRowData, RowData };
export { COLUMN_TYPES, lookupText } from '../../../src/model/table/document';

/** A cell as the grid shows it: stored, or a lookup's values (computed, read-only). */
export type ShownValue = CellValue | LookupValue;

/** Column types made with what they point at (the add-column dialog asks), not by switching a column's type. */
export const LINKING_TYPES: ReadonlySet<ColumnType> = new Set(['link', 'lookup']);
export { isAbsoluteWebUrl, isIsoDateOrDateTime };

/** Origin of this tab's own writes (the provider sends every transaction not made by itself). */
const LOCAL = { source: 'web' };

export class TableModel {
  constructor(readonly doc: Y.Doc) {
    // Every row read resolves its links against its sheet's columns: read them once per change, not once per row.
    doc.on('afterTransaction', () => this.columnCache.clear());
  }

  private readonly columnCache = new Map<string, ColumnDef[]>();

  /** Row ids of a sheet in display order. The array is cached until the next change: do not mutate it. */
  rowIds(surfaceId: string): readonly string[] {
    return tableIndex(this.doc).rowsBySheet.get(surfaceId) ?? [];
  }

  rowCount(surfaceId: string): number {
    return this.rowIds(surfaceId).length;
  }

  /**
   * The row's cells as shown, or null when it is gone (deleted by a peer a
   * moment ago): link cells hold the ids of rows that exist, lookup cells
   * the linked rows' values (the same rules as REST: src/model/table/link-reads.ts).
   */
  row(rowId: string): ReadRowData | null {
    const map = rowMapOf(this.doc, rowId);
    if (!map) return null;
    const surfaceId = sheetOfRow(this.doc, rowId);
    const data = readRowData(map);
    return surfaceId === null ? data : resolveLinkedCells(this.doc, surfaceId, data, { columns: this.cachedColumns(surfaceId) });
  }

  /** How a row reads in a link: its first column's text. */
  title(rowId: string): string {
    const surfaceId = sheetOfRow(this.doc, rowId);
    return surfaceId === null ? '' : rowTitle(this.doc, rowId, this.cachedColumns(surfaceId));
  }

  columns(surfaceId: string): ColumnDef[] {
    return readColumns(this.doc, surfaceId);
  }

  private cachedColumns(surfaceId: string): ColumnDef[] {
    let columns = this.columnCache.get(surfaceId);
    if (!columns) this.columnCache.set(surfaceId, (columns = readColumns(this.doc, surfaceId)));
    return columns;
  }

  hasSheet(surfaceId: string): boolean {
    return tableIndex(this.doc).rowsBySheet.has(surfaceId);
  }

  /** Calls `listener` after every change to the table, local or remote. */
  onChange(listener: (transaction: Y.Transaction) => void): () => void {
    this.doc.on('afterTransaction', listener);
    return () => this.doc.off('afterTransaction', listener);
  }

  setCell(rowId: string, key: string, value: CellValue): void {
    const surfaceId = sheetOfRow(this.doc, rowId);
    // A lookup is computed from its link: there is nothing to write (clearing the cell with Delete lands here).
    if (surfaceId !== null && this.cachedColumns(surfaceId).some((column) => column.key === key && column.type === 'lookup')) return;
    updateRowCells(this.doc, rowId, { [key]: value }, LOCAL);
  }

  /** Adds an empty row (or one with `data`) at `position`, the tail by default; returns its id. */
  addRow(surfaceId: string, data: RowData = {}, position?: number): string {
    ensureSheet(this.doc, surfaceId, LOCAL);
    const id = createTableId();
    insertRow(this.doc, { id, surfaceId, data, position }, LOCAL);
    return id;
  }

  deleteRow(rowId: string): void {
    deleteRow(this.doc, rowId, LOCAL);
  }

  moveRowToSheet(rowId: string, surfaceId: string): void {
    ensureSheet(this.doc, surfaceId, LOCAL);
    moveRows(this.doc, [rowId], surfaceId, LOCAL);
  }

  moveRowTo(rowId: string, position: number): void {
    setRowPosition(this.doc, rowId, position, LOCAL);
  }

  /**
   * Adds a column after the others, with a key made from its label (unique
   * in the sheet). A link column names its target table surface by slug, a
   * lookup its link column and the target's field (as over REST).
   */
  addColumn(surfaceId: string, column: { label: string; type: ColumnType; options?: ColumnOption[]; targetSurface?: string; link?: string; field?: string }): ColumnDef {
    const taken = new Set(this.columns(surfaceId).map((c) => c.key));
    const base = keyFromLabel(column.label);
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
    const options = column.options ?? (column.type === 'status' ? DEFAULT_STATUS_OPTIONS : column.type === 'select' ? [] : undefined);
    const pointers = column.type === 'link' ? { targetSurface: column.targetSurface } : column.type === 'lookup' ? { link: column.link, field: column.field } : {};
    return addColumn(this.doc, surfaceId, withoutUndefined({ key, label: column.label, type: column.type, ...(options ? { options } : {}), ...pointers }), LOCAL);
  }

  /** Changes one column's fields (label, type, hidden, width, options); the key and id stay. */
  updateColumn(surfaceId: string, columnId: string, patch: Partial<Omit<ColumnDef, 'id' | 'key' | 'position'>>): void {
    const columns = this.columns(surfaceId).map((column) => (column.id === columnId ? withoutUndefined({ ...column, ...patch }) : column));
    replaceColumns(this.doc, surfaceId, columns, LOCAL);
  }

  /** Moves a column to a display position; the others keep their relative order. */
  moveColumn(surfaceId: string, columnId: string, toPosition: number): void {
    const columns = this.columns(surfaceId);
    const from = columns.findIndex((column) => column.id === columnId);
    if (from < 0) return;
    const [moved] = columns.splice(from, 1);
    columns.splice(Math.max(0, Math.min(toPosition, columns.length)), 0, moved!);
    replaceColumns(this.doc, surfaceId, columns.map((column, position) => ({ ...column, position })), LOCAL);
  }

  /** Removes a column from the sheet; its cells stay in the rows (as the REST replacement does). */
  removeColumn(surfaceId: string, columnId: string): void {
    const columns = this.columns(surfaceId).filter((column) => column.id !== columnId);
    replaceColumns(this.doc, surfaceId, columns.map((column, position) => ({ ...column, position })), LOCAL);
  }

  /** Undo and redo of this tab's own table edits (peers' edits are never undone). */
  createUndoManager(): Y.UndoManager {
    return new Y.UndoManager([rowsRoot(this.doc), sheetsRoot(this.doc)], { trackedOrigins: new Set([LOCAL]), captureTimeout: 400 });
  }
}

const DEFAULT_STATUS_OPTIONS: ColumnOption[] = [
  { value: 'todo', label: 'To do', color: 'gray' },
  { value: 'doing', label: 'Doing', color: 'blue' },
  { value: 'done', label: 'Done', color: 'green' },
];

export function keyFromLabel(label: string): string {
  const key = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  return key || 'column';
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
