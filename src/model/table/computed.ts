/**
 * Cells computed on read (docs/FORMULAS.md, docs/TABLES.md "Linked rows"):
 * lookups, formulas and rollups, the same for REST, MCP, sync clients and
 * the web app. A read opens a `CellReading` with one clock (the moment of
 * the read and a time zone, for TODAY() and NOW()) and the rows the reader
 * may not see (a link, a lookup and a rollup never show them).
 *
 * Values are kept per document in memory, per column and row, and dropped
 * precisely: a transaction that changes a row drops that row's values and
 * those of every row linking to it (through a reverse index of link cells),
 * and so on up the links; a change to any sheet's columns drops them all.
 * Values that read the clock are kept only for the read that made them, and
 * nothing is kept while the reader has rows hidden or a transaction is open
 * (later writes in it would not have dropped them yet).
 */
import * as Y from 'yjs';
import { readColumns } from './columns.js';
import { transactionChanges } from './changes.js';
import { COLUMNS_FIELD, canonicalSheetIds, existingRoots, readRowData, rowMapOf } from './layout.js';
import { linkColumnKeys, linkIdsOf } from './links.js';
import { rowTitle, visibleLinks } from './link-reads.js';
import { tableIndex, whenTableCachesForgotten } from './row-index.js';
import { tableTimeZone } from './settings.js';
import { cellValue, presentValue, storedValue, type ComputedCell } from './formulas/cells.js';
import { compiledFormula, runFormula } from './formulas/compile.js';
import { today } from './formulas/dates.js';
import type { FormulaEnvironment } from './formulas/functions.js';
import { isRollupFunction, rollUp, ROLLUPS } from './formulas/rollups.js';
import { FormulaError, type ResultType, type Value } from './formulas/values.js';
import type { CellValue, ColumnDef, LookupValue, ReadRowData, RowData } from './types.js';

export interface ReadOptions {
  /** Rows the reader may not see (held by the row cap: src/sync/table-passed.ts): links, lookups and rollups never show them. */
  hidden?: ReadonlySet<string>;
  /** The moment of the read, in milliseconds (now by default): what TODAY() and NOW() give. */
  now?: number;
  /** The IANA time zone TODAY() and dates are read in: the workspace's (settings.ts `tableTimeZone`) by default. */
  timeZone?: string;
}

/** A cell as a reader sees it: stored, or computed (a lookup's list, a formula's or rollup's value or error). */
export type ReadCell = CellValue | LookupValue | ComputedCell | undefined;

interface SheetPlan {
  columns: readonly ColumnDef[];
  byKey: Map<string, ColumnDef>;
  /** Link columns: a read shows only the linked rows the reader may see. */
  links: ColumnDef[];
  computed: ColumnDef[];
}

/** A computed cell kept for later reads. */
interface Entry {
  value: Value;
  cell: ReadCell;
  /**
   * Null when it does not read the clock; else the day (`day:2026-07-04`,
   * TODAY) or the moment (`moment:<ms>`, NOW) it holds for.
   */
  stamp: string | null;
  /** Readings of the cell kept with it: its sort value, and one filter reading. */
  sortValue?: unknown;
  readingName?: string;
  readingValue?: unknown;
}

function isComputed(column: ColumnDef): boolean {
  return column.type === 'lookup' || column.type === 'formula' || column.type === 'rollup';
}

/** What the values depend on in the columns of every sheet: keys and their order, types and what computed columns name (not labels, widths, options). */
function columnSignature(doc: Y.Doc): string {
  return JSON.stringify(canonicalSheetIds(doc).map((surfaceId) => [surfaceId, readColumns(doc, surfaceId).map((c) => [c.key, c.type, c.formula, c.link, c.field, c.fn])]));
}

class Engine {
  readonly plans = new Map<string, SheetPlan>();
  /** Per column key, per row id. */
  readonly values = new Map<string, Map<string, Entry>>();
  timeZone = 'UTC';
  /** The columns the kept values were computed with; null when a column change has not been compared yet. */
  private signature: string | null = null;
  /** Row id → rows whose link cells name it; null until something is kept. */
  private linkers: Map<string, Set<string>> | null = null;
  private linked: Map<string, string[]> | null = null;

