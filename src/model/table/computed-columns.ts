/**
 * Formula and rollup columns as definitions (docs/FORMULAS.md): the type of
 * their values (`resultType`, added on every read), the checks a column
 * write gets (a formula that parses and names columns that exist, a rollup
 * over a link column, no circle of columns depending on each other), and
 * references following a key renamed by a column replacement.
 *
 * The values themselves are computed by `computed.ts`. This file knows only
 * column lists, so `columns.ts` can call it.
 */
import { checkFormula, formulaReferences, formulaResultType } from './formulas/compile.js';
import { staticTypeOfColumn } from './formulas/cells.js';
import type { StaticType } from './formulas/functions.js';
import { renameReferences } from './formulas/parse.js';
import { isRollupFunction, ROLLUP_FUNCTIONS, ROLLUPS } from './formulas/rollups.js';
import type { ResultType } from './formulas/values.js';
import type { ColumnFields, TableIssue } from './types.js';

/** Column types whose cells are computed on read and never written. */
export const COMPUTED_TYPES: ReadonlySet<string> = new Set(['lookup', 'formula', 'rollup']);

export function isComputedColumn(column: { type: string }): boolean {
  return COMPUTED_TYPES.has(column.type);
}

/**
 * The columns with `resultType` set on each formula and rollup column (and
 * any stored one replaced): a rollup's comes from its function, a formula's
 * from its expression over the sheet's columns.
 */
export function withResultTypes<T extends ColumnFields>(columns: readonly T[]): T[] {
  if (!columns.some((column) => column.type === 'formula' || column.type === 'rollup')) return columns as T[];
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const known = new Map<string, ResultType>();
  const resolving = new Set<string>();
  const typeOf = (column: ColumnFields): StaticType => {
    if (column.type === 'rollup') return isRollupFunction(column.fn) ? ROLLUPS[column.fn].resultType : 'any';
    if (column.type !== 'formula') return staticTypeOfColumn(column);
    const kept = known.get(column.key);
    if (kept) return kept;
    // A circle (refused on write, but a sync peer may make one) types as text.
    if (resolving.has(column.key)) return 'any';
    resolving.add(column.key);
    const type = formulaResultType(typeof column.formula === 'string' ? column.formula : '', (key) => {
      const referenced = byKey.get(key);
      return referenced ? typeOf(referenced) : undefined;
    });
    resolving.delete(column.key);
    known.set(column.key, type);
    return type;
  };
  return columns.map((column) => {
    if (column.type === 'formula') return { ...column, resultType: typeOf(column) as ResultType };
    if (column.type === 'rollup') return { ...column, resultType: isRollupFunction(column.fn) ? ROLLUPS[column.fn].resultType : 'text' };
    return column;
  });
}

/** The static type of a column's cells in a formula of the same sheet (`columns` already through `withResultTypes`). */
export function formulaTypes(columns: readonly ColumnFields[]): (key: string) => StaticType | undefined {
  const byKey = new Map(columns.map((column) => [column.key, column]));
  return (key) => {
    const column = byKey.get(key);
    return column ? staticTypeOfColumn(column) : undefined;
  };
}

// ---------------------------------------------------------------------------
// Checks on write

/** What the checks need of the workspace (the domain fills it from its surfaces, the web app from its own list). */
export interface SheetContext {
  /** The surface id of a table surface of the workspace by slug (a former slug too), or null. */
  tableSurfaceId(slug: string): string | null;
  /** The columns of a sheet. */
  columnsOf(surfaceId: string): readonly ColumnFields[];
  /** Every sheet of the workspace, for circles through other sheets. */
  sheetIds(): readonly string[];
  /** How a sheet is named in a message (its slug). */
  sheetName(surfaceId: string): string;
}

/**
 * What is wrong with the formula and rollup columns at `checked` of a sheet
 * whose column list will be `columns` (the whole list after the change):
 * a formula must parse and name columns of the sheet; a rollup names a link
 * column of the sheet, a column of its target and a function; and no column
 * may depend on itself through others, on this sheet or through links.
 * A refused formula is reported at path `["formula"]` with its column and
 * the position at fault; rollup faults at `[...path, field]`.
 */
