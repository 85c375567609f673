/**
 * The grid's view of a table document. The Y layout is known only to the
 * server's `src/model/table/*.ts` modules (browser-safe: Yjs and Web Crypto
 * only), so the web app calls the same functions the REST routes call and a
 * change made here is exactly what a REST write would make. Nothing else in
 * the web app imports those modules.
 */
import * as Y from 'yjs';
import {
  CellReading,
  addColumn,
  createTableId,
  deleteRow,
  ensureSheet,
  insertRow,
  moveRows,
  readColumns,
  isComputedColumn,
  openReading,
  tryFormula,
  type FormulaTry,
  replaceColumns,
  rowTitle,
  setRowPosition,
  sheetOfRow,
  updateRowCells,
  type CellValue,
  type ColumnDef,
  type ColumnOption,
  type ColumnType,
  type ComputedValue,
  type LookupValue,
  type ReadRowData,
  type RowData,
} from '../../../src/model/table/document';
import { tableIndex } from '../../../src/model/table/row-index';
import { readRowData, rowMapOf, rowsRoot, sheetsRoot } from '../../../src/model/table/layout';
import { isAbsoluteWebUrl, isIsoDateOrDateTime } from '../../../src/model/table/validation';
import { createView, deleteView, getView, listViews, updateView, type RowHeight, type ViewDef, type ViewFields, type ViewKind, type ViewPatch } from '../../../src/model/table/views';
import { addRowSuggestion, editRowSuggestion, removeRowSuggestion, rowSuggestionEntries, existingSuggestionsRoot, type RowSuggestionEntry, type SuggestionPerson } from '../../../src/model/table/suggestions';
import {
  checkRowQuery,
  compareSortValues,
  compileRowQuery,
  filterColumnKeys,
  sortValueOf,
  OPS_BY_TYPE,
  type CompiledRowQuery,
  type FilterCondition,
  type FilterGroupInner,
  type FilterOp,
  type FilterValue,
  type RowFilter,
  type SortKey,
  type SortValue,
} from '../../../src/model/table/query';

export type { CellValue, ColumnDef, ColumnOption, ColumnType, ComputedValue, LookupValue, ReadRowData, RowData };
export type { RowHeight, ViewDef, ViewFields, ViewKind, ViewPatch };
export type { RowSuggestionEntry, SuggestionPerson };

/** A sheet's open row suggestions as the grid shows them: beside the rows they change, and new rows after the others. */
export interface SheetSuggestions {
  /** Update and delete suggestions by row id, oldest first. */
  byRow: ReadonlyMap<string, RowSuggestionEntry[]>;
  /** Suggested new rows, oldest first. */
  created: RowSuggestionEntry[];
  /** Bumped when the suggestions change: a row re-renders on it. */
  key: string;
}
export type { FilterCondition, FilterGroupInner, FilterOp, FilterValue, RowFilter, SortKey };
export { OPS_BY_TYPE };
export { COLUMN_TYPES, lookupText } from '../../../src/model/table/document';

/** A cell as the grid shows it: stored, or computed and read-only (a lookup's values, a formula's or rollup's value or error). */
export type ShownValue = CellValue | LookupValue | ComputedValue;

/** Column types made with what they point at (the add-column dialog asks), not by switching a column's type. */
export const LINKING_TYPES: ReadonlySet<ColumnType> = new Set(['link', 'lookup', 'rollup', 'formula']);
export { isComputedColumn };
export type { FormulaTry };

/** The workspace's table surfaces as the formula checks need them (slugs lead to sheets, a sheet is named by its slug). */
export interface SheetDirectory {
  idOf(slug: string): string | null;
  ids(): string[];
  nameOf(surfaceId: string): string;
}
export { isAbsoluteWebUrl, isIsoDateOrDateTime };

/** Origin of this tab's own writes (the provider sends every transaction not made by itself). */
const LOCAL = { source: 'web' };

