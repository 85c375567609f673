/**
 * Turns one Yjs transaction on the table document into domain changes, for
 * the observer that emits row events for edits made over sync and REST alike.
 *
 * It reads what the transaction itself records rather than diffing snapshots:
 * the items it added (clocks from `beforeState` on) and the items it deleted
 * (`deleteSet`), each located in the layout by its parent chain. That works
 * for any shape a peer may send (a row map set and its id pushed to an order,
 * cell edits, an id removed from one order and pushed to another, a sheet map
 * replaced wholesale) and costs time in proportion to the transaction, not to
 * the table.
 *
 * Call it synchronously from `doc.on('afterTransaction')` or an
 * `observeDeep` callback: deleted content is garbage-collected right after
 * those run, and removed order entries (which ids left which sheet) would be
 * gone.
 *
 * Decisions:
 * - A row exists for the domain when it has a live row map AND a sheet's
 *   `order` lists it. A row map set without an order entry is not reported
 *   until a later transaction places it, which then reports `row.created`:
 *   guessing a sheet would announce a row in the wrong place and follow it
 *   with a spurious move, while REST and listRows do not show it either.
 *   Removing a row from every order (leaving its map) reports `row.deleted`.
 * - A row removed from one order and added to another in the same
 *   transaction is `row.moved_surface` (plus `row.updated` if cells changed).
 * - A row taken out of its sheet's order and put back elsewhere in it is
 *   `row.updated` with no changed keys and `positionChanged: true`. Rows
 *   whose position shifts because others were inserted, deleted or moved are
 *   not reported: that would be an event per row of the sheet per insert.
 * - A cell set to the value it already had is not a change.
 * - A row map replaced by another map under the same id (a peer re-creating
 *   the row) is `row.updated` with the keys whose values differ.
 * - `columns.updated` fires for every sheet whose columns array or any column
 *   field changed, if the sheet still exists. Renaming a column also renames
 *   the key in each row, which reports `row.updated` for those rows.
 * - Saved views (`views.ts`) are judged like rows without an order: a view
 *   map that appears is `view.created`, one that goes is `view.deleted`, and
 *   fields of a kept (or replaced) map set to a different value are
 *   `view.updated` with those field names. A view is not checked against its
 *   sheet here; `surfaceId` is the field as stored.
 */
import * as Y from 'yjs';
import { tableIndex, type TableIndex } from './row-index.js';
import { COLUMNS_FIELD, ORDER_FIELD, compareCodeUnits, existingRoots, rowsRoot, sameCellValue, sheetsRoot } from './layout.js';
import type { TableChange } from './types.js';
import { VIEWS_ROOT, viewsRoot } from './views.js';

interface RowTrace {
  /** Keys of cells written or deleted in a row map that existed before and still does. */
  cellKeys: Set<string>;
  addedTo: string[];
  removedFrom: string[];
}

type Roots = { rows: Y.AbstractType<any> | undefined; sheets: Y.AbstractType<any> | undefined; views: Y.AbstractType<any> | undefined };

type Location =
  | { kind: 'rowEntry'; rowId: string }
  | { kind: 'cell'; rowId: string; key: string; rowMapItem: Y.Item }
  | { kind: 'order'; surfaceId: string }
  | { kind: 'columns'; surfaceId: string }
  | { kind: 'viewEntry'; viewId: string }
  | { kind: 'viewField'; viewId: string; field: string; viewMapItem: Y.Item };

export function diffTableTransaction(transaction: Y.Transaction): TableChange[] {
  const doc = transaction.doc;
  if (!existingRoots(doc).rows && !existingRoots(doc).sheets && !doc.share.has(VIEWS_ROOT)) return [];
  return recorded(transaction).changes();
}

const changesOfTransactions = new WeakMap<Y.Transaction, readonly TableChange[]>();

/**
 * `diffTableTransaction`, taken once per transaction for the caches that
 * drop what it changed (computed values, kept listings), which read it in
 * the same hook: read-only, as each of them sees the same array.
 */
export function transactionChanges(transaction: Y.Transaction): readonly TableChange[] {
  let changes = changesOfTransactions.get(transaction);
  if (!changes) changesOfTransactions.set(transaction, (changes = diffTableTransaction(transaction)));
  return changes;
}

