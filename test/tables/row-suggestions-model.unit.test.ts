import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { copyTableToFreshDocument, diffTableTransaction, ensureSheet, insertRow, scaffoldDefaultColumns, updateRowCells } from '../../src/model/table/document';
import { rowMapOf as rowMapOfRow } from '../../src/model/table/layout';
import { createView } from '../../src/model/table/views';
import {
  addRowSuggestion,
  checkTableSuggestionOnlyChange,
  checkTableSuggestionOnlyUpdate,
  getRowSuggestion,
  removeRowSuggestion,
  rowSuggestionEntries,
  rowSuggestionsRemovedIn,
  rowSuggestionStampsIn,
  rowSuggestionSummary,
  setRowSuggestionStatus,
  suggestionsRoot,
  type RowSuggestionEntry,
} from '../../src/model/table/suggestions';

/**
 * The table document's `suggestions` root (issue 25 item 2): entries written
 * and read back, decisions, what the observer learns from a transaction
 * (also one that arrives from a peer), and the check that lets a
 * suggest-only connection add and withdraw its own suggestions and nothing else.
 */

const SHEET = 'srf_sheet';
const AGENT = { principalType: 'agent' as const, id: 'agt_1', name: 'Robot' };
const ADA = { principalType: 'user' as const, id: 'usr_ada', name: 'Ada' };

function table(): Y.Doc {
  const doc = new Y.Doc();
  ensureSheet(doc, SHEET, null);
  scaffoldDefaultColumns(doc, SHEET, null);
  insertRow(doc, { id: 'row1', surfaceId: SHEET, data: { title: 'Old' } }, null);
  return doc;
}

function entry(id: string, fields: Partial<RowSuggestionEntry> = {}): RowSuggestionEntry {
  return { id, kind: 'update', sheetId: SHEET, rowId: 'row1', values: { title: 'New' }, base: { title: 'Old' }, author: AGENT, at: '2026-11-26T10:00:00.000Z', status: 'open', ...fields };
}

/** A peer's copy of `doc`, changed by `change`; returns it. */
function peerChange(doc: Y.Doc, change: (peer: Y.Doc) => void): Y.Doc {
  const peer = new Y.Doc();
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
  change(peer);
  return peer;
}

/**
 * Every form of the check must agree: on the documents before and after
 * (with and without the update), and on the update alone, both as the
 * peer's own updates and as the difference a sync step 2 would carry.
 */
function check(doc: Y.Doc, change: (peer: Y.Doc) => void, author: { principalType: string; id: string } = AGENT): string | null {
  const peer = new Y.Doc();
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
  const sent: Uint8Array[] = [];
  peer.on('update', (update: Uint8Array) => sent.push(update));
  change(peer);
  const update = Y.encodeStateAsUpdate(peer, Y.encodeStateVector(doc));
  const after = new Y.Doc();
  Y.applyUpdate(after, Y.encodeStateAsUpdate(doc));
  Y.applyUpdate(after, update);
  const verdict = checkTableSuggestionOnlyChange(doc, after, author);
  expect(checkTableSuggestionOnlyChange(doc, after, author, update)).toBe(verdict);
  expect(checkTableSuggestionOnlyUpdate(doc, update, author)).toBe(verdict);
  if (sent.length > 0) expect(checkTableSuggestionOnlyUpdate(doc, Y.mergeUpdates(sent), author)).toBe(verdict);
  return verdict;
}

