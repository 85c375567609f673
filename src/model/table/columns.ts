/**
 * Columns of a sheet: `columns` is a Y.Array of Y.Maps, one field per
 * ColumnDef property. The `position` field decides display order, not the
 * array index: reordering an array means deleting and re-inserting maps,
 * which would drop a peer's concurrent edit of the moved column. So columns
 * are only ever appended, and a replacement rewrites fields in place.
 */
import * as Y from 'yjs';
import { tableIndex, transactTable } from './row-index.js';
import { columnsOf, copyJson, rowMapOf, sameJson, sheetMapOf, type ColumnMap, type ColumnsArray } from './layout.js';
import { createTableId } from './ids.js';
import { ensureSheet } from './sheets.js';
import { TableDocumentError, type ColumnDef, type ColumnFields, type NewColumn, type ReplacementColumn, type TableIssue } from './types.js';
import { followRenames, withResultTypes } from './computed-columns.js';
import { canonicalSheetIds } from './layout.js';

interface StoredColumn {
  map: ColumnMap;
  arrayIndex: number;
  /** The stored id, or the key for a column a peer created without one. */
  id: string;
  hasStoredId: boolean;
  key: string;
  storedPosition: number;
}

/**
 * Columns in display order: stored position, then array index for ties
 * (two peers appending at once), renumbered contiguous from 0. Formula and
 * rollup columns carry the `resultType` of their values (computed-columns.ts).
 */
export function readColumns(doc: Y.Doc, surfaceId: string): ColumnDef[] {
  return withResultTypes(storedColumns(doc, surfaceId).map((column, position) => ({ ...(copyJson(column.map.toJSON()) as ColumnDef), id: column.id, position })));
}

function storedColumns(doc: Y.Doc, surfaceId: string): StoredColumn[] {
  const sheet = sheetMapOf(doc, surfaceId);
  const columns = sheet ? columnsOf(sheet) : null;
  if (!columns) return [];
  const stored: StoredColumn[] = [];
  columns.forEach((map, arrayIndex) => {
    if (!(map instanceof Y.Map) || typeof map.get('key') !== 'string') return;
    const id = map.get('id');
    const position = map.get('position');
    stored.push({
      map,
      arrayIndex,
      id: typeof id === 'string' && id !== '' ? id : (map.get('key') as string),
      hasStoredId: typeof id === 'string' && id !== '',
      key: map.get('key') as string,
      storedPosition: typeof position === 'number' && Number.isFinite(position) ? position : Number.MAX_SAFE_INTEGER,
    });
  });
  return stored.sort((a, b) => a.storedPosition - b.storedPosition || a.arrayIndex - b.arrayIndex);
}

/** The keys `storedColumns` would list, without placing them in order (a row write's seeding only asks which exist). */
function storedKeys(doc: Y.Doc, surfaceId: string): Set<string> {
  const sheet = sheetMapOf(doc, surfaceId);
  const columns = sheet ? columnsOf(sheet) : null;
  const keys = new Set<string>();
  columns?.forEach((map) => {
    const key = map instanceof Y.Map ? map.get('key') : undefined;
    if (typeof key === 'string') keys.add(key);
  });
  return keys;
}

function columnsArrayOf(doc: Y.Doc, surfaceId: string): ColumnsArray {
  return columnsOf(sheetMapOf(doc, surfaceId)!)!;
}

// ---------------------------------------------------------------------------
// Full replacement

export interface ReplaceColumnsOptions {
  /**
   * The sheet a link column's `targetSurface` slug names (null when none):
   * with it, rollups and lookups of other sheets that read a renamed column
   * of this one follow the rename too.
   */
  sheetOfSlug?(slug: string): string | null;
  /** `false`: a renamed column's cells stay under the old key (a run's revert puts cells back itself: src/model/table/runs.ts). */
  renameCells?: boolean;
}

