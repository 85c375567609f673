/**
 * Where each row sits: one pass over every sheet's `order`, cached per doc.
 * A row's position is not stored anywhere, and scanning the orders for every
 * `getRow` would make an observer that reads 500 moved rows of a 50,000-row
 * table do 25 million comparisons; with the cache it does one pass.
 *
 * The cache is dropped when a transaction touches what placements depend on
 * (the `rows` keys, the `sheets` keys, a sheet's fields or an `order`). Our own
 * write functions keep it right themselves, appending in place or dropping it,
 * and flag their transactions so the drop is skipped for them.
 */
import * as Y from 'yjs';
import { ORDER_FIELD, canonicalSheetIds, existingRoots, orderOf, rowsRoot, sheetMapOf } from './layout.js';

export interface Placement {
  surfaceId: string;
  /** Index among the sheet's live rows, contiguous from 0. */
  position: number;
  /** Index in the sheet's `order` array; differs from `position` only when stray entries precede it. */
  rawIndex: number;
}

/** An `order` entry that places no row: an id without a live row map, a repeat of an id placed earlier, or a non-string. */
export interface StrayEntry {
  surfaceId: string;
  rawIndex: number;
  rowId: unknown;
}

export interface TableIndex {
  sheetIds: string[];
  rowsBySheet: Map<string, string[]>;
  placements: Map<string, Placement>;
  strayEntries: StrayEntry[];
}

interface IndexCache {
  index: TableIndex | null;
  /** Per column key, per reading: each row's cell as read that way, dropped row by row as cells change (`cellVector`). */
  cells: Map<string, Map<string, Map<string, unknown>>>;
  /** What else keeps values from the table (computed cells, kept listings), told when its state is replaced wholesale. */
  forgetters: Array<() => void>;
}

const caches = new WeakMap<Y.Doc, IndexCache>();

/** Set on transactions made by the table functions, which keep the index right themselves. */
const INDEX_MAINTAINED = Symbol('table-index-maintained');

export function tableIndex(doc: Y.Doc): TableIndex {
  const cache = cacheOf(doc);
  cache.index ??= buildIndex(doc);
  return cache.index;
}

export function invalidateTableIndex(doc: Y.Doc): void {
  const cache = caches.get(doc);
  if (cache) cache.index = null;
}

/** Drops everything cached for `doc` (its state was replaced wholesale). */
export function forgetTableCaches(doc: Y.Doc): void {
  const cache = caches.get(doc);
  if (!cache) return;
  cache.index = null;
  cache.cells.clear();
  for (const forget of cache.forgetters) forget();
}

/** Runs `forget` when `forgetTableCaches` drops what is kept for `doc`: for caches kept outside this module, which no transaction tells of it. */
export function whenTableCachesForgotten(doc: Y.Doc, forget: () => void): void {
  cacheOf(doc).forgetters.push(forget);
}

/** The index if it is built, for writers that update it in place. */
export function builtTableIndex(doc: Y.Doc): TableIndex | null {
  return caches.get(doc)?.index ?? null;
}

/**
 * Runs `write` in one transaction with `origin`. Nested in a caller's
 * transaction it joins that one (and its origin), which is how several table
 * functions are made atomic together.
 */
export function transactTable<T>(doc: Y.Doc, origin: unknown, write: (transaction: Y.Transaction) => T): T {
  return doc.transact((transaction) => {
    transaction.meta.set(INDEX_MAINTAINED, true);
    return write(transaction);
  }, origin);
}

function cacheOf(doc: Y.Doc): IndexCache {
  let cache = caches.get(doc);
  if (!cache) {
    const created: IndexCache = { index: null, cells: new Map(), forgetters: [] };
    // beforeObserverCalls runs before any observer or afterTransaction
    // listener, so an observer reading positions never sees a stale index.
    doc.on('beforeObserverCalls', (transaction: Y.Transaction) => {
      if (created.index && !transaction.meta.has(INDEX_MAINTAINED) && touchesPlacements(transaction)) created.index = null;
      if (created.cells.size > 0) dropChangedCells(transaction, created.cells);
    });
    caches.set(doc, created);
    cache = created;
  }
  return cache;
}

/** How many column readings a document keeps (each up to one entry a row). */
const KEPT_CELL_VECTORS = 16;

