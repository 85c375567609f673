/**
 * What a formula computes with (docs/FORMULAS.md "Values and types"): numbers,
 * text, booleans, dates, lists (a lookup, a multi-select, a link's titles),
 * blank (`null`) and errors. Errors are values, not exceptions: they flow
 * through operators and functions until `ISERROR` or the cell shows them.
 */

/** The type of a formula's or rollup's result, which filters, sorts, boards and CSV treat like the column type of that name. */
export const RESULT_TYPES = ['number', 'text', 'date', 'checkbox'] as const;
export type ResultType = (typeof RESULT_TYPES)[number];

export const ERROR_CODES = ['#DIV/0!', '#VALUE!', '#REF!', '#CYCLE!', '#ERROR!'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error cell as readers see it. */
export interface ErrorCell {
  error: ErrorCode;
  message: string;
}

export class FormulaError {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
  ) {}

  toCell(): ErrorCell {
    return { error: this.code, message: this.message };
  }
}

/**
 * An instant. A date without a time of day (`2026-12-01`) keeps `dateOnly`:
 * it reads and writes as a calendar day, at UTC midnight, in any time zone.
 */
export class DateValue {
  constructor(
    readonly ms: number,
    readonly dateOnly: boolean,
  ) {}

  toIso(): string {
    const iso = new Date(this.ms).toISOString();
    return this.dateOnly ? iso.slice(0, 10) : iso;
  }
}

export type Value = number | string | boolean | DateValue | FormulaError | null | Value[];

export function isError(value: Value): value is FormulaError {
  return value instanceof FormulaError;
}

export function valueError(message: string): FormulaError {
  return new FormulaError('#VALUE!', message);
}

// ---------------------------------------------------------------------------
// Conversions. Each returns a FormulaError rather than throwing.

const NUMBER_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Blank counts as 0, a checkbox as 1 or 0, numeric text as its number; a list of one value as that value. */
export function toNumber(value: Value, what = 'a number'): number | FormulaError {
  if (typeof value === 'number') return value;
  if (value === null) return 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') return 0;
    return NUMBER_TEXT.test(trimmed) ? Number(trimmed) : valueError(`"${shorten(value)}" is not ${what}.`);
  }
  if (value instanceof FormulaError) return value;
  if (Array.isArray(value)) {
    if (value.length === 0) return 0;
    if (value.length === 1) return toNumber(value[0]!, what);
    return valueError(`A list of ${value.length} values is not ${what}.`);
  }
  return valueError(`A date is not ${what}; use DATETIME_DIFF for the time between dates.`);
}

/** Numbers in their shortest form (15 significant digits, as spreadsheets show them), TRUE/FALSE, dates in ISO 8601, lists joined by ", ". */
export function toText(value: Value): string | FormulaError {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  if (typeof value === 'number') return String(tidy(value));
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof DateValue) return value.toIso();
  if (value instanceof FormulaError) return value;
  const parts: string[] = [];
  for (const item of value) {
    const text = toText(item);
    if (text instanceof FormulaError) return text;
    if (text !== '') parts.push(text);
  }
  return parts.join(', ');
}

/** Whether a value counts as true: a non-zero number, non-empty text or list, a date, TRUE. */
export function toBoolean(value: Value): boolean | FormulaError {
  if (typeof value === 'boolean') return value;
  if (value === null) return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '';
  if (value instanceof FormulaError) return value;
  if (value instanceof DateValue) return true;
  for (const item of value) {
    const truth = toBoolean(item);
    if (truth !== false) return truth;
  }
  return false;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/;

/** An ISO 8601 date or date-time as a date (a date-time without an offset is UTC), or null when the text is not one. */
export function parseIsoDate(text: string): DateValue | null {
  const trimmed = text.trim();
  const day = ISO_DATE.exec(trimmed);
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const ms = Date.UTC(year, month - 1, date);
    return validCalendarDay(ms, year, month, date) ? new DateValue(ms, true) : null;
  }
  const time = ISO_DATE_TIME.exec(trimmed);
  if (!time) return null;
  const [year, month, date] = [Number(time[1]), Number(time[2]), Number(time[3])];
  if (!validCalendarDay(Date.UTC(year, month - 1, date), year, month, date)) return null;
  const fraction = time[7] ? Number(time[7].slice(0, 4).padEnd(4, '0').slice(1)) : 0;
  let ms = Date.UTC(year, month - 1, date, Number(time[4]), Number(time[5]), Number(time[6] ?? 0), fraction);
  const offset = time[8];
  if (offset && offset !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  }
  return new DateValue(ms, false);
}

