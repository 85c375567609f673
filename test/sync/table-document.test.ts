import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  addColumn,
  compactDecodedContent,
  copyTableToFreshDocument,
  countRows,
  createTableId,
  deleteRow,
  deleteRowCells,
  diffTableTransaction,
  ensureSheet,
  getRow,
  insertRow,
  insertRows,
  listRows,
  listSheetIds,
  moveRows,
  readColumns,
  removeSheet,
  replaceColumns,
  rowExists,
  scaffoldDefaultColumns,
  seedColumnsFor,
  setRowPosition,
  sheetColumns,
  TableDocumentError,
  updateRowCells,
  updateRows,
  validateCellValues,
  type ColumnDef,
  type ListRowsOptions,
  type TableChange,
  type TableRow,
} from '../../src/model/table/document.js';

// Tests play sync peers that write the layout directly, as a browser client
// would; that is the one place besides the module allowed to name the roots.
const ME = { principal: 'usr_me' };
const SHEET_A = 'sf_a';
const SHEET_B = 'sf_b';

function newTable(): Y.Doc {
  const doc = new Y.Doc();
  scaffoldDefaultColumns(doc, SHEET_A, ME);
  ensureSheet(doc, SHEET_B, ME);
  return doc;
}

function addRows(doc: Y.Doc, count: number, surfaceId = SHEET_A, prefix = 'r'): string[] {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  insertRows(doc, ids.map((id, i) => ({ id, surfaceId, data: { title: `Row ${i}` } })), ME);
  return ids;
}

/** A second replica of `doc`, as a connected client would hold. */
function peerOf(doc: Y.Doc): Y.Doc {
  const peer = new Y.Doc();
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
  return peer;
}

/** Sends what `from` has and `to` lacks, as one remote transaction. */
function deliver(from: Y.Doc, to: Y.Doc, origin: unknown = 'remote'): void {
  Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)), origin);
}

function exchange(a: Y.Doc, b: Y.Doc): void {
  deliver(a, b);
  deliver(b, a);
}

/** Every transaction's changes, as the observer would compute them. */
function watchChanges(doc: Y.Doc): Array<{ origin: unknown; changes: TableChange[] }> {
  const seen: Array<{ origin: unknown; changes: TableChange[] }> = [];
  doc.on('afterTransaction', (transaction) => {
    const changes = diffTableTransaction(transaction);
    if (changes.length > 0) seen.push({ origin: transaction.origin, changes });
  });
  return seen;
}

function countUpdates(doc: Y.Doc): { count: number } {
  const counter = { count: 0 };
  doc.on('update', () => counter.count++);
  return counter;
}

function peerRows(peer: Y.Doc) {
  return peer.getMap<Y.Map<unknown>>('rows');
}

function peerOrder(peer: Y.Doc, surfaceId: string): Y.Array<string> {
  return peer.getMap<Y.Map<Y.Array<string>>>('sheets').get(surfaceId)!.get('order')!;
}

function peerColumns(peer: Y.Doc, surfaceId: string): Y.Array<Y.Map<unknown>> {
  return peer.getMap<Y.Map<Y.Array<Y.Map<unknown>>>>('sheets').get(surfaceId)!.get('columns')!;
}

function thrown(fn: () => unknown): TableDocumentError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TableDocumentError) return error;
    throw error;
  }
  throw new Error('expected a TableDocumentError');
}

function ids(rows: TableRow[]): string[] {
  return rows.map((row) => row.id);
}

describe('the layout', () => {
  it('is rows -> Y.Map of cells and sheets -> { columns: Y.Array<Y.Map>, order: Y.Array<rowId> }', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'Hello', tags: ['a', 'b'] } }, ME);
    const json = doc.toJSON();
    expect(json.rows).toEqual({ r1: { title: 'Hello', tags: ['a', 'b'] } });
    expect(json.sheets[SHEET_A].order).toEqual(['r1']);
    expect(json.sheets[SHEET_A].columns.map((c: ColumnDef) => c.key)).toEqual(['title', 'status', 'notes']);
    expect(json.sheets[SHEET_B]).toEqual({ columns: [], order: [] });
    expect(doc.getMap('rows').get('r1')).toBeInstanceOf(Y.Map);
  });
});

describe('sheets', () => {
  it('ensureSheet creates a sheet once and completes one a peer left without arrays', () => {
    const doc = new Y.Doc();
    expect(ensureSheet(doc, 'sf_x', ME)).toBe(true);
    expect(ensureSheet(doc, 'sf_x', ME)).toBe(false);
    doc.getMap<Y.Map<unknown>>('sheets').set('sf_broken', new Y.Map());
    expect(ensureSheet(doc, 'sf_broken', ME)).toBe(true);
    expect(doc.toJSON().sheets.sf_broken).toEqual({ columns: [], order: [] });
  });

  it('listSheetIds is the same on every peer (id order, not Y.Map integration order)', () => {
    const doc = new Y.Doc();
    for (const id of ['sf_c', 'sf_a', 'sf_b']) ensureSheet(doc, id, ME);
    expect(listSheetIds(doc)).toEqual(['sf_a', 'sf_b', 'sf_c']);
    expect(listSheetIds(peerOf(doc))).toEqual(['sf_a', 'sf_b', 'sf_c']);
  });

  it('removeSheet deletes the sheet and the rows it holds, in one transaction', () => {
    const doc = newTable();
    addRows(doc, 3, SHEET_A, 'a');
    addRows(doc, 2, SHEET_B, 'b');
    const updates = countUpdates(doc);
    expect(removeSheet(doc, SHEET_A, ME)).toEqual({ removed: true, deletedRows: 3 });
    expect(updates.count).toBe(1);
    expect(listSheetIds(doc)).toEqual([SHEET_B]);
    expect(countRows(doc)).toBe(2);
    expect(Object.keys(doc.toJSON().rows)).toEqual(['b0000', 'b0001']);
    expect(removeSheet(doc, 'sf_unknown', ME)).toEqual({ removed: false, deletedRows: 0 });
  });
});

