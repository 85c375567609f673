/**
 * One table of formula cases (issue 36): every operator and function,
 * with errors and blanks, and what each gives on one row. The same table
 * runs through REST, MCP and a sync provider (test/tables/formulas.test.ts)
 * and through the model in a browser (test/web/formula-cases.test.ts).
 */

/** The read's moment: TODAY() is 2026-07-04 in UTC. */
export const NOW = Date.parse('2026-07-04T10:20:30.000Z');

export const INPUT_COLUMNS = [
  { key: 'n', label: 'N', type: 'number' },
  { key: 'm', label: 'M', type: 'number' },
  { key: 'zero', label: 'Zero', type: 'number' },
  { key: 'blank', label: 'Blank', type: 'number' },
  { key: 't', label: 'T', type: 'text' },
  { key: 'u', label: 'U', type: 'text' },
  { key: 'd', label: 'D', type: 'date' },
  { key: 'dt', label: 'DT', type: 'date' },
  { key: 'c', label: 'C', type: 'checkbox' },
  { key: 'c2', label: 'C2', type: 'checkbox' },
  {
    key: 's',
    label: 'S',
    type: 'status',
    options: [
      { value: 'todo', label: 'To do' },
      { value: 'doing', label: 'Doing' },
    ],
  },
  {
    key: 'tags',
    label: 'Tags',
    type: 'select',
    options: [
      { value: 'a', label: 'A' },
      { value: 'b', label: 'B' },
    ],
  },
] as const;

/** The row every case reads (blank and c2 are left empty). */
export const INPUT_ROW = { n: 3, m: 4, zero: 0, t: 'Hello World', u: '  padded  ', d: '2026-01-31', dt: '2026-03-08T14:30:00Z', c: true, s: 'doing', tags: ['a', 'b'] };

type Expected = number | string | boolean | null | { error: string };

export interface FormulaCase {
  formula: string;
  expected: Expected;
  resultType: 'number' | 'text' | 'date' | 'checkbox';
}

const err = (code: string) => ({ error: code });