export class TableModel {
  /**
   * What a view reads of each row, kept between changes: a filtered, sorted
   * view is re-derived after every change anyone makes, and re-reading and
   * re-testing all of a 50,000-row sheet each time is most of the work.
   * Entries of the rows a transaction touched are dropped as it ends. This
   * keeps each row's verdict and sort values, one level above the server's
   * kept cell vectors (row-index.ts `cellVector`): reading those, a view of
   * 50,000 rows re-derived after a one-cell edit took 2 to 4 times longer.
   */
  private readonly rowData = new Map<string, RowData | null>();
  private viewQuery: { key: string; query: CompiledRowQuery; matches: Map<string, boolean>; sortValues: Map<string, SortValue[]> } | null = null;

  private readonly columnCache = new Map<string, ColumnDef[]>();
  private currentReading: CellReading | null = null;

  /** Every entry of the suggestions root, read again only after a transaction that touched it. */
  private suggestionCache: RowSuggestionEntry[] | null = null;
  private suggestionVersion = 0;

  constructor(readonly doc: Y.Doc) {
    doc.on('afterTransaction', (transaction: Y.Transaction) => this.forgetChangedRows(transaction));
    doc.on('afterTransaction', (transaction: Y.Transaction) => this.forgetSuggestions(transaction));
    // Every row read resolves its links against its sheet's columns: read them once per change, not once per row.
    doc.on('afterTransaction', () => {
      this.columnCache.clear();
      this.currentReading = null;
    });
  }

  private forgetChangedRows(transaction: Y.Transaction): void {
    if (this.rowData.size === 0 && !this.viewQuery) return;
    const rows: Y.AbstractType<any> = rowsRoot(this.doc);
    const forget = (rowId: string) => {
      this.rowData.delete(rowId);
      this.viewQuery?.matches.delete(rowId);
      this.viewQuery?.sortValues.delete(rowId);
    };
    for (const [type, keys] of transaction.changed) {
      if (type === rows) {
        for (const key of keys) if (key !== null) forget(key);
        continue;
      }
      // A cell lives in its row's map (or below it): walk up to the map the rows root holds.
      let item = type._item;
      while (item && item.parent !== rows) item = (item.parent as Y.AbstractType<unknown>)._item;
      if (item?.parentSub) forget(item.parentSub);
    }
  }

  private forgetSuggestions(transaction: Y.Transaction): void {
    const root = existingSuggestionsRoot(this.doc);
    if (!root) return;
    for (const type of transaction.changed.keys()) {
      // An entry is a map in the root; its fields are set in that map.
      let top: Y.AbstractType<any> = type;
      while (top._item && top._item.parent instanceof Y.AbstractType) top = top._item.parent;
      if (top === root) {
        this.suggestionCache = null;
        this.suggestionVersion++;
        return;
      }
    }
  }

  /**
   * The sheet's open row suggestions (docs/SUGGESTIONS.md "Tables"), live: a
   * peer's or an agent's appear as they arrive. A row's list puts `mine`
   * (the viewer's own) first, so what they suggest is what they see.
   */
  suggestions(surfaceId: string, mine?: string): SheetSuggestions {
    this.suggestionCache ??= rowSuggestionEntries(this.doc);
    const byRow = new Map<string, RowSuggestionEntry[]>();
    const created: RowSuggestionEntry[] = [];
    for (const entry of this.suggestionCache) {
      if (entry.status !== 'open' || entry.sheetId !== surfaceId) continue;
      if (entry.kind === 'create') {
        if (!rowMapOf(this.doc, entry.rowId)) created.push(entry);
        continue;
      }
      const list = byRow.get(entry.rowId);
      if (list) list.push(entry);
      else byRow.set(entry.rowId, [entry]);
    }
    if (mine !== undefined) for (const list of byRow.values()) list.sort((a, b) => Number(b.author.id === mine) - Number(a.author.id === mine));
    return { byRow, created, key: String(this.suggestionVersion) };
  }

