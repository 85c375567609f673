/**
 * Links as readers see them (docs/TABLES.md "Linked rows"), the same for REST, MCP
 * and the web app: a link cell shows only rows that exist and the reader may
 * see, and a row's title is its value in the first column of its sheet.
 * Lookup cells are computed with formulas and rollups (computed.ts).
 */
import type * as Y from 'yjs';
import { readColumns } from './columns.js';
import { linkIdsOf } from './links.js';
import { rowMapOf } from './layout.js';
import { tableIndex } from './row-index.js';
import type { ColumnDef, ColumnFields, LookupValue, TableIssue } from './types.js';

/** The linked ids a reader sees: rows that exist (wherever they are now) and are not hidden from the reader. */
export function visibleLinks(doc: Y.Doc, value: unknown, hidden?: ReadonlySet<string>): string[] {
  const placements = tableIndex(doc).placements;
  return linkIdsOf(value).filter((id) => placements.has(id) && !hidden?.has(id));
}

/** The sheet a row is on, or null when it is no row. */
export function sheetOfRow(doc: Y.Doc, rowId: string): string | null {
  return tableIndex(doc).placements.get(rowId)?.surfaceId ?? null;
}

/** How a row reads in a link: its value in the first column (by position) of the sheet it is on now, as text; '' when it has none. */
export function rowTitle(doc: Y.Doc, rowId: string, columns?: readonly ColumnDef[]): string {
  const surfaceId = sheetOfRow(doc, rowId);
  const rowMap = rowMapOf(doc, rowId);
  if (surfaceId === null || !rowMap) return '';
  const first = (columns ?? readColumns(doc, surfaceId))[0];
  const value: unknown = first ? rowMap.get(first.key) : undefined;
  if (value === undefined || value === null) return '';
  return Array.isArray(value) ? value.join(', ') : typeof value === 'object' ? '' : String(value);
}

/** A lookup value as one line of text (the web app's cells, CSV); an error among the values shows its code. */
export function lookupText(value: LookupValue): string {
  return value
    .map((item) => (item === null ? '' : Array.isArray(item) ? item.join(', ') : typeof item === 'object' ? item.error : String(item)))
    .filter((text) => text !== '')
    .join(', ');
}

// ---------------------------------------------------------------------------
// Column definitions

export interface LinkColumnContext {
  /** The surface id of a table surface of the workspace by slug, or null. */
  tableSurfaceId(slug: string): string | null;
  /** The columns of a sheet (the lookup's field is checked against the target's). */
  columnsOf(surfaceId: string): readonly ColumnFields[];
}

/**
 * What is wrong with the link and lookup columns of a sheet's column list
 * (`columns` is the whole list after the change; `checked` the indexes to
 * check, each reported under `[...path, index]`): a link names a table
 * surface of the workspace, a lookup a link column of the same list and a
 * column of that link's target sheet.
 */
export function linkColumnIssues(columns: readonly ColumnFields[], checked: ReadonlyArray<{ index: number; path: string[] }>, context: LinkColumnContext): TableIssue[] {
  const issues: TableIssue[] = [];
  const byKey = new Map(columns.map((column) => [column.key, column]));
  for (const { index, path } of checked) {
    const column = columns[index]!;
    if (column.type === 'link') {
      if (typeof column.targetSurface !== 'string' || context.tableSurfaceId(column.targetSurface) === null) {
        issues.push({ path: [...path, 'targetSurface'], code: 'unknown_surface', message: `A link column names the slug of a table surface of this workspace in targetSurface; got ${JSON.stringify(column.targetSurface ?? null)}.` });
      }
    } else if (column.type === 'lookup') {
      const link = typeof column.link === 'string' ? byKey.get(column.link) : undefined;
      if (!link || link.type !== 'link') {
        issues.push({ path: [...path, 'link'], code: 'unknown_link', message: `A lookup column names a link column of the same sheet in link; got ${JSON.stringify(column.link ?? null)}.` });
        continue;
      }
      const target = typeof link.targetSurface === 'string' ? context.tableSurfaceId(link.targetSurface) : null;
      if (target === null) continue; // reported on the link column, or the link column is not being changed and its target is gone
      const field = context.columnsOf(target).find((candidate) => candidate.key === column.field);
      if (!field || field.type === 'lookup') {
        issues.push({
          path: [...path, 'field'],
          code: 'unknown_field',
          message: `A lookup column names a column (not a lookup) of the link's target surface "${link.targetSurface}" in field; got ${JSON.stringify(column.field ?? null)}.`,
        });
      }
    }
  }
  return issues;
}