const table: Array<[formula: string, expected: Expected, resultType: FormulaCase['resultType']]> = [
  // Operators and precedence
  ['{n} + {m}', 7, 'number'],
  ['{n} - {m}', -1, 'number'],
  ['{n} * {m}', 12, 'number'],
  ['{n} / {m}', 0.75, 'number'],
  ['{n} / {zero}', err('#DIV/0!'), 'number'],
  ['{m} % {n}', 1, 'number'],
  ['-7 % 2', 1, 'number'],
  ['{n} % 0', err('#DIV/0!'), 'number'],
  ['1 + 2 * 3', 7, 'number'],
  ['(1 + 2) * 3', 9, 'number'],
  ['-{n}', -3, 'number'],
  ['0.1 + 0.2', 0.3, 'number'],
  ['.5e1', 5, 'number'],
  ['"5" + 1', 6, 'number'],
  ['{t} * 2', err('#VALUE!'), 'number'],
  ['{c} + 1', 2, 'number'],
  ['{t} & "!"', 'Hello World!', 'text'],
  ['{n} & {m}', '34', 'text'],
  ['{c} & ""', 'TRUE', 'text'],
  ['{d} & ""', '2026-01-31', 'text'],
  ['{n} = 3', true, 'checkbox'],
  ['{n} != 3', false, 'checkbox'],
  ['{n} <> 4', true, 'checkbox'],
  ['{n} < {m}', true, 'checkbox'],
  ['{n} <= 3', true, 'checkbox'],
  ['{n} > {m}', false, 'checkbox'],
  ['{n} >= 4', false, 'checkbox'],
  ['"abc" = "ABC"', false, 'checkbox'],
  ['"apple" < "Banana"', true, 'checkbox'],
  ['"3" = 3', true, 'checkbox'],
  ['{d} < {dt}', true, 'checkbox'],
  ['{d} = "2026-01-31"', true, 'checkbox'],
  ['{d} < 5', err('#VALUE!'), 'checkbox'],
  ['{s} = "doing"', true, 'checkbox'],
  // Literals and references
  ['TRUE', true, 'checkbox'],
  ['false', false, 'checkbox'],
  ['"say \\"hi\\""', 'say "hi"', 'text'],
  ["'single'", 'single', 'text'],
  ['{t}', 'Hello World', 'text'],
  ['{d}', '2026-01-31', 'date'],
  ['{dt}', '2026-03-08T14:30:00.000Z', 'date'],
  ['{tags}', 'a, b', 'text'],
  ['{c2}', false, 'checkbox'],
  // Blanks
  ['{blank}', null, 'number'],
  ['{blank} + 1', 1, 'number'],
  ['{blank} * 2', 0, 'number'],
  ['{blank} & "x"', 'x', 'text'],
  ['{blank} = 0', true, 'checkbox'],
  ['{blank} = ""', true, 'checkbox'],
  ['{blank} = BLANK()', true, 'checkbox'],
  // Logical
  ['IF({n} > 2, "big", "small")', 'big', 'text'],
  ['IF({n} > 5, "big")', null, 'text'],
  ['IF({zero} = 0, 0, 1 / {zero})', 0, 'number'],
  ['IF({n}, 1, 2)', 1, 'number'],
  ['IF({blank}, 1, 2)', 2, 'number'],
  ['IF({c}, 1, "one")', '1', 'text'],
  ['IF(1 / 0, 1, 2)', err('#DIV/0!'), 'number'],
  ['SWITCH({s}, "todo", 1, "doing", 2, 0)', 2, 'number'],
  ['SWITCH({s}, "x", 1, 0)', 0, 'number'],
  ['SWITCH({s}, "x", 1)', null, 'number'],
  ['AND({c}, {n} > 2)', true, 'checkbox'],
  ['AND({c}, {c2})', false, 'checkbox'],
  ['AND({tags})', true, 'checkbox'],
  ['AND({c}, 1 / 0)', err('#DIV/0!'), 'checkbox'],
  ['OR({c2}, {n} > 5)', false, 'checkbox'],
  ['OR({c2}, {n} > 2)', true, 'checkbox'],
  ['NOT({c})', false, 'checkbox'],
  ['NOT({blank})', true, 'checkbox'],
  ['BLANK()', null, 'text'],
  ['IF({c}, BLANK(), 1)', null, 'number'],
  ['ISERROR(1 / 0)', true, 'checkbox'],
  ['ISERROR({n})', false, 'checkbox'],
  ['TRUE()', true, 'checkbox'],
  ['FALSE()', false, 'checkbox'],
  ['ERROR("bad input")', err('#ERROR!'), 'text'],
  // Numeric
  ['SUM({n}, {m}, 2)', 9, 'number'],
  ['SUM({n}, {blank})', 3, 'number'],
  ['SUM({t})', err('#VALUE!'), 'number'],
  ['MIN({n}, {m}, 10)', 3, 'number'],
  ['MIN({blank})', 0, 'number'],
  ['MAX({n}, {m})', 4, 'number'],
  ['AVERAGE(2, 4, 9)', 5, 'number'],
  ['AVERAGE({blank})', err('#DIV/0!'), 'number'],
  ['ROUND(2.675, 2)', 2.68, 'number'],
  ['ROUND(1234.5)', 1235, 'number'],
  ['ROUND(-2.5)', -3, 'number'],
  ['ROUND(1234, -2)', 1200, 'number'],
  ['ROUND("x", 1)', err('#VALUE!'), 'number'],
  ['ABS(-4.5)', 4.5, 'number'],
  ['FLOOR(7.8, 0.5)', 7.5, 'number'],
  ['FLOOR(7.8)', 7, 'number'],
  ['FLOOR(7, 0)', err('#DIV/0!'), 'number'],
  ['CEILING(7.2, 5)', 10, 'number'],
  ['CEILING(7.2)', 8, 'number'],
  ['MOD(17, 5)', 2, 'number'],
  ['MOD(-7, 2)', 1, 'number'],
  ['MOD(1, 0)', err('#DIV/0!'), 'number'],
  ['POWER(2, 10)', 1024, 'number'],
  ['POWER(0, -1)', err('#DIV/0!'), 'number'],
  ['POWER(-8, 0.5)', err('#VALUE!'), 'number'],
  ['POWER(10, 400)', err('#VALUE!'), 'number'],
  ['SQRT(81)', 9, 'number'],
  ['SQRT(-1)', err('#VALUE!'), 'number'],
  // Text
  ['LEN({t})', 11, 'number'],
  ['LEN({blank})', 0, 'number'],
  ['LEN("héllo😀")', 6, 'number'],
  ['LOWER({t})', 'hello world', 'text'],
  ['UPPER({t})', 'HELLO WORLD', 'text'],
  ['TRIM({u})', 'padded', 'text'],
  ['CONCATENATE({t}, " ", {n})', 'Hello World 3', 'text'],
  ['LEFT({t}, 5)', 'Hello', 'text'],
  ['LEFT({t})', 'H', 'text'],
  ['LEFT({t}, -1)', err('#VALUE!'), 'text'],
  ['RIGHT({t}, 5)', 'World', 'text'],
  ['MID({t}, 7, 3)', 'Wor', 'text'],
  ['MID({t}, 0, 3)', err('#VALUE!'), 'text'],
  ['FIND("o", {t})', 5, 'number'],
  ['FIND("o", {t}, 6)', 8, 'number'],
  ['FIND("z", {t})', 0, 'number'],
  ['SUBSTITUTE({t}, "o", "0")', 'Hell0 W0rld', 'text'],
  ['SUBSTITUTE({t}, "o", "0", 2)', 'Hello W0rld', 'text'],
  ['VALUE("$1,250.50")', 1250.5, 'number'],
  ['VALUE("12%")', 0.12, 'number'],
  ['VALUE("abc")', err('#VALUE!'), 'number'],
  // Dates
  ['DATEADD({d}, 1, "months")', '2026-02-28', 'date'],
  ['DATEADD({d}, -2, "days")', '2026-01-29', 'date'],
  ['DATEADD({dt}, 2, "hours")', '2026-03-08T16:30:00.000Z', 'date'],
  ['DATEADD({d}, 1, "fortnights")', err('#VALUE!'), 'date'],
  ['DATEADD({blank}, 1, "days")', null, 'date'],
  ['DATETIME_DIFF("2026-03-01", "2026-02-01", "days")', 28, 'number'],
  ['DATETIME_DIFF({dt}, {d}, "weeks")', 5, 'number'],
  ['DATETIME_DIFF("2026-03-31", "2026-01-31", "months")', 2, 'number'],
  ['DATETIME_DIFF({dt}, {d})', 3162600, 'number'],
  ['DATETIME_DIFF(TODAY(), {d}, "days")', 154, 'number'],
  ['DATETIME_FORMAT({d}, "D MMM YYYY")', '31 Jan 2026', 'text'],
  ['DATETIME_FORMAT({dt}, "YYYY-MM-DD HH:mm")', '2026-03-08 14:30', 'text'],
  ['DATETIME_FORMAT({dt}, "dddd, MMMM Do [at] h:mm A")', 'Sunday, March 8th at 2:30 PM', 'text'],
  ['DATETIME_FORMAT({d})', '2026-01-31', 'text'],
  ['DATETIME_FORMAT("not a date")', err('#VALUE!'), 'text'],
  ['TODAY()', '2026-07-04', 'date'],
  ['NOW()', '2026-07-04T10:20:30.000Z', 'date'],
  ['YEAR({d})', 2026, 'number'],
  ['MONTH({dt})', 3, 'number'],
  ['DAY({d})', 31, 'number'],
  ['WEEKDAY({d})', 6, 'number'],
  ['WEEKDAY({d}, "Monday")', 5, 'number'],
  ['IS_BEFORE({d}, {dt})', true, 'checkbox'],
  ['IS_AFTER({d}, {dt})', false, 'checkbox'],
  ['IS_AFTER({blank}, {d})', false, 'checkbox'],
];

export const FORMULA_CASES: FormulaCase[] = table.map(([formula, expected, resultType]) => ({ formula, expected, resultType }));

/** The formula column of case `i`. */
export const caseKey = (i: number) => `f${i}`;

/** Every column of the cases sheet: the inputs, then one formula column per case. */
export function caseColumns() {
  return [...INPUT_COLUMNS.map((column) => ({ ...column })), ...FORMULA_CASES.map((c, i) => ({ key: caseKey(i), label: c.formula.slice(0, 200), type: 'formula', formula: c.formula }))].map((column, position) => ({ ...column, position }));
}

/** A read row's value of each case, errors reduced to their code (the message is prose). */
export function caseResults(data: Record<string, unknown>): Expected[] {
  return FORMULA_CASES.map((_, i) => {
    const value = data[caseKey(i)];
    return value !== null && typeof value === 'object' && 'error' in value ? { error: (value as { error: string }).error } : (value as Expected);
  });
}
