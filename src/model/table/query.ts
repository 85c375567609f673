/**
 * Row queries: filters, multi-column sorts and field picks, checked against
 * a sheet's columns and evaluated on the table document itself, the same
 * way on the server and in the web app (docs/TABLES.md).
 */
import { isIsoDateOrDateTime } from './validation.js';
import { TableDocumentError, type ColumnDef, type ColumnType, type TableIssue } from './types.js';

export const FILTER_OPS = ['eq', 'neq', 'contains', 'starts', 'empty', 'lt', 'lte', 'gt', 'gte', 'between', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export type FilterValue = string | number | boolean | null | Array<string | number>;

export interface FilterCondition {
  column: string;
  op: FilterOp;
  value?: FilterValue;
}

/** One level of nesting: a top-level group holds conditions and groups of conditions. */
export type FilterGroupInner = { and: FilterCondition[] } | { or: FilterCondition[] };

export interface RowFilter {
  and?: Array<FilterCondition | FilterGroupInner>;
  or?: Array<FilterCondition | FilterGroupInner>;
}

export interface SortKey {
  column: string;
  direction: 'asc' | 'desc';
}

/** Which operators each column type takes (`empty` is valid for every type). */
export const OPS_BY_TYPE: Record<ColumnType, readonly FilterOp[]> = {
  text: ['eq', 'neq', 'contains', 'starts', 'in', 'empty'],
  longtext: ['eq', 'neq', 'contains', 'starts', 'empty'],
  url: ['eq', 'neq', 'contains', 'starts', 'empty'],
  number: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'empty'],
  date: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'between', 'empty'],
  status: ['eq', 'neq', 'in', 'empty'],
  select: ['eq', 'neq', 'in', 'empty'],
  person: ['eq', 'neq', 'in', 'empty'],
  checkbox: ['eq', 'empty'],
  // A link cell by the ids it holds ("tasks of project X"); a lookup, computed from other rows, by emptiness only.
  link: ['eq', 'neq', 'in', 'empty'],
  lookup: ['empty'],
  // Formula and rollup columns filter as their result type (`filterType`); these are for one whose type is unknown.
  formula: ['empty'],
  rollup: ['empty'],
};

/**
 * The type a column filters and sorts as: a formula or rollup column as the
 * type of its values (its `resultType`: number, text, date or checkbox).
 */
export function filterType(column: Pick<ColumnDef, 'type' | 'resultType'>): ColumnType {
  if (column.type !== 'formula' && column.type !== 'rollup') return column.type;
  return column.resultType === 'number' || column.resultType === 'date' || column.resultType === 'checkbox' ? column.resultType : 'text';
}


export interface RowQuery {
  filter?: RowFilter | null;
  sort?: readonly SortKey[];
}

/** Reads one cell of a row: a plain row's `data[key]`, or a live row map's `get`. */
export type CellReader = (key: string) => unknown;

/**
 * Reads one cell as the comparable values it holds for a kind of comparison
 * (`cellValues`): what the server keeps per column while a table is queried
 * (row-index.ts `cellVector`), so a scan of 50,000 rows touches no Y type.
 */
export type ValuesReader = (key: string, kind: ComparisonKind) => readonly Scalar[];

export interface CompiledRowQuery {
  /** True when the row passes the filter (every row when there is none). */
  matches(cell: CellReader): boolean;
  /** The same test on cells read as comparable values. */
  matchesValues(values: ValuesReader): boolean;
  /** The sort keys' order of two rows (0 when they tie on every key, or there are none). */
  compare(a: CellReader, b: CellReader): number;
  /** A short, stable text naming the filter, for cursors and caches. */
  readonly filterKey: string;
  readonly sort: readonly SortKey[];
}

/**
 * Problems with a query against these columns, with paths into it: an
 * unknown column, an operator its type does not take, a value that does not
 * parse. Empty when the query can run.
 */
export function checkRowQuery(columns: readonly ColumnDef[], query: RowQuery, basePath: readonly string[] = []): TableIssue[] {
  const issues: TableIssue[] = [];
  compile(columns, query, basePath, issues);
  return issues;
}

