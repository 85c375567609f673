import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { updateRanges } from '../../src/model/attribution';
import { replayRun, type Unpacked } from '../../src/sync/replay-run';

const REPLAY = { source: 'test-replay' };

/** Updates two clients made: typing, deleting, a paragraph typed into and removed, one typed into a paragraph the other removed, and repeats. */
function loggedUpdates(): Unpacked[] {
  const updates: Unpacked[] = [];
  const a = new Y.Doc();
  const b = new Y.Doc();
  let seq = 0;
  const log = (doc: Y.Doc, author: string | null) => (update: Uint8Array) => updates.push({ seq: ++seq, author: author ? { principalType: 'user', id: author } : null, update });
  a.on('update', log(a, 'ann'));
  b.on('update', log(b, 'bob'));
  const body = a.getXmlFragment('body');
  const paragraph = new Y.XmlElement('paragraph');
  const text = new Y.XmlText();
  paragraph.insert(0, [text]);
  body.insert(0, [paragraph]);
  for (const char of 'hello world') text.insert(text.length, char);
  text.delete(0, 1);
  text.format(0, 3, { bold: true });
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
  // Both edit concurrently: Bob types into the paragraph Ann removes.
  const second = new Y.XmlElement('paragraph');
  second.insert(0, [new Y.XmlText('second')]);
  body.insert(1, [second]);
  ((b.getXmlFragment('body').get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'B');
  body.delete(0, 1);
  Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
  a.getMap('meta').set('title', 'x');
  a.getMap('meta').delete('title');
  // Entries that change nothing when replayed: an update logged again, and an empty one.
  updates.push({ ...updates[3]!, seq: ++seq });
  updates.push({ seq: ++seq, author: null, update: Y.encodeStateAsUpdate(new Y.Doc()) });
  for (const char of ' more') text.insert(text.length, char);
  updates.push({ ...updates.at(-1)!, seq: ++seq });
  return updates;
}

describe('a replay run of logged updates in one transaction', () => {
  it('counts the same updates as changing the document as one transaction each did, and ends at the same state, stopping at capture points', () => {
    const updates = loggedUpdates();
    const alone = new Y.Doc();
    const changedAlone: boolean[] = [];
    let transactionsAlone: boolean[] = [];
    alone.on('afterTransaction', (transaction: Y.Transaction) => transactionsAlone.push(transaction.changed.size > 0 || transaction.deleteSet.clients.size > 0));
    for (const update of updates) {
      transactionsAlone = [];
      Y.applyUpdate(alone, update.update, REPLAY);
      changedAlone.push(transactionsAlone.some(Boolean));
    }
    expect(changedAlone).toContain(false);

    const capturePoints = new Set([updates[5]!.seq, updates[20]!.seq]);
    const batched = new Y.Doc();
    const changedBatched: boolean[] = [];
    const runs: number[] = [];
    let transactions = 0;
    batched.on('afterTransaction', () => transactions++);
    for (let i = 0; i < updates.length; ) {
      const end = replayRun(batched, updates, i, (seq) => capturePoints.has(seq), updateRanges, (edited) => changedBatched.push(edited !== null), REPLAY);
      expect(end).toBeGreaterThan(i);
      runs.push(end);
      i = end;
    }
    expect(changedBatched).toEqual(changedAlone);
    expect(runs).toEqual([6, 21, updates.length]);
    expect(transactions).toBe(3);
    expect(batched.getXmlFragment('body').toString()).toBe(alone.getXmlFragment('body').toString());
    expect(Y.encodeStateVector(batched)).toEqual(Y.encodeStateVector(alone));
    expect(batched.getMap('meta').toJSON()).toEqual(alone.getMap('meta').toJSON());
  });

  it('stops before an update whose ranges cannot be read, for the caller to apply alone', () => {
    const updates = loggedUpdates();
    const doc = new Y.Doc();
    const counted: Array<Unpacked | null> = [];
    const end = replayRun(doc, updates, 0, () => false, (update) => (update === updates[4]!.update ? null : updateRanges(update)), (edited) => counted.push(edited), REPLAY);
    expect(end).toBe(4);
    expect(counted).toHaveLength(4);
  });
});