/** What the transaction added and removed, located in the table layout. */
function recorded(transaction: Y.Transaction): TransactionRecorder {
  const doc = transaction.doc;
  // Roots that arrived from a peer are plain AbstractTypes until someone asks
  // for them as maps; convert them now, before items are compared with them.
  rowsRoot(doc);
  sheetsRoot(doc);
  if (doc.share.has(VIEWS_ROOT)) viewsRoot(doc);
  const recorder = new TransactionRecorder(transaction, { ...existingRoots(doc), views: doc.share.get(VIEWS_ROOT) });
  forEachAddedItem(transaction, (item, from, to) => recorder.record(item, 'added', from, to));
  forEachRemovedItem(transaction, (item, from, to) => recorder.record(item, 'removed', from, to));
  return recorder;
}

/**
 * The sheets a transaction changed, when it did nothing but create rows,
 * each into one sheet's order (an import, a bulk insert): their sheets are
 * the orders they were added to. The version index's history pass needs no
 * more than the sheets, and `diffTableTransaction` would read every row's
 * sheet from the table index, which a replay rebuilds after each such
 * transaction (a 50,000-row CSV import replayed as 100 transactions:
 * 100 rebuilds over a growing table). Anything else: null (take the diff).
 */
export function sheetsOfRowCreations(transaction: Y.Transaction): string[] | null {
  const doc = transaction.doc;
  if (!existingRoots(doc).rows || !existingRoots(doc).sheets) return null;
  return recorded(transaction).sheetsOfCreations();
}

class TransactionRecorder {
  private readonly rows = new Map<string, RowTrace>();
  private readonly columnSheets = new Set<string>();
  /** Views the transaction touched, with the fields it wrote in view maps that existed before and still do. */
  private readonly views = new Map<string, Set<string>>();
  private index: TableIndex | null = null;
  private straysByRow: Map<string, string[]> | null = null;

  constructor(
    private readonly transaction: Y.Transaction,
    private readonly roots: Roots,
  ) {}

  record(item: Y.Item, how: 'added' | 'removed', from: number, to: number): void {
    const location = locate(item, this.roots, this.transaction);
    if (!location) return;
    switch (location.kind) {
      case 'rowEntry':
        this.trace(location.rowId);
        return;
      case 'cell':
        // Cells of a row map created or deleted in this transaction belong
        // to the row's creation, deletion or replacement, judged as a whole.
        if (isOldAndAlive(location.rowMapItem, this.transaction)) this.trace(location.rowId).cellKeys.add(location.key);
        return;
      case 'order':
        for (const rowId of item.content.getContent().slice(from, to)) {
          if (typeof rowId !== 'string') continue;
          const trace = this.trace(rowId);
          (how === 'added' ? trace.addedTo : trace.removedFrom).push(location.surfaceId);
        }
        return;
      case 'columns':
        this.columnSheets.add(location.surfaceId);
        return;
      case 'viewEntry':
        this.viewFields(location.viewId);
        return;
      case 'viewField':
        if (isOldAndAlive(location.viewMapItem, this.transaction)) this.viewFields(location.viewId).add(location.field);
        else this.viewFields(location.viewId);
        return;
    }
  }

  private viewFields(viewId: string): Set<string> {
    let fields = this.views.get(viewId);
    if (!fields) {
      fields = new Set();
      this.views.set(viewId, fields);
    }
    return fields;
  }

  private viewChanges(viewId: string, fields: Set<string>): TableChange[] {
    const head = this.roots.views?._map.get(viewId);
    const before = mapContent(aliveBefore(head, this.transaction));
    const after = mapContent(head && !head.deleted ? head : null);
    if (!before && after) return [{ kind: 'view.created', viewId, surfaceId: surfaceIdOf(after) }];
    if (before && !after) return [{ kind: 'view.deleted', viewId, surfaceId: surfaceIdOf(before) }];
    if (!before || !after) return [];
    const changedFields = before !== after ? changedKeysBetweenMaps(before, after, this.transaction) : changedKeysInMap(after, fields, this.transaction);
    return changedFields.length > 0 ? [{ kind: 'view.updated', viewId, surfaceId: surfaceIdOf(after), changedFields: changedFields.sort(compareCodeUnits) }] : [];
  }

