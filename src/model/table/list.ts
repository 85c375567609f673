/**
 * Row listing with opaque cursors. A cursor is base64url JSON of the last
 * row's place in the listing's total order, not an offset, so a page boundary
 * stays put when rows are added or removed elsewhere:
 *
 * - default order: sheet, then position. The cursor holds the last row's
 *   sheet, sheet slot and position, and the ids of the page's last few rows
 *   in that sheet; the next page starts after the latest of those rows still
 *   in the sheet, wherever it is now, so deleting or moving away the row a
 *   page ended on neither skips nor repeats a row. Only if all of them left
 *   does it fall back to the position.
 * - sorted by a column key: value (nulls and missing cells last in both
 *   directions), then sheet slot, position and id, which makes the order
 *   total, so a page never repeats or skips a row of an unchanged table.
 */
import * as Y from 'yjs';
import { transactionChanges } from './changes.js';
import { cellVector, tableIndex, whenTableCachesForgotten, type TableIndex } from './row-index.js';
import { compareCodeUnits, existingRoots, ORDER_FIELD, readRowData, rowMapOf } from './layout.js';
import { SUGGESTIONS_ROOT } from './suggestions.js';
import { VIEWS_ROOT } from './views.js';
import { decodeBase64UrlJson, encodeBase64UrlJson } from './ids.js';
import { cellValues, compareSortValues, sortValueOf, type CompiledRowQuery, type Scalar, type SortKey, type SortValue, type ValuesReader } from './query.js';
import { TableDocumentError, type TableRow } from './types.js';

export interface ListRowsOptions {
  /** Only this sheet; every sheet when omitted. */
  surfaceId?: string;
  /** Column key to order by; ties by sheet and position. Shorthand for a one-key `query.sort`. */
  sortKey?: string;
  descending?: boolean;
  /** A filter and sort keys (query.ts); the sort, when it has keys, replaces `sortKey`. */
  query?: CompiledRowQuery;
  /** A `nextCursor` from the previous page of the same listing. */
  after?: string | null;
  /** Page size; every row when omitted. */
  limit?: number;
  /**
   * Display order of the sheets (surface ids, e.g. by the surfaces' positions
   * in the database). Sheets not named follow in `listSheetIds` order.
   */
  sheetOrder?: readonly string[];
  /** Rows to leave out as if absent (not yet past the row cap: table-passed.ts); the others keep their positions. */
  hidden?: ReadonlySet<string>;
  /**
   * The read's computed cells (computed.ts `openReading`): a filter or sort
   * on a lookup, formula or rollup column reads its values there. Without
   * it, every key reads as stored.
   */
  reading?: ComputedCells;
}

/** What a listing needs of computed cells (computed.ts `CellReading`). */
export interface ComputedCells {
  computedKeys(): ReadonlySet<string>;
  vector<T>(key: string, reading: string, read: (cell: unknown) => T): (rowId: string) => T;
  /** The day TODAY() reads, in the reading's time zone: what a listing over computed cells is kept for. */
  readonly dayStamp: string;
  /** The zone the cells are read in (dates and DATETIME_FORMAT read it too). */
  readonly timeZone: string;
  /** `rows` and every row whose computed cells may read them (through links, any depth); null when more than `limit`. */
  dependents(rows: Iterable<string>, limit: number): Set<string> | null;
  /** Whether the computed cells this reader sees are everyone's (no rows are hidden from it), so may be kept for others. */
  readonly keepsComputed: boolean;
  /** Whether a computed cell read so far holds for this moment only (it reads NOW()). */
  readMoment(): boolean;
}

export interface RowPage {
  rows: TableRow[];
  nextCursor: string | null;
}

const CURSOR_VERSION = 2;