/** The query ready to run; throws a TableDocumentError (`invalid_query`) naming each part that is wrong. */
export function compileRowQuery(columns: readonly ColumnDef[], query: RowQuery, basePath: readonly string[] = []): CompiledRowQuery {
  const issues: TableIssue[] = [];
  const compiled = compile(columns, query, basePath, issues);
  if (issues.length > 0) throw new TableDocumentError('invalid_query', issues.map((issue) => issue.message).join(' '), issues);
  return compiled;
}

/**
 * The filter without conditions on columns that no longer exist (a saved
 * view outliving a column): those conditions no longer apply, and a group
 * left empty goes too.
 */
export function withoutMissingColumns(filter: RowFilter | null | undefined, columns: readonly ColumnDef[]): RowFilter | null {
  if (!filter) return null;
  const keys = new Set(columns.map((column) => column.key));
  const keep = (items: unknown): unknown[] | undefined => {
    if (!Array.isArray(items)) return undefined;
    return items.flatMap((item) => {
      if (item === null || typeof item !== 'object') return [item];
      if ('column' in item) return keys.has((item as FilterCondition).column) ? [item] : [];
      const group = item as Record<string, unknown>;
      const name = 'and' in group ? 'and' : 'or';
      const inner = keep(group[name]);
      return inner && inner.length ? [{ [name]: inner }] : [];
    });
  };
  const pruned: RowFilter = {};
  const and = keep(filter.and);
  const or = keep(filter.or);
  if (and?.length) pruned.and = and as RowFilter['and'];
  if (or?.length) pruned.or = or as RowFilter['or'];
  return pruned.and || pruned.or ? pruned : null;
}

/** The column keys a filter's conditions name (groups included). */
export function filterColumnKeys(filter: RowFilter | null | undefined): string[] {
  const keys: string[] = [];
  const visit = (items: unknown) => {
    if (!Array.isArray(items)) return;
    for (const item of items) {
      if (item === null || typeof item !== 'object') continue;
      if ('column' in item) keys.push(String((item as FilterCondition).column));
      else for (const group of Object.values(item as Record<string, unknown>)) visit(group);
    }
  };
  visit(filter?.and);
  visit(filter?.or);
  return keys;
}

/** Plain row data as a cell reader. */
export function readerOf(data: Record<string, unknown>): CellReader {
  return (key) => (Object.hasOwn(data, key) ? data[key] : undefined);
}

/**
 * `filter[<column>][<op>]=<value>` from a query string (already nested by
 * the HTTP layer) as a filter in the JSON form: every condition must hold.
 * A repeated `in` gives its items; any other repeated condition is an issue.
 */
export function filterFromQueryString(
  filter: Record<string, Record<string, string | string[] | undefined> | undefined>,
  basePath: readonly string[] = ['filter'],
): { filter: RowFilter; issues: TableIssue[] } {
  const and: FilterCondition[] = [];
  const issues: TableIssue[] = [];
  for (const column of Object.keys(filter)) {
    const ops = filter[column];
    if (ops === null || typeof ops !== 'object') {
      issues.push(issue([...basePath, column], 'invalid_filter', `filter[${column}] needs an operator: filter[${column}][eq]=value.`));
      continue;
    }
    for (const op of Object.keys(ops)) {
      const value = ops[op];
      if (Array.isArray(value) && op !== 'in') {
        issues.push(issue([...basePath, column, op], 'invalid_value', `filter[${column}][${op}] is given more than once.`));
        continue;
      }
      and.push({ column, op: op as FilterOp, value: value as FilterValue });
    }
  }
  return { filter: { and }, issues };
}

/** `-due,title` as sort keys. */
export function sortFromQueryString(sort: string): SortKey[] {
  return sort
    .split(',')
    .filter((part) => part !== '' && part !== '-')
    .map((part) => (part.startsWith('-') ? { column: part.slice(1), direction: 'desc' as const } : { column: part, direction: 'asc' as const }));
}