  constructor(private readonly doc: Y.Doc) {
    // The row index drops its own cache first, in the same hook: ours reads placements.
    tableIndex(doc);
    doc.on('beforeObserverCalls', (transaction: Y.Transaction) => this.forgetChanged(transaction));
    whenTableCachesForgotten(doc, () => this.forgetAll());
  }

  /** The document's state was replaced wholesale (row-index.ts `forgetTableCaches`). */
  private forgetAll(): void {
    this.plans.clear();
    this.values.clear();
    this.signature = null;
    this.linkers = null;
    this.linked = null;
  }

  plan(surfaceId: string): SheetPlan {
    // Plans are dropped when a transaction that changed columns ends: inside one, they may be older than its changes.
    const open = this.doc._transaction;
    if (open !== null && changesColumns(open)) return planOf(readColumns(this.doc, surfaceId));
    let plan = this.plans.get(surfaceId);
    if (!plan) {
      plan = planOf(readColumns(this.doc, surfaceId));
      this.plans.set(surfaceId, plan);
    }
    return plan;
  }

  /** Before a read: values computed in another time zone, or with columns that changed in what they compute, are dropped. */
  prepare(timeZone: string): void {
    if (this.timeZone !== timeZone) {
      this.values.clear();
      this.timeZone = timeZone;
    }
    if (this.signature === null) {
      const signature = columnSignature(this.doc);
      if (this.values.size > 0 && this.keptSignature !== signature) this.values.clear();
      this.signature = signature;
    }
  }

  /** The signature the kept values were computed with. */
  private keptSignature: string | null = null;

  /** Keys that are computed on some sheet (a listing reads them through the engine). */
  computedKeys(): Set<string> {
    const keys = new Set<string>();
    for (const surfaceId of tableIndex(this.doc).sheetIds) for (const column of this.plan(surfaceId).computed) keys.add(column.key);
    return keys;
  }

  keep(key: string, rowId: string, entry: Entry): void {
    if (!this.linkers) this.indexLinks();
    this.keptSignature = this.signature;
    let vector = this.values.get(key);
    if (!vector) this.values.set(key, (vector = new Map()));
    vector.set(rowId, entry);
  }

  entry(key: string, rowId: string): Entry | undefined {
    return this.values.get(key)?.get(rowId);
  }

  private forgetChanged(transaction: Y.Transaction): void {
    if (this.plans.size === 0 && this.values.size === 0 && !this.linkers) return;
    const changes = transactionChanges(transaction);
    const sheets = existingRoots(this.doc).sheets;
    // A sheet added or removed reports no `columns.updated` (its columns report themselves only while it lives).
    if (changes.some((change) => change.kind === 'columns.updated') || (sheets !== undefined && transaction.changed.has(sheets))) {
      // Compared at the next read: a label or a width changes no value.
      this.plans.clear();
      this.signature = null;
      this.linkers = null;
      this.linked = null;
    }
    const changed = new Set<string>();
    for (const change of changes) if ('rowId' in change) changed.add(change.rowId);
    if (changed.size === 0) return;
    if (this.values.size > 0) {
      for (const rowId of this.dependents(changed, Infinity)!) for (const vector of this.values.values()) vector.delete(rowId);
    }
    // Kept current whenever it exists, kept values or not: kept listings find the rows a write reaches through it.
    for (const rowId of changed) this.relink(rowId);
  }

  /**
   * `rows`, then the rows that link to them, and so on up the links: every
   * row whose computed cells may read a cell of `rows`. Null when there are
   * more than `limit`.
   */
  dependents(rows: Iterable<string>, limit: number): Set<string> | null {
    if (!this.linkers) this.indexLinks();
    const queue = [...rows];
    const found = new Set<string>();
    while (queue.length > 0) {
      const rowId = queue.pop()!;
      if (found.has(rowId)) continue;
      found.add(rowId);
      if (found.size > limit) return null;
      for (const linker of this.linkers!.get(rowId) ?? []) queue.push(linker);
    }
    return found;
  }

  /** The reverse index of every link cell, built when a first value is kept. */
  private indexLinks(): void {
    this.linkers = new Map();
    this.linked = new Map();
    const index = tableIndex(this.doc);
    for (const surfaceId of canonicalSheetIds(this.doc)) {
      const keys = linkColumnKeys(this.doc, surfaceId);
      if (keys.length === 0) continue;
      for (const rowId of index.rowsBySheet.get(surfaceId) ?? []) this.relink(rowId, keys);
    }
  }