/** What a listing is, for its cursors and kept sort orders: sheet, sort keys and filter. */
interface Listing {
  surfaceId: string | null;
  sort: readonly SortKey[];
  /** `-due,title`, or null in sheet order. */
  sortSpec: string | null;
  filterKey: string;
  /** Null when every row passes. */
  matches: ((values: ValuesReader) => boolean) | null;
  hidden: ReadonlySet<string> | undefined;
  /** Reads cells of `key` through `read`, kept per row: as stored, or computed for the read's computed keys. */
  vector<T>(key: string, reading: string, read: (value: unknown) => T): (rowId: string) => T;
  /** The read's computed cells, if any. */
  reading: ComputedCells | undefined;
  /** Whether the listing has read a computed column so far. */
  readComputed: boolean;
}

export function listRows(doc: Y.Doc, options: ListRowsOptions = {}): RowPage {
  const index = tableIndex(doc);
  const sheets = listingSheets(index, options);
  const limit = options.limit === undefined || !Number.isFinite(options.limit) ? Infinity : Math.max(1, Math.floor(options.limit));
  const sort: readonly SortKey[] = options.query?.sort.length
    ? options.query.sort
    : options.sortKey !== undefined
      ? [{ column: options.sortKey, direction: options.descending ? 'desc' : 'asc' }]
      : [];
  const filterKey = options.query?.filterKey ?? '';
  const listing: Listing = {
    surfaceId: options.surfaceId ?? null,
    sort,
    sortSpec: sort.length ? sort.map((key) => (key.direction === 'desc' ? '-' : '') + key.column).join(',') : null,
    filterKey,
    matches: filterKey !== '' ? options.query!.matchesValues : null,
    hidden: options.hidden?.size ? options.hidden : undefined,
    vector: vectorsOf(doc, options.reading, () => {
      listing.readComputed = true;
    }),
    reading: options.reading,
    readComputed: false,
  };
  return sort.length === 0 ? listInSheetOrder(doc, index, sheets, listing, options.after ?? null, limit) : listSorted(doc, index, sheets, listing, options.after ?? null, limit);
}

/** Stored cells from the kept cell vectors (row-index.ts); computed ones from the read's computed cells, which keep them likewise. */
function vectorsOf(doc: Y.Doc, reading: ComputedCells | undefined, readsComputed: () => void): Listing['vector'] {
  const computed = reading?.computedKeys();
  return (key, name, read) => {
    if (!computed?.has(key)) return cellVector(doc, key, name, read);
    readsComputed();
    return reading!.vector(key, name, read);
  };
}

/**
 * Cells as comparable values, one row at a time, from the kept cell vectors
 * (row-index.ts), so that checking a row allocates nothing and reads no Y type.
 */
function rowReader(listing: Listing): { at(rowId: string): ValuesReader } {
  const vectors = new Map<string, Map<string, (rowId: string) => readonly Scalar[]>>();
  let current = '';
  const read: ValuesReader = (key, kind) => {
    let byKind = vectors.get(key);
    if (!byKind) vectors.set(key, (byKind = new Map()));
    let vector = byKind.get(kind);
    if (!vector) byKind.set(kind, (vector = listing.vector(key, kind, (value) => cellValues(kind, value))));
    return vector(current);
  };
  return {
    at(rowId) {
      current = rowId;
      return read;
    },
  };
}

/** Whether a row is in the listing: not held out, and past the filter. */
function admits(listing: Listing, reader: { at(rowId: string): ValuesReader }, rowId: string): boolean {
  if (listing.hidden?.has(rowId)) return false;
  return listing.matches === null || listing.matches(reader.at(rowId));
}

function listingSheets(index: TableIndex, options: ListRowsOptions): string[] {
  if (options.surfaceId !== undefined) return index.rowsBySheet.has(options.surfaceId) ? [options.surfaceId] : [];
  const named = (options.sheetOrder ?? []).filter((surfaceId, i, all) => index.rowsBySheet.has(surfaceId) && all.indexOf(surfaceId) === i);
  return [...named, ...index.sheetIds.filter((surfaceId) => !named.includes(surfaceId))];
}

// ---------------------------------------------------------------------------
// Default order

type SheetOrderPoint = [surfaceId: string, slot: number, position: number, recentRowIds: string[]];

/** How many of a page's last row ids a default-order cursor carries. */
const RECENT_IDS_IN_CURSOR = 5;