/**
 * Makes the sheet's columns equal to `columns` (creating the sheet if
 * needed). Each given column matches a stored one by `id`, else by `key`; a
 * matched column with a new key is a rename, and that cell key is renamed in
 * every row of the sheet, and formulas, rollups and lookups that read it
 * follow (`columnsAfterReplacement`). Only fields that differ are written, so unchanged
 * column maps are untouched and a peer's concurrent edit of them survives.
 * Stored columns not given are removed; their cells stay in the rows. A
 * given id that matches no column falls back to the key (the stored column
 * keeps its own id), so a client holding a stale id cannot fork a column.
 */
export function replaceColumns(doc: Y.Doc, surfaceId: string, given: readonly ReplacementColumn[], origin: unknown, options: ReplaceColumnsOptions = {}): ColumnDef[] {
  checkReplacement(given);
  transactTable(doc, origin, () => {
    ensureSheet(doc, surfaceId, origin);
    const stored = storedColumns(doc, surfaceId);
    const matches = matchColumns(stored, given);
    const renames = renamesOf(matches, given);
    const columns = followRenames(given, renames, (link) => linksTo(link, surfaceId, options));
    columns.forEach((column, i) => {
      const match = matches[i];
      if (match) rewriteFields(match.map, column, match.hasStoredId ? match.id : (column.id ?? match.id));
    });
    removeColumnMaps(doc, surfaceId, stored.filter((column) => !matches.includes(column)));
    const added = columns.filter((_, i) => !matches[i]).map((column) => newColumnMap(column, column.id ?? createTableId()));
    if (added.length > 0) columnsArrayOf(doc, surfaceId).push(added);
    if (options.renameCells !== false) renameCellKeys(doc, surfaceId, [...renames]);
    followRenamesElsewhere(doc, surfaceId, renames, options);
  });
  return readColumns(doc, surfaceId);
}

/** The columns a replacement will leave, references renamed as `replaceColumns` renames them (for checking them first). */
export function columnsAfterReplacement<T extends ReplacementColumn>(doc: Y.Doc, surfaceId: string, given: readonly T[], options: ReplaceColumnsOptions = {}): T[] {
  const renames = renamesOf(matchColumns(storedColumns(doc, surfaceId), given), given);
  return followRenames(given, renames, (link) => linksTo(link, surfaceId, options));
}

function renamesOf(matches: Array<StoredColumn | undefined>, columns: readonly ReplacementColumn[]): Map<string, string> {
  const renames = new Map<string, string>();
  columns.forEach((column, i) => {
    const match = matches[i];
    if (match && match.key !== column.key) renames.set(match.key, column.key);
  });
  return renames;
}

function linksTo(link: ColumnFields, surfaceId: string, options: ReplaceColumnsOptions): boolean {
  return link.type === 'link' && typeof link.targetSurface === 'string' && options.sheetOfSlug?.(link.targetSurface) === surfaceId;
}

/** Rollups and lookups of other sheets whose link points at this one and whose field was renamed take the new key. */
function followRenamesElsewhere(doc: Y.Doc, surfaceId: string, renames: ReadonlyMap<string, string>, options: ReplaceColumnsOptions): void {
  if (renames.size === 0 || !options.sheetOfSlug) return;
  for (const sheet of canonicalSheetIds(doc)) {
    if (sheet === surfaceId) continue;
    const stored = storedColumns(doc, sheet);
    for (const column of stored) {
      const type = column.map.get('type');
      const field = column.map.get('field');
      if ((type !== 'rollup' && type !== 'lookup') || typeof field !== 'string' || !renames.has(field)) continue;
      const link = stored.find((candidate) => candidate.key === column.map.get('link'));
      if (link && linksTo(link.map.toJSON() as ColumnFields, surfaceId, options)) column.map.set('field', renames.get(field)!);
    }
  }
}