describe('columns', () => {
  it('scaffolds title, status (To do / Doing / Done) and notes, and only once', () => {
    const doc = new Y.Doc();
    const added = scaffoldDefaultColumns(doc, SHEET_A, ME);
    expect(added.map(({ key, type, position }) => ({ key, type, position }))).toEqual([
      { key: 'title', type: 'text', position: 0 },
      { key: 'status', type: 'status', position: 1 },
      { key: 'notes', type: 'longtext', position: 2 },
    ]);
    expect(added[1]!.options).toEqual([
      { value: 'todo', label: 'To do' },
      { value: 'doing', label: 'Doing' },
      { value: 'done', label: 'Done' },
    ]);
    for (const column of added) expect(column.id).toMatch(/^[A-Za-z0-9_-]{10}$/);
    expect(scaffoldDefaultColumns(doc, SHEET_A, ME)).toEqual([]);
    expect(readColumns(doc, SHEET_A)).toHaveLength(3);
  });

  it('addColumn appends after the highest position with a server id, keeps a given id and rejects a used key', () => {
    const doc = newTable();
    const column = addColumn(doc, SHEET_A, { key: 'estimate', label: 'Estimate', type: 'number', position: 0, width: 80 }, ME);
    expect(column).toMatchObject({ key: 'estimate', position: 3, width: 80 });
    expect(column.id).toMatch(/^[A-Za-z0-9_-]{10}$/);
    expect(addColumn(doc, SHEET_A, { id: 'col_given', key: 'owner', label: 'Owner', type: 'person' }, ME).id).toBe('col_given');
    expect(thrown(() => addColumn(doc, SHEET_A, { key: 'title', label: 'Again', type: 'text' }, ME)).code).toBe('column_exists');
    expect(readColumns(doc, SHEET_A).map((c) => [c.key, c.position])).toEqual([
      ['title', 0],
      ['status', 1],
      ['notes', 2],
      ['estimate', 3],
      ['owner', 4],
    ]);
  });

  it('addColumn creates the sheet on a doc-only workspace', () => {
    const doc = new Y.Doc();
    addColumn(doc, 'sf_new', { key: 'k', label: 'K', type: 'text' }, ME);
    expect(listSheetIds(doc)).toEqual(['sf_new']);
  });

  it('readColumns orders by stored position, ties by array order, and renumbers from 0', () => {
    const doc = newTable();
    const peer = peerOf(doc);
    const columns = peerColumns(peer, SHEET_A);
    peer.transact(() => {
      const a = new Y.Map<unknown>();
      a.set('key', 'late');
      a.set('label', 'Late');
      a.set('type', 'text');
      a.set('position', 10); // a peer left a gap
      columns.push([a]);
      columns.get(2).set('position', 0); // notes ties with title
    });
    deliver(peer, doc);
    expect(readColumns(doc, SHEET_A).map((c) => [c.key, c.position])).toEqual([
      ['title', 0],
      ['notes', 1],
      ['status', 2],
      ['late', 3],
    ]);
    // A column a peer made without an id reads with its key as id.
    expect(readColumns(doc, SHEET_A)[3]!.id).toBe('late');
  });

  it('seedColumnsFor adds a text column per unknown key', () => {
    const doc = newTable();
    const added = seedColumnsFor(doc, SHEET_A, ['title', 'priority', 'owner', 'priority'], ME);
    expect(added.map(({ key, label, type, position }) => ({ key, label, type, position }))).toEqual([
      { key: 'priority', label: 'priority', type: 'text', position: 3 },
      { key: 'owner', label: 'owner', type: 'text', position: 4 },
    ]);
    expect(seedColumnsFor(doc, SHEET_A, ['title'], ME)).toEqual([]);
  });

  describe('sheetColumns (kept between transactions, for row writes)', () => {
    const keysAndTypes = (doc: Y.Doc, surfaceId = SHEET_A) => sheetColumns(doc, surfaceId).map((column) => `${column.key}:${column.type}`);

    it('reads columns added earlier in the same transaction, not the ones kept before it', () => {
      const doc = newTable();
      expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:longtext']);
      doc.transact(() => {
        addColumn(doc, SHEET_A, { key: 'estimate', label: 'Estimate', type: 'number' }, ME);
        expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:longtext', 'estimate:number']);
        seedColumnsFor(doc, SHEET_A, ['owner'], ME, sheetColumns(doc, SHEET_A));
        expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:longtext', 'estimate:number', 'owner:text']);
      }, ME);
      expect(keysAndTypes(doc)).toEqual(readColumns(doc, SHEET_A).map((column) => `${column.key}:${column.type}`));
      expect(keysAndTypes(doc)).toHaveLength(5);
    });

    it('reads a column field changed earlier in the same transaction (a type, in place)', () => {
      const doc = newTable();
      const before = readColumns(doc, SHEET_A);
      expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:longtext']);
      doc.transact(() => {
        replaceColumns(doc, SHEET_A, before.map((column) => (column.key === 'notes' ? { ...column, type: 'number' as const } : column)), ME);
        expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:number']);
      }, ME);
      expect(keysAndTypes(doc)).toEqual(['title:text', 'status:status', 'notes:number']);
    });

    it('reads a sheet removed and made again in the same transaction as empty, and a removed sheet as empty after', () => {
      const doc = newTable();
      expect(keysAndTypes(doc)).toHaveLength(3);
      doc.transact(() => {
        removeSheet(doc, SHEET_A, ME);
        ensureSheet(doc, SHEET_A, ME);
        expect(keysAndTypes(doc)).toEqual([]);
      }, ME);
      scaffoldDefaultColumns(doc, SHEET_A, ME);
      expect(keysAndTypes(doc)).toHaveLength(3);
      removeSheet(doc, SHEET_A, ME);
      expect(keysAndTypes(doc)).toEqual([]);
    });

    it("reads a peer's column change once it is applied", () => {
      const doc = newTable();
      const peer = peerOf(doc);
      expect(keysAndTypes(doc)).toHaveLength(3);
      peerColumns(peer, SHEET_A).get(0).set('type', 'longtext');
      deliver(peer, doc);
      expect(keysAndTypes(doc)[0]).toBe('title:longtext');
    });
  });

  describe('replaceColumns', () => {
    it('matches by id, then by key; renames a key in every row of that sheet only', () => {
      const doc = newTable();
      ensureSheet(doc, SHEET_B, ME);
      insertRow(doc, { id: 'a1', surfaceId: SHEET_A, data: { title: 'A', notes: 'n' } }, ME);
      insertRow(doc, { id: 'b1', surfaceId: SHEET_B, data: { title: 'B' } }, ME);
      const [title, status, notes] = readColumns(doc, SHEET_A);
      const result = replaceColumns(
        doc,
        SHEET_A,
        [
          { ...title!, key: 'name', label: 'Name' },
          { key: 'notes', label: 'Notes', type: 'longtext', position: 2 }, // no id: matched by key
          { key: 'due', label: 'Due', type: 'date', position: 1 },
        ],
        ME,
      );
      expect(result.map((c) => [c.key, c.position])).toEqual([
        ['name', 0],
        ['due', 1],
        ['notes', 2],
      ]);
      expect(result[0]!.id).toBe(title!.id);
      expect(result[2]!.id).toBe(notes!.id);
      expect(result[1]!.id).toMatch(/^[A-Za-z0-9_-]{10}$/);
      expect(result.some((c) => c.id === status!.id)).toBe(false);
      expect(getRow(doc, 'a1')!.data).toEqual({ name: 'A', notes: 'n' });
      expect(getRow(doc, 'b1')!.data).toEqual({ title: 'B' }); // another sheet, its own columns
    });

    it('removes fields not given, keeps cells of removed columns, and swaps keys', () => {
      const doc = newTable();
      insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'T', status: 'todo', notes: 'N' } }, ME);
      const [title, status, notes] = readColumns(doc, SHEET_A);
      replaceColumns(doc, SHEET_A, [{ ...title!, width: 200 }, status!, notes!], ME);
      expect(readColumns(doc, SHEET_A)[0]!.width).toBe(200);
      const { width: _dropped, ...titleWithoutWidth } = readColumns(doc, SHEET_A)[0]!;
      replaceColumns(doc, SHEET_A, [{ ...titleWithoutWidth, key: 'notes' }, { ...notes!, key: 'title', position: 1 }], ME);
      expect(readColumns(doc, SHEET_A).map((c) => [c.id, c.key, c.width])).toEqual([
        [title!.id, 'notes', undefined],
        [notes!.id, 'title', undefined],
      ]);
      expect(getRow(doc, 'r1')!.data).toEqual({ title: 'N', notes: 'T', status: 'todo' });
    });

    it('writes nothing when nothing differs, leaving the column maps as they are', () => {
      const doc = newTable();
      const before = peerColumns(doc, SHEET_A).toArray();
      const updates = countUpdates(doc);
      replaceColumns(doc, SHEET_A, readColumns(doc, SHEET_A), ME);
      expect(updates.count).toBe(0);
      expect(peerColumns(doc, SHEET_A).toArray()).toEqual(before);
      for (const [i, map] of before.entries()) expect(peerColumns(doc, SHEET_A).get(i)).toBe(map);
    });

    it('merges with a concurrent edit of another field of the same column', () => {
      const doc = newTable();
      const peer = peerOf(doc);
      peerColumns(peer, SHEET_A).get(0).set('label', 'Headline');
      const columns = readColumns(doc, SHEET_A);
      replaceColumns(doc, SHEET_A, [{ ...columns[0]!, width: 300 }, columns[1]!, columns[2]!], ME);
      exchange(doc, peer);
      for (const replica of [doc, peer]) expect(readColumns(replica, SHEET_A)[0]).toMatchObject({ label: 'Headline', width: 300 });
    });

    it('rejects non-contiguous positions and repeated keys or ids before writing', () => {
      const doc = newTable();
      const columns = readColumns(doc, SHEET_A);
      const updates = countUpdates(doc);
      const gap = thrown(() => replaceColumns(doc, SHEET_A, [columns[0]!, { ...columns[1]!, position: 5 }], ME));
      expect(gap.code).toBe('invalid_columns');
      expect(gap.details[0]!.code).toBe('non_contiguous_positions');
      const twice = thrown(() => replaceColumns(doc, SHEET_A, [columns[0]!, { ...columns[1]!, key: 'title' }], ME));
      expect(twice.details).toEqual([expect.objectContaining({ path: ['columns', '1', 'key'], code: 'duplicate' })]);
      expect(thrown(() => replaceColumns(doc, SHEET_A, [columns[0]!, { ...columns[1]!, id: columns[0]!.id }], ME)).code).toBe('invalid_columns');
      expect(updates.count).toBe(0);
    });

    it('creates the sheet and columns on an empty document', () => {
      const doc = new Y.Doc();
      const result = replaceColumns(doc, 'sf_n', [{ key: 'a', label: 'A', type: 'text', position: 0, custom: { x: 1 } }], ME);
      expect(result).toEqual([{ id: expect.any(String), key: 'a', label: 'A', type: 'text', position: 0, custom: { x: 1 } }]);
    });

    it('returns copies: mutating a read column does not touch the document', () => {
      const doc = newTable();
      readColumns(doc, SHEET_A)[1]!.options!.push({ value: 'x', label: 'X' });
      expect(readColumns(doc, SHEET_A)[1]!.options).toHaveLength(3);
    });
  });
});