export function computedColumnIssues(
  surfaceId: string,
  columns: readonly ColumnFields[],
  checked: ReadonlyArray<{ index: number; path: string[] }>,
  context: SheetContext,
): TableIssue[] {
  const issues: TableIssue[] = [];
  const typed = withResultTypes(columns);
  const typeOf = formulaTypes(typed);
  const byKey = new Map(columns.map((column) => [column.key, column]));
  for (const { index, path } of checked) {
    const column = columns[index]!;
    if (column.type === 'formula') {
      if (typeof column.formula !== 'string' || column.formula.trim() === '') {
        issues.push({ path: ['formula'], code: 'required', message: `${named(column.key)}a formula column needs its expression in formula.`, column: column.key, position: 0 });
        continue;
      }
      const check = checkFormula(column.formula, typeOf);
      if (!check.ok) {
        issues.push({
          path: ['formula'],
          code: check.error.reference === undefined ? 'invalid_formula' : 'unknown_column',
          message: `${named(column.key)}${check.error.message}`,
          column: column.key,
          position: check.error.position,
        });
      }
    } else if (column.type === 'rollup') {
      const link = typeof column.link === 'string' ? byKey.get(column.link) : undefined;
      if (!link || link.type !== 'link') {
        issues.push({ path: [...path, 'link'], code: 'unknown_link', message: `A rollup column names a link column of the same sheet in link; got ${JSON.stringify(column.link ?? null)}.` });
        continue;
      }
      if (!isRollupFunction(column.fn)) {
        issues.push({ path: [...path, 'fn'], code: 'invalid_function', message: `A rollup column names its function in fn: one of ${ROLLUP_FUNCTIONS.join(', ')}; got ${JSON.stringify(column.fn ?? null)}.` });
      }
      const target = typeof link.targetSurface === 'string' ? context.tableSurfaceId(link.targetSurface) : null;
      if (target === null) continue; // reported on the link column, or its target is gone
      const targetColumns = target === surfaceId ? columns : context.columnsOf(target);
      if (!targetColumns.some((candidate) => candidate.key === column.field)) {
        issues.push({
          path: [...path, 'field'],
          code: 'unknown_field',
          message: `A rollup column names a column of the link's target surface "${link.targetSurface}" in field; got ${JSON.stringify(column.field ?? null)}.`,
        });
      }
    }
  }
  if (issues.length > 0) return issues;
  return circleIssues(surfaceId, columns, checked, context);
}

/** The key a formula being tried (not yet a column) is checked under: no reference can name it by accident. */
const CANDIDATE = '\u0000';

function named(key: string): string {
  return key === CANDIDATE ? '' : `${key}: `;
}

export type FormulaTry = { ok: true; resultType: ResultType } | { ok: false; error: { message: string; position: number } };

/**
 * Tries a formula on a sheet before it is saved (`POST /formula/check`, the
 * web app's editor as you type): as the formula of the column `columnKey`
 * when given (so a circle through it is found), else of a new column.
 */
export function tryFormula(surfaceId: string, columns: readonly ColumnFields[], formula: string, context: SheetContext, columnKey?: string): FormulaTry {
  const at = columnKey === undefined ? -1 : columns.findIndex((column) => column.key === columnKey);
  const list: ColumnFields[] =
    at >= 0
      ? columns.map((column, i) => (i === at ? { key: column.key, label: column.label, type: 'formula', formula } : column))
      : [...columns, { key: CANDIDATE, label: '', type: 'formula', formula }];
  const index = at >= 0 ? at : list.length - 1;
  const [issue] = computedColumnIssues(surfaceId, list, [{ index, path: [] }], context);
  if (issue) return { ok: false, error: { message: issue.message, position: issue.position ?? 0 } };
  return { ok: true, resultType: withResultTypes(list)[index]!.resultType as ResultType };
}