  private relink(rowId: string, keys?: string[]): void {
    if (!this.linkers || !this.linked) return;
    const surfaceId = tableIndex(this.doc).placements.get(rowId)?.surfaceId;
    const rowMap = surfaceId === undefined ? null : rowMapOf(this.doc, rowId);
    const targets = new Set<string>();
    if (rowMap) for (const key of keys ?? linkColumnKeys(this.doc, surfaceId!)) for (const id of linkIdsOf(rowMap.get(key))) targets.add(id);
    for (const old of this.linked.get(rowId) ?? []) if (!targets.has(old)) this.linkers.get(old)?.delete(rowId);
    for (const target of targets) {
      let set = this.linkers.get(target);
      if (!set) this.linkers.set(target, (set = new Set()));
      set.add(rowId);
    }
    if (targets.size > 0) this.linked.set(rowId, [...targets]);
    else this.linked.delete(rowId);
  }
}

function planOf(columns: readonly ColumnDef[]): SheetPlan {
  return {
    columns,
    byKey: new Map(columns.map((column) => [column.key, column])),
    links: columns.filter((column) => column.type === 'link'),
    computed: columns.filter(isComputed),
  };
}

/**
 * Whether the transaction has so far changed any sheet's columns (a column
 * map's field, a columns array, a sheet's `columns` field, or a sheet added
 * or removed). A change to a type made in the same transaction is recorded
 * on the nearest older type it is under, so walking up from each recorded
 * type finds it.
 */
function changesColumns(transaction: Y.Transaction): boolean {
  const sheets = existingRoots(transaction.doc).sheets;
  if (!sheets) return false;
  for (const [type, fields] of transaction.changed) {
    if (type === sheets) return true;
    let item: Y.Item | null = type._item;
    if (item?.parent === sheets) {
      if (fields.has(COLUMNS_FIELD)) return true;
      continue;
    }
    while (item && item.parent instanceof Y.AbstractType) {
      const parentItem: Y.Item | null = item.parent._item;
      if (parentItem?.parent === sheets) {
        if (item.parentSub === COLUMNS_FIELD) return true;
        break;
      }
      item = parentItem;
    }
  }
  return false;
}

const engines = new WeakMap<Y.Doc, Engine>();

function engineOf(doc: Y.Doc): Engine {
  let engine = engines.get(doc);
  if (!engine) engines.set(doc, (engine = new Engine(doc)));
  return engine;
}

/**
 * A sheet's columns as `readColumns` reads them, kept with the computed
 * cells' plan of the sheet (a row write reads them to check its cells, seed
 * new keys and find attachment columns): read-only, shared by every caller.
 */
export function sheetColumns(doc: Y.Doc, surfaceId: string): readonly ColumnDef[] {
  return engineOf(doc).plan(surfaceId).columns;
}

/**
 * `day:` and the day TODAY() reads at `now` in `timeZone`, kept for the
 * second `now` falls in: every read opens a reading (a row write two), and
 * a day ends on a whole second in every zone (zone offsets are whole seconds).
 */
let lastDayStamp = { second: Number.NaN, timeZone: '', stamp: '' };
function dayStampOf(now: number, timeZone: string): string {
  const second = Math.floor(now / 1000);
  if (lastDayStamp.second !== second || lastDayStamp.timeZone !== timeZone) lastDayStamp = { second, timeZone, stamp: `day:${today(now, timeZone).toIso()}` };
  return lastDayStamp.stamp;
}

const USED_DAY = 1;
const USED_MOMENT = 2;
const IN_CIRCLE = 4;

/**
 * One read of the table: every cell it computes uses the same clock, and
 * the values it computes are kept for later reads where that is safe.
 */
export class CellReading {
  private readonly engine: Engine;
  private readonly hidden: ReadonlySet<string> | undefined;
  readonly now: number;
  readonly timeZone: string;
  /** The day TODAY() reads (`day:2026-07-04`): what kept values and listings that read it hold for. */
  readonly dayStamp: string;
  private readonly momentStamp: string;
  private momentRead = false;
  // The cells being computed, innermost last (a circle is one of them met again), kept flat: a read computes 50,000 of them.
  private readonly frameRows: string[] = [];
  private readonly frameKeys: string[] = [];
  private readonly frameFlags: number[] = [];
  /** The row whose formula runs, for the one environment every formula of this read shares. */
  private formulaRow = '';
  private formulaPlan: SheetPlan | null = null;
  private readonly env: FormulaEnvironment;