  /**
   * Suggests a cell value instead of writing it (a commenter's grid): the
   * author's open update of the row takes the cell, or a new one is made;
   * the cell as it is now is kept as its base. Lookup cells are computed,
   * never suggested.
   */
  suggestCell(rowId: string, key: string, value: CellValue, me: SuggestionPerson): void {
    const surfaceId = sheetOfRow(this.doc, rowId);
    const map = rowMapOf(this.doc, rowId);
    if (surfaceId === null || !map || this.cachedColumns(surfaceId).some((column) => column.key === key && isComputedColumn(column))) return;
    const now = readRowData(map)[key] ?? null;
    const own = rowSuggestionEntries(this.doc).find((entry) => entry.status === 'open' && entry.kind === 'update' && entry.rowId === rowId && entry.author.id === me.id);
    if (own) {
      const base = own.base && Object.hasOwn(own.base, key) ? own.base : { ...own.base, [key]: now };
      editRowSuggestion(this.doc, own.id, { ...own.values, [key]: value }, base, LOCAL);
      return;
    }
    addRowSuggestion(this.doc, { ...this.stamp(me), kind: 'update', sheetId: surfaceId, rowId, values: { [key]: value }, base: { [key]: now } }, LOCAL);
  }

  /** Suggests a new row at the sheet's tail with `data`. */
  suggestRow(surfaceId: string, data: RowData, me: SuggestionPerson): void {
    addRowSuggestion(this.doc, { ...this.stamp(me), kind: 'create', sheetId: surfaceId, rowId: createTableId(), values: data }, LOCAL);
  }

  /** Suggests deleting the row. */
  suggestDelete(rowId: string, me: SuggestionPerson): void {
    const surfaceId = sheetOfRow(this.doc, rowId);
    const map = rowMapOf(this.doc, rowId);
    if (surfaceId === null || !map) return;
    addRowSuggestion(this.doc, { ...this.stamp(me), kind: 'delete', sheetId: surfaceId, rowId, base: readRowData(map) }, LOCAL);
  }

  /** Takes back one of one's own open suggestions. */
  withdrawSuggestion(id: string): void {
    removeRowSuggestion(this.doc, id, LOCAL);
  }

  private stamp(me: SuggestionPerson): Pick<RowSuggestionEntry, 'id' | 'author' | 'at' | 'status'> {
    return { id: `sug_${createTableId(16)}`, author: me, at: new Date().toISOString(), status: 'open' };
  }

  /** The row's stored cells (links as ids, no lookups: those change with other rows, which would not drop this entry). */
  private cachedRow(rowId: string): RowData | null {
    let data = this.rowData.get(rowId);
    if (data === undefined) {
      const map = rowMapOf(this.doc, rowId);
      this.rowData.set(rowId, (data = map ? readRowData(map) : null));
    }
    return data;
  }

  /** Row ids of a sheet in display order. The array is cached until the next change: do not mutate it. */
  rowIds(surfaceId: string): readonly string[] {
    return tableIndex(this.doc).rowsBySheet.get(surfaceId) ?? [];
  }

  rowCount(surfaceId: string): number {
    return this.rowIds(surfaceId).length;
  }

  /**
   * The row's cells as shown, or null when it is gone (deleted by a peer a
   * moment ago): link cells hold the ids of rows that exist, lookup cells
   * the linked rows' values (the same rules as REST: src/model/table/link-reads.ts).
   */
  row(rowId: string): ReadRowData | null {
    const map = rowMapOf(this.doc, rowId);
    if (!map) return null;
    const surfaceId = sheetOfRow(this.doc, rowId);
    const data = readRowData(map);
    return surfaceId === null ? data : this.reading().row(rowId, surfaceId, data);
  }

