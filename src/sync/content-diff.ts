/**
 * What changed between two states of a surface (version contents): blocks
 * of a doc body, lines of an html page, columns and rows of a sheet. Pure;
 * used for the counts a version carries and for the diff endpoint.
 *
 * Blocks (and lines) equal in both states are matched (patience diff,
 * src/model/doc/sequence-merge.ts); between matched ones, old and new are paired by position:
 * a pair is a changed block, what is left over is removed or added, like
 * the block diff `PUT /doc` applies (src/model/doc/body.ts).
 */
import { matchKeys } from '../model/doc/sequence-merge.js';
import { sameCellValue, sameJson } from '../model/table/layout.js';
import type { ColumnDef, RowData } from '../model/table/types.js';
import type { SurfaceContent } from './surface-content.js';

export type SequenceChange<T> =
  | { op: 'added'; to: number; after: T }
  | { op: 'removed'; from: number; before: T }
  | { op: 'changed'; from: number; to: number; before: T; after: T };

export type CellChange = { before?: unknown; after?: unknown };

export type SheetDiff = {
  kind: 'sheet';
  columns: { added: ColumnDef[]; removed: ColumnDef[]; changed: Array<{ id: string; before: ColumnDef; after: ColumnDef }> };
  rows: {
    added: Array<{ id: string; position: number; data: RowData }>;
    removed: Array<{ id: string; position: number; data: RowData }>;
    changed: Array<{ id: string; position: number; cells: Record<string, CellChange> }>;
  };
  /** Rows in both states stand in another relative order. */
  reordered: boolean;
};

export type DocDiff = { kind: 'doc'; blocks: Array<SequenceChange<unknown>> };
export type HtmlDiff = { kind: 'html'; lines: Array<SequenceChange<string>> };
export type ContentDiff = SheetDiff | DocDiff | HtmlDiff;

export type ChangeCounts = { unit: 'rows' | 'blocks' | 'lines'; added: number; removed: number; changed: number; columnsChanged?: boolean };

const EMPTY: Record<SurfaceContent['kind'], SurfaceContent> = {
  sheet: { kind: 'sheet', columns: [], rows: [] },
  doc: { kind: 'doc', content: { type: 'doc', content: [] } },
  html: { kind: 'html', html: '' },
};

/** From `before` (null: nothing yet) to `after`. */
export function diffContents(before: SurfaceContent | null, after: SurfaceContent): ContentDiff {
  const from = before && before.kind === after.kind ? before : EMPTY[after.kind];
  switch (after.kind) {
    case 'doc':
      return { kind: 'doc', blocks: diffSequences(blocksOf(from), blocksOf(after), (block) => JSON.stringify(block)) };
    case 'html':
      return { kind: 'html', lines: diffSequences(linesOf(from), linesOf(after), (line) => line) };
    case 'sheet':
      return diffSheets(from as Extract<SurfaceContent, { kind: 'sheet' }>, after);
  }
}

export function countChanges(diff: ContentDiff): ChangeCounts {
  if (diff.kind === 'sheet') {
    const { columns, rows } = diff;
    return {
      unit: 'rows',
      added: rows.added.length,
      removed: rows.removed.length,
      changed: rows.changed.length,
      columnsChanged: columns.added.length + columns.removed.length + columns.changed.length > 0,
    };
  }
  const entries: Array<SequenceChange<unknown>> = diff.kind === 'doc' ? diff.blocks : diff.lines;
  return {
    unit: diff.kind === 'doc' ? 'blocks' : 'lines',
    added: entries.filter((e) => e.op === 'added').length,
    removed: entries.filter((e) => e.op === 'removed').length,
    changed: entries.filter((e) => e.op === 'changed').length,
  };
}

function blocksOf(content: SurfaceContent): unknown[] {
  const blocks = content.kind === 'doc' ? ((content.content.content as unknown[] | undefined) ?? []) : [];
  // An empty body reads as one empty paragraph: that is no block at all.
  if (blocks.length === 1 && JSON.stringify(blocks[0]) === '{"type":"paragraph"}') return [];
  return blocks;
}

function linesOf(content: SurfaceContent): string[] {
  return content.kind === 'html' && content.html !== '' ? content.html.split('\n') : [];
}

function diffSequences<T>(before: readonly T[], after: readonly T[], keyOf: (item: T) => string): Array<SequenceChange<T>> {
  const beforeKeys = before.map(keyOf);
  const afterKeys = after.map(keyOf);
  const kept = matchKeys(beforeKeys, afterKeys);
  const changes: Array<SequenceChange<T>> = [];
  let from = 0;
  let to = 0;
  for (const [keptFrom, keptTo] of [...kept, [before.length, after.length] as const]) {
    const paired = Math.min(keptFrom - from, keptTo - to);
    for (let k = 0; k < paired; k++) changes.push({ op: 'changed', from: from + k, to: to + k, before: before[from + k]!, after: after[to + k]! });
    for (let k = from + paired; k < keptFrom; k++) changes.push({ op: 'removed', from: k, before: before[k]! });
    for (let k = to + paired; k < keptTo; k++) changes.push({ op: 'added', to: k, after: after[k]! });
    from = keptFrom + 1;
    to = keptTo + 1;
  }
  return changes;
}

function diffSheets(before: Extract<SurfaceContent, { kind: 'sheet' }>, after: Extract<SurfaceContent, { kind: 'sheet' }>): SheetDiff {
  const oldColumns = new Map(before.columns.map((column) => [column.id, column]));
  const newColumns = new Map(after.columns.map((column) => [column.id, column]));
  const columns: SheetDiff['columns'] = {
    added: after.columns.filter((column) => !oldColumns.has(column.id)),
    removed: before.columns.filter((column) => !newColumns.has(column.id)),
    changed: after.columns.flatMap((column) => {
      const old = oldColumns.get(column.id);
      return old && !sameJson(old, column) ? [{ id: column.id, before: old, after: column }] : [];
    }),
  };
  const oldRows = new Map(before.rows.map((row, position) => [row.id, { ...row, position }]));
  const newIds = new Set(after.rows.map((row) => row.id));
  const rows: SheetDiff['rows'] = { added: [], removed: [], changed: [] };
  after.rows.forEach((row, position) => {
    const old = oldRows.get(row.id);
    if (!old) {
      rows.added.push({ id: row.id, position, data: row.data });
      return;
    }
    const cells = changedCells(old.data, row.data);
    if (Object.keys(cells).length > 0) rows.changed.push({ id: row.id, position, cells });
  });
  before.rows.forEach((row, position) => {
    if (!newIds.has(row.id)) rows.removed.push({ id: row.id, position, data: row.data });
  });
  const commonBefore = before.rows.filter((row) => newIds.has(row.id)).map((row) => row.id);
  const commonAfter = after.rows.filter((row) => oldRows.has(row.id)).map((row) => row.id);
  return { kind: 'sheet', columns, rows, reordered: commonBefore.some((id, i) => id !== commonAfter[i]) };
}

function changedCells(before: RowData, after: RowData): Record<string, CellChange> {
  // Cell keys are user data: `__proto__` must stay a key, not become a prototype.
  const cells: Record<string, CellChange> = Object.create(null);
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && has && sameCellValue(before[key], after[key])) continue;
    cells[key] = { ...(had ? { before: before[key] } : {}), ...(has ? { after: after[key] } : {}) };
  }
  return cells;
}