/**
 * Each row's cell `key`, read through `read`, kept per row until that cell
 * changes: a filter over 50,000 rows reads plain values from a map instead
 * of walking 50,000 Y maps, and a write drops only the cells it changed, so
 * a table being edited stays fast to query. `reading` names the way of
 * reading (cells read two ways are kept apart).
 */
export function cellVector<T>(doc: Y.Doc, key: string, reading: string, read: (value: unknown) => T): (rowId: string) => T {
  const rows = rowsRoot(doc);
  // Inside an open transaction later writes in it would not drop what is kept.
  if (doc._transaction !== null) return (rowId) => read((rows.get(rowId) as Y.Map<unknown> | undefined)?.get(key));
  const cells = cacheOf(doc).cells;
  let readings = cells.get(key);
  if (!readings) {
    if (cells.size >= KEPT_CELL_VECTORS) cells.delete(cells.keys().next().value!);
    cells.set(key, (readings = new Map()));
  }
  let vector = readings.get(reading) as Map<string, T> | undefined;
  if (!vector) readings.set(reading, (vector = new Map()));
  const kept = vector;
  return (rowId) => {
    const value = kept.get(rowId);
    if (value !== undefined || kept.has(rowId)) return value as T;
    const computed = read((rows.get(rowId) as Y.Map<unknown> | undefined)?.get(key));
    kept.set(rowId, computed);
    return computed;
  };
}

/** Forgets the kept cells a transaction changed: a row's changed keys, or all of a row that was replaced, added or removed. */
function dropChangedCells(transaction: Y.Transaction, cells: IndexCache['cells']): void {
  const { rows } = existingRoots(transaction.doc);
  if (!rows) return;
  const dropRow = (rowId: string) => {
    for (const readings of cells.values()) for (const vector of readings.values()) vector.delete(rowId);
  };
  for (const [type, keys] of transaction.changed) {
    if (type === rows) {
      for (const rowId of keys) if (typeof rowId === 'string') dropRow(rowId);
      continue;
    }
    // A row map, or a Y type a peer stored somewhere inside one.
    let item: Y.Item | null = type._item;
    let direct = true;
    while (item && item.parent !== rows) {
      item = item.parent instanceof Y.AbstractType ? item.parent._item : null;
      direct = false;
    }
    if (!item || typeof item.parentSub !== 'string') continue;
    const rowId = item.parentSub;
    if (!direct) {
      dropRow(rowId);
      continue;
    }
    for (const key of keys) if (typeof key === 'string') for (const vector of cells.get(key)?.values() ?? []) vector.delete(rowId);
  }
}

function touchesPlacements(transaction: Y.Transaction): boolean {
  const { rows, sheets } = existingRoots(transaction.doc);
  for (const type of transaction.changed.keys()) {
    if (type === rows || type === sheets) return true;
    const item = type._item;
    if (item === null) continue;
    if (item.parent === sheets) return true;
    if (item.parentSub === ORDER_FIELD && item.parent instanceof Y.AbstractType && item.parent._item?.parent === sheets) return true;
  }
  return false;
}

function buildIndex(doc: Y.Doc): TableIndex {
  const rows = rowsRoot(doc);
  const index: TableIndex = {
    sheetIds: canonicalSheetIds(doc),
    rowsBySheet: new Map(),
    placements: new Map(),
    strayEntries: [],
  };
  for (const surfaceId of index.sheetIds) {
    const placed: string[] = [];
    index.rowsBySheet.set(surfaceId, placed);
    const order = orderOf(sheetMapOf(doc, surfaceId)!);
    if (!order) continue;
    // Sheets in canonical order, first entry wins: every peer resolves a row
    // listed twice (two concurrent moves) to the same place.
    order.toArray().forEach((rowId: unknown, rawIndex) => {
      const isLiveRow = typeof rowId === 'string' && !index.placements.has(rowId) && rows.get(rowId) instanceof Y.Map;
      if (isLiveRow) {
        index.placements.set(rowId, { surfaceId, position: placed.length, rawIndex });
        placed.push(rowId);
        return;
      }
      index.strayEntries.push({ surfaceId, rawIndex, rowId });
    });
  }
  return index;
}