describe('rows', () => {
  it('insertRow appends at the tail, or at a position, and getRow reports sheet and position', () => {
    const doc = newTable();
    const first = insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'One' } }, ME);
    expect(first).toEqual({ id: 'r1', surfaceId: SHEET_A, position: 0, data: { title: 'One' } });
    insertRow(doc, { id: 'r2', surfaceId: SHEET_A, data: {} }, ME);
    expect(insertRow(doc, { id: 'r0', surfaceId: SHEET_A, data: {}, position: 0 }, ME).position).toBe(0);
    insertRow(doc, { id: 'r15', surfaceId: SHEET_A, data: {}, position: 2 }, ME);
    insertRow(doc, { id: 'r9', surfaceId: SHEET_A, data: {}, position: 99 }, ME);
    expect(ids(listRows(doc).rows)).toEqual(['r0', 'r1', 'r15', 'r2', 'r9']);
    expect(getRow(doc, 'r2')!.position).toBe(3);
    expect(getRow(doc, 'nope')).toBeNull();
  });

  it('insertRows is one transaction; positions count the rows appended before them', () => {
    const doc = newTable();
    const updates = countUpdates(doc);
    const rows = insertRows(
      doc,
      [
        { id: 'a', surfaceId: SHEET_A, data: {} },
        { id: 'b', surfaceId: SHEET_A, data: {} },
        { id: 'x', surfaceId: SHEET_A, data: {}, position: 1 },
        { id: 'c', surfaceId: SHEET_B, data: {} },
      ],
      ME,
    );
    expect(updates.count).toBe(1);
    expect(rows.map((r) => [r.id, r.surfaceId, r.position])).toEqual([
      ['a', SHEET_A, 0],
      ['b', SHEET_A, 2],
      ['x', SHEET_A, 1],
      ['c', SHEET_B, 0],
    ]);
  });

  it('refuses a used id, an unknown sheet or a value a cell cannot hold, writing nothing', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: {} }, ME);
    const updates = countUpdates(doc);
    expect(thrown(() => insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: {} }, ME)).code).toBe('row_exists');
    expect(thrown(() => insertRows(doc, [{ id: 'n', surfaceId: SHEET_A, data: {} }, { id: 'n', surfaceId: SHEET_A, data: {} }], ME)).code).toBe('row_exists');
    expect(thrown(() => insertRow(doc, { id: 'r2', surfaceId: 'sf_none', data: {} }, ME)).code).toBe('sheet_not_found');
    const bad = thrown(() => insertRow(doc, { id: 'r3', surfaceId: SHEET_A, data: { title: { nested: true } as never } }, ME));
    expect(bad.code).toBe('invalid_row');
    expect(bad.details[0]!.path).toEqual(['0', 'data', 'title']);
    expect(updates.count).toBe(0);
  });

  it('copies arrays in and out so callers cannot edit the document by mutation', () => {
    const doc = newTable();
    const tags = ['a'];
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { tags } }, ME);
    tags.push('b');
    (getRow(doc, 'r1')!.data.tags as string[]).push('c');
    expect(getRow(doc, 'r1')!.data.tags).toEqual(['a']);
  });

  it('reads what a peer stored outside the cell types as plain JSON, never as Y types', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: {} }, ME);
    const peer = peerOf(doc);
    const text = new Y.Text();
    text.insert(0, 'rich');
    peer.transact(() => {
      peerRows(peer).get('r1')!.set('text', text);
      peerRows(peer).get('r1')!.set('object', { a: [1, 2] });
    });
    deliver(peer, doc);
    const data = getRow(doc, 'r1')!.data as Record<string, unknown>;
    expect(data).toEqual({ text: 'rich', object: { a: [1, 2] } });
    (data.object as { a: number[] }).a.push(3);
    expect(getRow(doc, 'r1')!.data.object).toEqual({ a: [1, 2] });
  });

  it('updateRowCells merges partially, stores null, and skips values that did not change', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'T', status: 'todo' } }, ME);
    expect(updateRowCells(doc, 'r1', { status: 'done', notes: null }, ME)).toEqual(['status', 'notes']);
    expect(getRow(doc, 'r1')!.data).toEqual({ title: 'T', status: 'done', notes: null });
    const updates = countUpdates(doc);
    expect(updateRowCells(doc, 'r1', { title: 'T', notes: null }, ME)).toEqual([]);
    expect(updates.count).toBe(0);
    expect(thrown(() => updateRowCells(doc, 'nope', { title: 'x' }, ME)).code).toBe('row_not_found');
  });

  it('updateRows is all-or-nothing and one transaction', () => {
    const doc = newTable();
    addRows(doc, 3);
    const updates = countUpdates(doc);
    const error = thrown(() => updateRows(doc, [{ id: 'r0000', data: { title: 'x' } }, { id: 'ghost', data: { title: 'y' } }], ME));
    expect(error.code).toBe('row_not_found');
    expect(error.details[0]!.path).toEqual(['1', 'id']);
    expect(getRow(doc, 'r0000')!.data.title).toBe('Row 0');
    const result = updateRows(doc, [{ id: 'r0000', data: { title: 'x' } }, { id: 'r0002', data: { notes: 'y' } }], ME);
    expect(result).toEqual([
      { id: 'r0000', changedKeys: ['title'] },
      { id: 'r0002', changedKeys: ['notes'] },
    ]);
    expect(updates.count).toBe(1);
  });

  it('deleteRowCells removes keys (unlike null)', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'T', notes: 'N' } }, ME);
    expect(deleteRowCells(doc, 'r1', ['notes', 'missing'], ME)).toEqual(['notes']);
    expect(getRow(doc, 'r1')!.data).toEqual({ title: 'T' });
  });

  it('deleteRow removes the map and its order entry; later positions close up', () => {
    const doc = newTable();
    addRows(doc, 3);
    expect(deleteRow(doc, 'r0001', ME)).toBe(true);
    expect(deleteRow(doc, 'r0001', ME)).toBe(false);
    expect(rowExists(doc, 'r0001')).toBe(false);
    expect(doc.toJSON().rows.r0001).toBeUndefined();
    expect(getRow(doc, 'r0002')!.position).toBe(1);
    expect(countRows(doc, SHEET_A)).toBe(2);
    expect(countRows(doc)).toBe(2);
    expect(countRows(doc, 'sf_unknown')).toBe(0);
  });

  it('setRowPosition reorders within the sheet', () => {
    const doc = newTable();
    addRows(doc, 4);
    expect(setRowPosition(doc, 'r0000', 2, ME)).toBe(true);
    expect(ids(listRows(doc).rows)).toEqual(['r0001', 'r0002', 'r0000', 'r0003']);
    expect(setRowPosition(doc, 'r0003', 0, ME)).toBe(true);
    expect(ids(listRows(doc).rows)).toEqual(['r0003', 'r0001', 'r0002', 'r0000']);
    expect(setRowPosition(doc, 'r0001', 99, ME)).toBe(true);
    expect(ids(listRows(doc).rows)).toEqual(['r0003', 'r0002', 'r0000', 'r0001']);
    expect(setRowPosition(doc, 'r0001', 3, ME)).toBe(false);
  });

  describe('moveRows', () => {
    it('appends at the target tail in the order supplied, skipping rows already there, in one transaction', () => {
      const doc = newTable();
      addRows(doc, 5, SHEET_A, 'a');
      addRows(doc, 2, SHEET_B, 'b');
      const updates = countUpdates(doc);
      const result = moveRows(doc, ['a0003', 'b0000', 'a0001', 'a0003'], SHEET_B, ME);
      expect(result).toEqual({ moved: ['a0003', 'a0001'], skipped: 2 });
      expect(updates.count).toBe(1);
      expect(ids(listRows(doc, { surfaceId: SHEET_B }).rows)).toEqual(['b0000', 'b0001', 'a0003', 'a0001']);
      expect(listRows(doc, { surfaceId: SHEET_A }).rows.map((r) => [r.id, r.position])).toEqual([
        ['a0000', 0],
        ['a0002', 1],
        ['a0004', 2],
      ]);
    });

    it('lands at a position when asked', () => {
      const doc = newTable();
      addRows(doc, 3, SHEET_A, 'a');
      addRows(doc, 3, SHEET_B, 'b');
      moveRows(doc, ['a0002', 'a0000'], SHEET_B, ME, { position: 1 });
      expect(ids(listRows(doc, { surfaceId: SHEET_B }).rows)).toEqual(['b0000', 'a0002', 'a0000', 'b0001', 'b0002']);
    });

    it('fails the whole batch on an unknown row or sheet', () => {
      const doc = newTable();
      addRows(doc, 2);
      const updates = countUpdates(doc);
      const error = thrown(() => moveRows(doc, ['r0000', 'ghost'], SHEET_B, ME));
      expect(error.code).toBe('row_not_found');
      expect(error.details).toEqual([expect.objectContaining({ path: ['rowIds', '1'] })]);
      expect(thrown(() => moveRows(doc, ['r0000'], 'sf_none', ME)).code).toBe('sheet_not_found');
      expect(updates.count).toBe(0);
      expect(getRow(doc, 'r0000')!.surfaceId).toBe(SHEET_A);
    });
  });
});