  /** See `sheetsOfRowCreations`. */
  sheetsOfCreations(): string[] | null {
    if (this.views.size > 0) return null;
    const sheets = new Set<string>();
    for (const surfaceId of this.columnSheets) if (liveMapEntry(this.roots.sheets, surfaceId)) sheets.add(surfaceId);
    for (const [rowId, trace] of this.rows) {
      const head = this.roots.rows?._map.get(rowId);
      const created = !aliveBefore(head, this.transaction) && head && !head.deleted;
      if (!created || trace.addedTo.length !== 1 || trace.removedFrom.length > 0) return null;
      sheets.add(trace.addedTo[0]!);
    }
    return [...sheets];
  }

  changes(): TableChange[] {
    const changes: TableChange[] = [];
    for (const surfaceId of [...this.columnSheets].sort()) {
      if (liveMapEntry(this.roots.sheets, surfaceId)) changes.push({ kind: 'columns.updated', surfaceId });
    }
    for (const [rowId, trace] of this.rows) changes.push(...this.rowChanges(rowId, trace));
    for (const [viewId, fields] of this.views) changes.push(...this.viewChanges(viewId, fields));
    return changes;
  }

  private trace(rowId: string): RowTrace {
    let trace = this.rows.get(rowId);
    if (!trace) {
      trace = { cellKeys: new Set(), addedTo: [], removedFrom: [] };
      this.rows.set(rowId, trace);
    }
    return trace;
  }

  private tableIndex(): TableIndex {
    this.index ??= tableIndex(this.transaction.doc);
    return this.index;
  }

  private rowChanges(rowId: string, trace: RowTrace): TableChange[] {
    const head = this.roots.rows?._map.get(rowId);
    const mapBefore = mapContent(aliveBefore(head, this.transaction));
    const mapAfter = mapContent(head && !head.deleted ? head : null);
    const sheetAfter = mapAfter ? (this.tableIndex().placements.get(rowId)?.surfaceId ?? null) : null;
    const sheetBefore = mapBefore ? this.sheetBefore(rowId, trace) : null;

    if (!sheetBefore && sheetAfter) return [{ kind: 'row.created', rowId, surfaceId: sheetAfter }];
    if (sheetBefore && !sheetAfter) return [{ kind: 'row.deleted', rowId, surfaceId: sheetBefore }];
    if (!sheetBefore || !sheetAfter) return [];

    const changes: TableChange[] = [];
    if (sheetBefore !== sheetAfter) changes.push({ kind: 'row.moved_surface', rowId, fromSurfaceId: sheetBefore, toSurfaceId: sheetAfter });
    const changedKeys =
      mapBefore !== mapAfter ? changedKeysBetweenMaps(mapBefore!, mapAfter!, this.transaction) : changedKeysInMap(mapAfter!, trace.cellKeys, this.transaction);
    const positionChanged = sheetBefore === sheetAfter && trace.removedFrom.includes(sheetAfter) && trace.addedTo.includes(sheetAfter);
    if (changedKeys.length > 0 || positionChanged) {
      changes.push({ kind: 'row.updated', rowId, surfaceId: sheetAfter, changedKeys, ...(positionChanged ? { positionChanged } : {}) });
    }
    return changes;
  }

  /**
   * The sheet that placed the row before the transaction. Its entries then
   * were its entries now, minus those the transaction added, plus those it
   * removed; of the sheets left holding one, the first in sheet-id order
   * placed it, the same rule the index applies now. Counting rather than
   * taking the first removal keeps a peer's two-step move (push to the new
   * sheet, later delete from the old one) to one move event.
   */
  private sheetBefore(rowId: string, trace: RowTrace): string | null {
    const entries = new Map<string, number>();
    const count = (surfaceId: string, delta: number) => entries.set(surfaceId, (entries.get(surfaceId) ?? 0) + delta);
    const placement = this.tableIndex().placements.get(rowId);
    if (placement) count(placement.surfaceId, 1);
    for (const surfaceId of this.strayEntriesOf(rowId)) count(surfaceId, 1);
    for (const surfaceId of trace.addedTo) count(surfaceId, -1);
    for (const surfaceId of trace.removedFrom) count(surfaceId, 1);
    const holding = [...entries].filter(([, n]) => n > 0).map(([surfaceId]) => surfaceId);
    return holding.sort(compareCodeUnits)[0] ?? null;
  }

