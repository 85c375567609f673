/**
 * CSV cells and headers, the same on the server (export, import) and in the
 * web app (the import preview), so the preview shows exactly the mapping and
 * the types the import will use (docs/TABLES.md, "CSV").
 *
 * Encoding, chosen to read back to the same value:
 * - text, dates, urls, option values, ids: the string as it is;
 * - numbers: JavaScript's shortest round-tripping form (`1.5`, `-3`, `1e+21`);
 * - checkboxes: `true` / `false`;
 * - arrays (multi-select, persons, links): a JSON array, `["a","b, c"]`,
 *   which is unambiguous whatever the items hold;
 * - an empty or missing cell: the empty field. An empty field imports as no
 *   value, so a cell holding `""` comes back absent.
 * CSV carries no types: an import into existing columns reads each field by
 * its column's type; a new column's type is inferred from its fields.
 */
import { isIsoDateOrDateTime } from './validation.js';
import { isErrorCell } from './formulas/cells.js';
import type { CellValue, ColumnDef, ColumnOption, ColumnType } from './types.js';

/** The header of the row id column on export and import. */
export const ID_HEADER = 'id';

export function encodeCsvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A formula or rollup that failed goes out as its error code, as a spreadsheet shows it.
  if (isErrorCell(value)) return value.error;
  return JSON.stringify(value);
}

/** What a spreadsheet runs as a formula when a field begins with it (OWASP, "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A field that is only a number: a spreadsheet reads it as one, and nothing in it can run. */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A field as a spreadsheet should show it rather than run it
 * (`neutralize=formulas`): one beginning with `=`, `+`, `-`, `@`, a tab or a
 * carriage return gets a leading `'`, as OWASP recommends. A plain number
 * (`-5`, `+3.25`, `-1e-7`) stays as it is, whatever its column: it cannot
 * run anything, and a prefix would turn every negative amount into text.
 */
export function neutralizeFormula(field: string): string {
  return FORMULA_START.test(field) && !PLAIN_NUMBER.test(field) ? `'${field}` : field;
}

/** A number written by a person or a spreadsheet: no leading zeros (`007` is a code, not 7) and no more digits than a double keeps. */
const NUMBER_TEXT = /^[+-]?(?:0|[1-9]\d{0,14})(?:\.\d+)?(?:[eE][+-]?\d{1,3})?$/;

