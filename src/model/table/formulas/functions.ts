/**
 * The formula functions (docs/FORMULAS.md "Functions" is written from this
 * table; the web app's formula editor lists it with each one-line help).
 * Arguments arrive evaluated, with errors already propagated, except for
 * functions marked `lazy` (which evaluate only what they need, so that
 * `IF({n} = 0, 0, 1 / {n})` never divides by zero) and `catchesErrors`.
 */
import { addToDate, dateDifference, formatDate, today, unitOf, wallClock } from './dates.js';
import {
  DateValue,
  FormulaError,
  flatten,
  tidy,
  toBoolean,
  toDate,
  toNumber,
  toText,
  valueError,
  valuesEqual,
  type Value,
} from './values.js';

/** What the checker knows of a value before it is computed: a result type, or a list, blank, or unknown. */
export type StaticType = 'number' | 'text' | 'date' | 'checkbox' | 'list' | 'blank' | 'any';

export interface FormulaEnvironment {
  /** A cell of the row being computed, as a formula value (#REF! for a column that is not there). */
  cell(key: string): Value;
  /** Milliseconds since the epoch: the moment of the read. */
  now: number;
  /** IANA name; UTC unless set. */
  timeZone: string;
  /** Told when the value depends on the clock: on the day (TODAY) it is kept for the day, on the moment (NOW) for this read only. */
  usedClock(what: 'day' | 'moment'): void;
}

export type Thunk = () => Value;

export type FunctionCategory = 'logical' | 'numeric' | 'text' | 'date';

export interface FunctionSpec {
  name: string;
  category: FunctionCategory;
  /** How it is called, `[optional]` and `...` for more. */
  signature: string;
  /** One line for the editor's list and the docs. */
  help: string;
  example: string;
  /** What the example gives, as it reads in a cell. */
  result: string;
  minArgs: number;
  maxArgs: number;
  returns(args: StaticType[]): StaticType;
  lazy?: boolean;
  catchesErrors?: boolean;
  run(args: Value[], env: FormulaEnvironment, thunks: Thunk[]): Value;
}

const many = Number.POSITIVE_INFINITY;

/** The common type of branches (IF, SWITCH): blank fits any; branches that disagree give text. */
export function unify(types: StaticType[]): StaticType {
  const known = types.filter((type) => type !== 'blank' && type !== 'any');
  if (known.length === 0) return types.includes('any') ? 'any' : 'blank';
  return known.every((type) => type === known[0]) ? known[0]! : 'text';
}

// Helpers that return the first error they meet.

function numbers(values: Value[], name: string): number[] | FormulaError {
  const out: number[] = [];
  for (const value of flatten(values)) {
    if (value === null || (typeof value === 'string' && value.trim() === '')) continue;
    const number = toNumber(value, `a number (${name} adds numbers)`);
    if (number instanceof FormulaError) return number;
    out.push(number);
  }
  return out;
}

function number(value: Value, what: string): number | FormulaError {
  return toNumber(value, what);
}

function text(value: Value): string | FormulaError {
  return toText(value);
}

function finite(result: number): number | FormulaError {
  return Number.isFinite(result) ? tidy(result) : valueError('The result is too large to be a number.');
}

function count(value: Value, name: string, what: string): number | FormulaError {
  const n = number(value, `a number (${what})`);
  if (n instanceof FormulaError) return n;
  if (n < 0) return valueError(`${name}: ${what} cannot be negative.`);
  return Math.floor(n);
}

/** Code points, so an emoji counts as one character. */
function chars(value: string): string[] {
  return Array.from(value);
}

function date(value: Value): DateValue | FormulaError | null {
  return toDate(value);
}

function roundHalfAway(value: number, digits: number): number {
  const magnitude = Math.abs(value);
  // Shifting the decimal point in the text form rounds 1.005 to 1.01, where multiplying by 100 gives 100.49999.
  const shifted = Math.round(Number(`${magnitude}e${digits}`));
  const back = Number(`${shifted}e${-digits}`);
  const rounded = Number.isFinite(back) ? back : Math.round(magnitude * 10 ** digits) / 10 ** digits;
  return Math.sign(value) * rounded;
}

