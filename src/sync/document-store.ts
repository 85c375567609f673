import * as random from 'lib0/random';
import * as Y from 'yjs';
import { compactDecodedContent } from '../model/table/document';
import { forgetTableCaches } from '../model/table/row-index';
import type { Db, Executor } from '../persistence/database';
import { appendUpdates, type UpdateAuthor } from '../persistence/document-log';
import { rangesOfLog } from '../persistence/attribution';
import { countTail, loadStoredDocument, storedSize, writeSnapshot, writeSyncCopy, type StoredDocument, type StoredSize, type StoredUpdate } from '../persistence/documents';
import { DocumentTooLargeError } from '../errors';
import type { Failpoints } from '../lib/failpoints';
import { loadCheckpoint, logHead, snapshotInfo } from '../persistence/versions';
import { historyThread } from './history-thread';
import { forgetPassRangesThrough, passRangesOf } from './pass-attribution';
import { forgetLoggedThrough } from './logged-tail';
import { encodedStateAt, foldableUpTo, passesUntilCaughtUp, underivedFrom, withHistoryLock } from './version-index';

/**
 * Loads Y documents from the durable log and folds the log into snapshots.
 * Snapshots are built from the log (never from the live document), so a
 * snapshot always holds exactly the updates up to its sequence number, and
 * compaction can never drop an update that is in flight.
 */

/**
 * Compaction is due when the tail since the last snapshot grows past either
 * bound. The byte bound grows with the snapshot (half its size), so a large
 * document is not re-encoded for every few megabytes of edits; the count
 * bound keeps a typist's many tiny updates from making loads slow.
 */
export const COMPACT_AFTER_UPDATES = 5_000;
export const COMPACT_AFTER_BYTES = 2 * 1024 * 1024;

export function compactionDue(tail: { updates: number; bytes: number; snapshotBytes: number }, afterUpdates = COMPACT_AFTER_UPDATES): boolean {
  return tail.updates >= afterUpdates || tail.bytes >= byteBound(tail.snapshotBytes);
}

const byteBound = (snapshotBytes: number) => Math.max(COMPACT_AFTER_BYTES, snapshotBytes / 2);

/**
 * A compaction due by bytes alone waits until the document has had no
 * append for COMPACT_QUIET_MS, unless its tail reaches four times the
 * bound. Every compaction re-encodes the whole document (snapshot, history
 * checkpoint, a stored version), so a bulk write (a 50,000-row CSV import
 * in 100 transactions: 12 MB) compacted every 2 MB re-encoded a growing
 * table seven times while the import ran and for half a minute after; it
 * is now folded about twice (docs/PERFORMANCE.md, "Cold sync after a REST
 * seed"). Many small updates (typing) are due by count, at once as before.
 */
export const COMPACT_QUIET_MS = 1_000;

export function compactionUrgent(tail: { updates: number; bytes: number; snapshotBytes: number }, afterUpdates = COMPACT_AFTER_UPDATES): boolean {
  return tail.updates >= afterUpdates || tail.bytes >= 4 * byteBound(tail.snapshotBytes);
}

export type LoadResult = {
  tailUpdates: number;
  tailBytes: number;
  snapshotBytes: number;
  /** Sync clients' updates whose events were never committed (a crash, a failed commit): derive them again. */
  underived: number;
};

/**
 * Heap a load takes, estimated from what is stored: the rows read (each a
 * row object and its base64 text) and their updates applied in the load's
 * one transaction (about 200 bytes each at the peak, measured with the
 * automerge-paper trace: docs/PERFORMANCE.md), and the decoded snapshot
 * (several times its encoded size). Generous on purpose: the budget is a
 * guard against a load that would take the process down, not a quota.
 */
export const LOAD_HEAP_PER_SNAPSHOT_BYTE = 40;
export const LOAD_HEAP_PER_LOGGED_BYTE = 20;
export const LOAD_HEAP_PER_LOGGED_UPDATE = 600;

