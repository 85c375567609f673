/**
 * Between cells and formula values: how a stored cell reads in a formula
 * (by its column's type), and how a computed value reads in a cell (by the
 * column's result type). Computed cells hold plain JSON like stored ones:
 * numbers, text, booleans, ISO 8601 dates, null, or an error object.
 */
import type { StaticType } from './functions.js';
import { FormulaError, parseIsoDate, tidy, toBoolean, toDate, toNumber, toText, type ErrorCell, type ResultType, type Value } from './values.js';

/** A computed cell as readers see it. */
export type ComputedCell = number | string | boolean | null | ErrorCell;

/** Whether a cell value is an error object (`{ error: "#DIV/0!", message }`). */
export function isErrorCell(value: unknown): value is ErrorCell {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as ErrorCell).error === 'string' && typeof (value as ErrorCell).message === 'string';
}

/** The static type of a column's cells in a formula. */
export function staticTypeOfColumn(column: { type: string; resultType?: unknown }): StaticType {
  switch (column.type) {
    case 'number':
      return 'number';
    case 'date':
      return 'date';
    case 'checkbox':
      return 'checkbox';
    case 'text':
    case 'longtext':
    case 'url':
    case 'status':
      return 'text';
    case 'formula':
    case 'rollup':
      return column.resultType === 'number' || column.resultType === 'date' || column.resultType === 'checkbox' || column.resultType === 'text' ? column.resultType : 'any';
    default:
      // select (several options), person, link (the linked rows' titles), lookup
      return 'list';
  }
}

/**
 * A stored cell as a formula reads it: dates as dates, a missing checkbox
 * as FALSE, empty text as blank; a value of another type than its column (a
 * sync peer may store one) reads as what it is.
 */
export function storedValue(raw: unknown, type: string | undefined): Value {
  if (raw === undefined || raw === null) return type === 'checkbox' ? false : null;
  if (typeof raw === 'string') {
    if (raw === '') return null;
    if (type === 'date') return parseIsoDate(raw) ?? raw;
    return raw;
  }
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) return raw.map((item) => storedValue(item, type === 'date' ? 'date' : undefined));
  if (isErrorCell(raw)) return new FormulaError(raw.error, raw.message);
  return null;
}

/** A computed cell back as a formula value (a formula that uses another formula or a rollup). */
export function cellValue(cell: ComputedCell, resultType: ResultType): Value {
  if (cell === null) return resultType === 'checkbox' ? false : null;
  if (isErrorCell(cell)) return new FormulaError(cell.error, cell.message);
  if (resultType === 'date' && typeof cell === 'string') return parseIsoDate(cell) ?? cell;
  return cell;
}

/** A formula value as a cell of a column of `resultType`: blank reads as null (FALSE for a checkbox), errors as `{ error, message }`. */
export function presentValue(value: Value, resultType: ResultType): ComputedCell {
  if (value instanceof FormulaError) return value.toCell();
  switch (resultType) {
    case 'number': {
      if (value === null) return null;
      const n = toNumber(value);
      return n instanceof FormulaError ? n.toCell() : tidy(n);
    }
    case 'checkbox': {
      const truth = toBoolean(value);
      return truth instanceof FormulaError ? truth.toCell() : truth;
    }
    case 'date': {
      const date = toDate(value);
      return date instanceof FormulaError ? date.toCell() : date === null ? null : date.toIso();
    }
    case 'text': {
      const text = toText(value);
      return text instanceof FormulaError ? text.toCell() : text === '' ? null : text;
    }
  }
}