  private strayEntriesOf(rowId: string): string[] {
    if (!this.straysByRow) {
      this.straysByRow = new Map();
      for (const entry of this.tableIndex().strayEntries) {
        if (typeof entry.rowId !== 'string') continue;
        const sheets = this.straysByRow.get(entry.rowId) ?? [];
        sheets.push(entry.surfaceId);
        this.straysByRow.set(entry.rowId, sheets);
      }
    }
    return this.straysByRow.get(rowId) ?? [];
  }
}

// ---------------------------------------------------------------------------
// Where an item sits in the layout

function locate(item: Y.Item, roots: Roots, transaction: Y.Transaction): Location | null {
  const parent = item.parent;
  if (!(parent instanceof Y.AbstractType)) return null;
  if (parent === roots.rows) return item.parentSub === null ? null : { kind: 'rowEntry', rowId: item.parentSub };
  if (parent === roots.sheets) return null; // a sheet added or removed: its rows and columns report themselves
  if (parent === roots.views) return item.parentSub === null ? null : { kind: 'viewEntry', viewId: item.parentSub };
  const parentItem = parent._item;
  if (!parentItem) return null;
  if (parentItem.parent === roots.views) {
    return parentItem.parentSub === null || item.parentSub === null ? null : { kind: 'viewField', viewId: parentItem.parentSub, field: item.parentSub, viewMapItem: parentItem };
  }
  if (parentItem.parent === roots.rows) {
    return parentItem.parentSub === null || item.parentSub === null ? null : { kind: 'cell', rowId: parentItem.parentSub, key: item.parentSub, rowMapItem: parentItem };
  }
  // A field of a sheet map. Only a `columns` array replaced in a sheet that
  // already had one matters; a new sheet reports its column maps, if any.
  if (parentItem.parent === roots.sheets) {
    const replacedColumns = item.parentSub === COLUMNS_FIELD && parentItem.parentSub !== null && isOldAndAlive(parentItem, transaction);
    return replacedColumns ? { kind: 'columns', surfaceId: parentItem.parentSub! } : null;
  }
  const orderSheet = sheetIdOfField(parent, ORDER_FIELD, roots);
  if (orderSheet !== null) return { kind: 'order', surfaceId: orderSheet };
  const columnsSheet = sheetIdOfField(parent, COLUMNS_FIELD, roots);
  if (columnsSheet !== null) return { kind: 'columns', surfaceId: columnsSheet };
  // A field of a column map (parent is a column map inside a columns array).
  const columnMapSheet = parentItem.parent instanceof Y.AbstractType ? sheetIdOfField(parentItem.parent, COLUMNS_FIELD, roots) : null;
  return columnMapSheet !== null ? { kind: 'columns', surfaceId: columnMapSheet } : null;
}

/** The surface id if `type` is the `field` array of a sheet map, else null. */
function sheetIdOfField(type: Y.AbstractType<any>, field: string, roots: Roots): string | null {
  const item = type._item;
  if (!item || item.parentSub !== field || !(item.parent instanceof Y.AbstractType)) return null;
  const sheetItem = item.parent._item;
  return sheetItem && sheetItem.parent === roots.sheets ? sheetItem.parentSub : null;
}

// ---------------------------------------------------------------------------
// Map entries before and after the transaction

/** A map entry's value that garbage collection took (deleted in an earlier transaction). */
export const UNKNOWN = Symbol('collected');

function existedBefore(item: Y.Item, transaction: Y.Transaction): boolean {
  return item.id.clock < (transaction.beforeState.get(item.id.client) ?? 0);
}

/** Alive before the transaction: older than it and not deleted, or deleted by it. */
export function wasAliveBefore(item: Y.Item, transaction: Y.Transaction): boolean {
  return existedBefore(item, transaction) && (!item.deleted || Y.isDeleted(transaction.deleteSet, item.id));
}