// ---------------------------------------------------------------------------

type Predicate = (values: ValuesReader) => boolean;

const MAX_CONDITIONS = 200;

function compile(columns: readonly ColumnDef[], query: RowQuery, basePath: readonly string[], issues: TableIssue[]): CompiledRowQuery {
  const byKey = new Map<string, ColumnDef>();
  for (const column of columns) if (!byKey.has(column.key)) byKey.set(column.key, column);
  const filter = query.filter ?? null;
  let conditions = 0;
  const condition = (raw: unknown, path: string[]): Predicate | null => {
    if (++conditions > MAX_CONDITIONS) {
      if (conditions === MAX_CONDITIONS + 1) issues.push(issue(path, 'too_many_conditions', `A filter holds at most ${MAX_CONDITIONS} conditions.`));
      return null;
    }
    return compileCondition(byKey, raw, path, issues);
  };
  const group = (raw: unknown, path: string[], depth: number): Predicate | null => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      issues.push(issue(path, 'invalid_filter', 'A filter group is an object with `and` or `or`.'));
      return null;
    }
    const record = raw as Record<string, unknown>;
    const keys = Object.keys(record);
    if (!('column' in record) && keys.some((key) => key !== 'and' && key !== 'or')) {
      issues.push(issue(path, 'invalid_filter', 'A filter group holds only `and` and `or`.'));
      return null;
    }
    const part = (name: 'and' | 'or'): Predicate[] | null => {
      const list = record[name];
      if (list === undefined) return null;
      if (!Array.isArray(list)) {
        issues.push(issue([...path, name], 'invalid_filter', `\`${name}\` is a list of conditions.`));
        return null;
      }
      return list
        .map((item, i) => {
          const itemPath = [...path, name, String(i)];
          if (item !== null && typeof item === 'object' && !Array.isArray(item) && !('column' in item)) {
            if (depth >= 1) {
              issues.push(issue(itemPath, 'invalid_filter', 'Groups nest one level deep: a nested group holds conditions only.'));
              return null;
            }
            return group(item, itemPath, depth + 1);
          }
          return condition(item, itemPath);
        })
        .filter((predicate): predicate is Predicate => predicate !== null);
    };
    const all = part('and');
    const any = part('or');
    return (cell) => (all === null || all.every((p) => p(cell))) && (any === null || any.length === 0 || any.some((p) => p(cell)));
  };
  const predicate = filter ? group(filter, [...basePath, 'filter'], 0) : null;
  const sort = [...(query.sort ?? [])];
  sort.forEach((key, i) => {
    if (!byKey.has(key.column)) issues.push(issue([...basePath, 'sort', String(i)], 'unknown_column', `sort: there is no column "${key.column}".`));
  });
  return {
    matches: predicate ? (cell) => predicate((key, kind) => cellValues(kind, cell(key))) : () => true,
    matchesValues: predicate ?? (() => true),
    compare: (a, b) => compareBySortKeys(sort, a, b),
    filterKey: filter ? stableHash(JSON.stringify(filter)) : '',
    sort,
  };
}

