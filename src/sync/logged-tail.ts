import type { Db } from '../persistence/database';
import type { HistoryUpdate } from '../persistence/versions';

/**
 * The updates this process appended to a document's log until a fold
 * takes them into the snapshot, held in memory so the history pass, and a
 * fold that stops short of the pass's cursor (its state rebuilt from the
 * snapshot and the log up to the fold), take them from here instead of
 * reading them back (with their bytes base64-encoded): a typist's 60,000
 * edits were read back by 64 statements of the pass and 117 of
 * compaction's attribution, and then by 35 pages of 2,000 rows for folds
 * short of the cursor, 30-55 ms of PGlite each on the serving thread
 * (docs/PERFORMANCE.md, issue 38 goal 2).
 *
 * Only a cache: the log stays the truth. An update is recorded after the
 * commit that holds it, so what is held is always rows of the log; the
 * pass counts the log's rows after its cursor, in the statement that also
 * says how far the log was folded, and takes what is held only when it
 * holds exactly that many and nothing was folded past the cursor. Any gap
 * (a restart, another instance's appends, an append recorded too late or
 * not at all, the memory cap) reads the log as before.
 *
 * Keyed by database handle, so two apps in one process (tests, a restart
 * in place) never see each other's rows.
 */

/** What all documents' held updates may take, in bytes (an update's bytes and about that much again for its entry). */
export const LOGGED_TAIL_MAX_BYTES = 16 * 1024 * 1024;
const ENTRY_BYTES = 120;

type Held = { updates: HistoryUpdate[]; bytes: number };

const held = new WeakMap<Db, { documents: Map<string, Held>; bytes: number }>();

function heldIn(db: Db) {
  let store = held.get(db);
  if (!store) held.set(db, (store = { documents: new Map(), bytes: 0 }));
  return store;
}

const sizeOf = (update: HistoryUpdate) => update.update.byteLength + ENTRY_BYTES;

/** Notes committed appends of `document` (any order; the log's order is by seq). */
export function recordLogged(db: Db, document: string, updates: readonly HistoryUpdate[]): void {
  if (updates.length === 0) return;
  const store = heldIn(db);
  let entry = store.documents.get(document);
  if (entry) store.documents.delete(document); // re-inserted below: the most recently written document is evicted last
  entry ??= { updates: [], bytes: 0 };
  for (const update of updates) {
    const list = entry.updates;
    // Commits of one document finish in seq order; their callbacks almost always run in it too.
    if (list.length === 0 || list[list.length - 1]!.seq < update.seq) list.push(update);
    else {
      const at = list.findIndex((other) => other.seq >= update.seq);
      if (list[at]!.seq === update.seq) continue;
      list.splice(at, 0, update);
    }
    const size = sizeOf(update);
    entry.bytes += size;
    store.bytes += size;
  }
  store.documents.set(document, entry);
  // Over the cap: the documents written longest ago go first (their next pass reads the log).
  for (const [name, other] of store.documents) {
    if (store.bytes <= LOGGED_TAIL_MAX_BYTES) break;
    store.documents.delete(name);
    store.bytes -= other.bytes;
  }
}

/** The held updates of `document` after `afterSeq`, in seq order (maybe not all of the log's: check against `logTailAfter`). */
export function loggedAfter(db: Db, document: string, afterSeq: number): HistoryUpdate[] {
  const list = held.get(db)?.documents.get(document)?.updates ?? [];
  const from = firstAfter(list, afterSeq);
  return from === 0 ? list : list.slice(from);
}

/**
 * The index of the first held update after `seq` (the list is in seq order), by halves. A scan back from the end
 * ran thousands of turns once a pass: V8 compiled it for the loop alone (OSR) before the slice after the loop had
 * ever run, and entered that compile again at later passes to fall out of it at the slice (PERFORMANCE.md "h17-deopt").
 */
function firstAfter(list: readonly HistoryUpdate[], seq: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]!.seq > seq) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Drops what is held of `document` up to `seq` (a fold took that far into the snapshot). */
export function forgetLoggedThrough(db: Db, document: string, seq: number): void {
  const store = held.get(db);
  const entry = store?.documents.get(document);
  if (!store || !entry) return;
  const kept = firstAfter(entry.updates, seq);
  if (kept === 0) return;
  const dropped = entry.updates.splice(0, kept);
  const bytes = dropped.reduce((sum, update) => sum + sizeOf(update), 0);
  entry.bytes -= bytes;
  store.bytes -= bytes;
  if (entry.updates.length === 0) store.documents.delete(document);
}