  /**
   * How this tab reads computed cells (lookups, formulas, rollups), the same
   * code as the server's: one reading per change, so a render computes each
   * cell once at one moment (TODAY() and NOW() are read when the table last
   * changed, or at the last `refreshClock`), in the workspace's time zone,
   * which the table document holds.
   */
  reading(): CellReading {
    this.currentReading ??= openReading(this.doc, { now: Date.now() });
    return this.currentReading;
  }

  /** Reads TODAY() and NOW() afresh at the next render. */
  refreshClock(): void {
    this.currentReading = null;
  }

  /** How a row reads in a link: its first column's text. */
  title(rowId: string): string {
    const surfaceId = sheetOfRow(this.doc, rowId);
    return surfaceId === null ? '' : rowTitle(this.doc, rowId, this.cachedColumns(surfaceId));
  }

  columns(surfaceId: string): ColumnDef[] {
    return readColumns(this.doc, surfaceId);
  }

  private cachedColumns(surfaceId: string): ColumnDef[] {
    let columns = this.columnCache.get(surfaceId);
    if (!columns) this.columnCache.set(surfaceId, (columns = readColumns(this.doc, surfaceId)));
    return columns;
  }

  hasSheet(surfaceId: string): boolean {
    return tableIndex(this.doc).rowsBySheet.has(surfaceId);
  }

  /** Calls `listener` after every change to the table, local or remote. */
  onChange(listener: (transaction: Y.Transaction) => void): () => void {
    this.doc.on('afterTransaction', listener);
    return () => this.doc.off('afterTransaction', listener);
  }

  setCell(rowId: string, key: string, value: CellValue): void {
    const surfaceId = sheetOfRow(this.doc, rowId);
    // A lookup, formula or rollup is computed: there is nothing to write (clearing the cell with Delete lands here).
    if (surfaceId !== null && this.cachedColumns(surfaceId).some((column) => column.key === key && isComputedColumn(column))) return;
    updateRowCells(this.doc, rowId, { [key]: value }, LOCAL);
  }

  /** Several cells of a row in one change (a calendar item moved: its start and end together). */
  setCells(rowId: string, data: Record<string, CellValue>): void {
    updateRowCells(this.doc, rowId, data, LOCAL);
  }

  /** Adds an empty row (or one with `data`) at `position`, the tail by default; returns its id. */
  addRow(surfaceId: string, data: RowData = {}, position?: number): string {
    ensureSheet(this.doc, surfaceId, LOCAL);
    const id = createTableId();
    insertRow(this.doc, { id, surfaceId, data, position }, LOCAL);
    return id;
  }

  deleteRow(rowId: string): void {
    deleteRow(this.doc, rowId, LOCAL);
  }

  moveRowToSheet(rowId: string, surfaceId: string): void {
    ensureSheet(this.doc, surfaceId, LOCAL);
    moveRows(this.doc, [rowId], surfaceId, LOCAL);
  }

  moveRowTo(rowId: string, position: number): void {
    setRowPosition(this.doc, rowId, position, LOCAL);
  }

  /**
   * Adds a column after the others, with a key made from its label (unique
   * in the sheet). A link column names its target table surface by slug, a
   * lookup its link column and the target's field (as over REST).
   */
  addColumn(surfaceId: string, column: { label: string; type: ColumnType; options?: ColumnOption[]; targetSurface?: string; link?: string; field?: string; formula?: string; fn?: string }): ColumnDef {
    const taken = new Set(this.columns(surfaceId).map((c) => c.key));
    const base = keyFromLabel(column.label);
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
    const options = column.options ?? (column.type === 'status' ? DEFAULT_STATUS_OPTIONS : column.type === 'select' ? [] : undefined);
    const pointers =
      column.type === 'link'
        ? { targetSurface: column.targetSurface }
        : column.type === 'lookup'
          ? { link: column.link, field: column.field }
          : column.type === 'rollup'
            ? { link: column.link, field: column.field, fn: column.fn }
            : column.type === 'formula'
              ? { formula: column.formula }
              : {};
    return addColumn(this.doc, surfaceId, withoutUndefined({ key, label: column.label, type: column.type, ...(options ? { options } : {}), ...pointers }), LOCAL);
  }