function checkReplacement(columns: readonly ReplacementColumn[]): void {
  const issues: TableIssue[] = [];
  const keys = new Set<string>();
  const ids = new Set<string>();
  columns.forEach((column, i) => {
    const path = ['columns', String(i)];
    if (typeof column.key !== 'string' || column.key === '') issues.push({ path: [...path, 'key'], code: 'invalid_type', message: 'A column key must be a non-empty string.' });
    else if (keys.has(column.key)) issues.push({ path: [...path, 'key'], code: 'duplicate', message: `Column key ${column.key} is given twice.` });
    keys.add(column.key);
    if (column.id !== undefined && ids.has(column.id)) issues.push({ path: [...path, 'id'], code: 'duplicate', message: `Column id ${column.id} is given twice.` });
    if (column.id !== undefined) ids.add(column.id);
  });
  const positions = columns.map((column) => column.position).sort((a, b) => a - b);
  if (!positions.every((position, i) => position === i)) {
    issues.push({ path: ['columns'], code: 'non_contiguous_positions', message: 'Column positions must be integers contiguous from 0.' });
  }
  if (issues.length > 0) throw new TableDocumentError('invalid_columns', 'The columns are not a valid replacement.', issues);
}

/** For each given column, the stored column it replaces: first by id, then by key among the rest. */
function matchColumns(stored: StoredColumn[], columns: readonly ReplacementColumn[]): Array<StoredColumn | undefined> {
  const byId = new Map(stored.map((column) => [column.id, column]));
  const matches: Array<StoredColumn | undefined> = columns.map((column) => (column.id === undefined ? undefined : byId.get(column.id)));
  const taken = new Set(matches);
  const unmatchedByKey = new Map(stored.filter((column) => !taken.has(column)).map((column) => [column.key, column]));
  return matches.map((match, i) => {
    if (match) return match;
    const byKey = unmatchedByKey.get(columns[i]!.key);
    unmatchedByKey.delete(columns[i]!.key);
    return byKey;
  });
}

function rewriteFields(map: ColumnMap, column: ReplacementColumn, id: string): void {
  const wanted = columnFields(column, id);
  for (const [field, value] of wanted) {
    if (!sameJson(map.get(field), value)) map.set(field, copyJson(value));
  }
  for (const field of [...map.keys()]) {
    if (!wanted.has(field)) map.delete(field);
  }
}

function columnFields(column: NewColumn, id: string): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  // A result type is worked out on every read (a client sending back the columns it read sends it too).
  const computed = column.type === 'formula' || column.type === 'rollup';
  for (const [field, value] of Object.entries(column)) {
    if (value !== undefined && !(computed && field === 'resultType')) fields.set(field, value);
  }
  fields.set('id', id);
  return fields;
}

function newColumnMap(column: NewColumn, id: string): ColumnMap {
  const map: ColumnMap = new Y.Map();
  for (const [field, value] of columnFields(column, id)) map.set(field, copyJson(value));
  return map;
}

function removeColumnMaps(doc: Y.Doc, surfaceId: string, removed: StoredColumn[]): void {
  const array = columnsArrayOf(doc, surfaceId);
  for (const column of [...removed].sort((a, b) => b.arrayIndex - a.arrayIndex)) array.delete(column.arrayIndex, 1);
}

/**
 * Renames cell keys in every row of the sheet, all renames at once: values
 * are read before any key is written, so swapping two keys works. A row
 * without the old key loses any stale cell under the new one (left by a
 * removed column), so the renamed column shows exactly its own cells.
 */
function renameCellKeys(doc: Y.Doc, surfaceId: string, renames: Array<[from: string, to: string]>): void {
  if (renames.length === 0) return;
  const touched = new Set(renames.flat());
  for (const rowId of tableIndex(doc).rowsBySheet.get(surfaceId) ?? []) {
    const rowMap = rowMapOf(doc, rowId);
    if (!rowMap || ![...touched].some((key) => rowMap.has(key))) continue;
    const carried = renames.filter(([from]) => rowMap.has(from)).map(([from, to]) => [to, rowMap.get(from)!] as const);
    for (const key of touched) {
      if (rowMap.has(key) && !carried.some(([to, value]) => to === key && value === rowMap.get(key))) rowMap.delete(key);
    }
    for (const [to, value] of carried) {
      if (!rowMap.has(to)) rowMap.set(to, value);
    }
  }
}