export function estimatedLoadHeap(size: StoredSize): number {
  return size.snapshotBytes * LOAD_HEAP_PER_SNAPSHOT_BYTE + size.tailBytes * LOAD_HEAP_PER_LOGGED_BYTE + size.tailUpdates * LOAD_HEAP_PER_LOGGED_UPDATE;
}

/**
 * Applies the stored state to `doc` in one transaction. Throws when the
 * store fails: a doc is never served empty by mistake. With a budget, a
 * document whose load would take more heap than that is refused with
 * DocumentTooLargeError before anything is read, so one document can never
 * take the process down (compact it offline: `npm run admin -- compact-document`).
 * `read` sees what was read before it is applied (the engine answers the
 * clients waiting from it: stored-copy.ts).
 */
export async function loadInto(db: Executor, name: string, doc: Y.Doc, budgetBytes?: number, read?: (stored: StoredDocument) => Promise<void>): Promise<LoadResult> {
  if (budgetBytes !== undefined) {
    const size = await storedSize(db, name);
    const estimate = estimatedLoadHeap(size);
    if (estimate > budgetBytes) throw new DocumentTooLargeError(name, size, estimate, budgetBytes);
  }
  const stored = await loadStoredDocument(db, name);
  await read?.(stored);
  withoutUpdateListeners(doc, () =>
    Y.transact(doc, () => {
      if (stored.snapshot) applySnapshot(doc, stored.snapshot);
      for (const { update } of stored.updates) Y.applyUpdate(doc, update);
    }, LOAD_ORIGIN),
  );
  // Decoding leaves oversized arrays behind; trimming them saves about a third of a large table's heap.
  compactDecodedContent(doc);
  return {
    tailUpdates: stored.updates.length,
    tailBytes: stored.tailBytes,
    snapshotBytes: stored.snapshot?.state.byteLength ?? 0,
    underived: stored.updates.filter((u) => !u.derived).length,
  };
}

/** A stored snapshot, in whichever encoding was read (the V2 state or its V1 copy). */
function applySnapshot(doc: Y.Doc, snapshot: NonNullable<StoredDocument['snapshot']>, origin?: unknown) {
  if (snapshot.encoding === 'v1') Y.applyUpdate(doc, snapshot.state, origin);
  else Y.applyUpdateV2(doc, snapshot.state, origin);
}

/**
 * Runs `load` with the document's update listeners set aside. Yjs encodes a
 * transaction as an update only when something listens, and a Hocuspocus
 * document listens from its construction (to broadcast): the load
 * transaction of a 50,000-row table was encoded whole (about 0.6 s of the
 * serving thread, docs/PERFORMANCE.md goal 6) for a broadcast to nobody, as
 * no connection is added before the load ends. Whoever needs the loaded
 * state reads the document, never the load's update.
 */
function withoutUpdateListeners(doc: Y.Doc, load: () => void) {
  const observers = (doc as unknown as { _observers: Map<string, unknown> })._observers;
  const setAside = (['update', 'updateV2'] as const).flatMap((event) => {
    const listeners = observers.get(event);
    observers.delete(event);
    return listeners === undefined ? [] : [[event, listeners] as const];
  });
  try {
    load();
  } finally {
    for (const [event, listeners] of setAside) observers.set(event, listeners);
  }
}

/**
 * Replays a document's log into a scratch document, in log order, so the
 * updates whose events were never committed can be derived again: each of
 * them is applied in a transaction of its own, with `originOf(update)` as
 * origin, and `observe` sees each such transaction. Updates already derived
 * are applied silently in between.
 */