  /**
   * Tries a formula on the sheet as it is here (offline too), with the same
   * checks as a column write over REST: as the formula of `columnKey` when
   * given, else of a new column (docs/FORMULAS.md).
   */
  tryFormula(surfaceId: string, formula: string, sheets: SheetDirectory, columnKey?: string): FormulaTry {
    const columns = this.columns(surfaceId);
    return tryFormula(surfaceId, columns, formula, {
      tableSurfaceId: (slug) => sheets.idOf(slug),
      columnsOf: (id) => (id === surfaceId ? columns : this.columns(id)),
      sheetIds: () => sheets.ids(),
      sheetName: (id) => sheets.nameOf(id),
    }, columnKey);
  }

  /** Changes one column's fields (label, type, hidden, width, options); the key and id stay. */
  updateColumn(surfaceId: string, columnId: string, patch: Partial<Omit<ColumnDef, 'id' | 'key' | 'position'>>): void {
    const columns = this.columns(surfaceId).map((column) => (column.id === columnId ? withoutUndefined({ ...column, ...patch }) : column));
    replaceColumns(this.doc, surfaceId, columns, LOCAL);
  }

  /** Moves a column to a display position; the others keep their relative order. */
  moveColumn(surfaceId: string, columnId: string, toPosition: number): void {
    const columns = this.columns(surfaceId);
    const from = columns.findIndex((column) => column.id === columnId);
    if (from < 0) return;
    const [moved] = columns.splice(from, 1);
    columns.splice(Math.max(0, Math.min(toPosition, columns.length)), 0, moved!);
    replaceColumns(this.doc, surfaceId, columns.map((column, position) => ({ ...column, position })), LOCAL);
  }

  /** Removes a column from the sheet; its cells stay in the rows (as the REST replacement does). */
  removeColumn(surfaceId: string, columnId: string): void {
    const columns = this.columns(surfaceId).filter((column) => column.id !== columnId);
    replaceColumns(this.doc, surfaceId, columns.map((column, position) => ({ ...column, position })), LOCAL);
  }

  /** The sheet's saved views in display order (they live in this document, so they sync and work offline like rows). */
  views(surfaceId: string): ViewDef[] {
    return listViews(this.doc, surfaceId);
  }

  createView(surfaceId: string, fields: Partial<ViewFields> & { name: string }): ViewDef {
    ensureSheet(this.doc, surfaceId, LOCAL);
    return createView(this.doc, surfaceId, fields, LOCAL);
  }

  /** One view as the document holds it now (a handler that writes after another reads this, not what its render saw). */
  view(viewId: string): ViewDef | null {
    return getView(this.doc, viewId);
  }

  updateView(viewId: string, patch: ViewPatch): void {
    updateView(this.doc, viewId, patch, LOCAL);
  }

  deleteView(viewId: string): void {
    deleteView(this.doc, viewId, LOCAL);
  }