function multiple(value: number, significance: number, round: (n: number) => number): number | FormulaError {
  if (significance === 0) return new FormulaError('#DIV/0!', 'The significance is 0.');
  return finite(round(value / significance) * significance);
}

/** Remainder with the sign of the divisor, as spreadsheets compute it (MOD(-7, 2) is 1). */
export function modulo(a: number, b: number): number | FormulaError {
  if (b === 0) return new FormulaError('#DIV/0!', 'Division by zero (the divisor of MOD or % is 0).');
  return finite(a - b * Math.floor(a / b));
}

const F: FunctionSpec[] = [
  // -------------------------------------------------------------------------
  // Logical
  {
    name: 'IF',
    category: 'logical',
    signature: 'IF(condition, value if true, [value if false])',
    help: 'The second argument when the condition holds, else the third (blank when left out).',
    example: 'IF({points} > 5, "big", "small")',
    result: '"big" when points is 8',
    minArgs: 2,
    maxArgs: 3,
    returns: (args) => unify([args[1]!, args[2] ?? 'blank']),
    lazy: true,
    run: (_args, _env, thunks) => {
      const condition = toBoolean(thunks[0]!());
      if (condition instanceof FormulaError) return condition;
      return condition ? thunks[1]!() : thunks[2] ? thunks[2]() : null;
    },
  },
  {
    name: 'SWITCH',
    category: 'logical',
    signature: 'SWITCH(expression, pattern, result, [pattern, result]..., [default])',
    help: 'The result paired with the first pattern equal to the expression, else the default (blank when none).',
    example: 'SWITCH({status}, "todo", 1, "doing", 2, 0)',
    result: '2 when status is doing',
    minArgs: 2,
    maxArgs: many,
    returns: (args) => unify([...args.slice(1).filter((_, i) => i % 2 === 1), ...((args.length - 1) % 2 === 1 ? [args.at(-1)!] : ['blank' as const])]),
    lazy: true,
    run: (_args, _env, thunks) => {
      const subject = thunks[0]!();
      if (subject instanceof FormulaError) return subject;
      const rest = thunks.slice(1);
      for (let i = 0; i + 1 < rest.length; i += 2) {
        const equal = valuesEqual(subject, rest[i]!());
        if (equal instanceof FormulaError) return equal;
        if (equal) return rest[i + 1]!();
      }
      return rest.length % 2 === 1 ? rest.at(-1)!() : null;
    },
  },
  junction('AND', true, 'TRUE when every argument is true (a list counts each value).', 'AND({done}, {points} > 0)'),
  junction('OR', false, 'TRUE when any argument is true.', 'OR({urgent}, {points} > 8)'),
  {
    name: 'NOT',
    category: 'logical',
    signature: 'NOT(condition)',
    help: 'TRUE when the argument is false or blank.',
    example: 'NOT({done})',
    result: 'FALSE when done is checked',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'checkbox',
    run: ([value]) => {
      const truth = toBoolean(value!);
      return truth instanceof FormulaError ? truth : !truth;
    },
  },
  {
    name: 'BLANK',
    category: 'logical',
    signature: 'BLANK()',
    help: 'An empty value.',
    example: 'IF({done}, BLANK(), {due})',
    result: 'blank when done is checked',
    minArgs: 0,
    maxArgs: 0,
    returns: () => 'blank',
    run: () => null,
  },
  {
    name: 'ISERROR',
    category: 'logical',
    signature: 'ISERROR(value)',
    help: 'TRUE when the value is an error (#DIV/0!, #VALUE! …).',
    example: 'ISERROR(1 / 0)',
    result: 'TRUE',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'checkbox',
    catchesErrors: true,
    run: ([value]) => value instanceof FormulaError,
  },
  logicalConstant(true),
  logicalConstant(false),
  {
    name: 'ERROR',
    category: 'logical',
    signature: 'ERROR([message])',
    help: 'An #ERROR! value, with the message given.',
    example: 'IF({points} < 0, ERROR("negative"), {points})',
    result: '#ERROR! when points is -1',
    minArgs: 0,
    maxArgs: 1,
    returns: () => 'any',
    run: ([message]) => {
      const said = message === undefined ? 'ERROR() was called.' : text(message);
      return said instanceof FormulaError ? said : new FormulaError('#ERROR!', said);
    },
  },

  // -------------------------------------------------------------------------
  // Numeric
  {
    name: 'SUM',
    category: 'numeric',
    signature: 'SUM(number, ...)',
    help: 'The numbers added up (blanks are skipped).',
    example: 'SUM({price}, {shipping}, 2)',
    result: '17 when price is 10 and shipping 5',
    minArgs: 1,
    maxArgs: many,
    returns: () => 'number',
    run: (args) => {
      const values = numbers(args, 'SUM');
      return values instanceof FormulaError ? values : finite(values.reduce((sum, n) => sum + n, 0));
    },
  },
  extreme('MIN', 'smallest', 'MIN({estimate}, 10)', '3 when estimate is 3', Math.min),
  extreme('MAX', 'largest', 'MAX({estimate}, 10)', '10 when estimate is 3', Math.max),
  {
    name: 'AVERAGE',
    category: 'numeric',
    signature: 'AVERAGE(number, ...)',
    help: 'The mean of the numbers (blanks are skipped; #DIV/0! when there is none).',
    example: 'AVERAGE(2, 4, 9)',
    result: '5',
    minArgs: 1,
    maxArgs: many,
    returns: () => 'number',
    run: (args) => {
      const values = numbers(args, 'AVERAGE');
      if (values instanceof FormulaError) return values;
      if (values.length === 0) return new FormulaError('#DIV/0!', 'AVERAGE of no numbers.');
      return finite(values.reduce((sum, n) => sum + n, 0) / values.length);
    },
  },
  {
    name: 'ROUND',
    category: 'numeric',
    signature: 'ROUND(number, [digits])',
    help: 'Rounded to that many decimal digits (0 when left out), halves away from zero; negative digits round to tens, hundreds…',
    example: 'ROUND(2.675, 2)',
    result: '2.68',
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'number',
    run: ([value, digits]) => {
      const n = number(value!, 'a number');
      const d = digits === undefined ? 0 : number(digits, 'a number of digits');
      if (n instanceof FormulaError) return n;
      if (d instanceof FormulaError) return d;
      return finite(roundHalfAway(n, Math.trunc(d)));
    },
  },
  {
    name: 'ABS',
    category: 'numeric',
    signature: 'ABS(number)',
    help: 'The number without its sign.',
    example: 'ABS(-4.5)',
    result: '4.5',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'number',
    run: ([value]) => {
      const n = number(value!, 'a number');
      return n instanceof FormulaError ? n : Math.abs(n);
    },
  },
  toMultiple('FLOOR', 'down', 'FLOOR(7.8, 0.5)', '7.5', Math.floor),
  toMultiple('CEILING', 'up', 'CEILING(7.2, 5)', '10', Math.ceil),
  {
    name: 'MOD',
    category: 'numeric',
    signature: 'MOD(number, divisor)',
    help: 'The remainder of the division, with the sign of the divisor (the % operator is the same).',
    example: 'MOD(17, 5)',
    result: '2',
    minArgs: 2,
    maxArgs: 2,
    returns: () => 'number',
    run: ([a, b]) => {
      const x = number(a!, 'a number');
      const y = number(b!, 'a divisor');
      if (x instanceof FormulaError) return x;
      return y instanceof FormulaError ? y : modulo(x, y);
    },
  },
  {
    name: 'POWER',
    category: 'numeric',
    signature: 'POWER(base, exponent)',
    help: 'The base raised to the exponent.',
    example: 'POWER(2, 10)',
    result: '1024',
    minArgs: 2,
    maxArgs: 2,
    returns: () => 'number',
    run: ([a, b]) => {
      const base = number(a!, 'a base');
      const exponent = number(b!, 'an exponent');
      if (base instanceof FormulaError) return base;
      if (exponent instanceof FormulaError) return exponent;
      if (base === 0 && exponent < 0) return new FormulaError('#DIV/0!', 'POWER of 0 to a negative exponent divides by zero.');
      const result = base ** exponent;
      return Number.isNaN(result) ? valueError('POWER of a negative base to a fractional exponent is not a real number.') : finite(result);
    },
  },
  {
    name: 'SQRT',
    category: 'numeric',
    signature: 'SQRT(number)',
    help: 'The square root (#VALUE! for a negative number).',
    example: 'SQRT(81)',
    result: '9',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'number',
    run: ([value]) => {
      const n = number(value!, 'a number');
      if (n instanceof FormulaError) return n;
      return n < 0 ? valueError('SQRT of a negative number.') : finite(Math.sqrt(n));
    },
  },

  // -------------------------------------------------------------------------
  // Text
  {
    name: 'LEN',
    category: 'text',
    signature: 'LEN(text)',
    help: 'The number of characters.',
    example: 'LEN("Trellis")',
    result: '7',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'number',
    run: ([value]) => {
      const t = text(value!);
      return t instanceof FormulaError ? t : chars(t).length;
    },
  },
  textChange('LOWER', 'The text in lower case.', 'LOWER("Hello")', '"hello"', (t) => t.toLowerCase()),
  textChange('UPPER', 'The text in upper case.', 'UPPER("Hello")', '"HELLO"', (t) => t.toUpperCase()),
  textChange('TRIM', 'The text without white space at its start and end.', 'TRIM("  spaced  ")', '"spaced"', (t) => t.trim()),
  {
    name: 'CONCATENATE',
    category: 'text',
    signature: 'CONCATENATE(text, ...)',
    help: 'The texts joined (the & operator does the same).',
    example: 'CONCATENATE({first}, " ", {last})',
    result: '"Ada Lovelace"',
    minArgs: 1,
    maxArgs: many,
    returns: () => 'text',
    run: (args) => {
      let out = '';
      for (const value of args) {
        const t = text(value);
        if (t instanceof FormulaError) return t;
        out += t;
      }
      return out;
    },
  },
  {
    name: 'LEFT',
    category: 'text',
    signature: 'LEFT(text, [count])',
    help: 'The first characters of the text (one when the count is left out).',
    example: 'LEFT("Trellis", 3)',
    result: '"Tre"',
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'text',
    run: ([value, howMany]) => {
      const t = text(value!);
      const n = howMany === undefined ? 1 : count(howMany, 'LEFT', 'the count');
      if (t instanceof FormulaError) return t;
      return n instanceof FormulaError ? n : chars(t).slice(0, n).join('');
    },
  },
  {
    name: 'RIGHT',
    category: 'text',
    signature: 'RIGHT(text, [count])',
    help: 'The last characters of the text (one when the count is left out).',
    example: 'RIGHT("Trellis", 3)',
    result: '"lis"',
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'text',
    run: ([value, howMany]) => {
      const t = text(value!);
      const n = howMany === undefined ? 1 : count(howMany, 'RIGHT', 'the count');
      if (t instanceof FormulaError) return t;
      if (n instanceof FormulaError) return n;
      const all = chars(t);
      return all.slice(Math.max(0, all.length - n)).join('');
    },
  },
  {
    name: 'MID',
    category: 'text',
    signature: 'MID(text, start, count)',
    help: 'Count characters of the text from the start position (the first character is 1).',
    example: 'MID("Trellis", 2, 3)',
    result: '"rel"',
    minArgs: 3,
    maxArgs: 3,
    returns: () => 'text',
    run: ([value, from, howMany]) => {
      const t = text(value!);
      const start = number(from!, 'a position');
      const n = count(howMany!, 'MID', 'the count');
      if (t instanceof FormulaError) return t;
      if (start instanceof FormulaError) return start;
      if (n instanceof FormulaError) return n;
      if (start < 1) return valueError('MID: the start position is 1 or more.');
      return chars(t).slice(Math.floor(start) - 1, Math.floor(start) - 1 + n).join('');
    },
  },
  {
    name: 'FIND',
    category: 'text',
    signature: 'FIND(text to find, text, [start])',
    help: 'The position of the first occurrence (1 for the first character), 0 when it is not there; case-sensitive.',
    example: 'FIND("l", "Trellis")',
    result: '4',
    minArgs: 2,
    maxArgs: 3,
    returns: () => 'number',
    run: ([needle, haystack, from]) => {
      const what = text(needle!);
      const where = text(haystack!);
      const start = from === undefined ? 1 : number(from, 'a position');
      if (what instanceof FormulaError) return what;
      if (where instanceof FormulaError) return where;
      if (start instanceof FormulaError) return start;
      if (start < 1) return valueError('FIND: the start position is 1 or more.');
      const all = chars(where);
      const offset = all.slice(0, Math.floor(start) - 1).join('').length;
      const found = where.indexOf(what, offset);
      return found < 0 ? 0 : chars(where.slice(0, found)).length + 1;
    },
  },
  {
    name: 'SUBSTITUTE',
    category: 'text',
    signature: 'SUBSTITUTE(text, old, new, [which])',
    help: 'The text with every occurrence of old replaced by new, or only the n-th one.',
    example: 'SUBSTITUTE("a-b-c", "-", "+")',
    result: '"a+b+c"',
    minArgs: 3,
    maxArgs: 4,
    returns: () => 'text',
    run: ([value, from, to, which]) => {
      const t = text(value!);
      const old = text(from!);
      const replacement = text(to!);
      const n = which === undefined ? 0 : number(which, 'an occurrence number');
      for (const part of [t, old, replacement, n]) if (part instanceof FormulaError) return part;
      if (old === '') return t as string;
      const parts = (t as string).split(old as string);
      if (n === 0) return parts.join(replacement as string);
      const index = Math.floor(n as number);
      if (index < 1) return valueError('SUBSTITUTE: the occurrence number is 1 or more.');
      if (index >= parts.length) return t as string;
      return parts.slice(0, index).join(old as string) + replacement + parts.slice(index).join(old as string);
    },
  },
  {
    name: 'VALUE',
    category: 'text',
    signature: 'VALUE(text)',
    help: 'The number a text holds; thousands separators, currency signs and a trailing % are understood.',
    example: 'VALUE("$1,250.50")',
    result: '1250.5',
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'number',
    run: ([value]) => {
      if (typeof value === 'number') return value;
      const t = text(value!);
      if (t instanceof FormulaError) return t;
      if (t.trim() === '') return null;
      let cleaned = t.replace(/[\s,$€£¥]/g, '');
      const percent = cleaned.endsWith('%');
      if (percent) cleaned = cleaned.slice(0, -1);
      const n = toNumber(cleaned);
      if (n instanceof FormulaError) return valueError(`"${t}" holds no number.`);
      return percent ? tidy(n / 100) : n;
    },
  },

  // -------------------------------------------------------------------------
  // Dates
  {
    name: 'DATEADD',
    category: 'date',
    signature: 'DATEADD(date, count, unit)',
    help: 'The date moved by count units (years, quarters, months, weeks, days, hours, minutes, seconds, milliseconds).',
    example: 'DATEADD("2026-01-31", 1, "months")',
    result: '"2026-02-28"',
    minArgs: 3,
    maxArgs: 3,
    returns: () => 'date',
    run: ([value, amount, unitName], env) => {
      const d = date(value!);
      const n = number(amount!, 'a count');
      const unit = text(unitName!);
      if (d instanceof FormulaError) return d;
      if (n instanceof FormulaError) return n;
      if (unit instanceof FormulaError) return unit;
      const parsed = unitOf(unit);
      if (parsed instanceof FormulaError) return parsed;
      return d === null ? null : addToDate(d, n, parsed, env.timeZone);
    },
  },
  {
    name: 'DATETIME_DIFF',
    category: 'date',
    signature: 'DATETIME_DIFF(date, other date, [unit])',
    help: 'date minus other date in whole units (seconds when left out), truncated toward zero.',
    example: 'DATETIME_DIFF("2026-03-01", "2026-02-01", "days")',
    result: '28',
    minArgs: 2,
    maxArgs: 3,
    returns: () => 'number',
    run: ([first, second, unitName], env) => {
      const a = date(first!);
      const b = date(second!);
      const unit = unitName === undefined ? 'seconds' : text(unitName);
      if (a instanceof FormulaError) return a;
      if (b instanceof FormulaError) return b;
      if (unit instanceof FormulaError) return unit;
      const parsed = unitOf(unit);
      if (parsed instanceof FormulaError) return parsed;
      return a === null || b === null ? null : dateDifference(a, b, parsed, env.timeZone);
    },
  },
  {
    name: 'DATETIME_FORMAT',
    category: 'date',
    signature: 'DATETIME_FORMAT(date, [format])',
    help: 'The date as text in a format of specifiers such as YYYY, MM, DD, D MMM YYYY, HH:mm, dddd (ISO 8601 when left out).',
    example: 'DATETIME_FORMAT("2026-07-04", "D MMM YYYY")',
    result: '"4 Jul 2026"',
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'text',
    run: ([value, format], env) => {
      const d = date(value!);
      const pattern = format === undefined ? null : text(format);
      if (d instanceof FormulaError) return d;
      if (pattern instanceof FormulaError) return pattern;
      if (d === null) return null;
      return formatDate(d, pattern ?? (d.dateOnly ? 'YYYY-MM-DD' : 'YYYY-MM-DD[T]HH:mm:ss.SSSZ'), env.timeZone);
    },
  },
  {
    name: 'TODAY',
    category: 'date',
    signature: 'TODAY()',
    help: "Today's date, at the moment of reading, in the workspace's time zone.",
    example: 'DATETIME_DIFF({due}, TODAY(), "days")',
    result: 'the days left until due',
    minArgs: 0,
    maxArgs: 0,
    returns: () => 'date',
    run: (_args, env) => {
      env.usedClock('day');
      return today(env.now, env.timeZone);
    },
  },
  {
    name: 'NOW',
    category: 'date',
    signature: 'NOW()',
    help: 'The current date and time, at the moment of reading.',
    example: 'DATETIME_DIFF(NOW(), {created}, "hours")',
    result: 'the hours since created',
    minArgs: 0,
    maxArgs: 0,
    returns: () => 'date',
    run: (_args, env) => {
      env.usedClock('moment');
      return new DateValue(env.now, false);
    },
  },
  dateField('YEAR', 'The year of the date.', 'YEAR("2026-07-04")', '2026', (clock) => clock.year),
  dateField('MONTH', 'The month of the date, 1 (January) to 12.', 'MONTH("2026-07-04")', '7', (clock) => clock.month),
  dateField('DAY', 'The day of the month, 1 to 31.', 'DAY("2026-07-04")', '4', (clock) => clock.day),
  {
    name: 'WEEKDAY',
    category: 'date',
    signature: 'WEEKDAY(date, [first day])',
    help: 'The day of the week, 0 (Sunday) to 6; with "Monday" as the first day, 0 is Monday.',
    example: 'WEEKDAY("2026-07-04")',
    result: '6',
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'number',
    run: ([value, start], env) => {
      const first = start === undefined ? 'sunday' : text(start);
      if (first instanceof FormulaError) return first;
      const shift = first.trim().toLowerCase() === 'monday' ? 1 : first.trim().toLowerCase() === 'sunday' ? 0 : -1;
      if (shift < 0) return valueError('WEEKDAY: the first day is "Sunday" or "Monday".');
      return field(value!, env, (clock) => (clock.weekday + 7 - shift) % 7);
    },
  },
  dateTest('IS_BEFORE', 'before', 'IS_BEFORE({due}, TODAY())', 'TRUE when due has passed', (a, b) => a < b),
  dateTest('IS_AFTER', 'after', 'IS_AFTER({shipped}, {promised})', 'TRUE when shipped late', (a, b) => a > b),
];

