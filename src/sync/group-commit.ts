/**
 * Group commit for the sync engine: many small writes share one database
 * commit, and each caller still hears back only after the commit that holds
 * its write.
 *
 * Why: a sync client typing sends one update per keystroke, and Hocuspocus
 * handles a connection's messages strictly one after another, awaiting
 * `beforeHandleMessage` (where the engine makes each update durable) before
 * it applies and acknowledges the message. One INSERT and commit per
 * message caps a typist at ~1,000 updates/s on PGlite and puts a commit
 * between every two keystrokes of a fast replay (bench/doc.ts).
 *
 * - `UpdateLog.logMessage` makes a client message's update durable. When it
 *   has to write, it also logs, in the same statement, the updates of the
 *   messages already waiting behind it on the same connection (Hocuspocus's
 *   per-connection queue, read-only). Those are written ahead of their turn
 *   and in their order; when their turn comes they find their write done (or
 *   in flight) and wait for nothing more. Appends from other connections
 *   that arrive while a commit is in flight go into the next one.
 *   A message is still applied and acknowledged only after its update is in
 *   the log. What this changes: an update logged ahead whose connection is
 *   closed before its turn (a revoked key, a malformed message before it)
 *   stays in the log without being applied to the loaded document; the
 *   client, which never got its acknowledgement, resends it on reconnect,
 *   and the next load applies it. Yjs updates are idempotent.
 *
 * - Updates of one connection's messages that share a commit are merged
 *   (`Y.mergeUpdates`, up to MAX_PARTS) into one log row: a fast typist's
 *   or a replaying client's queued keystrokes cost one row, one set of index
 *   entries and one derived mark instead of one each. Each message is still
 *   applied, acknowledged and derived on its own turn; its events are keyed
 *   by the row's sequence number and its part (`seq.part`), and the row is
 *   marked derived only once every part's events are committed
 *   (`derivable`, `partsDerived`). A row derived again after a crash is
 *   replayed whole, as one transaction.
 *
 * - `ChangeBatches` collects the committed transactions of a document that
 *   wait for the observer (events, projections) and hands them over as one
 *   batch, persisted in one database transaction, in order, through the
 *   engine's per-document queue.
 */
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import type { Db } from '../persistence/database';
import { appendUpdates, markUpdatesDerived, type UpdateAuthor } from '../persistence/document-log';
import { documentUpdateOf } from './update-message';

/** Where a message's update is in the log: its row, and its part of that row when the row merges several messages' updates. */
export type LoggedAt = { seq: number; part: number; parts: number };

type Deferred = { resolve(at: LoggedAt): void; reject(error: unknown): void };

/** `source`: the connection whose messages these are; consecutive appends of one source and document may share a row. */
type PendingAppend = { document: string; update: Uint8Array; author: UpdateAuthor; source?: object; done: Deferred };

/** The at-most rows one commit takes; the rest wait for the next. */
const MAX_ROWS_PER_COMMIT = 20_000;
/**
 * The at-most updates merged into one row. Merging costs ~15 µs an update
 * for runs of typing up to a few hundred (more per update beyond: Yjs sorts
 * the structs), against ~100 µs for a row of its own and its derived mark.
 */
const MAX_PARTS = 128;

/** The key events derived from a logged message are recorded under (with their index): `seq`, or `seq.part` in a shared row. */
export function derivationKey(at: LoggedAt): string {
  return at.parts > 1 ? `${at.seq}.${at.part}` : String(at.seq);
}

export class UpdateLog {
  private pending: PendingAppend[] = [];
  private flushing = false;
  /** Messages whose update was logged (or is being logged) ahead of their turn. */
  private readonly ahead = new WeakMap<Uint8Array, Promise<LoggedAt>>();
  /** Rows holding several messages' updates: how many of their parts still wait for their events. */
  private readonly openParts = new Map<number, { document: string; open: number }>();

  constructor(
    private readonly db: Db,
    /** Called once per logged update, after its commit (compaction bookkeeping). */
    private readonly onLogged: (document: string, bytes: number) => void,
  ) {}

