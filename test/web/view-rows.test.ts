import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import { addColumn, ensureSheet, insertRow, updateRowCells, deleteRow } from '../../src/model/table/document';
import { TableModel } from '../../web/src/table/table-model';

/**
 * The rows a saved view shows in the web app (TableModel.rowsOfView), on two
 * peers' documents kept in step the way two providers keep them: what one
 * person changes re-derives the other's open view.
 */
function twoPeers() {
  const a = new Y.Doc();
  const b = new Y.Doc();
  a.on('update', (update: Uint8Array, origin: unknown) => origin !== 'peer' && Y.applyUpdate(b, update, 'peer'));
  b.on('update', (update: Uint8Array, origin: unknown) => origin !== 'peer' && Y.applyUpdate(a, update, 'peer'));
  const sheet = 'sheet-1';
  ensureSheet(b, sheet, null);
  addColumn(b, sheet, { key: 'title', label: 'Title', type: 'text' }, null);
  addColumn(b, sheet, { key: 'status', label: 'Status', type: 'status', options: [{ value: 'todo', label: 'To do' }, { value: 'done', label: 'Done' }] }, null);
  addColumn(b, sheet, { key: 'points', label: 'Points', type: 'number' }, null);
  const seed = [
    ['r1', 'Write the post', 'todo', 3],
    ['r2', 'Record the demo', 'done', 5],
    ['r3', 'Book the call', 'todo', 5],
    ['r4', 'Draft the FAQ', null, 1],
  ] as const;
  for (const [id, title, status, points] of seed) insertRow(b, { id, surfaceId: sheet, data: { title, status, points } }, null);
  return { a: new TableModel(a), b: new TableModel(b), docA: a, docB: b, sheet };
}

describe('the rows of a saved view in the web app', () => {
  it('filters and sorts as the view says, and follows what the other peer changes', () => {
    const { a, b, docB, sheet } = twoPeers();
    const made = b.createView(sheet, { name: 'Open', filter: { and: [{ column: 'status', op: 'neq', value: 'done' }] }, sort: [{ column: 'points', direction: 'desc' }, { column: 'title', direction: 'asc' }] });
    const view = a.views(sheet).find((v) => v.id === made.id)!;
    expect(view.name).toBe('Open');
    // "is not Done" keeps the row with no status; equal points fall back to the title.
    expect(a.rowsOfView(sheet, view).rowIds).toEqual(['r3', 'r1', 'r4']);

    updateRowCells(docB, 'r3', { status: 'done' }, null);
    expect(a.rowsOfView(sheet, view).rowIds).toEqual(['r1', 'r4']);
    updateRowCells(docB, 'r4', { points: 8 }, null);
    expect(a.rowsOfView(sheet, view).rowIds).toEqual(['r4', 'r1']);
    insertRow(docB, { id: 'r5', surfaceId: sheet, data: { title: 'Plan the launch', status: 'todo', points: 3 } }, null);
    deleteRow(docB, 'r1', null);
    expect(a.rowsOfView(sheet, view).rowIds).toEqual(['r4', 'r5']);

    // The other peer changes the view itself: the new filter applies at once.
    b.updateView(made.id, { filter: { or: [{ column: 'points', op: 'between', value: [4, 8] }, { column: 'title', op: 'contains', value: 'LAUNCH' }] }, sort: [] });
    expect(a.rowsOfView(sheet, a.views(sheet)[0]!).rowIds).toEqual(['r2', 'r3', 'r4', 'r5']);
  });

  it('leaves out conditions the sheet can no longer answer rather than hiding every row, and shows rows the caller keeps', () => {
    const { a, sheet } = twoPeers();
    const view = a.createView(sheet, { name: 'Gone', filter: { and: [{ column: 'owner', op: 'eq', value: 'ann' }, { column: 'status', op: 'eq', value: 'todo' }] } });
    expect(a.rowsOfView(sheet, view)).toEqual({ rowIds: ['r1', 'r3'], ignored: 1 });
    // A row just added in the view, still empty, stays in sight.
    const added = a.addRow(sheet, {});
    expect(a.rowsOfView(sheet, view, new Set([added])).rowIds).toEqual(['r1', 'r3', added]);
    expect(a.rowsOfView(sheet, view).rowIds).toEqual(['r1', 'r3']);
  });
});
