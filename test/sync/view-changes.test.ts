import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { copyTableToFreshDocument, diffTableTransaction, ensureSheet, scaffoldDefaultColumns, type TableChange } from '../../src/model/table/document';
import { createView, deleteView, getView, listViews, updateView } from '../../src/model/table/views';

/**
 * What the observer makes of saved-view edits (the `view.*` events), from
 * the transaction alone, whatever shape a peer sends: a view made, fields
 * changed, a field set to what it was, a view map replaced by a peer, a
 * view deleted, and a view edit arriving from a peer.
 */

const SHEET = 'srf_sheet';

function table(): Y.Doc {
  const doc = new Y.Doc();
  ensureSheet(doc, SHEET, null);
  scaffoldDefaultColumns(doc, SHEET, null);
  return doc;
}

function watch(doc: Y.Doc): TableChange[][] {
  const seen: TableChange[][] = [];
  doc.on('afterTransaction', (transaction: Y.Transaction) => {
    const changes = diffTableTransaction(transaction);
    if (changes.length > 0) seen.push(changes);
  });
  return seen;
}

describe('view changes', () => {
  it('reports a view made, its changed fields (not those set to the same value), and its deletion with its sheet', () => {
    const doc = table();
    const seen = watch(doc);
    const view = createView(doc, SHEET, { name: 'Open', hiddenColumns: ['notes'] }, null);
    updateView(doc, view.id, { name: 'Open work', hiddenColumns: ['notes'], rowHeight: 'tall' }, null);
    // The same values again: the model writes nothing and nothing is reported.
    updateView(doc, view.id, { name: 'Open work' }, null);
    deleteView(doc, view.id, null);
    expect(seen).toEqual([
      [{ kind: 'view.created', viewId: view.id, surfaceId: SHEET }],
      [{ kind: 'view.updated', viewId: view.id, surfaceId: SHEET, changedFields: ['name', 'rowHeight'] }],
      [{ kind: 'view.deleted', viewId: view.id, surfaceId: SHEET }],
    ]);
  });

  it('reports a peer’s edit as it arrives, and a view map a peer replaced as the fields that differ', () => {
    const server = table();
    const peer = new Y.Doc();
    Y.applyUpdate(peer, Y.encodeStateAsUpdate(server));
    const view = createView(peer, SHEET, { name: 'Board', kind: 'board', groupBy: 'status' }, null);
    const seen = watch(server);
    Y.applyUpdate(server, Y.encodeStateAsUpdate(peer, Y.encodeStateVector(server)), 'remote');
    expect(seen).toEqual([[{ kind: 'view.created', viewId: view.id, surfaceId: SHEET }]]);
    expect(getView(server, view.id)).toEqual(view);

    // A peer that writes the whole view again as a new map, changing one field.
    const replacement = new Y.Map<unknown>();
    const before = Y.encodeStateVector(server);
    peer.transact(() => {
      peer.getMap('views').set(view.id, replacement);
      for (const [field, value] of Object.entries({ surfaceId: SHEET, name: 'Board', kind: 'board', groupBy: 'status', sort: [], filter: null, hiddenColumns: [], columnOrder: [], rowHeight: 'medium', position: 0 })) {
        replacement.set(field, value);
      }
    });
    Y.applyUpdate(server, Y.encodeStateAsUpdate(peer, before), 'remote');
    expect(seen[1]).toEqual([{ kind: 'view.updated', viewId: view.id, surfaceId: SHEET, changedFields: ['rowHeight'] }]);
  });

  it('keeps views when a table is copied to a fresh document', () => {
    const doc = table();
    const view = createView(doc, SHEET, { name: 'Kept', sort: [{ column: 'title', direction: 'desc' }] }, null);
    expect(listViews(copyTableToFreshDocument(doc))).toEqual([view]);
  });
});