describe('listRows', () => {
  it('lists sheet by sheet, in id order or the order the caller gives', () => {
    const doc = newTable();
    addRows(doc, 2, SHEET_B, 'b');
    addRows(doc, 2, SHEET_A, 'a');
    expect(ids(listRows(doc).rows)).toEqual(['a0000', 'a0001', 'b0000', 'b0001']);
    expect(ids(listRows(doc, { sheetOrder: [SHEET_B] }).rows)).toEqual(['b0000', 'b0001', 'a0000', 'a0001']);
    expect(ids(listRows(doc, { surfaceId: SHEET_B }).rows)).toEqual(['b0000', 'b0001']);
    expect(listRows(doc, { surfaceId: 'sf_none' })).toEqual({ rows: [], nextCursor: null });
  });

  it('sorts by a column, ties by position, case-insensitively, with empty cells last either way', () => {
    const doc = newTable();
    const titles = ['banana', 'Apple', null, 'cherry', 'apple', undefined];
    insertRows(
      doc,
      titles.map((title, i) => ({ id: `r${i}`, surfaceId: SHEET_A, data: title === undefined ? {} : { title } })),
      ME,
    );
    expect(ids(listRows(doc, { sortKey: 'title' }).rows)).toEqual(['r1', 'r4', 'r0', 'r3', 'r2', 'r5']);
    expect(ids(listRows(doc, { sortKey: 'title', descending: true }).rows)).toEqual(['r3', 'r0', 'r1', 'r4', 'r2', 'r5']);
  });

  it('sorts numbers numerically and booleans false first', () => {
    const doc = newTable();
    insertRows(doc, [10, 9, 100].map((n, i) => ({ id: `n${i}`, surfaceId: SHEET_A, data: { n, b: i !== 1 } })), ME);
    expect(ids(listRows(doc, { sortKey: 'n' }).rows)).toEqual(['n1', 'n0', 'n2']);
    expect(ids(listRows(doc, { sortKey: 'b' }).rows)).toEqual(['n1', 'n0', 'n2']);
  });

  describe('cursor pagination over 1,000 rows', () => {
    const doc = newTable();
    const statuses = ['todo', 'doing', 'done'];
    insertRows(
      doc,
      Array.from({ length: 1000 }, (_, i) => ({
        id: `row${String(i).padStart(4, '0')}`,
        surfaceId: i % 3 === 0 ? SHEET_B : SHEET_A,
        data: { title: `T${(i * 7919) % 1000}`, status: statuses[i % 3]!, estimate: i % 10 === 0 ? null : (i * 31) % 17 },
      })),
      ME,
    );

    function collect(options: ListRowsOptions): { rows: TableRow[]; pages: number } {
      const rows: TableRow[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page = listRows(doc, { ...options, limit: 37, after });
        rows.push(...page.rows);
        after = page.nextCursor;
        pages++;
      } while (after !== null);
      return { rows, pages };
    }

    it.each<[string, ListRowsOptions]>([
      ['default order', {}],
      ['one sheet', { surfaceId: SHEET_A }],
      ['sorted by status', { sortKey: 'status' }],
      ['sorted by estimate, descending', { sortKey: 'estimate', descending: true }],
      ['sorted by title within a sheet', { sortKey: 'title', surfaceId: SHEET_B }],
    ])('%s: visits every row exactly once, in the same order as one full listing', (_, options) => {
      const whole = listRows(doc, options).rows;
      const { rows, pages } = collect(options);
      expect(ids(rows)).toEqual(ids(whole));
      expect(new Set(ids(rows)).size).toBe(rows.length);
      expect(rows.length).toBe(options.surfaceId ? countRows(doc, options.surfaceId) : 1000);
      expect(pages).toBe(Math.ceil(rows.length / 37));
    });

    it('the last page has no cursor', () => {
      expect(listRows(doc, { limit: 1000 }).nextCursor).toBeNull();
      expect(listRows(doc, { limit: 999 }).nextCursor).not.toBeNull();
    });
  });

  it('a page boundary survives deleting or moving the row it ended on', () => {
    const doc = newTable();
    addRows(doc, 10);
    const first = listRows(doc, { limit: 4 });
    expect(ids(first.rows)).toEqual(['r0000', 'r0001', 'r0002', 'r0003']);
    deleteRow(doc, 'r0003', ME);
    moveRows(doc, ['r0001'], SHEET_B, ME);
    const second = listRows(doc, { surfaceId: undefined, limit: 4, after: first.nextCursor });
    expect(ids(second.rows)).toEqual(['r0004', 'r0005', 'r0006', 'r0007']);
  });

  it('a sorted listing kept for paging is dropped when the table changes', () => {
    const doc = newTable();
    insertRows(doc, ['a', 'b', 'c', 'd', 'e', 'f'].map((title) => ({ id: title, surfaceId: SHEET_A, data: { title } })), ME);
    const first = listRows(doc, { sortKey: 'title', limit: 2 });
    const second = listRows(doc, { sortKey: 'title', limit: 2, after: first.nextCursor });
    expect(ids(second.rows)).toEqual(['c', 'd']);
    updateRowCells(doc, 'e', { title: 'zz' }, ME);
    const third = listRows(doc, { sortKey: 'title', limit: 2, after: second.nextCursor });
    expect(third.rows.map((row) => [row.id, row.data.title])).toEqual([
      ['f', 'f'],
      ['e', 'zz'],
    ]);
    expect(third.nextCursor).toBeNull();
  });

  it('rejects a cursor that is garbage or belongs to another listing', () => {
    const doc = newTable();
    addRows(doc, 5);
    const cursor = listRows(doc, { limit: 2 }).nextCursor!;
    expect(thrown(() => listRows(doc, { after: 'not a cursor!' })).code).toBe('invalid_cursor');
    expect(thrown(() => listRows(doc, { after: 'eyJ2IjoxfQ' })).code).toBe('invalid_cursor');
    expect(thrown(() => listRows(doc, { after: cursor, sortKey: 'title' })).code).toBe('invalid_cursor');
    expect(thrown(() => listRows(doc, { after: cursor, surfaceId: SHEET_A })).code).toBe('invalid_cursor');
  });
});

