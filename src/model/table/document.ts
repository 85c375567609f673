/**
 * The table document: every table surface of a workspace is a sheet in one
 * Y document, synced as is to websocket peers. This module (with the
 * `table-*.ts` files it re-exports) is the only code that knows the layout;
 * REST routes, the event observer, MCP tools, tests and the web app call
 * these functions and never `doc.getMap('rows')` themselves.
 *
 * Layout (public, documented for sync clients; keep it stable):
 *
 *   rows:   Y.Map<rowId, Y.Map<columnKey, string | number | boolean | null | string[]>>
 *   sheets: Y.Map<surfaceId, Y.Map{
 *             columns: Y.Array<Y.Map<ColumnDef fields: id, key, label, type, position, width?, hidden?, description?, options?, ...>>,
 *             order:   Y.Array<rowId>,
 *           }>
 *
 * A row belongs to the sheet whose `order` lists it, at the index where it
 * is listed; a column's display order is its `position` field. Who created or
 * changed a row, and when, is kept by the server from attributed updates.
 *
 * Conventions:
 * - Writes take the caller's `origin` and run in one `doc.transact`, so the
 *   observer can attribute them and a batch is one update. Called inside a
 *   caller's own transaction they join it (and its origin): that is how a
 *   route makes, say, a cell update and a move atomic.
 * - Writes validate everything first and throw a TableDocumentError before
 *   writing anything.
 * - Reads return plain values (copies), never Y types.
 * - Repairs for what concurrent peers can leave behind (an id listed twice,
 *   an order entry without a row map) are read-time rules, the same on
 *   every peer: the first listing in sheet-id order wins, strays are skipped.
 *
 * For the sync and persistence layers (figures in bench/table-load.ts):
 * store full-state snapshots re-encoded from the live doc, call
 * `compactDecodedContent(doc)` right after applying one, attach the observer
 * (`diffTableTransaction` in `afterTransaction`) after loading, and rebuild a
 * heavily edited table with `copyTableToFreshDocument` while nobody is
 * connected.
 */
export type {
  CellValue,
  ColumnDef,
  ComputedValue,
  ColumnFields,
  ColumnOption,
  ColumnType,
  LookupValue,
  NewColumn,
  ReadRowData,
  ReplacementColumn,
  RowData,
  TableChange,
  TableErrorCode,
  TableIssue,
  TableRow,
} from './types.js';
export { COLUMN_TYPES, TableDocumentError } from './types.js';
export { ensureSheet, listSheetIds, removeSheet } from './sheets.js';
export { addColumn, readColumns, replaceColumns, scaffoldDefaultColumns, seedColumnsFor } from './columns.js';
export {
  countRows,
  deleteRow,
  deleteRowCells,
  getRow,
  insertRow,
  insertRows,
  moveRows,
  rowExists,
  setRowPosition,
  sheetOfExistingRow,
  updateRowCells,
  updateRows,
  type MoveResult,
  type NewRow,
  type RowUpdate,
} from './rows.js';
export { listRows, type ListRowsOptions, type RowPage } from './list.js';
export { diffTableTransaction, sheetsOfRowCreations, transactionChanges } from './changes.js';
export { normalizeAttachmentCells, normalizeLinkCells, validateCellValues, type CellValidationOptions } from './validation.js';
export { dropLinksTo, dropLinksToDeleted, holdsLinksTo, linkIdsOf } from './links.js';
export { linkColumnIssues, lookupText, rowTitle, sheetOfRow, visibleLinks, type LinkColumnContext } from './link-reads.js';
export { CellReading, openReading, rowAsRead, rowsAsRead, sheetColumns, type ReadCell, type ReadOptions } from './computed.js';
export { columnsAfterReplacement, type ReplaceColumnsOptions } from './columns.js';
export { computedColumnIssues, isComputedColumn, tryFormula, type FormulaTry, type SheetContext } from './computed-columns.js';
export { compactDecodedContent } from './memory.js';
export { copyTableToFreshDocument } from './copy.js';
export { createTableId } from './ids.js';