function listInSheetOrder(doc: Y.Doc, index: TableIndex, sheets: string[], listing: Listing, after: string | null, limit: number): RowPage {
  let [slot, position] = after ? resumePoint(index, sheets, readCursor(after, listing).at as SheetOrderPoint) : [0, 0];
  const reader = rowReader(listing);
  const rows: TableRow[] = [];
  while (slot < sheets.length && rows.length < limit) {
    const surfaceId = sheets[slot]!;
    const placed = index.rowsBySheet.get(surfaceId)!;
    for (; position < placed.length && rows.length < limit; position++) {
      if (!admits(listing, reader, placed[position]!)) continue;
      rows.push(materialize(doc, placed[position]!, surfaceId, position));
    }
    if (position >= placed.length) [slot, position] = [slot + 1, 0];
  }
  // A next page exists when any row after this one is in the listing (stops at the first).
  const hasMore = sheets.slice(slot).some((surfaceId, i) => {
    const placed = index.rowsBySheet.get(surfaceId)!;
    for (let at = i === 0 ? position : 0; at < placed.length; at++) if (admits(listing, reader, placed[at]!)) return true;
    return false;
  });
  const last = rows.at(-1);
  const nextCursor = hasMore && last ? writeCursor(listing, sheetOrderPoint(rows, sheets)) : null;
  return { rows, nextCursor };
}

function sheetOrderPoint(rows: TableRow[], sheets: string[]): SheetOrderPoint {
  const last = rows.at(-1)!;
  const recent = rows
    .slice(-RECENT_IDS_IN_CURSOR)
    .filter((row) => row.surfaceId === last.surfaceId)
    .map((row) => row.id);
  return [last.surfaceId, sheets.indexOf(last.surfaceId), last.position, recent];
}

function resumePoint(index: TableIndex, sheets: string[], [surfaceId, slot, position, recentRowIds]: SheetOrderPoint): [number, number] {
  const sheetSlot = sheets.indexOf(surfaceId);
  // The sheet is gone: the one now in its slot is the next to list.
  if (sheetSlot < 0) return [Math.min(slot, sheets.length), 0];
  for (let i = recentRowIds.length - 1; i >= 0; i--) {
    const placement = index.placements.get(recentRowIds[i]!);
    if (placement?.surfaceId === surfaceId) return [sheetSlot, placement.position + 1];
  }
  return [sheetSlot, Math.max(0, position - recentRowIds.length + 1)];
}

// ---------------------------------------------------------------------------
// Sorted by columns

interface SortEntry {
  rowId: string;
  surfaceId: string;
  slot: number;
  position: number;
  /** One per sort key. */
  values: SortValue[];
}

type SortedPoint = [values: Array<[rank: number, value: number | string | null]>, surfaceId: string, slot: number, position: number, rowId: string];

/**
 * A listing's entries (its rows past the filter, with their sort values),
 * kept across writes: each write notes the rows it changed, and the next
 * read of the listing reads only those again (and the rows whose computed
 * cells read them through links), so a sorted page after a write reads a
 * few cells rather than every row's. Entries that hold computed cells are
 * kept for the day their TODAY() read (a reading of NOW() is not kept), and
 * only from and for readers that see every row (held rows change rollups
 * and lookups).
 */
interface KeptEntries {
  entries: SortEntry[];
  /** Whether `entries` are in order (after a page past the first was asked for). */
  sorted: boolean;
  computed: boolean;
  /** The placements the entries' slots and positions were read from. */
  index: TableIndex;
  /** Rows that writes since changed (cells, created, deleted or moved): their entries are read again. */
  written: Set<string>;
  /** Each row's entry, to find it in sorted entries: made at the first write they follow one by one. */
  byRow?: Map<string, SortEntry>;
}

/** How many listings a document keeps the entries of. */
const KEPT_LISTINGS = 4;

/** Rows written (with the rows reading them through links) past which a kept listing is read afresh: a quarter of its rows, or this many. */
const FEW_WRITTEN_ROWS = 1_000;

