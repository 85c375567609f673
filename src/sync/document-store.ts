import * as random from 'lib0/random';
import * as Y from 'yjs';
import { compactDecodedContent } from './table-document';
import { forgetTableCaches } from './table-index';
import type { Db, Executor } from '../persistence/database';
import { appendUpdates, type UpdateAuthor } from '../persistence/document-log';
import { lockDocumentLogs } from '../persistence/document-log-heads';
import { loadStoredDocument, writeSnapshot, type StoredUpdate } from '../persistence/documents';
import { foldableUpTo, runHistoryPass, withHistoryLock } from './version-index';

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

export function compactionDue(tail: { updates: number; bytes: number; snapshotBytes: number }): boolean {
  return tail.updates >= COMPACT_AFTER_UPDATES || tail.bytes >= Math.max(COMPACT_AFTER_BYTES, tail.snapshotBytes / 2);
}

export type LoadResult = {
  tailUpdates: number;
  tailBytes: number;
  snapshotBytes: number;
  /** Sync clients' updates whose events were never committed (a crash, a failed commit): derive them again. */
  underived: number;
};

/** Applies the stored state to `doc` in one transaction. Throws when the store fails: a doc is never served empty by mistake. */
export async function loadInto(db: Executor, name: string, doc: Y.Doc): Promise<LoadResult> {
  const stored = await loadStoredDocument(db, name);
  Y.transact(doc, () => {
    if (stored.snapshot) Y.applyUpdateV2(doc, stored.snapshot.state);
    for (const { update } of stored.updates) Y.applyUpdate(doc, update);
  }, LOAD_ORIGIN);
  // Decoding leaves oversized arrays behind; trimming them saves about a third of a large table's heap.
  compactDecodedContent(doc);
  return {
    tailUpdates: stored.updates.length,
    tailBytes: stored.tailBytes,
    snapshotBytes: stored.snapshot?.state.byteLength ?? 0,
    underived: stored.updates.filter((u) => !u.derived).length,
  };
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
    if (stored.snapshot) Y.applyUpdateV2(scratch, stored.snapshot.state, LOAD_ORIGIN);
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

/**
 * Rebuilds the snapshot from the stored log and drops the folded updates.
 * The log is first turned into versions (version-index.ts), and only what
 * that pass covered, and no base version a recent read handed out, is
 * folded: history never loses a listed version to compaction. The fold
 * itself holds the document's log head: no append (from this or another
 * instance) commits in between, so nothing is folded past.
 */
export async function compact(db: Db, name: string, now: Date): Promise<{ bytes: number; folded: number } | null> {
  return withHistoryLock(name, async () => {
    const pass = await runHistoryPass(db, name);
    const limit = await foldableUpTo(db, name, pass, now);
    return db.transaction().execute(async (tx) => {
      await lockDocumentLogs(tx, [name]);
      const stored = await loadStoredDocument(tx, name);
      // Never fold an update whose events are still to be derived: its turn comes on the next load.
      const firstUnderived = stored.updates.findIndex((u) => !u.derived);
      const foldable = firstUnderived === -1 ? stored.updates : stored.updates.slice(0, firstUnderived);
      const folded = limit === null ? foldable : foldable.filter((u) => u.seq <= limit);
      if (folded.length === 0) return null;
      const scratch = new Y.Doc();
      try {
        Y.transact(scratch, () => {
          if (stored.snapshot) Y.applyUpdateV2(scratch, stored.snapshot.state);
          for (const { update } of folded) Y.applyUpdate(scratch, update);
        });
        const state = Y.encodeStateAsUpdateV2(scratch);
        await writeSnapshot(tx, name, state, folded.at(-1)!.seq, now);
        return { bytes: state.byteLength, folded: folded.length };
      } finally {
        scratch.destroy();
      }
    });
  });
}