type Node = string;
const nodeOf = (surfaceId: string, key: string): Node => `${surfaceId}\u0000${key}`;

function circleIssues(surfaceId: string, columns: readonly ColumnFields[], checked: ReadonlyArray<{ index: number; path: string[] }>, context: SheetContext): TableIssue[] {
  const sheets = new Map<string, readonly ColumnFields[]>();
  const columnsOf = (id: string) => {
    let list = sheets.get(id);
    if (!list) sheets.set(id, (list = id === surfaceId ? columns : context.columnsOf(id)));
    return list;
  };
  const edges = (node: Node): Node[] => {
    const [sheet, key] = node.split('\u0000') as [string, string];
    const list = columnsOf(sheet);
    const column = list.find((candidate) => candidate.key === key);
    if (!column) return [];
    if (column.type === 'formula') return formulaReferences(typeof column.formula === 'string' ? column.formula : '').map((ref) => nodeOf(sheet, ref));
    if (column.type === 'rollup' || column.type === 'lookup') {
      const link = list.find((candidate) => candidate.key === column.link);
      const target = link?.type === 'link' && typeof link.targetSurface === 'string' ? context.tableSurfaceId(link.targetSurface) : null;
      return target !== null && typeof column.field === 'string' ? [nodeOf(target, column.field)] : [];
    }
    return [];
  };
  const issues: TableIssue[] = [];
  for (const { index, path } of checked) {
    const column = columns[index]!;
    const start = nodeOf(surfaceId, column.key);
    const circle = findCircle(start, edges);
    if (!circle) continue;
    const named = circle.map((node) => {
      const [sheet, key] = node.split('\u0000') as [string, string];
      return sheet === surfaceId ? key : `${key} (on ${context.sheetName(sheet)})`;
    });
    const message = `${column.key === CANDIDATE ? 'The formula' : column.key} would depend on itself: ${named.join(' → ')}. A column cannot use a value computed from itself.`;
    issues.push(column.type === 'formula' ? { path: ['formula'], code: 'cycle', message, column: column.key, position: 0 } : { path: [...path, 'field'], code: 'cycle', message });
  }
  return issues;
}

/** A path from `start` back to itself (start first and last), or null. */
function findCircle(start: Node, edges: (node: Node) => Node[]): Node[] | null {
  const visited = new Set<Node>();
  const path: Node[] = [start];
  const visit = (node: Node): boolean => {
    for (const next of edges(node)) {
      if (next === start) {
        path.push(next);
        return true;
      }
      if (visited.has(next)) continue;
      visited.add(next);
      path.push(next);
      if (visit(next)) return true;
      path.pop();
    }
    return false;
  };
  return visit(start) ? path : null;
}

// ---------------------------------------------------------------------------
// Renames

/**
 * The replacement columns with their references following `renames` (old
 * key → new key, of this sheet): formula references, and the `link` of
 * rollups and lookups; also their `field` when their link points at this
 * sheet (`targetsThisSheet`). Applied once, to the columns as given, so two
 * keys can swap.
 */
export function followRenames<T extends ColumnFields>(columns: readonly T[], renames: ReadonlyMap<string, string>, targetsThisSheet: (link: ColumnFields) => boolean): T[] {
  if (renames.size === 0) return columns as T[];
  const links = new Map(columns.map((column) => [column.key, column]));
  return columns.map((column) => {
    if (column.type === 'formula' && typeof column.formula === 'string') {
      const formula = renameReferences(column.formula, renames);
      return formula === column.formula ? column : { ...column, formula };
    }
    if (column.type !== 'rollup' && column.type !== 'lookup') return column;
    const link = typeof column.link === 'string' ? (renames.get(column.link) ?? column.link) : column.link;
    const linkColumn = typeof link === 'string' ? links.get(link) : undefined;
    const field = typeof column.field === 'string' && linkColumn && targetsThisSheet(linkColumn) ? (renames.get(column.field) ?? column.field) : column.field;
    return link === column.link && field === column.field ? column : { ...column, link, field };
  });
}