describe('suggestion entries', () => {
  it('writes an entry and reads it back, leaving rows alone and reporting no row change', () => {
    const doc = table();
    const changes: unknown[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => changes.push(...diffTableTransaction(tr)));
    const written = addRowSuggestion(doc, { ...entry('s1'), author: { ...AGENT, avatarUrl: null } as never }, 'origin');
    expect(written).toEqual(entry('s1'));
    expect(rowSuggestionEntries(doc)).toEqual([entry('s1')]);
    expect(changes).toEqual([]);
    expect(() => addRowSuggestion(doc, entry('s1'), null)).toThrow(/already exists/);
  });

  it('lists entries oldest first and leaves out malformed ones', () => {
    const doc = table();
    addRowSuggestion(doc, entry('b', { at: '2026-11-26T10:00:01.000Z' }), null);
    addRowSuggestion(doc, entry('a', { at: '2026-11-26T10:00:02.000Z', kind: 'delete', values: undefined, base: undefined }), null);
    doc.transact(() => {
      const bad = new Y.Map<unknown>();
      suggestionsRoot(doc).set('bad', bad);
      bad.set('id', 'bad');
      bad.set('kind', 'explode');
    });
    expect(rowSuggestionEntries(doc).map((e) => e.id)).toEqual(['b', 'a']);
    expect(getRowSuggestion(doc, 'bad')).toBeNull();
  });

  it('records a decision and clears it on reopening', () => {
    const doc = table();
    addRowSuggestion(doc, entry('s1'), null);
    expect(setRowSuggestionStatus(doc, 's1', 'accepted', ADA, '2026-11-26T11:00:00.000Z', null)).toEqual({
      ...entry('s1'),
      status: 'accepted',
      decidedBy: ADA,
      decidedAt: '2026-11-26T11:00:00.000Z',
    });
    expect(setRowSuggestionStatus(doc, 's1', 'open', null, null, null)).toEqual(entry('s1'));
    expect(setRowSuggestionStatus(doc, 'nope', 'rejected', ADA, 'x', null)).toBeNull();
  });

  it('summarises an entry in one line from the entry alone', () => {
    expect(rowSuggestionSummary(entry('s1', { values: { title: 'New', n: 5 }, base: { title: 'Old' } }))).toBe('Row row1: title "Old" → "New", n (empty) → 5');
    expect(rowSuggestionSummary(entry('s2', { kind: 'create', values: { title: 'Fresh' } }))).toBe('New row: title "Fresh"');
    expect(rowSuggestionSummary(entry('s3', { kind: 'delete', values: undefined, base: { n: 1, title: 'Gone' } }))).toBe('Delete row row1 ("Gone")');
    expect(rowSuggestionSummary(entry('s4', { values: { title: 'x'.repeat(100) } }))).toMatch(/…$/);
  });

  it('a table rebuilt without its history keeps its suggestions', () => {
    const doc = table();
    addRowSuggestion(doc, entry('s1'), null);
    expect(rowSuggestionEntries(copyTableToFreshDocument(doc))).toEqual([entry('s1')]);
  });
});

describe('what a transaction added or removed', () => {
  it('reports entries added here and by a peer, and entries withdrawn, but not status changes', () => {
    const doc = table();
    const stamps: RowSuggestionEntry[][] = [];
    const removed: string[][] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => {
      stamps.push(rowSuggestionStampsIn(tr));
      removed.push(rowSuggestionsRemovedIn(tr));
    });
    addRowSuggestion(doc, entry('s1'), null);
    expect(stamps.pop()).toEqual([entry('s1')]);

    // A peer's update arrives before anything here asked for the root as a map.
    const fresh = new Y.Doc();
    Y.applyUpdate(fresh, Y.encodeStateAsUpdate(table()));
    const freshStamps: RowSuggestionEntry[][] = [];
    fresh.on('afterTransaction', (tr: Y.Transaction) => freshStamps.push(rowSuggestionStampsIn(tr)));
    const peer = peerChange(fresh, (p) => addRowSuggestion(p, entry('s2'), null));
    Y.applyUpdate(fresh, Y.encodeStateAsUpdate(peer, Y.encodeStateVector(fresh)));
    expect(freshStamps.pop()).toEqual([entry('s2')]);

    updateRowCells(doc, 'row1', { title: 'Edited' }, null);
    expect(stamps.pop()).toEqual([]);
    setRowSuggestionStatus(doc, 's1', 'rejected', ADA, '2026-11-26T11:00:00.000Z', null);
    expect(stamps.pop()).toEqual([]);
    expect(removed.pop()).toEqual([]);
    removeRowSuggestion(doc, 's1', null);
    expect(removed.pop()).toEqual(['s1']);
  });
});