  constructor(
    private readonly doc: Y.Doc,
    options: ReadOptions = {},
  ) {
    this.engine = engineOf(doc);
    this.hidden = options.hidden?.size ? options.hidden : undefined;
    this.now = options.now ?? Date.now();
    this.timeZone = options.timeZone ?? tableTimeZone(doc);
    this.engine.prepare(this.timeZone);
    this.dayStamp = dayStampOf(this.now, this.timeZone);
    this.momentStamp = `moment:${this.now}`;
    this.env = {
      cell: (key) => this.value(this.formulaRow, this.formulaPlan!, key),
      now: this.now,
      timeZone: this.timeZone,
      usedClock: (what) => this.usedClock(what === 'day' ? USED_DAY : USED_MOMENT),
    };
  }

  /** Whether values may be kept and reused: nothing hidden from this reader, and no transaction open. */
  private get keeps(): boolean {
    return this.keepsComputed && this.doc._transaction === null;
  }

  /** Whether the cells this reader sees are everyone's (nothing is hidden from it). */
  get keepsComputed(): boolean {
    return this.hidden === undefined;
  }

  /** Whether a cell read through `vector` so far holds for this moment only (it reads NOW()). */
  readMoment(): boolean {
    return this.momentRead;
  }

  /** Column keys computed on some sheet: a filter or sort on one reads it here, not from the stored cells. */
  computedKeys(): Set<string> {
    return this.engine.computedKeys();
  }

  /** `rows` and every row whose computed cells may read them (through links, any depth); null when more than `limit`. */
  dependents(rows: Iterable<string>, limit: number): Set<string> | null {
    return this.engine.dependents(rows, limit);
  }

  /** The row's cells as the reader sees them: links without rows it may not see, and every lookup, formula and rollup computed. */
  row(rowId: string, surfaceId: string, data: RowData): ReadRowData {
    const plan = this.engine.plan(surfaceId);
    if (plan.links.length === 0 && plan.computed.length === 0) return data;
    const resolved: ReadRowData = { ...data };
    for (const column of plan.links) {
      if (Object.hasOwn(data, column.key) && data[column.key] !== null) resolved[column.key] = visibleLinks(this.doc, data[column.key], this.hidden);
    }
    for (const column of plan.computed) resolved[column.key] = this.entry(rowId, plan, column).cell as ReadRowData[string];
    return resolved;
  }

  /** The row's formula and rollup cells only (row events carry them beside the stored cells). */
  formulaCells(rowId: string, surfaceId: string): Record<string, ReadCell> {
    const plan = this.engine.plan(surfaceId);
    const cells: Record<string, ReadCell> = {};
    for (const column of plan.computed) if (column.type !== 'lookup') cells[column.key] = this.entry(rowId, plan, column).cell;
    return cells;
  }

  /** One cell as the reader sees it, for filters and sorts: computed where the row's sheet computes the key, else as stored. */
  cell(rowId: string, key: string): ReadCell {
    const surfaceId = tableIndex(this.doc).placements.get(rowId)?.surfaceId;
    if (surfaceId !== undefined) {
      const plan = this.engine.plan(surfaceId);
      const column = plan.byKey.get(key);
      if (column && isComputed(column)) return this.entry(rowId, plan, column).cell;
    }
    return rowMapOf(this.doc, rowId)?.get(key) as ReadCell;
  }

  /**
   * A reading of one column's cells (`read` of each cell as the reader sees
   * it), kept with the computed value: a filter over 50,000 rows reads it
   * from memory once the values are computed.
   */
  vector<T>(key: string, reading: string, read: (cell: ReadCell) => T): (rowId: string) => T {
    const placements = tableIndex(this.doc).placements;
    const keeps = this.keeps;
    return (rowId) => {
      const surfaceId = placements.get(rowId)?.surfaceId;
      const plan = surfaceId === undefined ? null : this.engine.plan(surfaceId);
      const column = plan?.byKey.get(key);
      if (!plan || !column || !isComputed(column)) return read(rowMapOf(this.doc, rowId)?.get(key) as ReadCell);
      const entry = this.entry(rowId, plan, column);
      if (entry.stamp === this.momentStamp) this.momentRead = true;
      if (!keeps) return read(entry.cell);
      if (reading === 'sort') {
        if (!('sortValue' in entry)) entry.sortValue = read(entry.cell);
        return entry.sortValue as T;
      }
      if (entry.readingName === reading) return entry.readingValue as T;
      const value = read(entry.cell);
      if (entry.readingName === undefined) {
        entry.readingName = reading;
        entry.readingValue = value;
      }
      return value;
    };
  }