// Families of functions that differ only in one operation.

function dateField(name: string, help: string, example: string, result: string, pick: (clock: ReturnType<typeof wallClock>) => number): FunctionSpec {
  return { name, category: 'date', signature: `${name}(date)`, help, example, result, minArgs: 1, maxArgs: 1, returns: () => 'number', run: ([value], env) => field(value!, env, pick) };
}

function textChange(name: string, help: string, example: string, result: string, change: (text: string) => string): FunctionSpec {
  return {
    name,
    category: 'text',
    signature: `${name}(text)`,
    help,
    example,
    result,
    minArgs: 1,
    maxArgs: 1,
    returns: () => 'text',
    run: ([value]) => {
      const t = text(value!);
      return t instanceof FormulaError ? t : change(t);
    },
  };
}

/** AND (every argument true) and OR (any): both stop at the first argument that decides, or at an error. */
function junction(name: string, every: boolean, help: string, example: string): FunctionSpec {
  return {
    name,
    category: 'logical',
    signature: `${name}(condition, ...)`,
    help,
    example,
    result: 'TRUE',
    minArgs: 1,
    maxArgs: many,
    returns: () => 'checkbox',
    run: (args) => {
      for (const value of flatten(args)) {
        const truth = toBoolean(value);
        if (truth !== every) return truth;
      }
      return every;
    },
  };
}