function compileCondition(byKey: Map<string, ColumnDef>, raw: unknown, path: string[], issues: TableIssue[]): Predicate | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    issues.push(issue(path, 'invalid_filter', 'A condition is { column, op, value }.'));
    return null;
  }
  const { column: key, op, value } = raw as { column?: unknown; op?: unknown; value?: unknown };
  if (typeof key !== 'string') {
    issues.push(issue(path, 'invalid_filter', 'A condition names its `column`.'));
    return null;
  }
  const column = byKey.get(key);
  if (!column) {
    issues.push(issue([...path, 'column'], 'unknown_column', `filter: there is no column "${key}".`));
    return null;
  }
  if (typeof op !== 'string' || !(FILTER_OPS as readonly string[]).includes(op)) {
    issues.push(issue([...path, 'op'], 'unknown_operator', `filter on "${key}": "${String(op)}" is not an operator (${FILTER_OPS.join(', ')}).`));
    return null;
  }
  const type = filterType(column);
  const allowed = OPS_BY_TYPE[type] ?? ['eq', 'neq', 'empty'];
  if (!allowed.includes(op as FilterOp)) {
    const described = type === column.type ? `a ${type} column` : `a ${column.type} column of ${type} values`;
    issues.push(issue([...path, 'op'], 'invalid_operator', `filter on "${key}": ${described} takes ${allowed.join(', ')}, not ${op}.`));
    return null;
  }
  const bad = (message: string) => {
    issues.push(issue([...path, 'value'], 'invalid_value', `filter on "${key}" ${op}: ${message}`));
    return null;
  };
  if (op === 'empty') {
    const wanted = value === undefined || value === true || value === 'true' ? true : value === false || value === 'false' ? false : null;
    if (wanted === null) return bad('`empty` takes true or false.');
    const kind = comparisonKind(type);
    return (values) => values(key, kind).every((item) => item === '') === wanted;
  }
  const kind = comparisonKind(type);
  const scalar = (item: unknown) => parseScalar(kind, item);
  if (op === 'in') {
    const items = listValue(value);
    if (items === null || items.length === 0) return bad('`in` takes a comma-separated list or a JSON array.');
    const parsed = items.map(scalar);
    if (parsed.some((item) => item === undefined)) return bad(`every item must be ${describeKind(kind)}.`);
    const wanted = new Set(parsed.map((item) => (kind === 'text' ? String(item).toLowerCase() : item)));
    return (values) => values(key, kind).some((item) => wanted.has(item));
  }
  if (op === 'between') {
    const items = Array.isArray(value) ? value : typeof value === 'string' ? splitList(value) : null;
    if (items === null || items.length !== 2) return bad('`between` takes two values: a,b.');
    const [low, high] = items.map(scalar);
    if (low === undefined || high === undefined) return bad(`both ends must be ${describeKind(kind)}.`);
    return (values) => values(key, kind).some((item) => compareScalars(item, low) >= 0 && compareScalars(item, high) <= 0);
  }
  const wanted = scalar(value);
  if (wanted === undefined) return bad(`the value must be ${describeKind(kind)}.`);
  switch (op) {
    case 'eq':
      if (kind === 'boolean') return (values) => values(key, kind).includes(true) === wanted;
      return (values) => values(key, kind).some((item) => item === wanted);
    case 'neq':
      // A row without a value is "not X" too (what people mean by "status is not Done").
      return (values) => !values(key, kind).some((item) => item === wanted);
    case 'contains':
      return (values) => values(key, kind).some((item) => typeof item === 'string' && item.includes(wanted as string));
    case 'starts':
      return (values) => values(key, kind).some((item) => typeof item === 'string' && item.startsWith(wanted as string));
    case 'lt':
      return (values) => values(key, kind).some((item) => compareScalars(item, wanted) < 0);
    case 'lte':
      return (values) => values(key, kind).some((item) => compareScalars(item, wanted) <= 0);
    case 'gt':
      return (values) => values(key, kind).some((item) => compareScalars(item, wanted) > 0);
    case 'gte':
      return (values) => values(key, kind).some((item) => compareScalars(item, wanted) >= 0);
  }
  return bad('unsupported operator.');
}

/**
 * How a type's values compare: text case-insensitively, options and people
 * by their exact value, numbers as numbers, dates as instants in UTC
 * (a date without a time is its midnight), checkboxes as booleans.
 */
export type ComparisonKind = 'text' | 'exact' | 'number' | 'date' | 'boolean';
type Kind = ComparisonKind;

function comparisonKind(type: ColumnType): Kind {
  switch (type) {
    case 'number':
      return 'number';
    case 'date':
      return 'date';
    case 'checkbox':
      return 'boolean';
    case 'text':
    case 'longtext':
    case 'url':
      return 'text';
    default:
      return 'exact';
  }
}

