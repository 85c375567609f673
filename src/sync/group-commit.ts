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
 * - `ChangeBatches` collects the committed transactions of a document that
 *   wait for the observer (events, projections) and hands them over as one
 *   batch, persisted in one database transaction, in order, through the
 *   engine's per-document queue.
 */
import * as decoding from 'lib0/decoding';
import type { Db } from '../persistence/database';
import { appendStampedUpdates, type AppendedRow, type UpdateAuthor } from '../persistence/document-log';
import { historyUpdateOf } from '../persistence/versions';
import { recordLogged } from './logged-tail';
import { documentChangeOf } from './update-message';

type Deferred = { resolve(seq: number): void; reject(error: unknown): void };

type PendingAppend = { document: string; update: Uint8Array; author: UpdateAuthor; runId: string | null; done: Deferred };

/** The at-most rows one commit takes; the rest wait for the next. */
const MAX_ROWS_PER_COMMIT = 20_000;

/**
 * How many waiting messages one look-ahead logs at most. It reads each
 * (address, update, a promise, two map entries: 1-2 µs) in the serving
 * thread's turn, outside any turn budget: a typist with 20,000 messages
 * waiting had one look-ahead hold the turn 32 ms (issue 38, session 24).
 * The message after the last one logged ahead looks ahead again when its
 * turn comes, and the commit in flight meanwhile holds this many at least.
 */
export const LOG_AHEAD_MESSAGES = 1_024;

export class UpdateLog {
  private pending: PendingAppend[] = [];
  private flushing = false;
  /** Messages whose update was logged (or is being logged) ahead of their turn. */
  private readonly ahead = new WeakMap<Uint8Array, Promise<number>>();

  constructor(
    private readonly db: Db,
    /** This instance's number, stamped on every update it logs (src/persistence/instances.ts). */
    private readonly writer: number,
    /** Called once per logged update, after its commit (compaction bookkeeping). */
    private readonly onLogged: (document: string, bytes: number) => void,
    /** Whether a waiting update may be logged ahead of its turn (`aheadBytes`: logged ahead before it in this pass); the first it may not stops the look-ahead (sync ceilings: its own turn refuses it, and the connection closes). */
    private readonly mayLogAhead: (document: string, update: Uint8Array, aheadBytes: number) => boolean = () => true,
  ) {}

  /**
   * Resolves once the update `message` carries (if any) is durable, with its
   * sequence number in the log (null: the message carries no update, or an
   * empty one, which changes nothing and is not logged). Call
   * from `beforeHandleMessage` with the connection handling the message and
   * the principal it is attributed to, and the run it joins. A client's
   * update is logged as not yet derived: its events are committed after it
   * is applied.
   */
  logMessage(connection: unknown, documentName: string, message: Uint8Array, author: UpdateAuthor, runId: string | null = null): Promise<number | null> {
    const early = this.ahead.get(message);
    if (early) {
      this.ahead.delete(message);
      return early;
    }
    const update = documentChangeOf(message);
    if (!update) return Promise.resolve(null);
    const own = this.append(documentName, update, author, runId);
    const queue = queuedMessages(connection);
    let aheadBytes = update.byteLength;
    // Index 0 is the message being handled now; the rest arrived after it.
    for (let i = 1; i < queue.length && i <= LOG_AHEAD_MESSAGES; i++) {
      const next = queue.at(i)!;
      if (this.ahead.has(next) || addressOf(next) !== documentName) continue;
      const nextUpdate = documentChangeOf(next);
      if (!nextUpdate) continue;
      if (!this.mayLogAhead(documentName, nextUpdate, aheadBytes)) break;
      aheadBytes += nextUpdate.byteLength;
      const logged = this.append(documentName, nextUpdate, author, runId);
      logged.catch(() => {}); // its own turn reports the failure; nobody may be left to hear it
      this.ahead.set(next, logged);
    }
    return own;
  }

  /** Appends one client update with the next commit; resolves with its sequence number after that commit. Appends made in the same tick share it. */
  append(document: string, update: Uint8Array, author: UpdateAuthor, runId: string | null = null): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.pending.push({ document, update, author, runId, done: { resolve, reject } });
      if (!this.flushing) {
        this.flushing = true;
        queueMicrotask(() => void this.flush());
      }
    });
  }

  /** Resolves once every append made so far is committed (or failed). */
  async settled(): Promise<void> {
    while (this.flushing || this.pending.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async flush() {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_ROWS_PER_COMMIT);
        const rows = batch.map((item) => ({ document: item.document, update: item.update, author: item.author, runId: item.runId, derived: false, writer: this.writer }));
        let appended: AppendedRow[];
        try {
          appended = await appendStampedUpdates(this.db, rows);
        } catch (error) {
          for (const item of batch) item.done.reject(error);
          continue;
        }
        this.holdForHistory(batch, appended);
        for (const item of batch) this.onLogged(item.document, item.update.byteLength);
        batch.forEach((item, i) => item.done.resolve(appended[i]!.seq));
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Committed: the history pass takes these from memory instead of reading them back (logged-tail.ts). */
  private holdForHistory(batch: readonly PendingAppend[], appended: readonly AppendedRow[]) {
    const byDocument = new Map<string, ReturnType<typeof historyUpdateOf>[]>();
    batch.forEach((item, i) => {
      let list = byDocument.get(item.document);
      if (!list) byDocument.set(item.document, (list = []));
      list.push(historyUpdateOf(appended[i]!.seq, appended[i]!.createdAt, item.update, item.author));
    });
    for (const [document, updates] of byDocument) recordLogged(this.db, document, updates);
  }
}

/** Hocuspocus's per-connection queue of received, not yet handled messages (index 0 is being handled). */
/** A connection's messages waiting to be handled: Hocuspocus's array, or the MessageQueue that replaces it (message-queue.ts). */
type WaitingMessages = { readonly length: number; at(index: number): Uint8Array | undefined };

function queuedMessages(connection: unknown): WaitingMessages {
  const queue = (connection as { messageQueue?: Partial<WaitingMessages> } | null)?.messageQueue;
  return typeof queue?.length === 'number' && typeof queue.at === 'function' ? (queue as WaitingMessages) : [];
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