function logicalConstant(value: boolean): FunctionSpec {
  const name = value ? 'TRUE' : 'FALSE';
  return { name, category: 'logical', signature: `${name}()`, help: `The logical value ${name.toLowerCase()} (also written ${name}).`, example: `${name}()`, result: name, minArgs: 0, maxArgs: 0, returns: () => 'checkbox', run: () => value };
}

function dateTest(name: string, relation: string, example: string, result: string, test: (a: number, b: number) => boolean): FunctionSpec {
  return {
    name,
    category: 'date',
    signature: `${name}(date, other date)`,
    help: `TRUE when the date is ${relation} the other (FALSE when either is blank).`,
    example,
    result,
    minArgs: 2,
    maxArgs: 2,
    returns: () => 'checkbox',
    run: ([first, second]) => {
      const a = date(first!);
      const b = date(second!);
      if (a instanceof FormulaError) return a;
      if (b instanceof FormulaError) return b;
      return a !== null && b !== null && test(a.ms, b.ms);
    },
  };
}

function toMultiple(name: string, direction: string, example: string, result: string, round: (n: number) => number): FunctionSpec {
  return {
    name,
    category: 'numeric',
    signature: `${name}(number, [significance])`,
    help: `Rounded ${direction} to a multiple of the significance (1 when left out).`,
    example,
    result,
    minArgs: 1,
    maxArgs: 2,
    returns: () => 'number',
    run: ([value, significance]) => {
      const n = number(value!, 'a number');
      const s = significance === undefined ? 1 : number(significance, 'a significance');
      if (n instanceof FormulaError) return n;
      return s instanceof FormulaError ? s : multiple(n, s, round);
    },
  };
}

function extreme(name: string, which: string, example: string, result: string, pick: (...values: number[]) => number): FunctionSpec {
  return {
    name,
    category: 'numeric',
    signature: `${name}(number, ...)`,
    help: `The ${which} number (0 when there is none).`,
    example,
    result,
    minArgs: 1,
    maxArgs: many,
    returns: () => 'number',
    run: (args) => {
      const values = numbers(args, name);
      return values instanceof FormulaError ? values : values.length ? values.reduce((best, n) => pick(best, n)) : 0;
    },
  };
}

function field(value: Value, env: FormulaEnvironment, pick: (clock: ReturnType<typeof wallClock>) => number): Value {
  const d = date(value);
  if (d === null || d instanceof FormulaError) return d;
  return pick(wallClock(d, env.timeZone));
}


export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(F.map((spec) => [spec.name, spec]));

/** In the order the docs and the editor list them: by category, then as above. */
export const FUNCTION_LIST: readonly FunctionSpec[] = F;