describe('concurrency', () => {
  it('two replicas editing different cells of one row both survive the exchange', () => {
    const doc = newTable();
    insertRow(doc, { id: 'r1', surfaceId: SHEET_A, data: { title: 'T', status: 'todo' } }, ME);
    const peer = peerOf(doc);
    updateRowCells(doc, 'r1', { title: 'Server title' }, ME);
    updateRowCells(peer, 'r1', { status: 'done', notes: 'from peer' }, { principal: 'agent' });
    exchange(doc, peer);
    for (const replica of [doc, peer]) {
      expect(getRow(replica, 'r1')!.data).toEqual({ title: 'Server title', status: 'done', notes: 'from peer' });
    }
  });

  it('a move on one replica and a cell edit on another both apply', () => {
    const doc = newTable();
    addRows(doc, 3);
    const peer = peerOf(doc);
    moveRows(doc, ['r0001'], SHEET_B, ME);
    updateRowCells(peer, 'r0001', { title: 'edited while moving' }, ME);
    exchange(doc, peer);
    for (const replica of [doc, peer]) {
      expect(getRow(replica, 'r0001')).toEqual({ id: 'r0001', surfaceId: SHEET_B, position: 0, data: { title: 'edited while moving' } });
    }
  });

  it('a row moved to two sheets at once settles in the same place on every replica', () => {
    const doc = newTable();
    ensureSheet(doc, 'sf_c', ME);
    addRows(doc, 2);
    const peer = peerOf(doc);
    moveRows(doc, ['r0000'], SHEET_B, ME);
    moveRows(peer, ['r0000'], 'sf_c', ME);
    exchange(doc, peer);
    expect(getRow(doc, 'r0000')).toEqual(getRow(peer, 'r0000'));
    expect(getRow(doc, 'r0000')!.surfaceId).toBe(SHEET_B); // first in sheet-id order
    expect(countRows(doc)).toBe(2);
    expect(listRows(peer).rows).toEqual(listRows(doc).rows);
  });

  it('concurrent appends keep every row, and a delete concurrent with an edit deletes', () => {
    const doc = newTable();
    addRows(doc, 1);
    const peer = peerOf(doc);
    insertRow(doc, { id: 'mine', surfaceId: SHEET_A, data: {} }, ME);
    insertRow(peer, { id: 'theirs', surfaceId: SHEET_A, data: {} }, ME);
    deleteRow(doc, 'r0000', ME);
    updateRowCells(peer, 'r0000', { title: 'too late' }, ME);
    exchange(doc, peer);
    expect(ids(listRows(doc).rows).sort()).toEqual(['mine', 'theirs']);
    expect(listRows(peer).rows).toEqual(listRows(doc).rows);
  });

  it('functions called inside one caller transaction see each other and make one update', () => {
    const doc = newTable();
    addRows(doc, 3);
    const seen = watchChanges(doc);
    const updates = countUpdates(doc);
    doc.transact(() => {
      expect(insertRow(doc, { id: 'x', surfaceId: SHEET_A, data: { title: 'x' } }, 'ignored').position).toBe(3);
      expect(listRows(doc, { sortKey: 'title', surfaceId: SHEET_A }).rows.at(-1)!.id).toBe('x');
      moveRows(doc, ['x'], SHEET_B, 'ignored');
      expect(getRow(doc, 'x')).toMatchObject({ surfaceId: SHEET_B, position: 0 });
      updateRowCells(doc, 'r0000', { title: 'zzz' }, 'ignored');
      expect(listRows(doc, { sortKey: 'title', surfaceId: SHEET_A }).rows.at(-1)!.id).toBe('r0000');
    }, ME);
    expect(updates.count).toBe(1);
    expect(seen).toEqual([
      {
        origin: ME,
        changes: [
          { kind: 'row.created', rowId: 'x', surfaceId: SHEET_B },
          { kind: 'row.updated', rowId: 'r0000', surfaceId: SHEET_A, changedKeys: ['title'] },
        ],
      },
    ]);
  });

  it('positions read after a remote change are fresh (the cached index is dropped)', () => {
    const doc = newTable();
    addRows(doc, 3);
    expect(getRow(doc, 'r0002')!.position).toBe(2);
    const peer = peerOf(doc);
    peerOrder(peer, SHEET_A).delete(0, 1);
    deliver(peer, doc);
    expect(getRow(doc, 'r0002')!.position).toBe(1);
    expect(getRow(doc, 'r0000')).toBeNull();
  });
});