function isOldAndAlive(item: Y.Item, transaction: Y.Transaction): boolean {
  return existedBefore(item, transaction) && !item.deleted;
}

/** The entry a map key had before the transaction: at most one item per key is alive, found walking left from the newest. */
export function aliveBefore(head: Y.Item | null | undefined, transaction: Y.Transaction): Y.Item | null {
  for (let item = head ?? null; item !== null; item = item.left) {
    if (wasAliveBefore(item, transaction)) return item;
  }
  return null;
}

export function mapContent(item: Y.Item | null): Y.Map<unknown> | null {
  return item && item.content instanceof Y.ContentType && item.content.type instanceof Y.Map ? item.content.type : null;
}

function liveMapEntry(map: Y.AbstractType<any> | undefined, key: string): Y.Map<unknown> | null {
  const head = map?._map.get(key);
  return head && !head.deleted ? mapContent(head) : null;
}

/** A view map's `surfaceId` field, read from its items so that a map deleted by the transaction still tells it. */
function surfaceIdOf(view: Y.Map<unknown>): string | null {
  const value = entryValue(view._map.get('surfaceId') ?? null);
  return typeof value === 'string' ? value : null;
}

export function entryValue(item: Y.Item | null): unknown {
  if (item === null) return undefined;
  if (item.content instanceof Y.ContentDeleted) return UNKNOWN;
  const content = item.content.getContent();
  return content[content.length - 1];
}

function keyChanged(before: Y.Item | null, after: Y.Item | null): boolean {
  const [a, b] = [entryValue(before), entryValue(after)];
  if (a === UNKNOWN || b === UNKNOWN) return true;
  return !sameCellValue(a, b);
}

function changedKeysInMap(map: Y.Map<unknown>, keys: Set<string>, transaction: Y.Transaction): string[] {
  return [...keys].filter((key) => {
    const head = map._map.get(key) ?? null;
    return keyChanged(aliveBefore(head, transaction), head && !head.deleted ? head : null);
  });
}

function changedKeysBetweenMaps(before: Y.Map<unknown>, after: Y.Map<unknown>, transaction: Y.Transaction): string[] {
  const keys = new Set([...before._map.keys(), ...after._map.keys()]);
  return [...keys].filter((key) => {
    const afterHead = after._map.get(key) ?? null;
    return keyChanged(aliveBefore(before._map.get(key), transaction), afterHead && !afterHead.deleted ? afterHead : null);
  });
}

// ---------------------------------------------------------------------------
// Items the transaction added or deleted. Read-only: unlike
// Y.iterateDeletedStructs, nothing is split, and content offsets say which part
// of an item falls in the range (an order item may hold many row ids).

type ItemVisitor = (item: Y.Item, from: number, to: number) => void;

function forEachAddedItem(transaction: Y.Transaction, visit: ItemVisitor): void {
  for (const [client, structs] of transaction.doc.store.clients) {
    const beforeClock = transaction.beforeState.get(client) ?? 0;
    const last = structs[structs.length - 1];
    if (!last || last.id.clock + last.length <= beforeClock) continue;
    for (let i = Y.findIndexSS(structs, beforeClock); i < structs.length; i++) {
      const struct = structs[i]!;
      if (struct instanceof Y.Item && !struct.deleted) visit(struct, Math.max(0, beforeClock - struct.id.clock), struct.length);
    }
  }
}

export function forEachRemovedItem(transaction: Y.Transaction, visit: ItemVisitor): void {
  for (const [client, deletions] of transaction.deleteSet.clients) {
    const structs = transaction.doc.store.clients.get(client);
    const beforeClock = transaction.beforeState.get(client) ?? 0;
    if (!structs) continue;
    for (const { clock, len } of deletions) {
      // Items both added and deleted by the transaction never existed for anyone.
      const end = Math.min(clock + len, beforeClock);
      if (clock >= end) continue;
      for (let i = Y.findIndexSS(structs, clock); i < structs.length && structs[i]!.id.clock < end; i++) {
        const struct = structs[i]!;
        if (!(struct instanceof Y.Item)) continue;
        visit(struct, Math.max(0, clock - struct.id.clock), Math.min(struct.length, end - struct.id.clock));
      }
    }
  }
}
