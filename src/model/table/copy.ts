/**
 * A table's content in a new document without its history.
 *
 * Yjs cannot drop an overwritten map value: the old item stays as a
 * tombstone in the key's history (gc only drops its content), so every cell
 * edit leaves about 450 bytes of heap behind for good (bench/table-load.ts
 * measures it). A long-lived, heavily edited table therefore grows until
 * its document is rebuilt. Clients holding the old document cannot merge
 * with the new one (it is a different history), so the sync layer can only
 * swap it in when no client is connected, or must make clients reload.
 */
import * as Y from 'yjs';
import { tableIndex, transactTable } from './row-index.js';
import { columnsOf, copyJson, newSheetMap, orderOf, readRowData, rowMapOf, rowsRoot, sheetMapOf, sheetsRoot, type ColumnMap, type RowMap } from './layout.js';
import { suggestionsRoot } from './suggestions.js';
import { viewsRoot } from './views.js';

/**
 * Copies sheets (in id order), their columns (every field, ids included, in
 * array order), placed rows (in position order), saved views and row
 * suggestions (every field, as stored) into `target`, in one transaction. Stray order entries
 * and unplaced row maps are left behind.
 */
export function copyTableToFreshDocument(source: Y.Doc, target: Y.Doc = new Y.Doc(), origin: unknown = 'table-rebuild'): Y.Doc {
  const index = tableIndex(source);
  transactTable(target, origin, () => {
    for (const surfaceId of index.sheetIds) {
      // Set first: a Y.Map reads its fields only once it is in the document.
      sheetsRoot(target).set(surfaceId, newSheetMap());
      const sheet = sheetMapOf(target, surfaceId)!;
      const columns = columnsOf(sheetMapOf(source, surfaceId)!)?.toArray() ?? [];
      columnsOf(sheet)!.insert(0, columns.filter((column) => column instanceof Y.Map).map(copyJsonMap));
      const rowIds = index.rowsBySheet.get(surfaceId)!;
      for (const rowId of rowIds) rowsRoot(target).set(rowId, copyRowMap(rowMapOf(source, rowId)!));
      orderOf(sheet)!.insert(0, rowIds);
    }
    for (const [viewId, view] of viewsRoot(source).entries()) {
      if (view instanceof Y.Map) viewsRoot(target).set(viewId, copyJsonMap(view));
    }
    for (const [suggestionId, entry] of suggestionsRoot(source).entries()) {
      if (entry instanceof Y.Map) suggestionsRoot(target).set(suggestionId, copyJsonMap(entry));
    }
  });
  return target;
}

/** A map of plain JSON fields: a column or a view. */
function copyJsonMap(map: ColumnMap): ColumnMap {
  const copy: ColumnMap = new Y.Map();
  for (const [field, value] of map.entries()) copy.set(field, copyJson(value));
  return copy;
}

function copyRowMap(rowMap: RowMap): RowMap {
  const copy: RowMap = new Y.Map();
  for (const [key, value] of Object.entries(readRowData(rowMap))) copy.set(key, value);
  return copy;
}
