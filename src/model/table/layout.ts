/**
 * The table document's Y layout, and the only place that names its roots.
 * The layout is a public interface (sync clients read and write it):
 *
 *   rows:   Y.Map<rowId, Y.Map<columnKey, CellValue>>
 *   sheets: Y.Map<surfaceId, Y.Map{ columns: Y.Array<Y.Map<ColumnDef fields>>,
 *                                   order: Y.Array<rowId> }>
 *
 * A row belongs to the sheet whose `order` holds it; its position is its
 * index there. Authorship and timestamps live on the server, not here, so a
 * row costs one Y.Map and one item per cell (see bench/table-load.ts).
 */
import * as Y from 'yjs';
import type { CellValue } from './types.js';

export const ROWS_ROOT = 'rows';
export const SHEETS_ROOT = 'sheets';
export const COLUMNS_FIELD = 'columns';
export const ORDER_FIELD = 'order';

export type RowMap = Y.Map<CellValue>;
export type ColumnMap = Y.Map<unknown>;
export type SheetMap = Y.Map<Y.Array<unknown>>;
export type OrderArray = Y.Array<string>;
export type ColumnsArray = Y.Array<ColumnMap>;

export function rowsRoot(doc: Y.Doc): Y.Map<RowMap> {
  return doc.getMap<RowMap>(ROWS_ROOT);
}

export function sheetsRoot(doc: Y.Doc): Y.Map<SheetMap> {
  return doc.getMap<SheetMap>(SHEETS_ROOT);
}

/**
 * Roots as they are, without creating or converting them. Used while a
 * transaction is being observed: a root that arrived from a peer before
 * anyone called `getMap` is still a plain AbstractType, and converting it
 * mid-observation would detach it from `transaction.changed`.
 */
export function existingRoots(doc: Y.Doc): { rows: Y.AbstractType<any> | undefined; sheets: Y.AbstractType<any> | undefined } {
  return { rows: doc.share.get(ROWS_ROOT), sheets: doc.share.get(SHEETS_ROOT) };
}

/** The row's live cell map, or null. A value that is not a Y.Map (a peer's mistake) is no row. */
export function rowMapOf(doc: Y.Doc, rowId: string): RowMap | null {
  const value: unknown = rowsRoot(doc).get(rowId);
  return value instanceof Y.Map ? (value as RowMap) : null;
}

export function sheetMapOf(doc: Y.Doc, surfaceId: string): SheetMap | null {
  const value: unknown = sheetsRoot(doc).get(surfaceId);
  return value instanceof Y.Map ? (value as SheetMap) : null;
}

export function orderOf(sheet: SheetMap): OrderArray | null {
  const value: unknown = sheet.get(ORDER_FIELD);
  return value instanceof Y.Array ? (value as OrderArray) : null;
}

export function columnsOf(sheet: SheetMap): ColumnsArray | null {
  const value: unknown = sheet.get(COLUMNS_FIELD);
  return value instanceof Y.Array ? (value as ColumnsArray) : null;
}

/**
 * Surface ids in a deterministic order every peer agrees on. Y.Map key order
 * is integration order, which differs between a live doc and one loaded from
 * storage, so it cannot be used; the id order is stable. Callers that know the
 * surfaces' display positions pass them to `listRows` as `sheetOrder`.
 */
export function canonicalSheetIds(doc: Y.Doc): string[] {
  const ids: string[] = [];
  for (const [surfaceId, sheet] of sheetsRoot(doc).entries()) {
    if (sheet instanceof Y.Map) ids.push(surfaceId);
  }
  return ids.sort(compareCodeUnits);
}

export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A new sheet map with its two arrays, ready to be set under `sheets`. */
export function newSheetMap(): SheetMap {
  const sheet: SheetMap = new Y.Map();
  sheet.set(COLUMNS_FIELD, new Y.Array());
  sheet.set(ORDER_FIELD, new Y.Array());
  return sheet;
}

// ---------------------------------------------------------------------------
// Cell values. Yjs keeps a set value by reference, so arrays are copied on the
// way in and out: a caller mutating its object must never edit the document
// outside a transaction.

/** What a cell may hold: a string, a finite number, a boolean, null or an array of strings. */
export function isCellValue(value: unknown): value is CellValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export function copyCellValue(value: CellValue): CellValue {
  return Array.isArray(value) ? [...value] : value;
}

/**
 * A stored cell as a plain value. Peers may store what REST never would (an
 * object, a nested Y type): those come back as JSON copies, never as shared
 * references or Y types.
 */
function plainCellValue(value: unknown): CellValue {
  if (value === null || typeof value !== 'object') return value as CellValue;
  if (value instanceof Y.AbstractType) return value.toJSON() as CellValue;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
  return structuredClone(value) as CellValue;
}

export function sameCellValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => item === b[i]);
  }
  return false;
}

/**
 * The row's cells as a plain object. Walks the map's entries directly
 * instead of `Y.Map.entries()`, whose generator chain made listing 50,000
 * rows several times slower.
 */
export function readRowData(rowMap: RowMap): Record<string, CellValue> {
  const data: Record<string, CellValue> = {};
  for (const [key, item] of rowMap._map) {
    if (item.deleted) continue;
    const content = item.content.getContent();
    data[key] = plainCellValue(content[content.length - 1]);
  }
  return data;
}

/** One stored cell as it is (not copied: read it, never change it), or undefined; as `readRowData` reads each. */
export function peekCell(rowMap: RowMap, key: string): unknown {
  const item = rowMap._map.get(key);
  if (!item || item.deleted) return undefined;
  const content = item.content.getContent();
  return content[content.length - 1];
}

/** Structural equality for JSON values (column fields such as `options`). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  }
  const aKeys = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bKeys = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return aKeys.length === bKeys.length && aKeys.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * A deep copy of a JSON value (a column definition, a view, a cell). Plain
 * objects and arrays are copied by hand: `structuredClone` serialises, and
 * its fixed cost was most of `readColumns`, which every row write calls.
 * Anything else (bytes from a Y map, a date) still goes through it.
 */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = copyJson((value as Record<string, unknown>)[key]);
    // An own `__proto__` key (JSON.parse makes one) stays a key, not the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
    else copy[key] = field;
  }
  return copy as T;
}