describe('checkTableSuggestionOnlyChange', () => {
  it('lets the author add, edit and withdraw its own open suggestions', () => {
    const doc = table();
    expect(check(doc, (p) => addRowSuggestion(p, entry('s1'), null))).toBeNull();
    addRowSuggestion(doc, entry('s1'), null);
    expect(check(doc, (p) => (suggestionsRoot(p).get('s1') as Y.Map<unknown>).set('values', { title: 'Newer' }))).toBeNull();
    expect(check(doc, (p) => removeRowSuggestion(p, 's1', null))).toBeNull();
    expect(check(doc, () => {})).toBeNull();
  });

  it('refuses changes to rows, columns, sheets and views', () => {
    const doc = table();
    expect(check(doc, (p) => updateRowCells(p, 'row1', { title: 'Sneaky' }, null))).toMatch(/rows/);
    expect(check(doc, (p) => insertRow(p, { id: 'row2', surfaceId: SHEET, data: {} }, null))).toMatch(/rows|sheets/);
    expect(check(doc, (p) => ensureSheet(p, 'srf_other', null))).toMatch(/sheets/);
    expect(check(doc, (p) => createView(p, SHEET, { name: 'Mine' }, null))).toMatch(/views/);
    expect(check(doc, (p) => p.getMap('elsewhere').set('x', 1))).toMatch(/elsewhere/);
    // A suggestion and a row change in one update is still refused.
    expect(
      check(doc, (p) => {
        addRowSuggestion(p, entry('s1'), null);
        updateRowCells(p, 'row1', { title: 'Sneaky' }, null);
      }),
    ).toMatch(/rows/);
  });

  it('refuses suggestions in another name, decided ones, and touching others\' or decided entries', () => {
    const doc = table();
    expect(check(doc, (p) => addRowSuggestion(p, entry('s1', { author: ADA }), null))).toMatch(/another author/);
    expect(check(doc, (p) => addRowSuggestion(p, entry('s1', { status: 'accepted' }), null))).toMatch(/decides/);
    addRowSuggestion(doc, entry('ada', { author: ADA }), null);
    expect(check(doc, (p) => removeRowSuggestion(p, 'ada', null))).toMatch(/not an open suggestion of this connection/);
    expect(check(doc, (p) => setRowSuggestionStatus(p, 'ada', 'rejected', AGENT, 'x', null))).toMatch(/not an open suggestion/);
    addRowSuggestion(doc, entry('mine'), null);
    expect(check(doc, (p) => setRowSuggestionStatus(p, 'mine', 'accepted', AGENT, 'x', null))).toMatch(/decides/);
    expect(check(doc, (p) => (suggestionsRoot(p).get('mine') as Y.Map<unknown>).set('author', ADA))).toMatch(/another author/);
    setRowSuggestionStatus(doc, 'mine', 'rejected', ADA, 'x', null);
    expect(check(doc, (p) => removeRowSuggestion(p, 'mine', null))).toMatch(/not an open suggestion/);
    expect(check(doc, (p) => suggestionsRoot(p).set('junk', 'text' as never))).toMatch(/well-formed/);
  });

  it('refuses an update that deletes or builds on content the server has not received', () => {
    const doc = table();
    // Someone else's row, not sent to the server yet; the suggester has it and deletes it.
    const other = peerChange(doc, (p) => insertRow(p, { id: 'row9', surfaceId: SHEET, data: { title: 'Not yet sent' } }, null));
    const suggester = new Y.Doc();
    Y.applyUpdate(suggester, Y.encodeStateAsUpdate(other));
    const sent: Uint8Array[] = [];
    suggester.on('update', (update: Uint8Array) => sent.push(update));
    suggester.transact(() => {
      addRowSuggestion(suggester, entry('s1'), null);
      rowMapOfRow(suggester, 'row9')!.delete('title');
    });
    const update = Y.mergeUpdates(sent);
    expect(checkTableSuggestionOnlyUpdate(doc, update, AGENT)).toMatch(/does not have/);
    const after = new Y.Doc();
    Y.applyUpdate(after, Y.encodeStateAsUpdate(doc));
    Y.applyUpdate(after, update);
    expect(checkTableSuggestionOnlyChange(doc, after, AGENT)).toMatch(/does not have/);
    expect(checkTableSuggestionOnlyChange(doc, after, AGENT, update)).toMatch(/does not have/);
    // An entry written into a map the server never saw.
    const orphan = new Y.Doc();
    Y.applyUpdate(orphan, Y.encodeStateAsUpdate(other));
    const orphanSent: Uint8Array[] = [];
    orphan.on('update', (u: Uint8Array) => orphanSent.push(u));
    rowMapOfRow(orphan, 'row9')!.set('title', 'Edited');
    expect(checkTableSuggestionOnlyUpdate(doc, Y.mergeUpdates(orphanSent), AGENT)).toMatch(/does not have/);
    expect(checkTableSuggestionOnlyUpdate(doc, new Uint8Array([1, 2, 3]), AGENT)).not.toBeNull();
  });

  it('refuses a field written over a value the server no longer holds (a decision in between)', () => {
    const doc = table();
    addRowSuggestion(doc, entry('mine'), null);
    const peer = new Y.Doc();
    Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
    // The suggestion is decided on the server, then the suggester's edit arrives, made on the state before.
    setRowSuggestionStatus(doc, 'mine', 'rejected', ADA, '2026-11-26T11:00:00.000Z', null);
    const sent: Uint8Array[] = [];
    peer.on('update', (u: Uint8Array) => sent.push(u));
    (suggestionsRoot(peer).get('mine') as Y.Map<unknown>).set('values', { title: 'Sneaky' });
    expect(checkTableSuggestionOnlyUpdate(doc, Y.mergeUpdates(sent), AGENT)).toMatch(/not an open suggestion/);
  });
});
