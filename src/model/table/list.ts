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
import { derivedFromTable, keptDerived, tableIndex, type TableIndex } from './row-index.js';
import { compareCodeUnits, readRowData, rowMapOf, rowsRoot } from './layout.js';
import { decodeBase64UrlJson, encodeBase64UrlJson } from './ids.js';
import { TableDocumentError, type TableRow } from './types.js';

export interface ListRowsOptions {
  /** Only this sheet; every sheet when omitted. */
  surfaceId?: string;
  /** Column key to order by; ties by sheet and position. */
  sortKey?: string;
  descending?: boolean;
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
}

export interface RowPage {
  rows: TableRow[];
  nextCursor: string | null;
}

const CURSOR_VERSION = 1;

export function listRows(doc: Y.Doc, options: ListRowsOptions = {}): RowPage {
  const index = tableIndex(doc);
  const sheets = listingSheets(index, options);
  const limit = options.limit === undefined || !Number.isFinite(options.limit) ? Infinity : Math.max(1, Math.floor(options.limit));
  return options.sortKey === undefined
    ? listInSheetOrder(doc, index, sheets, options, limit)
    : listSorted(doc, index, sheets, options as ListRowsOptions & { sortKey: string }, limit);
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

function listInSheetOrder(doc: Y.Doc, index: TableIndex, sheets: string[], options: ListRowsOptions, limit: number): RowPage {
  let [slot, position] = options.after ? resumePoint(index, sheets, readCursor(options.after, options).at as SheetOrderPoint) : [0, 0];
  const hidden = options.hidden?.size ? options.hidden : undefined;
  const rows: TableRow[] = [];
  while (slot < sheets.length && rows.length < limit) {
    const surfaceId = sheets[slot]!;
    const placed = index.rowsBySheet.get(surfaceId)!;
    for (; position < placed.length && rows.length < limit; position++) {
      if (hidden?.has(placed[position]!)) continue;
      rows.push(materialize(doc, placed[position]!, surfaceId, position));
    }
    if (position >= placed.length) [slot, position] = [slot + 1, 0];
  }
  const hasMore = sheets.slice(slot).some((surfaceId, i) => {
    const placed = index.rowsBySheet.get(surfaceId)!;
    const from = i === 0 ? position : 0;
    return hidden ? placed.slice(from).some((id) => !hidden.has(id)) : placed.length > from;
  });
  const last = rows.at(-1);
  const nextCursor = hasMore && last ? writeCursor(options, sheetOrderPoint(rows, sheets)) : null;
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
// Sorted by a column

const NULL_RANK = 3;

interface SortEntry {
  rowId: string;
  surfaceId: string;
  slot: number;
  position: number;
  /** 0 number, 1 text (arrays joined), 2 boolean, 3 null or missing. */
  rank: number;
  value: number | string | null;
  folded: string | null;
}

type SortedPoint = [rank: number, value: number | string | null, surfaceId: string, slot: number, position: number, rowId: string];

/**
 * The first page without a cursor picks its rows from the unsorted entries
 * (a 100-row page of 50,000 in one pass). Paging on sorts the whole listing
 * once and keeps it until the table changes, so each later page is a binary
 * search and a slice rather than another pass over every row.
 */
function listSorted(doc: Y.Doc, index: TableIndex, sheets: string[], options: ListRowsOptions & { sortKey: string }, limit: number): RowPage {
  const compare = options.descending ? compareDescending : compareAscending;
  const viewKey = JSON.stringify(['sorted', options.sortKey, options.descending === true, sheets]);
  let page: SortEntry[];
  let hasMore: boolean;
  const hidden = options.hidden?.size ? options.hidden : undefined;
  const shown = (entries: SortEntry[]) => (hidden ? entries.filter((entry) => !hidden.has(entry.rowId)) : entries);
  const kept = keptDerived<SortEntry[]>(doc, viewKey);
  if (!kept && !options.after && Number.isFinite(limit)) {
    const entries = shown(sortEntries(doc, index, sheets, options.sortKey));
    page = firstInOrder(entries, limit, compare);
    hasMore = entries.length > page.length;
  } else {
    const view = shown(kept ?? derivedFromTable(doc, viewKey, () => sortEntries(doc, index, sheets, options.sortKey).sort(compare)));
    const start = options.after ? firstAfter(view, entryFromPoint(readCursor(options.after, options).at as SortedPoint, sheets), compare) : 0;
    page = view.slice(start, start + limit);
    hasMore = start + page.length < view.length;
  }
  const rows = page.map((entry) => materialize(doc, entry.rowId, entry.surfaceId, entry.position));
  const last = page.at(-1);
  const nextCursor =
    hasMore && last ? writeCursor(options, [last.rank, last.value, last.surfaceId, last.slot, last.position, last.rowId] satisfies SortedPoint) : null;
  return { rows, nextCursor };
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

function sortEntries(doc: Y.Doc, index: TableIndex, sheets: string[], sortKey: string): SortEntry[] {
  const rows = rowsRoot(doc);
  const entries: SortEntry[] = [];
  sheets.forEach((surfaceId, slot) => {
    index.rowsBySheet.get(surfaceId)!.forEach((rowId, position) => {
      const value: unknown = (rows.get(rowId) as Y.Map<unknown> | undefined)?.get(sortKey);
      const entry: SortEntry = { rowId, surfaceId, slot, position, rank: NULL_RANK, value: null, folded: null };
      setSortValue(entry, value);
      entries.push(entry);
    });
  });
  return entries;
}

function setSortValue(entry: SortEntry, value: unknown): void {
  if (typeof value === 'number') {
    entry.rank = 0;
    entry.value = value;
  } else if (typeof value === 'string' || Array.isArray(value)) {
    const text = typeof value === 'string' ? value : value.join(', ');
    entry.rank = 1;
    entry.value = text;
    entry.folded = text.toLowerCase();
  } else if (typeof value === 'boolean') {
    entry.rank = 2;
    entry.value = value ? 1 : 0;
  }
}

function entryFromPoint([rank, value, surfaceId, slot, position, rowId]: SortedPoint, sheets: string[]): SortEntry {
  const currentSlot = sheets.indexOf(surfaceId);
  return {
    rowId,
    surfaceId,
    slot: currentSlot >= 0 ? currentSlot : slot,
    position,
    rank,
    value,
    folded: typeof value === 'string' ? value.toLowerCase() : null,
  };
}

function compareAscending(a: SortEntry, b: SortEntry): number {
  return compareValues(a, b, 1) || compareTies(a, b);
}

function compareDescending(a: SortEntry, b: SortEntry): number {
  return compareValues(a, b, -1) || compareTies(a, b);
}

/**
 * Text compares case-insensitively ("apple" < "Banana"; "Apple" and "apple"
 * tie and fall to position). Code-unit order of the lower-cased text, not a
 * locale collator: a collator is ten times slower on 50,000 rows, and the
 * order must not depend on the server's locale for cursors to stay valid.
 */
function compareValues(a: SortEntry, b: SortEntry, direction: 1 | -1): number {
  if (a.rank === NULL_RANK || b.rank === NULL_RANK) return a.rank === b.rank ? 0 : a.rank === NULL_RANK ? 1 : -1;
  if (a.rank !== b.rank) return (a.rank - b.rank) * direction;
  if (a.folded !== null && b.folded !== null) return compareCodeUnits(a.folded, b.folded) * direction;
  return ((a.value as number) - (b.value as number)) * direction;
}

function compareTies(a: SortEntry, b: SortEntry): number {
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
  /** The listing it belongs to: surface filter, sort key, direction. */
  s: string | null;
  k: string | null;
  d: boolean;
  at: unknown[];
}

function writeCursor(options: ListRowsOptions, at: unknown[]): string {
  const payload: CursorPayload = { v: CURSOR_VERSION, s: options.surfaceId ?? null, k: options.sortKey ?? null, d: options.descending === true, at };
  return encodeBase64UrlJson(payload);
}

function readCursor(cursor: string, options: ListRowsOptions): CursorPayload {
  const payload = decodeBase64UrlJson(cursor) as Partial<CursorPayload> | undefined;
  const sorted = options.sortKey !== undefined;
  const wellFormed =
    payload !== undefined &&
    payload !== null &&
    payload.v === CURSOR_VERSION &&
    Array.isArray(payload.at) &&
    (sorted ? isSortedPoint(payload.at) : isSheetOrderPoint(payload.at));
  if (!wellFormed) throw invalidCursor('The cursor is not one this listing issued.');
  if (payload.s !== (options.surfaceId ?? null) || payload.k !== (options.sortKey ?? null) || payload.d !== (options.descending === true)) {
    throw invalidCursor('The cursor belongs to a listing with another sheet or sort; start again without it.');
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

function isSortedPoint(at: unknown[]): boolean {
  const [rank, value, surfaceId, slot, position, rowId] = at;
  const valueFitsRank =
    rank === NULL_RANK ? value === null : rank === 1 ? typeof value === 'string' : (rank === 0 || rank === 2) && typeof value === 'number';
  return at.length === 6 && valueFitsRank && isPlace(surfaceId, slot, position) && typeof rowId === 'string';
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
