/**
 * Rollup columns (docs/FORMULAS.md "Rollups"): one value computed from one
 * field of the rows a link column links to (only those the reader may see).
 */
import { flatten, FormulaError, tidy, toBoolean, toDate, toNumber, toText, valueError, type ResultType, type Value } from './values.js';

export const ROLLUP_FUNCTIONS = ['sum', 'avg', 'min', 'max', 'count', 'counta', 'concat', 'and', 'or', 'earliest', 'latest'] as const;
export type RollupFunction = (typeof ROLLUP_FUNCTIONS)[number];

export interface RollupSpec {
  fn: RollupFunction;
  resultType: ResultType;
  help: string;
}

export const ROLLUPS: Readonly<Record<RollupFunction, RollupSpec>> = {
  sum: { fn: 'sum', resultType: 'number', help: 'The numbers added up (0 when there are none).' },
  avg: { fn: 'avg', resultType: 'number', help: 'The mean of the numbers (blank when there are none).' },
  min: { fn: 'min', resultType: 'number', help: 'The smallest number (blank when there are none).' },
  max: { fn: 'max', resultType: 'number', help: 'The largest number (blank when there are none).' },
  count: { fn: 'count', resultType: 'number', help: 'How many rows are linked (that you may see).' },
  counta: { fn: 'counta', resultType: 'number', help: 'How many of the linked rows have a value in the field (not empty).' },
  concat: { fn: 'concat', resultType: 'text', help: 'The values as text, joined by ", " (empty ones left out).' },
  and: { fn: 'and', resultType: 'checkbox', help: 'TRUE when at least one row is linked and every value is true (a blank is false).' },
  or: { fn: 'or', resultType: 'checkbox', help: 'TRUE when any value is true.' },
  earliest: { fn: 'earliest', resultType: 'date', help: 'The earliest date (blank when there are none).' },
  latest: { fn: 'latest', resultType: 'date', help: 'The latest date (blank when there are none).' },
};

export function isRollupFunction(fn: unknown): fn is RollupFunction {
  return typeof fn === 'string' && (ROLLUP_FUNCTIONS as readonly string[]).includes(fn);
}

/** `values` holds one value per linked row, in the link's order (a list for a multi-valued field). */
export function rollUp(fn: RollupFunction, values: readonly Value[]): Value {
  if (fn === 'count') return values.length;
  if (fn === 'and' || fn === 'or') {
    if (values.length === 0) return false;
    for (const value of values) {
      const truth = toBoolean(value);
      if (truth instanceof FormulaError) return truth;
      if (fn === 'and' && !truth) return false;
      if (fn === 'or' && truth) return true;
    }
    return fn === 'and';
  }
  const items = flatten(values as Value[]).filter((value) => value !== null && value !== '');
  const error = items.find((value): value is FormulaError => value instanceof FormulaError);
  if (fn === 'counta') return values.filter((value) => value !== null && value !== '' && !(Array.isArray(value) && value.length === 0)).length;
  if (error) return error;
  if (fn === 'concat') {
    const texts = items.map((value) => toText(value) as string).filter((text) => text !== '');
    return texts.length ? texts.join(', ') : null;
  }
  if (fn === 'earliest' || fn === 'latest') {
    let best: Value = null;
    for (const value of items) {
      const date = toDate(value);
      if (date instanceof FormulaError) return date;
      if (date && (best === null || (fn === 'earliest' ? date.ms < (best as { ms: number }).ms : date.ms > (best as { ms: number }).ms))) best = date;
    }
    return best;
  }
  const numbers: number[] = [];
  for (const value of items) {
    const n = toNumber(value, `a number (${fn} of a rollup)`);
    if (n instanceof FormulaError) return n;
    numbers.push(n);
  }
  switch (fn) {
    case 'sum':
      return finite(numbers.reduce((sum, n) => sum + n, 0));
    case 'avg':
      return numbers.length ? finite(numbers.reduce((sum, n) => sum + n, 0) / numbers.length) : null;
    case 'min':
      return numbers.length ? Math.min(...numbers) : null;
    default:
      return numbers.length ? Math.max(...numbers) : null;
  }
}

function finite(n: number): Value {
  return Number.isFinite(n) ? tidy(n) : valueError('The result is too large to be a number.');
}
