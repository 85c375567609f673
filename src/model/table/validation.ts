/**
 * Checks cell values against their columns' types, for REST and MCP writes
 * (sync peers write what they like; the document accepts any cell value).
 * Issues use the 422 `details` shape. `null` clears a cell of any type; keys
 * without a column are allowed (the caller seeds a text column for them)
 * but must still hold a value a cell can store.
 */
import { COMPUTED_TYPES } from './computed-columns.js';
import { isCellValue } from './layout.js';
import type { ColumnDef, TableIssue } from './types.js';

export interface CellValidationOptions {
  /** Prefix of each issue's path; `['data']` by default, e.g. `['updates', '3', 'data']` in a bulk update. */
  basePath?: string[];
  /** Whether a string names a principal of the workspace; without it any non-empty string passes. */
  isPrincipalId?: (id: string) => boolean;
  /**
   * For link cells: the sheet a link column targets (null when its surface
   * is unknown) and the sheet a row the caller may see is on (null for no
   * such row). Without it any ids pass.
   */
  links?: { targetSheetOf(column: ColumnDef): string | null; sheetOfRow(rowId: string): string | null };
}

/** Most ids one link cell holds. */
export const MAX_LINKS_PER_CELL = 1_000;

type Check = (value: unknown, column: ColumnDef, options: CellValidationOptions) => { code: string; message: string } | null;

export function validateCellValues(columns: readonly ColumnDef[], data: Record<string, unknown>, options: CellValidationOptions = {}): TableIssue[] {
  const basePath = options.basePath ?? ['data'];
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const issues: TableIssue[] = [];
  for (const [key, value] of Object.entries(data)) {
    const column = byKey.get(key);
    // Computed on read: writing one, even null, is refused.
    if (column && COMPUTED_TYPES.has(column.type) && value !== undefined) {
      issues.push({ path: [...basePath, key], code: 'read_only_column', message: readOnlyMessage(column) });
      continue;
    }
    if (value === undefined || value === null) continue;
    const problem = !isCellValue(value)
      ? { code: 'invalid_type', message: 'A cell holds a string, a finite number, a boolean, null or an array of strings.' }
      : column
        ? (CHECKS[column.type]?.(value, column, options) ?? null)
        : null;
    if (problem) issues.push({ path: [...basePath, key], ...problem });
  }
  return issues;
}

const CHECKS: Record<string, Check> = {
  text: expectString,
  longtext: expectString,
  number: (value, column) => (typeof value === 'number' ? null : wrongType(column, 'a number')),
  checkbox: (value, column) => (typeof value === 'boolean' ? null : wrongType(column, 'true or false')),
  status: (value, column) => (typeof value === 'string' ? checkOption(value, column) : wrongType(column, 'one option value')),
  select: (value, column) => {
    if (typeof value === 'string') return checkOption(value, column);
    if (Array.isArray(value)) return value.map((item) => checkOption(item, column)).find((issue) => issue !== null) ?? null;
    return wrongType(column, 'an option value or an array of them');
  },
  date: (value, column) => {
    if (typeof value !== 'string') return wrongType(column, 'an ISO 8601 date or date-time string');
    return isIsoDateOrDateTime(value) ? null : { code: 'invalid_format', message: `${column.key} must be an ISO 8601 date (2024-05-31) or date-time (2024-05-31T09:30:00Z).` };
  },
  url: (value, column) => {
    if (typeof value !== 'string') return wrongType(column, 'an absolute URL');
    return isAbsoluteWebUrl(value) ? null : { code: 'invalid_format', message: `${column.key} must be an absolute http(s), mailto or tel URL.` };
  },
  link: (value, column, options) => {
    const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
    if (!ids) return wrongType(column, 'a row id or an array of row ids');
    if (ids.length > MAX_LINKS_PER_CELL) return { code: 'too_many', message: `${column.key} holds at most ${MAX_LINKS_PER_CELL} links.` };
    if (ids.some((id) => id === '')) return { code: 'invalid_format', message: `${column.key}: a row id is a non-empty string.` };
    if (!options.links) return null;
    const target = options.links.targetSheetOf(column);
    if (target === null) return { code: 'unknown_surface', message: `${column.key} links to the table surface "${String(column.targetSurface)}", which this workspace does not have.` };
    for (const id of ids) {
      const sheet = options.links.sheetOfRow(id);
      if (sheet === null) return { code: 'row_not_found', message: `${column.key}: there is no row ${id}.` };
      if (sheet !== target) return { code: 'wrong_surface', message: `${column.key}: row ${id} is not on the table surface "${String(column.targetSurface)}".` };
    }
    return null;
  },
  person: (value, column, options) => {
    const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
    if (!ids) return wrongType(column, 'a principal id or an array of them');
    const unknown = ids.find((id) => id === '' || (options.isPrincipalId ? !options.isPrincipalId(id) : false));
    return unknown === undefined ? null : { code: 'unknown_principal', message: `${column.key}: "${unknown}" is not a member of this workspace.` };
  },
};

/**
 * Link cells as stored: one id given as a string becomes a one-element
 * array, and an id given twice is kept once. Other cells are returned as
 * given. Run it before `validateCellValues` and the write.
 */
export function normalizeLinkCells<T extends Record<string, unknown>>(columns: readonly ColumnDef[], data: T): T {
  const links = new Set(columns.filter((column) => column.type === 'link').map((column) => column.key));
  if (!Object.keys(data).some((key) => links.has(key))) return data;
  const normalized: Record<string, unknown> = { ...data };
  for (const key of Object.keys(data)) {
    const value = data[key];
    if (!links.has(key)) continue;
    if (typeof value === 'string') normalized[key] = [value];
    else if (Array.isArray(value) && value.every((id) => typeof id === 'string')) normalized[key] = [...new Set(value)];
  }
  return normalized as T;
}

function readOnlyMessage(column: ColumnDef): string {
  if (column.type === 'lookup') return `${column.key} is a lookup column: it shows values of the rows linked in ${String(column.link)} and cannot be written.`;
  if (column.type === 'rollup') return `${column.key} is a rollup column: it is computed from the rows linked in ${String(column.link)} and cannot be written.`;
  return `${column.key} is a formula column: it is computed from the row's other cells and cannot be written.`;
}

function expectString(value: unknown, column: ColumnDef) {
  return typeof value === 'string' ? null : wrongType(column, 'a string');
}

function wrongType(column: ColumnDef, expected: string) {
  return { code: 'invalid_type', message: `${column.key} is a ${column.type} column and takes ${expected}.` };
}

function checkOption(value: string, column: ColumnDef) {
  const values = (column.options ?? []).map((option) => option.value);
  if (values.includes(value)) return null;
  return { code: 'invalid_option', message: `${column.key} takes one of: ${values.map((v) => JSON.stringify(v)).join(', ') || '(no options defined)'}.` };
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/;

/** Calendar-checked: 2023-02-29 is rejected, which a regular expression alone would let through. */
export function isIsoDateOrDateTime(text: string): boolean {
  const match = ISO_DATE.exec(text) ?? ISO_DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Absolute and of a scheme a link may safely carry: the web app renders url
 * cells as links, and `javascript:` is an absolute URL too.
 */
export function isAbsoluteWebUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname !== '';
  return url.protocol === 'mailto:' || url.protocol === 'tel:';
}
