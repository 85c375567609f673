/**
 * Link cells kept valid when rows go (docs/TABLES.md "Linked rows"). A `link`
 * column's cell holds the ids of rows, usually of another sheet; every sheet
 * is in this one document, so a row keeps its id when it moves and a link to
 * it survives the move. A deleted row leaves every link cell that held it in
 * the same transaction as the delete (`deleteRow` and `removeSheet` call
 * `dropLinksToDeleted`), so the change is one update attributed to whoever deleted.
 *
 * This file knows only the layout and the index: `rows.ts` and `sheets.ts`
 * call it, and `columns.ts` imports `sheets.ts`, so reading the columns
 * through `readColumns` here would be an import circle.
 */
import * as Y from 'yjs';
import { tableIndex } from './row-index.js';
import { canonicalSheetIds, columnsOf, rowMapOf, sheetMapOf, type RowMap } from './layout.js';

/** Keys of the sheet's link columns, read off the column maps. */
export function linkColumnKeys(doc: Y.Doc, surfaceId: string): string[] {
  const sheet = sheetMapOf(doc, surfaceId);
  const columns = sheet ? columnsOf(sheet) : null;
  if (!columns) return [];
  const keys: string[] = [];
  columns.forEach((map) => {
    if (map instanceof Y.Map && map.get('type') === 'link' && typeof map.get('key') === 'string') keys.push(map.get('key') as string);
  });
  return keys;
}

/**
 * The ids a link cell holds, whatever a peer stored there: a string is one
 * id, an array keeps its non-empty strings once each, anything else holds none.
 */
export function linkIdsOf(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

type LinkCell = { rowMap: RowMap; key: string; kept: string[] };

/** Link cells that hold an id `isGone` says is gone, with the ids each keeps; rows in `skip` are not looked at. */
function cellsLinkingTo(doc: Y.Doc, isGone: (id: string) => boolean, skip: ReadonlySet<string>): LinkCell[] {
  // Before the index: a table without link columns (most) costs a delete no pass over its rows.
  const linking = canonicalSheetIds(doc)
    .map((surfaceId) => ({ surfaceId, keys: linkColumnKeys(doc, surfaceId) }))
    .filter((sheet) => sheet.keys.length > 0);
  if (linking.length === 0) return [];
  const index = tableIndex(doc);
  const cells: LinkCell[] = [];
  for (const { surfaceId, keys } of linking) {
    for (const rowId of index.rowsBySheet.get(surfaceId) ?? []) {
      const rowMap = skip.has(rowId) ? null : rowMapOf(doc, rowId);
      if (!rowMap) continue;
      for (const key of keys) {
        if (!rowMap.has(key)) continue;
        const value: unknown = rowMap.get(key);
        const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
        if (ids.some((id) => typeof id === 'string' && isGone(id))) cells.push({ rowMap, key, kept: linkIdsOf(ids).filter((id) => !isGone(id)) });
      }
    }
  }
  return cells;
}

/**
 * Takes rows about to be deleted out of every link cell holding them. Call
 * it inside the deleting transaction, before the delete: the index still
 * places every other row, so no rebuild of it is needed (deleting a row of
 * a 50,000-row table would otherwise cost two). Each cell it rewrites is a
 * `row.updated` of that row naming the link column.
 */
export function dropLinksToDeleted(doc: Y.Doc, deleted: Iterable<string>): void {
  const gone = new Set(deleted);
  if (gone.size === 0) return;
  for (const { rowMap, key, kept } of cellsLinkingTo(doc, (id) => gone.has(id), gone)) rowMap.set(key, kept);
}

/**
 * Takes ids of rows that no longer exist out of every link cell holding
 * them: the server's follow-up to a delete a sync peer made without
 * `dropLinksToDeleted`. Returns how many cells it rewrote.
 */
export function dropLinksTo(doc: Y.Doc, gone: Iterable<string>): number {
  const cells = danglingCells(doc, new Set(gone));
  for (const { rowMap, key, kept } of cells) rowMap.set(key, kept);
  return cells.length;
}

/** Whether a link cell still holds one of `gone` while it is no row: a delete made without `dropLinksToDeleted` (a sync peer's own code). */
export function holdsLinksTo(doc: Y.Doc, gone: Iterable<string>): boolean {
  return danglingCells(doc, new Set(gone)).length > 0;
}

function danglingCells(doc: Y.Doc, gone: ReadonlySet<string>): LinkCell[] {
  if (gone.size === 0) return [];
  const placements = tableIndex(doc).placements;
  const isGone = (id: string) => gone.has(id) && !placements.has(id);
  return [...gone].some(isGone) ? cellsLinkingTo(doc, isGone, new Set()) : [];
}