/**
 * Changed rows up to which each is moved from its old place in sorted
 * entries to its new one (two binary searches, and a shift of the entries
 * between): one in 64 of the entries, or 64. Past it, or when rows were removed or
 * moved, the others are carried over in one pass, the changed ones
 * appended, and the whole sorted again (one comparison an entry when
 * mostly in order).
 */
function insertedOneByOne(kept: KeptEntries): number {
  return Math.max(64, kept.entries.length >> 6);
}

const keptListings = new WeakMap<Y.Doc, Map<string, KeptEntries>>();

function keptListingsOf(doc: Y.Doc): Map<string, KeptEntries> {
  let listings = keptListings.get(doc);
  if (!listings) {
    const created = new Map<string, KeptEntries>();
    // The row index drops a stale index first, in the same hook: the changes read placements.
    tableIndex(doc);
    doc.on('beforeObserverCalls', (transaction: Y.Transaction) => {
      if (created.size > 0) noteWrites(transaction, created);
    });
    whenTableCachesForgotten(doc, () => created.clear());
    keptListings.set(doc, (listings = created));
  }
  return listings;
}

function noteWrites(transaction: Y.Transaction, listings: Map<string, KeptEntries>): void {
  const rows = rowsWritten(transaction);
  if (rows === null) {
    listings.clear();
    return;
  }
  for (const [key, kept] of listings) {
    for (const rowId of rows) kept.written.add(rowId);
    if (kept.written.size > writtenRowsAllowed(kept)) listings.delete(key);
  }
}

function writtenRowsAllowed(kept: KeptEntries): number {
  return Math.max(FEW_WRITTEN_ROWS, kept.entries.length >> 2);
}

/**
 * The rows a transaction changed, created, deleted or moved; null when it
 * changed what every row's entry depends on: columns, sheets, the settings
 * (the time zone), or anything this does not know, so that a listing is
 * read afresh rather than wrong. Saved views and suggestions change no row.
 */
function rowsWritten(transaction: Y.Transaction): Set<string> | null {
  const doc = transaction.doc;
  const { rows, sheets } = existingRoots(doc);
  const unrelated = [doc.share.get(VIEWS_ROOT), doc.share.get(SUGGESTIONS_ROOT)];
  const written = new Set<string>();
  for (const [type, keys] of transaction.changed) {
    if (type === rows) {
      for (const rowId of keys) if (typeof rowId === 'string') written.add(rowId);
      continue;
    }
    // The row map it is, or is inside; else its root.
    let item: Y.Item | null = type._item;
    let top: Y.AbstractType<any> = type;
    while (item && item.parent !== rows && item.parent instanceof Y.AbstractType) {
      top = item.parent;
      item = item.parent._item;
    }
    if (item && item.parent === rows) {
      if (typeof item.parentSub === 'string') written.add(item.parentSub);
      continue;
    }
    if (unrelated.includes(top)) continue;
    // A sheet's order: the rows it placed, removed or moved are in the diff below.
    const sheet = type._item?.parent;
    if (type._item?.parentSub === ORDER_FIELD && sheet instanceof Y.AbstractType && sheet._item?.parent === sheets && sheets !== undefined) continue;
    return null;
  }
  for (const change of transactionChanges(transaction)) {
    if (change.kind === 'columns.updated') return null;
    if ('rowId' in change) written.add(change.rowId);
  }
  return written;
}

/**
 * The first page without a cursor picks its rows from the unsorted entries
 * (a 100-row page of 50,000 in one pass). Paging on, or asking again, sorts
 * the kept entries once, so each later page is a binary search and a slice
 * rather than another pass over every row.
 */
