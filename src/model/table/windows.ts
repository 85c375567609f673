/**
 * Windows of days over a calendar or timeline view (docs/TABLES.md
 * "Calendar and timeline"): which rows a window shows, in which order, and
 * where each one lies. Every peer places rows by the same rules: the server
 * answering `GET /rows?view=&from=&to=`, and the web app drawing a month.
 *
 * - A row lies from its `dateColumn` date to its `endDateColumn` date (a
 *   view without an end column: that one day); an end before the start, or
 *   none, is the start. A date without a time is its UTC midnight, as filters
 *   compare dates.
 * - A window is a range of days, `from` and `to` both included, in UTC; a
 *   row is in it when its span overlaps it (it starts on or before `to` and
 *   ends on or after `from`).
 * - A row without a start date (or one that does not parse) is in no
 *   window: the web app lists such rows apart.
 * - Rows are listed by their start, then their sheet position, then id.
 */
import * as Y from 'yjs';
import { decodeBase64UrlJson, encodeBase64UrlJson } from './ids.js';
import { peekCell, readRowData, rowMapOf } from './layout.js';
import type { CompiledRowQuery } from './query.js';
import { tableIndex } from './row-index.js';
import { TableDocumentError, type TableIssue, type TableRow } from './types.js';
import { isIsoDateOrDateTime } from './validation.js';

export const DAY_MS = 86_400_000;

/** Days, both included, as `YYYY-MM-DD`. */
export interface DateWindow {
  from: string;
  to: string;
}

/** Where a row lies: instants in ms, `end` never before `start`. */
export interface RowSpan {
  start: number;
  end: number;
}

/** The instant of an ISO date or date-time (a date alone is its UTC midnight), or null for anything else. */
export function dateInstant(value: unknown): number | null {
  if (typeof value !== 'string' || !isIsoDateOrDateTime(value)) return null;
  const at = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isFinite(at) ? at : null;
}

/** The day (`YYYY-MM-DD`, UTC) an instant falls on. */
export function dayOf(instant: number): string {
  return new Date(instant).toISOString().slice(0, 10);
}

/** `days` after a `YYYY-MM-DD` day (before it when negative). */
export function addDays(day: string, days: number): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS);
}

export function rowSpan(data: Record<string, unknown>, dateColumn: string, endDateColumn: string | null | undefined): RowSpan | null {
  return spanOf(data[dateColumn], endDateColumn ? data[endDateColumn] : undefined);
}

function spanOf(startCell: unknown, endCell: unknown): RowSpan | null {
  const start = dateInstant(startCell);
  if (start === null) return null;
  const end = dateInstant(endCell);
  return { start, end: end !== null && end > start ? end : start };
}

/** The window as instants: `from` at its midnight, `until` the midnight after `to` (excluded). */
export function windowBounds(window: DateWindow): { from: number; until: number } {
  return { from: Date.parse(`${window.from}T00:00:00Z`), until: Date.parse(`${window.to}T00:00:00Z`) + DAY_MS };
}

export function overlaps(span: RowSpan, bounds: { from: number; until: number }): boolean {
  return span.start < bounds.until && span.end >= bounds.from;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * What is wrong with a window given as query parameters: both bounds are
 * needed, each a calendar day, `from` not after `to`. Paths name the
 * parameter.
 */
export function windowIssues(from: string | undefined, to: string | undefined): TableIssue[] {
  const issues: TableIssue[] = [];
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (value === undefined) issues.push({ path: [name], code: 'required', message: `A window needs both \`from\` and \`to\` (YYYY-MM-DD); \`${name}\` is missing.` });
    else if (!DAY.test(value) || !isIsoDateOrDateTime(value)) issues.push({ path: [name], code: 'invalid_value', message: `\`${name}\` must be a day as YYYY-MM-DD.` });
  }
  if (issues.length === 0 && from! > to!) issues.push({ path: ['to'], code: 'reversed_window', message: `The window ends (${to}) before it starts (${from}).` });
  return issues;
}

export interface ListWindowOptions {
  /** The sheet the view is on. */
  surfaceId: string;
  dateColumn: string;
  endDateColumn: string | null;
  window: DateWindow;
  /** Rows to consider (an index's superset); every row of the sheet when omitted. */
  candidates?: Iterable<string>;
  /** The view's filter (and the request's): only its `matches` is used; windows are ordered by date. */
  query?: Pick<CompiledRowQuery, 'matches' | 'filterKey'>;
  /** Rows to leave out as if absent (not yet past the row cap). */
  hidden?: ReadonlySet<string>;
  after?: string | null;
  limit?: number;
  /** Names the listing in its cursors (the view), so a cursor is not taken by another. */
  listingKey: string;
}

type WindowPoint = [start: number, position: number, rowId: string];

/** The rows of the sheet in the window, a page at a time, by start, position and id. */
export function listWindow(doc: Y.Doc, options: ListWindowOptions): { rows: TableRow[]; nextCursor: string | null } {
  const index = tableIndex(doc);
  const bounds = windowBounds(options.window);
  const key = `${options.listingKey}|${options.window.from}|${options.window.to}|${options.query?.filterKey ?? ''}`;
  const after = options.after ? readWindowCursor(options.after, key) : null;
  const ids = options.candidates ?? index.rowsBySheet.get(options.surfaceId) ?? [];
  // Only the cells the window and the filter read are looked at; a row's whole data is read for the page alone.
  const found: WindowPoint[] = [];
  for (const rowId of new Set(ids)) {
    if (options.hidden?.has(rowId)) continue;
    const placement = index.placements.get(rowId);
    const map = rowMapOf(doc, rowId);
    if (!placement || placement.surfaceId !== options.surfaceId || !map) continue;
    const span = spanOf(peekCell(map, options.dateColumn), options.endDateColumn ? peekCell(map, options.endDateColumn) : undefined);
    if (!span || !overlaps(span, bounds)) continue;
    if (options.query && !options.query.matches((column) => peekCell(map, column))) continue;
    const point: WindowPoint = [span.start, placement.position, rowId];
    if (after && comparePoints(point, after) <= 0) continue;
    found.push(point);
  }
  found.sort(comparePoints);
  const limit = options.limit ?? Infinity;
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = found.length > limit && last ? encodeBase64UrlJson({ v: 1, k: key, at: last }) : null;
  return { rows: page.map(([, position, rowId]) => ({ id: rowId, surfaceId: options.surfaceId, position, data: readRowData(rowMapOf(doc, rowId)!) })), nextCursor };
}

function comparePoints(a: WindowPoint, b: WindowPoint): number {
  return a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
}

function readWindowCursor(cursor: string, key: string): WindowPoint {
  const payload = decodeBase64UrlJson(cursor) as { v?: unknown; k?: unknown; at?: unknown } | undefined;
  const at = payload?.at;
  const wellFormed = Array.isArray(at) && at.length === 3 && typeof at[0] === 'number' && Number.isInteger(at[1]) && typeof at[2] === 'string';
  if (!payload || payload.v !== 1 || !wellFormed) throw invalidCursor('The cursor is not one this listing issued.');
  if (payload.k !== key) throw invalidCursor('The cursor belongs to another view, window or filter; start again without it.');
  return at as WindowPoint;
}

function invalidCursor(message: string): TableDocumentError {
  return new TableDocumentError('invalid_cursor', message, [{ path: ['after'], code: 'invalid_cursor', message }]);
}
