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
import { diffTableTransaction } from './changes.js';
import { canonicalSheetIds, readRowData, rowMapOf } from './layout.js';
import { linkColumnKeys, linkIdsOf } from './links.js';
import { rowTitle, visibleLinks } from './link-reads.js';
import { tableIndex } from './row-index.js';
import { cellValue, presentValue, storedValue, type ComputedCell } from './formulas/cells.js';
import { compiledFormula, runFormula, type CompiledFormula } from './formulas/compile.js';
import type { FormulaEnvironment } from './formulas/functions.js';
import { isRollupFunction, rollUp, ROLLUPS } from './formulas/rollups.js';
import { FormulaError, type ResultType, type Value } from './formulas/values.js';
import type { CellValue, ColumnDef, LookupValue, ReadRowData, RowData } from './types.js';

export interface ReadOptions {
  /** Rows the reader may not see (held by the row cap: src/sync/table-passed.ts): links, lookups and rollups never show them. */
  hidden?: ReadonlySet<string>;
  /** The moment of the read, in milliseconds (now by default): what TODAY() and NOW() give. */
  now?: number;
  /** The IANA time zone TODAY() and dates are read in (UTC by default). */
  timeZone?: string;
}

/** A cell as a reader sees it: stored, or computed (a lookup's list, a formula's or rollup's value or error). */
export type ReadCell = CellValue | LookupValue | ComputedCell | undefined;

interface SheetPlan {
  columns: ColumnDef[];
  byKey: Map<string, ColumnDef>;
  computed: ColumnDef[];
}

interface Entry {
  value: Value;
  cell: ReadCell;
  /** The clock it was computed at, when it read it (TODAY, NOW, or a value that did). */
  clock: number | null;
  /** Readings of the cell kept with it (a filter's comparable values, a sort value). */
  derived?: Map<string, unknown>;
}

class Engine {
  readonly plans = new Map<string, SheetPlan>();
  /** Per column key, per row id. */
  readonly values = new Map<string, Map<string, Entry>>();
  timeZone = 'UTC';
  /** Row id → rows whose link cells name it; null until something is kept. */
  linkers: Map<string, Set<string>> | null = null;
  private linked: Map<string, string[]> | null = null;

  constructor(private readonly doc: Y.Doc) {
    // The row index drops its own cache first, in the same hook: ours reads placements.
    tableIndex(doc);
    doc.on('beforeObserverCalls', (transaction: Y.Transaction) => this.forgetChanged(transaction));
  }

  plan(surfaceId: string): SheetPlan {
    let plan = this.plans.get(surfaceId);
    if (!plan) {
      const columns = readColumns(this.doc, surfaceId);
      plan = { columns, byKey: new Map(columns.map((column) => [column.key, column])), computed: columns.filter((column) => column.type === 'lookup' || column.type === 'formula' || column.type === 'rollup') };
      this.plans.set(surfaceId, plan);
    }
    return plan;
  }

  /** Keys that are computed on some sheet (a listing reads them through the engine). */
  computedKeys(): Set<string> {
    const keys = new Set<string>();
    for (const surfaceId of tableIndex(this.doc).sheetIds) for (const column of this.plan(surfaceId).computed) keys.add(column.key);
    return keys;
  }

  keep(key: string, rowId: string, entry: Entry): void {
    if (!this.linkers) this.indexLinks();
    let vector = this.values.get(key);
    if (!vector) this.values.set(key, (vector = new Map()));
    vector.set(rowId, entry);
  }

  kept(key: string, rowId: string): Entry | undefined {
    return this.values.get(key)?.get(rowId);
  }

  reset(): void {
    this.plans.clear();
    this.values.clear();
    this.linkers = null;
    this.linked = null;
  }