  /**
   * Resolves once the update `message` carries (if any) is durable, with its
   * sequence number in the log (null: the message carries no update). Call
   * from `beforeHandleMessage` with the connection handling the message and
   * the principal it is attributed to. A client's update is logged as not
   * yet derived: its events are committed after it is applied.
   */
  logMessage(connection: unknown, documentName: string, message: Uint8Array, author: UpdateAuthor): Promise<LoggedAt | null> {
    const early = this.ahead.get(message);
    if (early) {
      this.ahead.delete(message);
      return early;
    }
    const update = documentUpdateOf(message);
    if (!update) return Promise.resolve(null);
    const source = typeof connection === 'object' && connection ? connection : undefined;
    const own = this.enqueue(documentName, update, author, source);
    const queue = queuedMessages(connection);
    // Index 0 is the message being handled now; the rest arrived after it.
    for (let i = 1; i < queue.length; i++) {
      const next = queue[i]!;
      if (this.ahead.has(next) || addressOf(next) !== documentName) continue;
      const nextUpdate = documentUpdateOf(next);
      if (!nextUpdate) continue;
      const logged = this.enqueue(documentName, nextUpdate, author, source);
      logged.catch(() => {}); // its own turn reports the failure; nobody may be left to hear it
      this.ahead.set(next, logged);
    }
    return own;
  }

  /** Appends one client update with the next commit, in a row of its own; resolves with its sequence number after that commit. Appends made in the same tick share the commit. */
  async append(document: string, update: Uint8Array, author: UpdateAuthor): Promise<number> {
    return (await this.enqueue(document, update, author)).seq;
  }

  private enqueue(document: string, update: Uint8Array, author: UpdateAuthor, source?: object): Promise<LoggedAt> {
    return new Promise<LoggedAt>((resolve, reject) => {
      this.pending.push({ document, update, author, source, done: { resolve, reject } });
      if (!this.flushing) {
        this.flushing = true;
        queueMicrotask(() => void this.flush());
      }
    });
  }

  /**
   * Of the rows of these derived parts (one entry per part: a change's
   * `seq`s, a typing burst's, idle messages'), the ones whose every part is
   * then derived: mark those in the transaction that commits the parts'
   * events, and call `partsDerived` once it has committed.
   */
  derivable(seqs: readonly number[]): number[] {
    const counts = countOf(seqs);
    return [...counts].filter(([seq, n]) => (this.openParts.get(seq)?.open ?? 0) <= n).map(([seq]) => seq);
  }

  /**
   * After the commit of derived parts: counts them off. A shared row whose
   * last parts were committed by someone else's transaction meanwhile (two
   * commits each holding some of its parts) is marked here.
   */
  partsDerived(seqs: readonly number[], marked: readonly number[]) {
    const done = new Set(marked);
    for (const [seq, n] of countOf(seqs)) {
      const row = this.openParts.get(seq);
      if (!row) continue;
      row.open -= n;
      if (row.open > 0) continue;
      this.openParts.delete(seq);
      if (!done.has(seq)) {
        // Not marked: the next load derives it again (at least once), so a failure here loses nothing.
        markUpdatesDerived(this.db, row.document, [seq]).catch(() => {});
      }
    }
  }

  /** Rows derived whole (replayed from the log): their parts need no counting any more. */
  forget(seqs: readonly number[]) {
    for (const seq of seqs) this.openParts.delete(seq);
  }

