import * as Y from 'yjs';
import type { LogEntry } from '../persistence/versions';

/** One logged update as the history thread replays it. */
export type Unpacked = { seq: number; author: LogEntry['author']; update: Uint8Array };

/**
 * Applies `updates` from `from` on, in one transaction with the replay's
 * origin, through the first capture point (or the end), and calls `counted`
 * once per update in order: with the update when it changed the document as
 * its own transaction would have (`surfacesChangedBy` for a surface of its
 * own: a changed type or a deletion), else with null. An item typed into a
 * paragraph another client removed is integrated as garbage (a GC struct):
 * that changes no type, as on its own. Stops before an update
 * whose ranges cannot be read (the caller applies it alone). Returns the
 * index after the last update applied.
 */
export function replayRun(
  doc: Y.Doc,
  updates: readonly Unpacked[],
  from: number,
  isCapturePoint: (seq: number) => boolean,
  rangesOf: (update: Uint8Array) => Array<{ client: number; from: number; to: number }> | null,
  counted: (edited: Unpacked | null) => void,
  origin: unknown,
): number {
  let i = from;
  doc.transact((transaction) => {
    while (i < updates.length) {
      const update = updates[i]!;
      const ranges = rangesOf(update.update);
      if (!ranges) return;
      let advanced = false; // an item integrated
      const before = ranges.map((range) => Y.getState(doc.store, range.client));
      const deletes = deleteEntries(transaction);
      Y.applyUpdate(doc, update.update, origin);
      for (let r = 0; r < ranges.length && !advanced; r++) advanced = integratedItem(doc, ranges[r]!.client, before[r]!);
      counted(advanced || deleteEntries(transaction) > deletes ? update : null);
      i++;
      if (isCapturePoint(update.seq)) return;
    }
  }, origin);
  return i;
}

/** Whether `client`'s structs from clock `before` on (what the update just applied added) hold an item, not only garbage. */
function integratedItem(doc: Y.Doc, client: number, before: number): boolean {
  const structs = doc.store.clients.get(client);
  if (!structs || Y.getState(doc.store, client) <= before) return false;
  for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) if (structs[i] instanceof Y.Item) return true;
  return false;
}

/** Deletions a transaction made so far (Yjs merges its delete set only at the transaction's end). */
function deleteEntries(transaction: Y.Transaction): number {
  let count = 0;
  for (const items of transaction.deleteSet.clients.values()) count += items.length;
  return count;
}