function validCalendarDay(ms: number, year: number, month: number, date: number): boolean {
  const d = new Date(ms);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === date;
}

export function toDate(value: Value): DateValue | FormulaError | null {
  if (value instanceof DateValue) return value;
  if (value === null) return null;
  if (value instanceof FormulaError) return value;
  if (typeof value === 'string') {
    if (value.trim() === '') return null;
    return parseIsoDate(value) ?? valueError(`"${shorten(value)}" is not a date (ISO 8601: 2026-12-01 or 2026-12-01T09:30:00Z).`);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return null;
    if (value.length === 1) return toDate(value[0]!);
    return valueError(`A list of ${value.length} values is not a date.`);
  }
  return valueError(`${typeof value === 'number' ? 'A number' : 'TRUE or FALSE'} is not a date.`);
}

/** Rounds away binary noise (0.1 + 0.2 is 0.3): 15 significant digits, as spreadsheets keep. */
export function tidy(number: number): number {
  if (!Number.isFinite(number) || Number.isInteger(number)) return number;
  return Number(number.toPrecision(15));
}

export function shorten(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A list value flattened (a list inside a list is a lookup of a multi-select). */
export function flatten(values: readonly Value[]): Value[] {
  const out: Value[] = [];
  for (const value of values) {
    if (Array.isArray(value)) out.push(...flatten(value));
    else out.push(value);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Comparison

/** `=`: blank equals empty text, 0 and FALSE; numeric text equals its number; dates compare as instants; text exactly. */
export function valuesEqual(a: Value, b: Value): boolean | FormulaError {
  if (a instanceof FormulaError) return a;
  if (b instanceof FormulaError) return b;
  if (Array.isArray(a) || Array.isArray(b)) {
    const [left, right] = [Array.isArray(a) ? toText(a) : a, Array.isArray(b) ? toText(b) : b];
    return valuesEqual(left as Value, right as Value);
  }
  if (a === null || b === null) {
    const other = a === null ? b : a;
    if (other === null) return true;
    if (typeof other === 'string') return other === '';
    if (typeof other === 'number') return other === 0;
    if (typeof other === 'boolean') return other === false;
    return false;
  }
  if (a instanceof DateValue || b instanceof DateValue) {
    const [left, right] = [asDate(a), asDate(b)];
    return left !== null && right !== null && left.ms === right.ms;
  }
  if (typeof a === typeof b) return a === b;
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    const [left, right] = [toNumber(a), toNumber(b)];
    return typeof left === 'number' && typeof right === 'number' && left === right;
  }
  // A number and text: equal when the text is that number.
  const text = (typeof a === 'string' ? a : b) as string;
  const number = (typeof a === 'number' ? a : b) as number;
  return NUMBER_TEXT.test(text.trim()) && Number(text.trim()) === number;
}

/** `<`, `>` and the rest: numbers (blank as 0), text case-insensitively, dates as instants; other pairs are #VALUE!. */
export function compareValues(a: Value, b: Value): number | FormulaError {
  if (a instanceof FormulaError) return a;
  if (b instanceof FormulaError) return b;
  if (Array.isArray(a) || Array.isArray(b)) {
    const [left, right] = [Array.isArray(a) ? (a.length === 1 ? a[0]! : toText(a)) : a, Array.isArray(b) ? (b.length === 1 ? b[0]! : toText(b)) : b];
    return compareValues(left as Value, right as Value);
  }
  if (a instanceof DateValue || b instanceof DateValue) {
    const [left, right] = [asDate(a), asDate(b)];
    if (left === null || right === null) return valueError('A date compares only with another date (or ISO 8601 text).');
    return left.ms - right.ms;
  }
  const numeric = (value: Value) => typeof value === 'number' || typeof value === 'boolean' || value === null || (typeof value === 'string' && NUMBER_TEXT.test(value.trim()));
  if (numeric(a) && numeric(b) && !(typeof a === 'string' && typeof b === 'string')) {
    return (toNumber(a) as number) - (toNumber(b) as number);
  }
  const [left, right] = [(toText(a) as string).toLowerCase(), (toText(b) as string).toLowerCase()];
  return left < right ? -1 : left > right ? 1 : 0;
}

function asDate(value: Value): DateValue | null {
  if (value instanceof DateValue) return value;
  return typeof value === 'string' ? parseIsoDate(value) : null;
}