export async function replayUnderived(
  db: Executor,
  name: string,
  originOf: (update: StoredUpdate) => unknown,
  observe: (doc: Y.Doc, transaction: Y.Transaction, update: StoredUpdate) => void,
  /** Derive only these updates (the others are applied silently); all underived ones when omitted. */
  only?: ReadonlySet<number>,
): Promise<number> {
  const stored = await loadStoredDocument(db, name);
  const replay = (u: StoredUpdate) => !u.derived && (!only || only.has(u.seq));
  if (!stored.updates.some(replay)) return 0;
  const scratch = new Y.Doc({ gc: true });
  try {
    if (stored.snapshot) applySnapshot(scratch, stored.snapshot, LOAD_ORIGIN);
    let current: StoredUpdate | null = null;
    scratch.on('afterTransaction', (transaction: Y.Transaction) => {
      if (current && transaction.origin !== LOAD_ORIGIN) observe(scratch, transaction, current);
    });
    let replayed = 0;
    for (const update of stored.updates) {
      if (!replay(update)) {
        Y.applyUpdate(scratch, update.update, LOAD_ORIGIN);
        continue;
      }
      current = update;
      Y.applyUpdate(scratch, update.update, originOf(update));
      current = null;
      replayed++;
    }
    return replayed;
  } finally {
    scratch.destroy();
  }
}

export const LOAD_ORIGIN = { source: 'load' } as const;

/**
 * Makes `target` hold exactly the state of `source`, in place: the object
 * Hocuspocus serves and its connections stay, the content is swapped. For
 * the one case where a loaded document must go back to what its log holds
 * (a server change that never committed). Yjs has no rollback, so this sets
 * the document's struct store and root types, re-homes every type, and
 * takes a fresh client id so no id of the discarded change is ever reused.
 * No update is emitted: clients never saw what is discarded.
 */
export function replaceDocumentState(target: Y.Doc, source: Y.Doc) {
  if (target._transaction !== null || source._transaction !== null) throw new Error('cannot swap a document inside a transaction');
  target.store = source.store;
  target.share = source.share;
  for (const type of target.share.values()) type.doc = target;
  for (const structs of target.store.clients.values()) {
    for (const struct of structs) {
      if (struct instanceof Y.Item && struct.content instanceof Y.ContentType) struct.content.type.doc = target;
    }
  }
  target.clientID = random.uint32();
  forgetTableCaches(target);
  source.store = new Y.Doc().store;
  source.share = new Map();
}

/** A server change's update, logged in the transaction that also commits its events. */
export async function append(db: Executor, name: string, update: Uint8Array, author: UpdateAuthor): Promise<number> {
  const [seq] = await appendUpdates(db, [{ document: name, update, author, derived: true }]);
  return seq!;
}

/** Passes one compaction may run before folding: its work stays bounded, and the next compaction goes on from there. */
const MAX_PASSES_PER_COMPACTION = 5;

export type CompactResult = {
  /** Size of the snapshot written (or already there). */
  bytes: number;
  /** Log rows folded into the snapshot by this run. */
  folded: number;
  /** Log rows left after the snapshot. */
  remaining: number;
  /** What kept the fold from reaching the log's head: updates whose events are still to be derived, a held base, history still to index. */
  blockedBy: 'underived' | 'hold' | 'history' | null;
};

/**
 * Rebuilds the snapshot from the stored log and drops the folded updates.
 * The log is first turned into versions (version-index.ts), and only what
 * those passes covered, no base version a recent read handed out, and no
 * update whose events are still to be derived, is folded: history never
 * loses a listed version to compaction. When the fold reaches the version
 * cursor, the pass's checkpoint (the state at the cursor, itself built from
 * the log) is the new snapshot; otherwise the snapshot and the log up to the
 * fold are replayed, a page at a time. The state is built before the
 * write, and the write does not lock the document's log head
 * (documents.ts `writeSnapshot`): appends commit while it runs.
 */