function listSorted(doc: Y.Doc, index: TableIndex, sheets: string[], listing: Listing, after: string | null, limit: number): RowPage {
  const directions = listing.sort.map((key) => (key.direction === 'desc' ? -1 : 1) as 1 | -1);
  const compare = (a: SortEntry, b: SortEntry) => compareEntries(a, b, directions);
  const reading = listing.reading;
  const entriesKey = JSON.stringify(['sorted', listing.sortSpec, listing.filterKey, sheets, reading ? [reading.dayStamp, reading.timeZone] : null]);
  const keepsComputed = reading?.keepsComputed ?? true;
  // Inside an open transaction, its writes so far have not been noted.
  const listings = doc._transaction === null ? keptListingsOf(doc) : null;
  let kept = listings?.get(entriesKey);
  if (kept?.computed && !keepsComputed) kept = undefined;
  // Asked for again with no write since: sorted once, so that every later page is a slice (after writes a first page is one pass).
  const again = kept !== undefined && kept.written.size === 0 && kept.index === index;
  if (kept && !bringUpToDate(index, sheets, listing, kept, compare)) {
    listings!.delete(entriesKey);
    kept = undefined;
  }
  kept ??= { entries: sortEntries(index, sheets, listing), sorted: false, computed: false, index, written: new Set() };
  kept.computed ||= listing.readComputed;
  if (listings) {
    // Most recently read last, so that the least recently read goes first.
    if (listings.get(entriesKey) === kept) listings.delete(entriesKey);
    if (!kept.computed || (keepsComputed && !reading!.readMoment())) {
      if (listings.size >= KEPT_LISTINGS) listings.delete(listings.keys().next().value!);
      listings.set(entriesKey, kept);
    }
  }
  let page: SortEntry[];
  let hasMore: boolean;
  const hidden = listing.hidden;
  const shown = (entries: SortEntry[]) => (hidden ? entries.filter((entry) => !hidden.has(entry.rowId)) : entries);
  if (!kept.sorted && !again && !after && Number.isFinite(limit)) {
    const entries = shown(kept.entries);
    page = firstInOrder(entries, limit, compare);
    hasMore = entries.length > page.length;
  } else {
    if (!kept.sorted) {
      kept.entries.sort(compare);
      kept.sorted = true;
    }
    const view = shown(kept.entries);
    const start = after ? firstAfter(view, entryFromPoint(readCursor(after, listing).at as SortedPoint, sheets), compare) : 0;
    page = view.slice(start, start + limit);
    hasMore = start + page.length < view.length;
  }
  const rows = page.map((entry) => materialize(doc, entry.rowId, entry.surfaceId, entry.position));
  const last = page.at(-1);
  const nextCursor =
    hasMore && last
      ? writeCursor(listing, [last.values.map((v) => [v.rank, v.value] as [number, number | string | null]), last.surfaceId, last.slot, last.position, last.rowId] satisfies SortedPoint)
      : null;
  return { rows, nextCursor };
}

/**
 * Brings kept entries up to date with the writes noted since they were
 * read: the entries of the rows written (and, for entries holding computed
 * cells, of the rows that read those through links) are read again and put
 * in their place, and every other entry takes its row's current place when
 * rows were added, removed or moved. False when too many rows changed to
 * be worth it (the listing is then read afresh).
 */