function describeKind(kind: Kind): string {
  return { text: 'text', exact: 'an option value or id', number: 'a number', date: 'an ISO 8601 date (2026-12-01) or date-time', boolean: 'true or false' }[kind];
}

export type Scalar = string | number | boolean;

function parseScalar(kind: Kind, value: unknown): Scalar | undefined {
  switch (kind) {
    case 'number': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      return Number.isFinite(number) ? number : undefined;
    }
    case 'date':
      return typeof value === 'string' && isIsoDateOrDateTime(value) ? dateInstant(value) : undefined;
    case 'boolean':
      return value === true || value === 'true' ? true : value === false || value === 'false' ? false : undefined;
    case 'text':
      return typeof value === 'string' ? value.toLowerCase() : typeof value === 'number' ? String(value) : undefined;
    case 'exact':
      return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  }
}

function dateInstant(text: string): number {
  return Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
}

/** A cell as the comparable values it holds (several for multi-select and people), none when empty or of another type. */
export function cellValues(kind: Kind, value: unknown): Scalar[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item) => cellValues(kind, item));
  switch (kind) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? [value] : [];
    case 'date': {
      if (typeof value !== 'string' || !isIsoDateOrDateTime(value)) return [];
      return [dateInstant(value)];
    }
    case 'boolean':
      return typeof value === 'boolean' ? [value] : [];
    case 'text':
      return typeof value === 'string' ? [value.toLowerCase()] : typeof value === 'number' ? [String(value)] : [];
    case 'exact':
      return typeof value === 'string' ? [value] : [];
  }
}

function compareScalars(a: Scalar, b: Scalar): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return NaN;
}

function listValue(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value.flatMap((item) => (typeof item === 'string' && item.startsWith('[') ? (listValue(item) ?? [item]) : [item]));
  if (typeof value !== 'string') return null;
  if (value.trimStart().startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(value);
      return Array.isArray(parsed) ? parsed : null;
    } catch {
      return null;
    }
  }
  return splitList(value);
}

function splitList(text: string): string[] {
  return text.split(',').map((item) => item.trim());
}

// ---------------------------------------------------------------------------
// Sorting: any stored value, nulls and empty cells last in both directions;
// numbers before text before booleans when a column holds several kinds.

const NULL_RANK = 3;

export interface SortValue {
  rank: number;
  value: number | string | null;
}

/** A cell as it sorts (text folded to lower case, arrays joined). */
export function sortValueOf(value: unknown): SortValue {
  if (typeof value === 'number' && Number.isFinite(value)) return { rank: 0, value };
  if (typeof value === 'string') return { rank: 1, value: value.toLowerCase() };
  if (Array.isArray(value)) return value.length ? { rank: 1, value: value.map(String).join(', ').toLowerCase() } : { rank: NULL_RANK, value: null };
  if (typeof value === 'boolean') return { rank: 2, value: value ? 1 : 0 };
  return { rank: NULL_RANK, value: null };
}

export function compareSortValues(a: SortValue, b: SortValue, direction: 1 | -1): number {
  if (a.rank === NULL_RANK || b.rank === NULL_RANK) return a.rank === b.rank ? 0 : a.rank === NULL_RANK ? 1 : -1;
  if (a.rank !== b.rank) return (a.rank - b.rank) * direction;
  if (typeof a.value === 'string' && typeof b.value === 'string') return (a.value < b.value ? -1 : a.value > b.value ? 1 : 0) * direction;
  return ((a.value as number) - (b.value as number)) * direction;
}

function compareBySortKeys(sort: readonly SortKey[], a: CellReader, b: CellReader): number {
  for (const key of sort) {
    const order = compareSortValues(sortValueOf(a(key.column)), sortValueOf(b(key.column)), key.direction === 'desc' ? -1 : 1);
    if (order !== 0) return order;
  }
  return 0;
}

function issue(path: readonly string[], code: string, message: string): TableIssue {
  return { path: [...path], code, message };
}

/** FNV-1a, 32 bits, as base 36: short and the same on every peer. */
function stableHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}