  /** Resolves once every append made so far is committed (or failed). */
  async settled(): Promise<void> {
    while (this.flushing || this.pending.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async flush() {
    try {
      while (this.pending.length > 0) {
        const batch = mergeRuns(this.pending.splice(0, MAX_ROWS_PER_COMMIT));
        const rows = batch.map((row) => ({ document: row.document, update: row.update, author: row.author, derived: false }));
        let seqs: number[];
        try {
          seqs = batch.length > 10_000 ? await this.db.transaction().execute((tx) => appendUpdates(tx, rows)) : await appendUpdates(this.db, rows);
        } catch (error) {
          for (const row of batch) for (const item of row.items) item.done.reject(error);
          continue;
        }
        batch.forEach((row, i) => {
          const seq = seqs[i]!;
          const parts = row.items.length;
          if (parts > 1) this.openParts.set(seq, { document: row.document, open: parts });
          this.onLogged(row.document, row.update.byteLength);
          row.items.forEach((item, part) => item.done.resolve({ seq, part, parts }));
        });
      }
    } finally {
      this.flushing = false;
    }
  }
}

type Row = { document: string; update: Uint8Array; author: UpdateAuthor; items: PendingAppend[] };

/** One row per run of consecutive appends of one connection to one document (at most MAX_PARTS), the rest a row each. */
function mergeRuns(appends: PendingAppend[]): Row[] {
  const rows: Row[] = [];
  let run: PendingAppend[] = [];
  const close = () => {
    if (run.length === 0) return;
    const merged = run.length > 1 ? tryMerge(run.map((item) => item.update)) : run[0]!.update;
    if (merged) rows.push({ document: run[0]!.document, update: merged, author: run[0]!.author, items: run });
    else for (const item of run) rows.push({ document: item.document, update: item.update, author: item.author, items: [item] });
    run = [];
  };
  for (const item of appends) {
    const last = run.at(-1);
    const joins = last && item.source && item.source === last.source && item.document === last.document && item.author?.id === last.author?.id;
    if (!joins || run.length >= MAX_PARTS) close();
    run.push(item);
  }
  close();
  return rows;
}

/** The merged update, or null when one of them is not a valid update (each then goes in its own row, and fails on its own turn). */
function tryMerge(updates: Uint8Array[]): Uint8Array | null {
  try {
    return Y.mergeUpdates(updates);
  } catch {
    return null;
  }
}

function countOf(seqs: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const seq of seqs) counts.set(seq, (counts.get(seq) ?? 0) + 1);
  return counts;
}

/** Hocuspocus's per-connection queue of received, not yet handled messages (index 0 is being handled). */
function queuedMessages(connection: unknown): readonly Uint8Array[] {
  const queue = (connection as { messageQueue?: unknown } | null)?.messageQueue;
  return Array.isArray(queue) ? (queue as Uint8Array[]) : [];
}

/** The document a raw message is addressed to (`name` or `name\0sessionId`), or null when it cannot be read. */
function addressOf(message: Uint8Array): string | null {
  try {
    const key = decoding.readVarString(decoding.createDecoder(message));
    const separator = key.indexOf('\0');
    return separator === -1 ? key : key.slice(0, separator);
  } catch {
    return null;
  }
}

/**
 * Per document, the changes waiting to be persisted, handed over as one
 * batch by a single task in the engine's per-document queue. A change that
 * arrives while that task waits for its turn joins it; one that arrives
 * while it runs goes to the next task.
 *
 * A batch of sync clients' changes only (nobody waits on those: their
 * updates are already logged and acknowledged) lingers up to `lingerMs`
 * (per document) before it is persisted, so a typist's keystrokes share a
 * transaction instead of paying one each; their events reach SSE that much
 * later. A server-made change (a REST or MCP caller waiting for it) ends the
 * wait, though a batch is still persisted only after one turn of the event
 * loop, so that concurrent REST writes to one document share a commit.
 */
export class ChangeBatches<Change> {
  private readonly waiting = new Map<string, { changes: Change[]; wake: (() => void) | null }>();

  constructor(
    private readonly enqueue: (documentName: string, task: () => Promise<unknown>) => Promise<void>,
    private readonly persist: (documentName: string, changes: Change[]) => Promise<void>,
    private readonly options: { urgent(change: Change): boolean; lingerMs?: number | ((documentName: string) => number); maxBatch?: number },
  ) {}

  push(documentName: string, change: Change) {
    const maxBatch = this.options.maxBatch ?? 1_000;
    const waiting = this.waiting.get(documentName);
    if (waiting && waiting.changes.length < maxBatch) {
      waiting.changes.push(change);
      if (waiting.wake && (this.options.urgent(change) || waiting.changes.length >= maxBatch)) waiting.wake();
      return;
    }
    const batch: { changes: Change[]; wake: (() => void) | null } = { changes: [change], wake: null };
    this.waiting.set(documentName, batch);
    void this.enqueue(documentName, async () => {
      const option = this.options.lingerMs ?? 0;
      const linger = typeof option === 'function' ? option(documentName) : option;
      if (linger > 0 && !batch.changes.some((c) => this.options.urgent(c)) && batch.changes.length < maxBatch) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => resolve(), linger);
          batch.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        batch.wake = null;
      } else {
        // One turn of the event loop first: requests whose bytes arrived meanwhile (while the last
        // commit kept the thread busy, as PGlite does) reach their change and join this commit.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (this.waiting.get(documentName) === batch) this.waiting.delete(documentName);
      await this.persist(documentName, batch.changes);
    });
  }
}