  // -------------------------------------------------------------------------

  private entry(rowId: string, plan: SheetPlan, column: ColumnDef): Entry {
    const keeps = this.keeps;
    const kept = keeps ? this.engine.entry(column.key, rowId) : undefined;
    if (kept && (kept.stamp === null || kept.stamp === this.dayStamp || kept.stamp === this.momentStamp)) {
      if (kept.stamp !== null) this.usedClock(kept.stamp === this.dayStamp ? USED_DAY : USED_MOMENT);
      return kept;
    }
    for (let i = 0; i < this.frameRows.length; i++) {
      if (this.frameRows[i] === rowId && this.frameKeys[i] === column.key) return this.circle(i);
    }
    const depth = this.frameRows.length;
    this.frameRows.push(rowId);
    this.frameKeys.push(column.key);
    this.frameFlags.push(0);
    let entry: Entry;
    try {
      entry = this.compute(rowId, plan, column);
    } catch (error) {
      // A chain of links deeper than the stack (a sync peer's data): an error in the cell, not a failed read.
      entry = failed(new FormulaError('#ERROR!', error instanceof RangeError ? 'The value depends on too long a chain of rows.' : String(error)));
    }
    const flags = this.frameFlags[depth]!;
    this.frameRows.length = this.frameKeys.length = this.frameFlags.length = depth;
    if (flags & IN_CIRCLE) {
      const circle = new FormulaError('#CYCLE!', `${column.key} depends on itself.`);
      entry = { value: circle, cell: column.type === 'lookup' ? [] : circle.toCell(), stamp: null };
    }
    if (flags & (USED_DAY | USED_MOMENT)) {
      entry.stamp = flags & USED_MOMENT ? this.momentStamp : this.dayStamp;
      this.usedClock(flags);
    }
    if (keeps) this.engine.keep(column.key, rowId, entry);
    return entry;
  }

  /** A value that depends on itself: every cell on the way round reads #CYCLE!, whichever was read first. */
  private circle(at: number): Entry {
    for (let i = at; i < this.frameFlags.length; i++) this.frameFlags[i]! |= IN_CIRCLE;
    const names = this.frameKeys.slice(at);
    return failed(new FormulaError('#CYCLE!', `${[...names, names[0]].join(' → ')}: a value that depends on itself.`));
  }

  /** The cell being computed (and so every cell computed from it) reads the clock. */
  private usedClock(flags: number): void {
    const top = this.frameFlags.length - 1;
    if (top >= 0) this.frameFlags[top]! |= flags & (USED_DAY | USED_MOMENT);
  }

  private compute(rowId: string, plan: SheetPlan, column: ColumnDef): Entry {
    const rowMap = rowMapOf(this.doc, rowId);
    switch (column.type) {
      case 'formula': {
        const formula = compiledFormula(typeof column.formula === 'string' ? column.formula : '');
        const [outerRow, outerPlan] = [this.formulaRow, this.formulaPlan];
        this.formulaRow = rowId;
        this.formulaPlan = plan;
        let value: Value;
        try {
          value = runFormula(formula, this.env);
        } finally {
          this.formulaRow = outerRow;
          this.formulaPlan = outerPlan;
        }
        return shown(value, (column.resultType ?? 'text') as ResultType);
      }
      case 'rollup': {
        const link = typeof column.link === 'string' ? plan.byKey.get(column.link) : undefined;
        if (!link || link.type !== 'link') return failed(new FormulaError('#REF!', `There is no link column "${String(column.link)}" for this rollup.`));
        if (!isRollupFunction(column.fn)) return failed(new FormulaError('#ERROR!', `"${String(column.fn)}" is not a rollup function.`));
        const ids = visibleLinks(this.doc, rowMap?.get(link.key), this.hidden);
        const field = typeof column.field === 'string' ? column.field : '';
        return shown(rollUp(column.fn, ids.map((id) => this.fieldOf(id, field))), ROLLUPS[column.fn].resultType);
      }
      default: {
        // A lookup: the linked rows' values of its field, as they read there.
        const link = typeof column.link === 'string' ? plan.byKey.get(column.link) : undefined;
        const ids = link?.type === 'link' ? visibleLinks(this.doc, rowMap?.get(link.key), this.hidden) : [];
        const field = typeof column.field === 'string' ? column.field : '';
        return { value: ids.map((id) => this.fieldOf(id, field)), cell: ids.map((id) => this.lookedUp(id, field)), stamp: null };
      }
    }
  }