  private forgetChanged(transaction: Y.Transaction): void {
    if (this.plans.size === 0 && this.values.size === 0) return;
    const changes = diffTableTransaction(transaction);
    if (changes.some((change) => change.kind === 'columns.updated')) return this.reset();
    const changed = new Set<string>();
    for (const change of changes) if ('rowId' in change) changed.add(change.rowId);
    if (changed.size === 0 || this.values.size === 0) return;
    // A row's values, then those of the rows that link to it, and so on up the links.
    const queue = [...changed];
    const dropped = new Set<string>();
    while (queue.length > 0) {
      const rowId = queue.pop()!;
      if (dropped.has(rowId)) continue;
      dropped.add(rowId);
      for (const vector of this.values.values()) vector.delete(rowId);
      for (const linker of this.linkers?.get(rowId) ?? []) queue.push(linker);
    }
    for (const rowId of changed) this.relink(rowId);
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

const engines = new WeakMap<Y.Doc, Engine>();

function engineOf(doc: Y.Doc): Engine {
  let engine = engines.get(doc);
  if (!engine) engines.set(doc, (engine = new Engine(doc)));
  return engine;
}

interface Frame {
  id: string;
  key: string;
  usedClock: boolean;
  inCircle: boolean;
}

/**
 * One read of the table: every cell it computes uses the same clock, and
 * the values it computes are kept for later reads where that is safe.
 */
export class CellReading {
  private readonly engine: Engine;
  private readonly hidden: ReadonlySet<string> | undefined;
  readonly now: number;
  readonly timeZone: string;
  private readonly frames: Frame[] = [];
  private readonly open = new Map<string, number>();

  constructor(
    private readonly doc: Y.Doc,
    options: ReadOptions = {},
  ) {
    this.engine = engineOf(doc);
    this.hidden = options.hidden?.size ? options.hidden : undefined;
    this.now = options.now ?? Date.now();
    this.timeZone = options.timeZone ?? 'UTC';
    if (this.engine.timeZone !== this.timeZone) {
      this.engine.values.clear();
      this.engine.timeZone = this.timeZone;
    }
  }

  /** Whether values may be kept and reused: nothing hidden from this reader, and no transaction open. */
  private get keeps(): boolean {
    return this.hidden === undefined && this.doc._transaction === null;
  }

  /** Column keys computed on some sheet: a filter or sort on one reads it here, not from the stored cells. */
  computedKeys(): Set<string> {
    return this.engine.computedKeys();
  }

  /** The row's cells as the reader sees them: links without rows it may not see, and every lookup, formula and rollup computed. */
  row(rowId: string, surfaceId: string, data: RowData): ReadRowData {
    const plan = this.engine.plan(surfaceId);
    const links = plan.columns.filter((column) => column.type === 'link');
    if (links.length === 0 && plan.computed.length === 0) return data;
    const resolved: ReadRowData = { ...data };
    for (const column of links) {
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
      if (column && (column.type === 'lookup' || column.type === 'formula' || column.type === 'rollup')) return this.entry(rowId, plan, column).cell;
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
    return (rowId) => {
      const surfaceId = placements.get(rowId)?.surfaceId;
      const plan = surfaceId === undefined ? null : this.engine.plan(surfaceId);
      const column = plan?.byKey.get(key);
      if (!plan || !column || (column.type !== 'lookup' && column.type !== 'formula' && column.type !== 'rollup')) {
        return read(rowMapOf(this.doc, rowId)?.get(key) as ReadCell);
      }
      const entry = this.entry(rowId, plan, column);
      if (!this.keeps) return read(entry.cell);
      entry.derived ??= new Map();
      if (entry.derived.has(reading)) return entry.derived.get(reading) as T;
      const value = read(entry.cell);
      entry.derived.set(reading, value);
      return value;
    };
  }

  // -------------------------------------------------------------------------

  private entry(rowId: string, plan: SheetPlan, column: ColumnDef): Entry {
    const keeps = this.keeps;
    const kept = keeps ? this.engine.kept(column.key, rowId) : undefined;
    if (kept && (kept.clock === null || kept.clock === this.now)) {
      if (kept.clock !== null) this.usedClock();
      return kept;
    }
    const id = `${rowId}\u0000${column.key}`;
    const at = this.open.get(id);
    if (at !== undefined) return this.circle(at);
    const frame: Frame = { id, key: column.key, usedClock: false, inCircle: false };
    this.open.set(id, this.frames.length);
    this.frames.push(frame);
    let computed: { value: Value; cell: ReadCell };
    try {
      computed = this.compute(rowId, plan, column);
    } catch (error) {
      // A chain of links deeper than the stack (a sync peer's data): an error in the cell, not a failed read.
      const failure = new FormulaError('#ERROR!', error instanceof RangeError ? 'The value depends on too long a chain of rows.' : String(error));
      computed = { value: failure, cell: failure.toCell() };
    } finally {
      this.frames.pop();
      this.open.delete(id);
    }
    if (frame.inCircle) {
      const circle = new FormulaError('#CYCLE!', `${column.key} depends on itself.`);
      computed = { value: circle, cell: column.type === 'lookup' ? [] : circle.toCell() };
    }
    if (frame.usedClock) this.usedClock();
    const entry: Entry = { ...computed, clock: frame.usedClock ? this.now : null };
    if (keeps) this.engine.keep(column.key, rowId, entry);
    return entry;
  }

  /** A value that depends on itself: every cell on the way round reads #CYCLE!, whichever was read first. */
  private circle(at: number): Entry {
    for (let i = at; i < this.frames.length; i++) this.frames[i]!.inCircle = true;
    const names = this.frames.slice(at).map((frame) => frame.key);
    const error = new FormulaError('#CYCLE!', `${[...names, names[0]].join(' → ')}: a value that depends on itself.`);
    return { value: error, cell: error.toCell(), clock: null };
  }

  private usedClock(): void {
    const top = this.frames.at(-1);
    if (top) top.usedClock = true;
  }

  private compute(rowId: string, plan: SheetPlan, column: ColumnDef): { value: Value; cell: ReadCell } {
    const rowMap = rowMapOf(this.doc, rowId);
    switch (column.type) {
      case 'formula': {
        const formula: CompiledFormula = compiledFormula(typeof column.formula === 'string' ? column.formula : '');
        const env: FormulaEnvironment = {
          cell: (key) => this.value(rowId, plan, key),
          now: this.now,
          timeZone: this.timeZone,
          usedClock: () => this.usedClock(),
        };
        const value = runFormula(formula, env);
        const resultType = (column.resultType ?? 'text') as ResultType;
        const cell = presentValue(value, resultType);
        // What later formulas read is the value as shown (a number rounded the way the cell shows it).
        return { value: value instanceof FormulaError ? value : cellValue(cell, resultType), cell };
      }
      case 'rollup': {
        const link = typeof column.link === 'string' ? plan.byKey.get(column.link) : undefined;
        if (!link || link.type !== 'link') return failed(new FormulaError('#REF!', `There is no link column "${String(column.link)}" for this rollup.`));
        if (!isRollupFunction(column.fn)) return failed(new FormulaError('#ERROR!', `"${String(column.fn)}" is not a rollup function.`));
        const ids = visibleLinks(this.doc, rowMap?.get(link.key), this.hidden);
        const field = typeof column.field === 'string' ? column.field : '';
        const value = rollUp(column.fn, ids.map((id) => this.fieldOf(id, field)));
        const cell = presentValue(value, ROLLUPS[column.fn].resultType);
        return { value: value instanceof FormulaError ? value : cellValue(cell, ROLLUPS[column.fn].resultType), cell };
      }
      default: {
        // A lookup: the linked rows' values of its field, as they read there.
        const link = typeof column.link === 'string' ? plan.byKey.get(column.link) : undefined;
        const ids = link?.type === 'link' ? visibleLinks(this.doc, rowMap?.get(link.key), this.hidden) : [];
        const field = typeof column.field === 'string' ? column.field : '';
        return { value: ids.map((id) => this.fieldOf(id, field)), cell: ids.map((id) => this.lookedUp(id, field)) };
      }
    }
  }

  /** A cell of this row as its formula reads it. */
  private value(rowId: string, plan: SheetPlan, key: string): Value {
    const column = plan.byKey.get(key);
    if (!column) return new FormulaError('#REF!', `There is no column "${key}".`);
    if (column.type === 'lookup' || column.type === 'formula' || column.type === 'rollup') return this.entry(rowId, plan, column).value;
    const raw: unknown = rowMapOf(this.doc, rowId)?.get(key);
    if (column.type === 'link') return visibleLinks(this.doc, raw, this.hidden).map((id) => rowTitle(this.doc, id) || null);
    return storedValue(raw, column.type);
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

function failed(error: FormulaError): { value: Value; cell: ReadCell } {
  return { value: error, cell: error.toCell() };
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