export async function compact(db: Db, name: string, now: Date, failpoints?: Failpoints): Promise<CompactResult | null> {
  return withHistoryLock(name, async () => {
    const pass = await passesUntilCaughtUp(db, name, undefined, MAX_PASSES_PER_COMPACTION);
    const held = await foldableUpTo(db, name, pass, now);
    const snapshot = await snapshotInfo(db, name);
    const from = snapshot?.uptoSeq ?? 0;
    const head = await logHead(db, name);
    const underived = await underivedFrom(db, name, from);
    const limits: Array<[number, CompactResult['blockedBy']]> = [[head, null]];
    if (underived !== null) limits.push([underived - 1, 'underived']);
    if (pass) limits.push([pass.cursor.uptoSeq, 'history']);
    if (held !== null && held !== pass?.cursor.uptoSeq) limits.push([held, 'hold']);
    const [target, blockedBy] = limits.reduce((low, limit) => (limit[0] < low[0] ? limit : low));
    if (target <= from) return { bytes: 0, folded: 0, remaining: await countTail(db, name, from), blockedBy: target < head ? blockedBy : null };

    let state: Uint8Array | null = null;
    if (pass && target === pass.cursor.uptoSeq) {
      state = pass.checkpoint ?? null;
      if (!state) {
        const stored = await loadCheckpoint(db, name);
        if (stored?.seq === target) state = stored.state;
      }
    }
    // Replayed and encoded in the history thread, as the pass's checkpoint is.
    state ??= await encodedStateAt(db, name, target);
    if (!state) return null; // folded past `target` meanwhile (another instance)
    const written = state;
    // Who made the updates folded: from the passes' ranges, else read before the write too (logged rows never change), written with the snapshot.
    const attribution = passRangesOf(db, name, from, target) ?? (await rangesOfLog(db, name, from, target));
    const folded = await db.transaction().execute(async (tx) => {
      const replaced = await writeSnapshot(tx, name, written, from, target, now, attribution);
      // A test holds the fold here, its snapshot written and its transaction open.
      if (replaced !== null) await failpoints?.pass('document.compact.write');
      return replaced;
    });
    if (folded === null) return null;
    forgetPassRangesThrough(db, name, target);
    forgetLoggedThrough(db, name, target);
    const remaining = await countTail(db, name, target);
    if (remaining === 0 && written.byteLength >= SYNC_COPY_MIN_BYTES) await keepSyncCopy(db, name, target, written);
    return { bytes: written.byteLength, folded, remaining, blockedBy: target < head ? blockedBy : null };
  });
}

/**
 * Snapshots from this size on (V2) are also stored as the V1 update the
 * sync protocol sends, when nothing is logged after them: the first client
 * of the unloaded document is then sent that copy as stored
 * (stored-copy.ts). Converting the snapshot while the client waits took
 * about half of the server's part of a cold sync of a 50,000-row table
 * (0.7 s of 1.5 s at load 13, docs/PERFORMANCE.md "h6-cold"); a small
 * document converts in milliseconds and is not worth a second copy.
 */
export const SYNC_COPY_MIN_BYTES = 1024 * 1024;

/** Converted in the history thread, off the serving thread. A copy that fails to be kept is only a slower first sync: the next compaction tries again. */
async function keepSyncCopy(db: Db, name: string, uptoSeq: number, state: Uint8Array) {
  try {
    await writeSyncCopy(db, name, uptoSeq, await historyThread.syncCopy(state));
  } catch {
    // Nothing lost: the snapshot stands, and a first client is answered by converting it.
  }
}

/**
 * Compacts a document until its log is folded as far as history, held
 * bases and derivation allow, a bounded compaction at a time (the operator
 * command `compact-document`, for a document refused as too large to load).
 */
export async function compactFully(db: Db, name: string, now: () => Date, progress?: (result: CompactResult) => void): Promise<CompactResult | null> {
  let last: CompactResult | null = null;
  for (;;) {
    const result = await compact(db, name, now());
    if (result) progress?.(result);
    if (!result || result.remaining === 0 || (result.folded === 0 && last !== null && last.folded === 0)) return result ?? last;
    last = result;
  }
}