  /** A cell of this row as its formula reads it. */
  private value(rowId: string, plan: SheetPlan, key: string): Value {
    const column = plan.byKey.get(key);
    if (!column) return new FormulaError('#REF!', `There is no column "${key}".`);
    if (isComputed(column)) return this.entry(rowId, plan, column).value;
    const raw: unknown = rowMapOf(this.doc, rowId)?.get(key);
    if (column.type === 'link') return visibleLinks(this.doc, raw, this.hidden).map((id) => this.title(id));
    return storedValue(raw, column.type);
  }

  /** A linked row's title as a formula reads it (blank when it has none), with its sheet's columns from the plan rather than read again per linked row. */
  private title(rowId: string): string | null {
    const surfaceId = tableIndex(this.doc).placements.get(rowId)?.surfaceId;
    return (surfaceId !== undefined && rowTitle(this.doc, rowId, this.engine.plan(surfaceId).columns)) || null;
  }

  /** A linked row's value of `field` as a rollup reads it: as its own sheet reads it, or as stored when that sheet has no such column. */
  private fieldOf(rowId: string, field: string): Value {
    const surfaceId = tableIndex(this.doc).placements.get(rowId)?.surfaceId;
    const plan = surfaceId === undefined ? null : this.engine.plan(surfaceId);
    if (plan?.byKey.has(field)) return this.value(rowId, plan, field);
    return storedValue(rowMapOf(this.doc, rowId)?.get(field), undefined);
  }

  /** A linked row's value of `field` as a lookup cell shows it: computed where its sheet computes it, a link as the ids the reader sees, else as stored. */
  private lookedUp(rowId: string, field: string): CellValue | ComputedCell {
    const rowMap = rowMapOf(this.doc, rowId);
    if (!rowMap) return null;
    const surfaceId = tableIndex(this.doc).placements.get(rowId)?.surfaceId;
    const plan = surfaceId === undefined ? null : this.engine.plan(surfaceId);
    const column = plan?.byKey.get(field);
    if (plan && column && (column.type === 'formula' || column.type === 'rollup')) return this.entry(rowId, plan, column).cell as ComputedCell;
    const value = readRowData(rowMap)[field];
    if (value === undefined) return null;
    return column?.type === 'link' ? visibleLinks(this.doc, value, this.hidden) : value;
  }
}

/** A computed value and its cell; what later formulas read is the value as the cell shows it (a number rounded as shown). */
function shown(value: Value, resultType: ResultType): Entry {
  const cell = presentValue(value, resultType);
  return { value: value instanceof FormulaError ? value : cellValue(cell, resultType), cell, stamp: null };
}

function failed(error: FormulaError): Entry {
  return { value: error, cell: error.toCell(), stamp: null };
}

/** A reading of the table for one read (a listing, a row, a change's event). */
export function openReading(doc: Y.Doc, options: ReadOptions = {}): CellReading {
  return new CellReading(doc, options);
}

/** A row's cells as a reader sees them (see `CellReading.row`). */
export function rowAsRead<T extends { id: string; surfaceId: string; data: RowData }>(doc: Y.Doc, row: T, options: ReadOptions | CellReading = {}): Omit<T, 'data'> & { data: ReadRowData } {
  const reading = options instanceof CellReading ? options : openReading(doc, options);
  return { ...row, data: reading.row(row.id, row.surfaceId, row.data) };
}

/** Rows of a listing as a reader sees them, all with one clock. */
export function rowsAsRead<T extends { id: string; surfaceId: string; data: RowData }>(doc: Y.Doc, rows: readonly T[], options: ReadOptions | CellReading = {}): Array<Omit<T, 'data'> & { data: ReadRowData }> {
  const reading = options instanceof CellReading ? options : openReading(doc, options);
  return rows.map((row) => ({ ...row, data: reading.row(row.id, row.surfaceId, row.data) }));
}