describe('diffTableTransaction', () => {
  function setup() {
    const doc = newTable();
    addRows(doc, 3);
    const peer = peerOf(doc);
    const seen = watchChanges(doc);
    return { doc, peer, seen, last: () => seen.at(-1) };
  }

  it('row.created: local insert, and a peer setting a map and pushing its id', () => {
    const { doc, peer, seen, last } = setup();
    insertRow(doc, { id: 'local', surfaceId: SHEET_B, data: { title: 'x' } }, ME);
    expect(last()).toEqual({ origin: ME, changes: [{ kind: 'row.created', rowId: 'local', surfaceId: SHEET_B }] });

    peer.transact(() => {
      const row = new Y.Map<unknown>();
      row.set('title', 'remote');
      peerRows(peer).set('remote', row);
      peerOrder(peer, SHEET_A).push(['remote']);
    });
    deliver(peer, doc, 'peer-1');
    expect(last()).toEqual({ origin: 'peer-1', changes: [{ kind: 'row.created', rowId: 'remote', surfaceId: SHEET_A }] });
    expect(seen).toHaveLength(2);
  });

  it('a row map no order lists is reported once a later transaction places it', () => {
    const { doc, peer, seen, last } = setup();
    const row = new Y.Map<unknown>();
    peerRows(peer).set('orphan', row);
    deliver(peer, doc);
    expect(seen).toHaveLength(0);
    expect(getRow(doc, 'orphan')).toBeNull();
    peerOrder(peer, SHEET_B).push(['orphan']);
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.created', rowId: 'orphan', surfaceId: SHEET_B }]);
  });

  it('row.updated with the changed keys: local, remote, and not for a value set to itself', () => {
    const { doc, peer, seen, last } = setup();
    updateRowCells(doc, 'r0000', { status: 'doing', notes: null }, ME);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0000', surfaceId: SHEET_A, changedKeys: ['status', 'notes'] }]);

    peer.transact(() => {
      const row = peerRows(peer).get('r0001')!;
      row.set('title', 'Row 1'); // unchanged value, still a new Yjs item
      row.set('estimate', 5);
      row.delete('missing');
    });
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0001', surfaceId: SHEET_A, changedKeys: ['estimate'] }]);

    peerRows(peer).get('r0002')!.set('title', 'Row 2');
    deliver(peer, doc);
    expect(seen).toHaveLength(2);

    deleteRowCells(doc, 'r0000', ['status'], ME);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0000', surfaceId: SHEET_A, changedKeys: ['status'] }]);
  });

  it('row.deleted: local delete, a peer deleting map and entry, a peer dropping only the map or only the entry', () => {
    const { doc, peer, last } = setup();
    addRows(doc, 2, SHEET_B, 'b');
    deliver(doc, peer);
    deleteRow(doc, 'r0000', ME);
    expect(last()!.changes).toEqual([{ kind: 'row.deleted', rowId: 'r0000', surfaceId: SHEET_A }]);
    deliver(doc, peer);

    peer.transact(() => {
      peerRows(peer).delete('r0001');
      peerOrder(peer, SHEET_A).delete(0, 1);
    });
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.deleted', rowId: 'r0001', surfaceId: SHEET_A }]);

    peerRows(peer).delete('r0002'); // the id stays in the order, dangling
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.deleted', rowId: 'r0002', surfaceId: SHEET_A }]);
    expect(countRows(doc, SHEET_A)).toBe(0);

    peerOrder(peer, SHEET_B).delete(0, 1); // the map stays, no sheet lists it
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.deleted', rowId: 'b0000', surfaceId: SHEET_B }]);
  });

  it('row.moved_surface: a local moveRows is one transaction with one change per moved row', () => {
    const { doc, seen, last } = setup();
    const before = seen.length;
    moveRows(doc, ['r0002', 'r0000'], SHEET_B, ME);
    expect(seen.length).toBe(before + 1);
    expect(last()).toEqual({
      origin: ME,
      changes: [
        { kind: 'row.moved_surface', rowId: 'r0002', fromSurfaceId: SHEET_A, toSurfaceId: SHEET_B },
        { kind: 'row.moved_surface', rowId: 'r0000', fromSurfaceId: SHEET_A, toSurfaceId: SHEET_B },
      ],
    });
  });

  it('row.moved_surface from a peer removing an id from one order and pushing it to another, with a cell edit', () => {
    const { doc, peer, last } = setup();
    peer.transact(() => {
      peerOrder(peer, SHEET_A).delete(1, 1);
      peerOrder(peer, SHEET_B).push(['r0001']);
      peerRows(peer).get('r0001')!.set('status', 'done');
    });
    deliver(peer, doc);
    expect(last()!.changes).toEqual([
      { kind: 'row.moved_surface', rowId: 'r0001', fromSurfaceId: SHEET_A, toSurfaceId: SHEET_B },
      { kind: 'row.updated', rowId: 'r0001', surfaceId: SHEET_B, changedKeys: ['status'] },
    ]);
  });

  it.each([
    ['into a later sheet', 'sf_z'],
    ['into an earlier sheet', 'sf_0'],
  ])('a peer moving a row in two transactions (push %s, then delete the old entry) reports one move', (_, target) => {
    const { doc, peer, seen } = setup();
    ensureSheet(doc, target, ME);
    deliver(doc, peer);
    const before = seen.length;
    peerOrder(peer, target).push(['r0001']);
    deliver(peer, doc);
    peerOrder(peer, SHEET_A).delete(1, 1);
    deliver(peer, doc);
    expect(seen.slice(before).flatMap((s) => s.changes)).toEqual([
      { kind: 'row.moved_surface', rowId: 'r0001', fromSurfaceId: SHEET_A, toSurfaceId: target },
    ]);
    expect(getRow(doc, 'r0001')!.surfaceId).toBe(target);
  });

  it('a reorder within a sheet is row.updated with positionChanged, for the moved row only', () => {
    const { doc, peer, last } = setup();
    setRowPosition(doc, 'r0000', 2, ME);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0000', surfaceId: SHEET_A, changedKeys: [], positionChanged: true }]);
    peer.transact(() => {
      peerOrder(peer, SHEET_A).delete(2, 1);
      peerOrder(peer, SHEET_A).insert(0, ['r0002']);
    });
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0002', surfaceId: SHEET_A, changedKeys: [], positionChanged: true }]);
  });

  it('a peer replacing a row map under the same id reports the keys that differ', () => {
    const { doc, peer, last } = setup();
    const replacement = new Y.Map<unknown>();
    replacement.set('title', 'Row 0');
    replacement.set('notes', 'new');
    peerRows(peer).set('r0000', replacement);
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'row.updated', rowId: 'r0000', surfaceId: SHEET_A, changedKeys: ['notes'] }]);
  });

  it('columns.updated: local replace and add, a peer editing a column field or adding a column', () => {
    const { doc, peer, last } = setup();
    const columns = readColumns(doc, SHEET_A);
    replaceColumns(doc, SHEET_A, [{ ...columns[0]!, label: 'Name' }, columns[1]!, columns[2]!], ME);
    expect(last()!.changes).toEqual([{ kind: 'columns.updated', surfaceId: SHEET_A }]);
    addColumn(doc, SHEET_B, { key: 'k', label: 'K', type: 'text' }, ME);
    expect(last()!.changes).toEqual([{ kind: 'columns.updated', surfaceId: SHEET_B }]);

    peerColumns(peer, SHEET_A).get(1).set('hidden', true);
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'columns.updated', surfaceId: SHEET_A }]);
    const column = new Y.Map<unknown>();
    column.set('key', 'extra');
    peerColumns(peer, SHEET_B).push([column]);
    deliver(peer, doc);
    expect(last()!.changes).toEqual([{ kind: 'columns.updated', surfaceId: SHEET_B }]);
  });

  it('a column rename reports the columns and each row whose key moved', () => {
    const { doc, last } = setup();
    const columns = readColumns(doc, SHEET_A);
    replaceColumns(doc, SHEET_A, [{ ...columns[0]!, key: 'name' }, columns[1]!, columns[2]!], ME);
    expect(last()!.changes).toEqual([
      { kind: 'columns.updated', surfaceId: SHEET_A },
      ...['r0000', 'r0001', 'r0002'].map((rowId) => ({
        kind: 'row.updated',
        rowId,
        surfaceId: SHEET_A,
        changedKeys: expect.arrayContaining(['title', 'name']),
      })),
    ]);
  });

  it('removeSheet reports each of its rows deleted; an empty new sheet reports nothing', () => {
    const { doc, seen, last } = setup();
    const before = seen.length;
    ensureSheet(doc, 'sf_empty', ME);
    expect(seen.length).toBe(before);
    removeSheet(doc, SHEET_A, ME);
    expect(last()!.changes).toEqual(['r0000', 'r0001', 'r0002'].map((rowId) => ({ kind: 'row.deleted', rowId, surfaceId: SHEET_A })));
  });

  it('a cold load into an empty replica reports every row as created (attach the observer after loading)', () => {
    const { doc } = setup();
    const fresh = new Y.Doc();
    const seen = watchChanges(fresh);
    Y.applyUpdate(fresh, Y.encodeStateAsUpdate(doc), 'load');
    expect(seen[0]!.changes.filter((c) => c.kind === 'row.created')).toHaveLength(3);
    expect(seen[0]!.changes).toContainEqual({ kind: 'columns.updated', surfaceId: SHEET_A });
  });

  it('ignores transactions outside the table layout', () => {
    const doc = new Y.Doc();
    const seen = watchChanges(doc);
    doc.getMap('other').set('x', 1);
    doc.getText('t').insert(0, 'hi');
    expect(seen).toEqual([]);
  });
});

