/**
 * Two versions side by side in one reading (the history's comparison): the
 * API's diff (`GET .../versions/{id}/diff`, docs/VERSIONS.md) holds only what
 * changed; these put it back among what did not, from the older side's
 * content. Pure, so the app's comparison is the API's, shown in full.
 */
import type { VersionDiff } from '../../../src/model/schemas/versions';
import type { ColumnDef } from '../../../src/model/table/types';
import type { ComparedBlock } from '../doc/version-view';

type Cells = Record<string, unknown>;

type DocDiff = Extract<VersionDiff['diff'], { kind: 'doc' }>;

/** The blocks of a doc's older side, as the server compares them (an empty body is no block at all). */
function blocksOf(content: unknown): unknown[] {
  const blocks = ((content as { content?: unknown[] } | null)?.content ?? []) as unknown[];
  return blocks.length === 1 && JSON.stringify(blocks[0]) === '{"type":"paragraph"}' ? [] : blocks;
}

/** The text of a block's JSON (text nodes only), to find what changed inside a changed paragraph. */
function textOf(node: unknown): string | null {
  const children = (node as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return children.every((child) => child.type === 'text') ? children.map((child) => child.text ?? '').join('') : null;
}

/** Where two texts differ: after their common start and before their common end. */
function differingStretch(before: string, after: string): { before: [number, number]; after: [number, number] } {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { before: [start, before.length - end], after: [start, after.length - end] };
}

/** Both sides of a doc in one list: blocks left alone, removed and added, in reading order. */
export function compareDocBlocks(olderContent: unknown, diff: DocDiff): ComparedBlock[] {
  const older = blocksOf(olderContent);
  const touchedOld = new Set(diff.blocks.flatMap((change) => (change.from === undefined ? [] : [change.from])));
  const touchedNew = new Set(diff.blocks.flatMap((change) => (change.to === undefined ? [] : [change.to])));
  // Blocks nobody touched pair up in order: the i-th untouched old block is the i-th untouched new one.
  const keptOld = older.map((_, i) => i).filter((i) => !touchedOld.has(i));
  const newLength = keptOld.length + diff.blocks.filter((change) => change.op !== 'removed').length;
  const keptNew = Array.from({ length: newLength }, (_, i) => i).filter((i) => !touchedNew.has(i));
  const kept = keptOld.map((from, k) => ({ from, to: keptNew[k]! }));

  const out: ComparedBlock[] = [];
  let next = 0;
  const keepUntil = (before: (pair: { from: number; to: number }) => boolean) => {
    while (next < kept.length && before(kept[next]!)) out.push({ node: older[kept[next++]!.from], change: 'same' });
  };
  for (const change of diff.blocks) {
    if (change.to !== undefined) keepUntil((pair) => pair.to < change.to!);
    else keepUntil((pair) => pair.from < change.from!);
    if (change.op === 'changed' && change.before && change.after) {
      const [was, is] = [textOf(change.before.node), textOf(change.after.node)];
      const stretch = was !== null && is !== null ? differingStretch(was, is) : null;
      out.push({ node: change.before.node, change: 'removed', ...(stretch ? { differs: stretch.before } : {}) });
      out.push({ node: change.after.node, change: 'added', ...(stretch ? { differs: stretch.after } : {}) });
    } else if (change.before) out.push({ node: change.before.node, change: 'removed' });
    else if (change.after) out.push({ node: change.after.node, change: 'added' });
  }
  keepUntil(() => true);
  return out;
}

type SheetDiff = Extract<VersionDiff['diff'], { kind: 'sheet' }>;

export type ComparedCell = { value: unknown; change: 'same' } | { change: 'changed'; before?: unknown; after?: unknown };

/** A row that changed between the two sides: added, removed, or with some cells changed (the others as they were). */
export interface ComparedRow {
  id: string;
  change: 'added' | 'removed' | 'changed';
  cells: Record<string, ComparedCell>;
}

/**
 * The rows of a sheet that changed, in the newer side's order (removed rows
 * where they stood), and the columns to show them under: the older side's,
 * as renamed since, then those added. Rows nobody touched are left out.
 */
export function compareSheetRows(olderColumns: ColumnDef[], olderRows: Array<{ id: string; data: Cells }>, diff: SheetDiff): { columns: Array<ColumnDef & { change: 'same' | 'added' | 'removed' }>; rows: ComparedRow[]; unchanged: number } {
  const renamed = new Map(diff.columns.changed.map((column) => [column.id, column.after as ColumnDef]));
  const removedColumns = new Set(diff.columns.removed.map((column) => column.id));
  const columns = [
    ...olderColumns.map((column) => ({ ...(renamed.get(column.id) ?? column), change: removedColumns.has(column.id) ? ('removed' as const) : ('same' as const) })),
    ...diff.columns.added.map((column) => ({ ...(column as ColumnDef), change: 'added' as const })),
  ];
  const olderData = new Map(olderRows.map((row) => [row.id, row.data]));
  const cellsOf = (data: Cells): Record<string, ComparedCell> => Object.fromEntries(Object.entries(data).map(([key, value]) => [key, { value, change: 'same' as const }]));
  const rows: Array<ComparedRow & { at: number }> = [
    ...diff.rows.added.map((row) => ({ id: row.id, change: 'added' as const, cells: cellsOf(row.data), at: row.position })),
    ...diff.rows.removed.map((row) => ({ id: row.id, change: 'removed' as const, cells: cellsOf(row.data), at: row.position - 0.5 })),
    ...diff.rows.changed.map((row) => {
      const cells = cellsOf(olderData.get(row.id) ?? {});
      for (const [key, cell] of Object.entries(row.cells)) cells[key] = { change: 'changed', ...cell };
      return { id: row.id, change: 'changed' as const, cells, at: row.position };
    }),
  ];
  rows.sort((a, b) => a.at - b.at);
  const changedCount = diff.rows.changed.length + diff.rows.removed.length;
  return { columns, rows: rows.map(({ at: _at, ...row }) => row), unchanged: Math.max(0, olderRows.length - changedCount) };
}