  /**
   * The rows a view shows, in its order: the sheet's rows kept by its filter
   * (conditions the sheet can no longer answer, such as one on a deleted
   * column, are left out rather than hiding everything), then sorted by its
   * keys with the sheet's order breaking ties. `keep` rows are shown even
   * when they do not match (a row just added here, still empty).
   */
  rowsOfView(surfaceId: string, view: Pick<ViewDef, 'filter' | 'sort'>, keep: ReadonlySet<string> = new Set()): { rowIds: string[]; ignored: number } {
    const columns = this.columns(surfaceId);
    const { filter, ignored } = answerableFilter(columns, view.filter);
    const sort = view.sort.filter((key) => columns.some((column) => column.key === key.column));
    const ids = this.rowIds(surfaceId);
    if (!filter && sort.length === 0) return { rowIds: [...ids], ignored };
    const key = JSON.stringify([filter, sort, columns.map((column) => [column.key, column.type, column.options, column.resultType])]);
    if (this.viewQuery?.key !== key) this.viewQuery = { key, query: compileRowQuery(columns, { filter, sort }), matches: new Map(), sortValues: new Map() };
    const { query } = this.viewQuery;
    // Computed cells change with other rows and the clock, which would not drop what is kept per row: read them afresh (the reading keeps them).
    const computed = new Set(columns.filter(isComputedColumn).map((column) => column.key));
    const usesComputed = [...sort.map((key) => key.column), ...filterColumnKeys(filter)].some((column) => computed.has(column));
    const { matches, sortValues } = usesComputed ? { matches: new Map<string, boolean>(), sortValues: new Map<string, SortValue[]>() } : this.viewQuery;
    const reading = this.reading();
    const rows: Array<{ id: string; values: SortValue[]; index: number }> = [];
    ids.forEach((id, index) => {
      const data = this.cachedRow(id);
      if (!data) return;
      const cell = (column: string) => (computed.has(column) ? reading.cell(id, column) : Object.hasOwn(data, column) ? data[column] : undefined);
      let match = matches.get(id);
      if (match === undefined) matches.set(id, (match = filter ? query.matches(cell) : true));
      if (!match && !keep.has(id)) return;
      let values = sortValues.get(id);
      if (!values) sortValues.set(id, (values = sort.map((key) => sortValueOf(cell(key.column)))));
      rows.push({ id, values, index });
    });
    // The order the server sorts `GET /rows?view=` in (sortValueOf and compareSortValues, as compileRowQuery compares), with each
    // row's values worked out once rather than at every comparison; the sheet's order breaks ties.
    const directions = sort.map((key) => (key.direction === 'desc' ? -1 : 1) as 1 | -1);
    const compare = (a: SortValue[], b: SortValue[]) => {
      for (let i = 0; i < directions.length; i++) {
        const order = compareSortValues(a[i]!, b[i]!, directions[i]!);
        if (order !== 0) return order;
      }
      return 0;
    };
    if (sort.length) rows.sort((a, b) => compare(a.values, b.values) || a.index - b.index);
    return { rowIds: rows.map((row) => row.id), ignored };
  }

  /** Undo and redo of this tab's own table edits (peers' edits are never undone). */
  createUndoManager(): Y.UndoManager {
    return new Y.UndoManager([rowsRoot(this.doc), sheetsRoot(this.doc)], { trackedOrigins: new Set([LOCAL]), captureTimeout: 400 });
  }
}

/** Whether one condition is complete and valid for the sheet's columns (the builder saves only those). */
export function isAnswerable(columns: ColumnDef[], condition: FilterCondition | FilterGroupInner): boolean {
  return checkRowQuery(columns, { filter: { and: [condition] } }).length === 0;
}

function answerableFilter(columns: ColumnDef[], filter: RowFilter | null): { filter: RowFilter | null; ignored: number } {
  if (!filter) return { filter: null, ignored: 0 };
  let ignored = 0;
  const kept: RowFilter = {};
  for (const group of ['and', 'or'] as const) {
    const items = filter[group];
    if (!items) continue;
    const answerable = items.filter((item) => isAnswerable(columns, item));
    ignored += items.length - answerable.length;
    if (answerable.length) kept[group] = answerable;
  }
  return { filter: kept.and || kept.or ? kept : null, ignored };
}

const DEFAULT_STATUS_OPTIONS: ColumnOption[] = [
  { value: 'todo', label: 'To do', color: 'gray' },
  { value: 'doing', label: 'Doing', color: 'blue' },
  { value: 'done', label: 'Done', color: 'green' },
];

export function keyFromLabel(label: string): string {
  const key = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  return key || 'column';
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