describe('validateCellValues', () => {
  const doc = newTable();
  addColumn(doc, SHEET_A, { key: 'estimate', label: 'Estimate', type: 'number' }, ME);
  addColumn(doc, SHEET_A, { key: 'done', label: 'Done', type: 'checkbox' }, ME);
  addColumn(doc, SHEET_A, {
    key: 'tags',
    label: 'Tags',
    type: 'select',
    options: [
      { value: 'red', label: 'Red' },
      { value: 'blue', label: 'Blue' },
    ],
  }, ME);
  addColumn(doc, SHEET_A, { key: 'due', label: 'Due', type: 'date' }, ME);
  addColumn(doc, SHEET_A, { key: 'link', label: 'Link', type: 'url' }, ME);
  addColumn(doc, SHEET_A, { key: 'owner', label: 'Owner', type: 'person' }, ME);
  const columns = readColumns(doc, SHEET_A);

  it('accepts values of the right types, nulls, and unknown keys', () => {
    const good = {
      title: 'T',
      notes: 'long',
      status: 'doing',
      estimate: 3.5,
      done: false,
      tags: ['red', 'blue'],
      due: '2024-02-29',
      link: 'https://example.com/a?b=c',
      owner: 'usr_1',
      unknownKey: 'anything',
      cleared: null,
    };
    expect(validateCellValues(columns, good)).toEqual([]);
    expect(validateCellValues(columns, { due: '2024-05-31T09:30:00Z', link: 'mailto:a@b.c', tags: 'red' })).toEqual([]);
    expect(validateCellValues(columns, { due: '2024-05-31T09:30:15.123+02:00', estimate: null, status: null })).toEqual([]);
  });

  it.each([
    ['title', 5, 'invalid_type'],
    ['estimate', '3', 'invalid_type'],
    ['done', 'yes', 'invalid_type'],
    ['status', 'blocked', 'invalid_option'],
    ['status', ['todo'], 'invalid_type'],
    ['tags', ['red', 'green'], 'invalid_option'],
    ['due', '2023-02-29', 'invalid_format'],
    ['due', '31/05/2024', 'invalid_format'],
    ['due', '2024-05-31T25:00', 'invalid_format'],
    ['link', '/relative/path', 'invalid_format'],
    ['link', 'javascript:alert(1)', 'invalid_format'],
    ['owner', '', 'unknown_principal'],
    ['owner', 7, 'invalid_type'],
    ['anyKey', { nested: true }, 'invalid_type'],
    ['estimate', Number.NaN, 'invalid_type'],
  ])('%s = %j gives %s, with the column key in the path', (key, value, code) => {
    const issues = validateCellValues(columns, { [key]: value });
    expect(issues).toEqual([{ path: ['data', key], code, message: expect.any(String) }]);
  });

  it('checks persons against the workspace when told how, and prefixes paths for bulk updates', () => {
    const members = new Set(['usr_1', 'agt_2']);
    const issues = validateCellValues(columns, { owner: ['usr_1', 'usr_9'] }, { basePath: ['updates', '4', 'data'], isPrincipalId: (id) => members.has(id) });
    expect(issues).toEqual([{ path: ['updates', '4', 'data', 'owner'], code: 'unknown_principal', message: expect.stringContaining('usr_9') }]);
  });
});