export function parseCsvNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (!NUMBER_TEXT.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

export function parseCsvBoolean(text: string): boolean | undefined {
  const folded = text.trim().toLowerCase();
  return folded === 'true' ? true : folded === 'false' ? false : undefined;
}

/** A JSON array of strings (how arrays are exported), or undefined. */
export function parseCsvArray(text: string): string[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A field read as a value of a column of `type`. Fields that do not fit the
 * type are returned as they are (a string), for the column's validation to
 * refuse with its usual message; select options match by value, else by
 * label (case-insensitively).
 */
export function decodeCsvCell(text: string, column: Pick<ColumnDef, 'type' | 'options'> | undefined): CellValue | undefined {
  if (text === '') return undefined;
  switch (column?.type ?? 'text') {
    case 'number':
      return parseCsvNumber(text) ?? text;
    case 'checkbox':
      return parseCsvBoolean(text) ?? text;
    case 'date':
      return text.trim();
    case 'select': {
      const items = parseCsvArray(text);
      return items ? items.map((item) => optionValue(item, column!.options)) : optionValue(text, column!.options);
    }
    case 'status':
      return optionValue(text, column!.options);
    case 'person':
      return parseCsvArray(text) ?? text.trim();
    case 'text':
    case 'longtext':
    case 'url':
      return text;
    case 'lookup':
    case 'formula':
    case 'rollup':
      // Computed on read, never written: an exported computed column is skipped on the way back in.
      return undefined;
    default:
      // A type this module does not know (added later, e.g. links): arrays are JSON, the rest is text.
      return parseCsvArray(text) ?? text;
  }
}

function optionValue(text: string, options: readonly ColumnOption[] | undefined): string {
  if (!options || options.some((option) => option.value === text)) return text;
  const folded = text.trim().toLowerCase();
  return (
    options.find((option) => option.value.toLowerCase() === folded)?.value ?? options.find((option) => option.label.toLowerCase() === folded)?.value ?? text
  );
}

// ---------------------------------------------------------------------------
// Type inference for new columns

/** At most this many distinct values make a select column. */
export const SELECT_MAX_OPTIONS = 25;
/** Longer values are text, never options. */
const SELECT_MAX_LENGTH = 60;

/**
 * What a pass over one new column's fields gathers: enough to pick its type
 * without keeping the fields (the distinct values stop being kept once
 * there are too many for a select).
 */
export interface ColumnStats {
  filled: number;
  numbers: number;
  dates: number;
  booleans: number;
  arrays: number;
  /** Distinct values (array items for arrays), in first-seen order; null once past SELECT_MAX_OPTIONS or a value unfit for an option. */
  distinct: string[] | null;
}

export function emptyColumnStats(): ColumnStats {
  return { filled: 0, numbers: 0, dates: 0, booleans: 0, arrays: 0, distinct: [] };
}

export function addToColumnStats(stats: ColumnStats, text: string): void {
  if (text === '') return;
  stats.filled++;
  if (parseCsvNumber(text) !== undefined) stats.numbers++;
  if (isIsoDateOrDateTime(text.trim())) stats.dates++;
  if (parseCsvBoolean(text) !== undefined) stats.booleans++;
  const items = parseCsvArray(text);
  if (items) stats.arrays++;
  if (stats.distinct === null) return;
  for (const item of items ?? [text]) {
    if (item === '' || item.length > SELECT_MAX_LENGTH || /[\r\n]/.test(item)) {
      stats.distinct = null;
      return;
    }
    if (!stats.distinct.includes(item)) {
      if (stats.distinct.length === SELECT_MAX_OPTIONS) {
        stats.distinct = null;
        return;
      }
      stats.distinct.push(item);
    }
  }
}

export type InferredColumn = { type: ColumnType; options?: ColumnOption[] };

/**
 * The type every field of a new column fits, in this order: number, date
 * (ISO 8601), checkbox (true/false), select (JSON arrays of a few distinct
 * items, or few distinct values that repeat: at most SELECT_MAX_OPTIONS and
 * at most half as many as filled fields), else text. A column with no
 * values is text.
 */
export function inferColumnType(stats: ColumnStats): InferredColumn {
  const all = (count: number) => stats.filled > 0 && count === stats.filled;
  if (all(stats.numbers)) return { type: 'number' };
  if (all(stats.dates)) return { type: 'date' };
  if (all(stats.booleans)) return { type: 'checkbox' };
  const distinct = stats.distinct;
  const fewRepeating = distinct !== null && stats.filled > 0 && distinct.length * 2 <= stats.filled;
  if (distinct !== null && distinct.length > 0 && (all(stats.arrays) || (stats.arrays === 0 && fewRepeating))) {
    return { type: 'select', options: distinct.map((value) => ({ value, label: value })) };
  }
  return { type: 'text' };
}

// ---------------------------------------------------------------------------
// Headers

/** A header's key for a new column: lower case, runs of anything but letters and digits as `_` (`Due date` → `due_date`). */
export function columnKeyForHeader(header: string): string {
  const key = header
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return key === '' ? 'column' : key;
}

export type HeaderTarget =
  | { kind: 'id' }
  | { kind: 'column'; key: string }
  | { kind: 'new'; key: string; label: string };

/**
 * Where each header goes: the first `id` header is the row id; the others
 * match an existing column by key, then by key or label case-insensitively,
 * then by the key a new column would get; a header that matches nothing is
 * a new column with a fresh key. Two headers naming one column, or an empty
 * header, are problems for the caller to report.
 */
export function mapCsvHeaders(
  headers: readonly string[],
  columns: readonly Pick<ColumnDef, 'key' | 'label'>[],
): { targets: HeaderTarget[]; problems: Array<{ index: number; message: string }> } {
  const taken = new Set(columns.map((column) => column.key));
  const used = new Set<string>();
  const problems: Array<{ index: number; message: string }> = [];
  let sawId = false;
  const targets = headers.map((raw, index): HeaderTarget => {
    const header = raw.trim();
    if (header === '') problems.push({ index, message: `Column ${index + 1} has no header.` });
    if (header === ID_HEADER && !sawId) {
      sawId = true;
      return { kind: 'id' };
    }
    const folded = header.toLowerCase();
    const existing =
      columns.find((column) => column.key === header) ??
      columns.find((column) => column.key.toLowerCase() === folded) ??
      columns.find((column) => column.label.trim().toLowerCase() === folded) ??
      columns.find((column) => column.key === columnKeyForHeader(header));
    if (existing) {
      if (used.has(existing.key)) problems.push({ index, message: `Header "${header}" names column ${existing.key}, which an earlier header already names.` });
      used.add(existing.key);
      return { kind: 'column', key: existing.key };
    }
    let key = columnKeyForHeader(header);
    for (let n = 2; taken.has(key); n++) key = `${columnKeyForHeader(header).slice(0, 60)}_${n}`;
    taken.add(key);
    used.add(key);
    return { kind: 'new', key, label: header === '' ? key : header.slice(0, 200) };
  });
  return { targets, problems };
}