function bringUpToDate(index: TableIndex, sheets: string[], listing: Listing, kept: KeptEntries, compare: (a: SortEntry, b: SortEntry) => number): boolean {
  if (kept.written.size === 0 && kept.index === index) return true;
  const allowed = writtenRowsAllowed(kept);
  let changed: ReadonlySet<string> | null = kept.written;
  // Rollups and lookups read the rows they link to, and formulas read those.
  if (kept.computed) changed = listing.reading?.dependents(kept.written, allowed) ?? null;
  if (changed === null || changed.size > allowed) return false;
  const slots = new Map(sheets.map((surfaceId, slot) => [surfaceId, slot]));
  const entryOf = entryReader(listing);
  const entriesNow = (rowId: string) => {
    const placement = index.placements.get(rowId);
    const slot = placement && slots.get(placement.surfaceId);
    return slot === undefined ? null : entryOf(rowId, placement!.surfaceId, slot, placement!.position);
  };
  if (kept.sorted && index === kept.index && changed.size <= insertedOneByOne(kept)) {
    // Cells changed and rows appended: no other entry moves, so each changed one is moved to its new place.
    const byRow = (kept.byRow ??= new Map(kept.entries.map((entry) => [entry.rowId, entry])));
    const entries = kept.entries;
    for (const rowId of changed) {
      const old = byRow.get(rowId);
      let from = -1;
      if (old) {
        from = firstAfter(entries, old, compare) - 1;
        if (entries[from] !== old) from = entries.indexOf(old);
        byRow.delete(rowId);
      }
      const entry = entriesNow(rowId);
      if (entry) byRow.set(rowId, entry);
      if (from < 0) {
        if (entry) entries.splice(firstAfter(entries, entry, compare), 0, entry);
      } else if (!entry) {
        entries.splice(from, 1);
      } else {
        // Most written rows move a little, or not at all (a row reached through a link): shift only the entries between.
        let to = firstAfter(entries, entry, compare);
        if (to > from) {
          to--;
          for (let i = from; i < to; i++) entries[i] = entries[i + 1]!;
        } else {
          for (let i = from; i > to; i--) entries[i] = entries[i - 1]!;
        }
        entries[to] = entry;
      }
    }
  } else {
    const replaced = index !== kept.index;
    const entries: SortEntry[] = [];
    for (const entry of kept.entries) {
      if (changed.has(entry.rowId)) continue;
      if (replaced) {
        // Rows added, removed or moved shift the places of the others, not their order among themselves (a moved row is a written one).
        const placement = index.placements.get(entry.rowId);
        const slot = placement && slots.get(placement.surfaceId);
        if (slot === undefined) continue;
        entry.surfaceId = placement!.surfaceId;
        entry.slot = slot;
        entry.position = placement!.position;
      }
      entries.push(entry);
    }
    for (const rowId of changed) {
      const entry = entriesNow(rowId);
      if (entry) entries.push(entry);
    }
    // Mostly in order already: the sort merges the tail of changed entries into the rest.
    if (kept.sorted) entries.sort(compare);
    kept.entries = entries;
    kept.byRow = undefined;
  }
  kept.index = index;
  kept.written = new Set();
  return true;
}

/** Index of the first entry ordered after `point`. */
function firstAfter(view: SortEntry[], point: SortEntry, compare: (a: SortEntry, b: SortEntry) => number): number {
  let low = 0;
  let high = view.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compare(view[middle]!, point) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A row's entry in the listing, or null when the filter leaves it out; rows held out are left to the caller, as kept entries are shared by listings that differ only in them. */
function entryReader(listing: Listing): (rowId: string, surfaceId: string, slot: number, position: number) => SortEntry | null {
  const reader = rowReader(listing);
  const sortValues = listing.sort.map((key) => listing.vector(key.column, 'sort', sortValueOf));
  return (rowId, surfaceId, slot, position) => {
    if (listing.matches && !listing.matches(reader.at(rowId))) return null;
    return { rowId, surfaceId, slot, position, values: sortValues.map((value) => value(rowId)) };
  };
}

function sortEntries(index: TableIndex, sheets: string[], listing: Listing): SortEntry[] {
  const entryOf = entryReader(listing);
  const entries: SortEntry[] = [];
  sheets.forEach((surfaceId, slot) => {
    index.rowsBySheet.get(surfaceId)!.forEach((rowId, position) => {
      const entry = entryOf(rowId, surfaceId, slot, position);
      if (entry) entries.push(entry);
    });
  });
  return entries;
}

function entryFromPoint([values, surfaceId, slot, position, rowId]: SortedPoint, sheets: string[]): SortEntry {
  const currentSlot = sheets.indexOf(surfaceId);
  return {
    rowId,
    surfaceId,
    slot: currentSlot >= 0 ? currentSlot : slot,
    position,
    values: values.map(([rank, value]) => ({ rank, value })),
  };
}

/**
 * Text compares case-insensitively ("apple" < "Banana"; "Apple" and "apple"
 * tie and fall to position). Code-unit order of the lower-cased text, not a
 * locale collator: a collator is ten times slower on 50,000 rows, and the
 * order must not depend on the server's locale for cursors to stay valid.
 */
function compareEntries(a: SortEntry, b: SortEntry, directions: ReadonlyArray<1 | -1>): number {
  for (let i = 0; i < directions.length; i++) {
    const order = compareSortValues(a.values[i]!, b.values[i]!, directions[i]!);
    if (order !== 0) return order;
  }
  return a.slot - b.slot || a.position - b.position || compareCodeUnits(a.rowId, b.rowId);
}

/**
 * The first `limit` entries in order without sorting them all: a page of 100
 * from 50,000 rows keeps a sorted buffer of 100 and rejects most entries with
 * one comparison against its last.
 */
function firstInOrder(entries: SortEntry[], limit: number, compare: (a: SortEntry, b: SortEntry) => number): SortEntry[] {
  if (limit >= entries.length) return entries.sort(compare);
  const best: SortEntry[] = [];
  for (const entry of entries) {
    if (best.length === limit && compare(entry, best[limit - 1]!) >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compare(best[middle]!, entry) <= 0) low = middle + 1;
      else high = middle;
    }
    best.splice(low, 0, entry);
    if (best.length > limit) best.pop();
  }
  return best;
}