describe('helpers', () => {
  it('copyTableToFreshDocument keeps sheets, columns, rows and positions, without the history', () => {
    const doc = newTable();
    addRows(doc, 20, SHEET_A, 'a');
    addRows(doc, 5, SHEET_B, 'b');
    for (let round = 0; round < 5; round++) updateRowCells(doc, 'a0003', { title: `edit ${round}` }, ME);
    deleteRow(doc, 'a0000', ME);
    moveRows(doc, ['a0005'], SHEET_B, ME);
    peerRows(doc).set('unplaced', new Y.Map());
    const fresh = copyTableToFreshDocument(doc);
    expect(listRows(fresh)).toEqual(listRows(doc));
    expect(readColumns(fresh, SHEET_A)).toEqual(readColumns(doc, SHEET_A));
    expect(listSheetIds(fresh)).toEqual(listSheetIds(doc));
    expect(fresh.getMap('rows').has('unplaced')).toBe(false);
    expect(Y.encodeStateAsUpdateV2(fresh).byteLength).toBeLessThan(Y.encodeStateAsUpdateV2(doc).byteLength);
  });

  it('createTableId gives base64url ids of the asked length', () => {
    expect(createTableId()).toMatch(/^[A-Za-z0-9_-]{10}$/);
    expect(createTableId(16)).toHaveLength(16);
    expect(new Set(Array.from({ length: 1000 }, () => createTableId())).size).toBe(1000);
  });

  it('compactDecodedContent keeps the content equal and the replica in sync', () => {
    const doc = newTable();
    addRows(doc, 50);
    updateRowCells(doc, 'r0003', { tags: ['a', 'b'] }, ME);
    const loaded = new Y.Doc();
    Y.applyUpdateV2(loaded, Y.encodeStateAsUpdateV2(doc));
    const { arraysCompacted } = compactDecodedContent(loaded);
    expect(arraysCompacted).toBeGreaterThan(50);
    const contentOf = (replica: Y.Doc) => ({ rows: listRows(replica).rows, columns: readColumns(replica, SHEET_A) });
    expect(contentOf(loaded)).toEqual(contentOf(doc));
    updateRowCells(loaded, 'r0003', { title: 'after compaction' }, ME);
    insertRow(doc, { id: 'late', surfaceId: SHEET_A, data: {} }, ME);
    exchange(doc, loaded);
    expect(contentOf(loaded)).toEqual(contentOf(doc));
    expect(getRow(doc, 'r0003')!.data).toEqual({ title: 'after compaction', tags: ['a', 'b'] });
  });
});