// ---------------------------------------------------------------------------
// Additions

/**
 * Adds one column after the others (creating the sheet if needed); any
 * position given is ignored. A key already used gives `column_exists`.
 */
export function addColumn(doc: Y.Doc, surfaceId: string, column: NewColumn, origin: unknown): ColumnDef {
  if (storedColumns(doc, surfaceId).some((stored) => stored.key === column.key)) {
    throw new TableDocumentError('column_exists', `Column ${column.key} already exists.`, [
      { path: ['column', 'key'], code: 'column_exists', message: `Column ${column.key} already exists.` },
    ]);
  }
  const id = column.id ?? createTableId();
  transactTable(doc, origin, () => {
    ensureSheet(doc, surfaceId, origin);
    appendColumns(doc, surfaceId, [{ ...column, id }]);
  });
  return readColumns(doc, surfaceId).find((stored) => stored.id === id)!;
}

/**
 * Adds a `text` column for each key that has none (the auto-seed for cell
 * keys a row write brings), in one transaction. Returns the columns added.
 * `columns`: the sheet's columns as read in the same transaction with no
 * change since (a row write has them already), instead of reading them again.
 */
export function seedColumnsFor(doc: Y.Doc, surfaceId: string, keys: Iterable<string>, origin: unknown, columns?: ReadonlyArray<{ key: string }>): ColumnDef[] {
  const known = columns ? new Set(columns.map((column) => column.key)) : storedKeys(doc, surfaceId);
  const missing = [...new Set(keys)].filter((key) => key !== '' && !known.has(key));
  return addMissingColumns(doc, surfaceId, missing.map((key) => ({ key, label: key, type: 'text' })), origin);
}

const DEFAULT_COLUMNS: NewColumn[] = [
  { key: 'title', label: 'Title', type: 'text' },
  {
    key: 'status',
    label: 'Status',
    type: 'status',
    options: [
      { value: 'todo', label: 'To do' },
      { value: 'doing', label: 'Doing' },
      { value: 'done', label: 'Done' },
    ],
  },
  { key: 'notes', label: 'Notes', type: 'longtext' },
];

/** A new table's columns (title, status, notes); adds only those missing, so it is safe to repeat. */
export function scaffoldDefaultColumns(doc: Y.Doc, surfaceId: string, origin: unknown): ColumnDef[] {
  const known = new Set(storedColumns(doc, surfaceId).map((column) => column.key));
  return addMissingColumns(
    doc,
    surfaceId,
    DEFAULT_COLUMNS.filter((column) => !known.has(column.key)),
    origin,
  );
}

function addMissingColumns(doc: Y.Doc, surfaceId: string, columns: NewColumn[], origin: unknown): ColumnDef[] {
  // Every row write seeds its keys and almost always finds them all: no transaction and no copy of the definitions for nothing.
  if (columns.length === 0) {
    ensureSheet(doc, surfaceId, origin);
    return [];
  }
  const withIds = columns.map((column) => ({ ...copyJson(column), id: column.id ?? createTableId() }));
  transactTable(doc, origin, () => {
    ensureSheet(doc, surfaceId, origin);
    appendColumns(doc, surfaceId, withIds);
  });
  const ids = new Set(withIds.map((column) => column.id));
  return readColumns(doc, surfaceId).filter((column) => ids.has(column.id));
}

/** Appends after the highest stored position (not the count: stored positions may have gaps a peer left). */
function appendColumns(doc: Y.Doc, surfaceId: string, columns: Array<NewColumn & { id: string }>): void {
  if (columns.length === 0) return;
  const next = storedColumns(doc, surfaceId).reduce((max, column) => Math.max(max, column.storedPosition === Number.MAX_SAFE_INTEGER ? -1 : column.storedPosition), -1) + 1;
  const maps = columns.map((column, i) => newColumnMap({ ...column, position: next + i }, column.id));
  columnsArrayOf(doc, surfaceId).push(maps);
}