// ---------------------------------------------------------------------------
// Cursors

interface CursorPayload {
  v: number;
  /** The listing it belongs to: sheet, sort keys, filter. */
  s: string | null;
  k: string | null;
  q: string;
  at: unknown[];
}

function writeCursor(listing: Listing, at: unknown[]): string {
  const payload: CursorPayload = { v: CURSOR_VERSION, s: listing.surfaceId, k: listing.sortSpec, q: listing.filterKey, at };
  return encodeBase64UrlJson(payload);
}

function readCursor(cursor: string, listing: Listing): CursorPayload {
  const payload = decodeBase64UrlJson(cursor) as Partial<CursorPayload> | undefined;
  const sorted = listing.sortSpec !== null;
  const wellFormed =
    payload !== undefined &&
    payload !== null &&
    payload.v === CURSOR_VERSION &&
    Array.isArray(payload.at) &&
    (sorted ? isSortedPoint(payload.at, listing.sort.length) : isSheetOrderPoint(payload.at));
  if (!wellFormed) throw invalidCursor('The cursor is not one this listing issued.');
  if (payload.s !== listing.surfaceId || payload.k !== listing.sortSpec || payload.q !== listing.filterKey) {
    throw invalidCursor('The cursor belongs to a listing with another sheet, sort or filter; start again without it.');
  }
  return payload as CursorPayload;
}

function isSheetOrderPoint(at: unknown[]): boolean {
  const [surfaceId, slot, position, recentRowIds] = at;
  return (
    at.length === 4 &&
    isPlace(surfaceId, slot, position) &&
    Array.isArray(recentRowIds) &&
    recentRowIds.length <= RECENT_IDS_IN_CURSOR &&
    recentRowIds.every((id) => typeof id === 'string')
  );
}

function isSortedPoint(at: unknown[], keys: number): boolean {
  const [values, surfaceId, slot, position, rowId] = at;
  const valueFitsRank = ([rank, value]: unknown[]) =>
    rank === 3 ? value === null : rank === 1 ? typeof value === 'string' : (rank === 0 || rank === 2) && typeof value === 'number';
  return (
    at.length === 5 &&
    Array.isArray(values) &&
    values.length === keys &&
    values.every((pair) => Array.isArray(pair) && pair.length === 2 && valueFitsRank(pair)) &&
    isPlace(surfaceId, slot, position) &&
    typeof rowId === 'string'
  );
}

function isPlace(surfaceId: unknown, slot: unknown, position: unknown): boolean {
  return typeof surfaceId === 'string' && Number.isInteger(slot) && Number.isInteger(position);
}

function invalidCursor(message: string): TableDocumentError {
  return new TableDocumentError('invalid_cursor', message, [{ path: ['after'], code: 'invalid_cursor', message }]);
}

function materialize(doc: Y.Doc, rowId: string, surfaceId: string, position: number): TableRow {
  return { id: rowId, surfaceId, position, data: readRowData(rowMapOf(doc, rowId)!) };
}
