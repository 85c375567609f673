import type { Document } from '@hocuspocus/server';
import type { Logger } from 'pino';
import type * as Y from 'yjs';
import { DocumentWriteError } from '../errors';
import type { Failpoints } from '../lib/failpoints';
import type { Metrics } from '../metrics/index';
import type { Db } from '../persistence/database';
import { appendHead, appendStampedUpdates, markUpdatesDerived, type AppendedRow } from '../persistence/document-log';
import { historyUpdateOf, type HistoryUpdate } from '../persistence/versions';
import { recordLogged } from './logged-tail';
import { parseDocumentName } from '../model/document-names';
import type { CommitReceipt } from './document-sync';
import { ChangeBatches } from './group-commit';
import { authorOf, isConnectionOrigin, isServerOrigin, type ServerOrigin } from './origins';
import type { TransactionObserver } from './transaction-observer';

/** How long sync clients' changes to a doc or html body may wait to share one events transaction (see group-commit.ts). */
const CLIENT_BATCH_LINGER_MS = 50;

type PendingChange = {
  origin: unknown;
  derived: unknown;
  update?: Uint8Array;
  /** The document's recovery generation when the change was made: a server change from before a recovery was built on discarded state. */
  generation: number;
  /** The HTTP request that made a server change, for the one log line of a failure. */
  requestId?: string;
  /** Settles once a server change is committed or failed (reads and sync step 1 wait for it). */
  settled?: Waiter;
  /** A sync client's change: the log sequence numbers of the update it applied. */
  seqs: number[];
  /** The run the change joins. */
  run: string | null;
};
/** The logged update a connection is applying right now (Hocuspocus handles a connection's messages one at a time). */
type Applying = { documentName: string; seq: number; queued: boolean; run: string | null };
type Waiter = { resolve(receipt?: CommitReceipt): void; reject(error: unknown): void };
/** Hocuspocus broadcasts an update to a document's connections from here (flushDelay: false). */
type Broadcasting = { broadcastUpdate(update: Uint8Array): void };

/**
 * The write path after an update is applied: every Y transaction of a
 * loaded document from a sync client or the server is derived by the
 * observer as it happens, and its events and projections (and a server
 * change's update) are committed in the document's queue, batched
 * (group-commit.ts `ChangeBatches`). A server change's update reaches
 * connected clients, and its caller hears back, only after that commit; a
 * failed server commit voids it and what was built on it (the document is
 * rebuilt from its log: recovery.ts), a failed client commit is derived
 * again from the log (rederivation.ts).
 */
export class ChangeCommits {
  private readonly pending = new WeakMap<Y.Doc, PendingChange>();
  private readonly queuedOrigins = new WeakSet<object>();
  private readonly waiters = new Map<unknown, Waiter>();
  private readonly applying = new WeakMap<object, Applying>();
  /** Hocuspocus's own broadcast of each loaded document; server changes go out through it only once durable. */
  private readonly broadcasters = new WeakMap<Document, (update: Uint8Array) => void>();
  /** The document a server change is being applied to right now: its update is held back, not broadcast. */
  private capturing: Document | null = null;
  /** Per document: settles once the newest server change queued so far is committed or failed. */
  private readonly lastServerChange = new Map<string, Promise<void>>();
  /** Per document: logged client updates that changed nothing to derive; marked derived with the next commit. */
  private readonly idleSeqs = new Map<string, number[]>();
  private readonly batches: ChangeBatches<PendingChange>;

  constructor(
    private readonly deps: {
      db: Db;
      log: Logger;
      failpoints: Failpoints;
      metrics?: Metrics;
      observer(): TransactionObserver | undefined;
      enqueue(documentName: string, task: () => Promise<unknown>): Promise<void>;
      document(documentName: string): Document | undefined;
      /** ceilings: why a server change's update may not be kept (413), or null. */
      serverRefusal(documentName: string, doc: Y.Doc, update: Uint8Array): Error | null;
      generationOf(documentName: string): number;
      /** Rebuilds the document from its log (recovery.ts). */
      recover(documentName: string, cause: 'failure' | 'refusal'): Promise<void>;
      /** A server change's update was logged (compaction bookkeeping). */
      appended(documentName: string, bytes: number): void;
      /** Logged client updates whose events did not commit: derive them again from the log. */
      clientChangesFailed(documentName: string, seqs: readonly number[]): Promise<void>;
    },
  ) {
    this.batches = new ChangeBatches((name, task) => deps.enqueue(name, task), (name, changes) => this.persistChanges(name, changes), {
      urgent: (change) => isServerOrigin(change.origin),
      // Doc and html bodies take a transaction per keystroke; table edits are rare enough to persist at once.
      lingerMs: (name) => (parseDocumentName(name)?.kind === 'tables' ? 0 : CLIENT_BATCH_LINGER_MS),
    });
  }

  /** A document was loaded: from now on its transactions are derived and committed here, and server changes broadcast once durable. */
  watch(documentName: string, document: Document) {
    this.holdServerBroadcasts(document);
    this.observe(documentName, document);
  }

  /**
   * Runs `change` on the loaded document as one Y transaction attributed to
   * `origin`, and resolves once the update and the events it produced are
   * durable (with what the commit stored). Until then Hocuspocus's broadcast
   * of it is held back.
   */
  async transact<T>(document: Document, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<{ result: T; receipt: CommitReceipt }> {
    let waiter!: Waiter;
    const durable = new Promise<CommitReceipt | undefined>((resolve, reject) => (waiter = { resolve, reject }));
    durable.catch(() => {}); // heard below, unless `change` throws first
    this.waiters.set(origin, waiter);
    try {
      this.capturing = document;
      let result: T;
      try {
        result = document.transact(() => change(document), origin);
      } finally {
        this.capturing = null;
      }
      // The update listener queues the change synchronously; nothing queued means nothing changed.
      const receipt = this.queuedOrigins.has(origin) ? await durable : undefined;
      return { result, receipt: receipt ?? {} };
    } finally {
      this.waiters.delete(origin);
    }
  }

  /** A connection is about to apply its logged update `seq` (Hocuspocus `beforeHandleMessage`). */
  applyingClientUpdate(connection: object, documentName: string, seq: number, run: string | null) {
    this.applying.set(connection, { documentName, seq, queued: false, run });
  }

  /** The connection's message was handled (`afterHandleMessage`). */
  clientMessageHandled(connection: object, readOnly: boolean) {
    const applied = this.applying.get(connection);
    this.applying.delete(connection);
    // Nothing was queued for it (nothing to derive, or read-only since): still derived once the next commit of the document says so.
    if (applied && !applied.queued && !readOnly) this.noteIdle(applied.documentName, applied.seq);
  }

  /** The newest server change of the document queued so far: settles once it is committed or failed. */
  lastServerChangeOf(documentName: string): Promise<void> | undefined {
    return this.lastServerChange.get(documentName);
  }

  async serverChangesSettled(documentName: string) {
    await this.lastServerChange.get(documentName)?.catch(() => {});
  }

  /** Marks idle updates derived when no change of their document came to carry them (the sweeper, compaction). */
  async commitIdle(documentName: string) {
    const idle = this.idleSeqs.get(documentName);
    if (!idle || idle.length === 0) return;
    this.idleSeqs.delete(documentName);
    await markUpdatesDerived(this.deps.db, documentName, idle).catch((error) => {
      for (const seq of idle) this.noteIdle(documentName, seq);
      this.deps.log.warn({ err: error, documentName }, 'could not mark updates derived; will try again');
    });
  }

  /** The sweeper: idle updates no change came to carry, marked derived in their documents' queues. */
  async sweep() {
    for (const name of [...this.idleSeqs.keys()]) await this.deps.enqueue(name, () => this.commitIdle(name)).catch(() => {});
  }

  /** Hocuspocus broadcasts every update as it happens; a server change's update waits for its commit instead. */
  private holdServerBroadcasts(document: Document) {
    const hocuspocusDoc = document as unknown as Broadcasting;
    const broadcast = hocuspocusDoc.broadcastUpdate.bind(document);
    this.broadcasters.set(document, broadcast);
    hocuspocusDoc.broadcastUpdate = (update: Uint8Array) => {
      if (this.capturing !== document) broadcast(update);
    };
  }

  private broadcastCommitted(documentName: string, update: Uint8Array) {
    const document = this.deps.document(documentName);
    if (document) this.broadcasters.get(document)?.(update);
  }

  private observe(documentName: string, doc: Document) {
    doc.on('afterTransaction', (transaction: Y.Transaction) => {
      const origin = transaction.origin;
      if (!isServerOrigin(origin) && !isConnectionOrigin(origin)) return this.pending.delete(doc);
      const applying = isConnectionOrigin(origin) ? this.applying.get(origin.connection) : undefined;
      const run = isServerOrigin(origin) ? origin.context.run : (applying?.run ?? null);
      const derived = this.deps.observer()?.derive(documentName, doc, transaction, run) ?? null;
      this.pending.set(doc, { origin, derived, generation: this.deps.generationOf(documentName), seqs: applying ? [applying.seq] : [], run });
    });
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      const change = this.pending.get(doc);
      this.pending.delete(doc);
      if (!change || change.origin !== origin) return;
      change.update = update;
      // ceilings: a server change over a size ceiling is refused (413) and taken back out; nothing is logged.
      const refusal = isServerOrigin(origin) ? this.deps.serverRefusal(documentName, doc, update) : null;
      if (refusal) return this.refuseServerChange(documentName, change, refusal);
      if (isServerOrigin(origin)) {
        let settled!: Waiter;
        this.lastServerChange.set(documentName, new Promise<void>((resolve, reject) => (settled = { resolve: () => resolve(), reject })).catch(() => {}));
        change.settled = settled;
        change.requestId = origin.context.requestId;
        // Only `transact` asks (a sync client's origin is a new object a message: a weak entry each would be garbage to trace).
        this.queuedOrigins.add(origin);
      }
      if (isConnectionOrigin(origin)) {
        const applying = this.applying.get(origin.connection);
        if (applying && change.seqs.includes(applying.seq)) applying.queued = true;
      }
      this.batches.push(documentName, change);
    });
  }

  /**
   * A batch of a document's changes in one database transaction. If it
   * fails, the changes are tried one by one, so one bad change fails alone;
   * a server change that cannot commit voids the server changes made after
   * it (they were built on it), and the document is rebuilt from its log.
   * Connections stay open: none of them saw a change that failed.
   */
  private async persistChanges(documentName: string, changes: PendingChange[]) {
    const generation = this.deps.generationOf(documentName);
    const live: PendingChange[] = [];
    for (const change of changes) {
      // A batch holds up to a thousand changes: one pass, not a search of `live` for each.
      if (isServerOrigin(change.origin) && change.generation < generation) this.failServerChange(change, new DocumentWriteError(documentName, false));
      else live.push(change);
    }
    if (live.length === 0) return;
    if (live.length > 1 && (await this.commit(documentName, live)) === null) return;
    let failed = false;
    const clientFailed: number[] = [];
    for (const change of live) {
      if (failed && isServerOrigin(change.origin)) {
        this.failServerChange(change, new DocumentWriteError(documentName, false));
        continue;
      }
      const error = await this.commit(documentName, [change]);
      if (error === null) continue;
      this.logFailure(documentName, change, error);
      if (isServerOrigin(change.origin)) {
        failed = true;
        this.failServerChange(change, new DocumentWriteError(documentName, isInputError(error)));
      } else {
        clientFailed.push(...change.seqs);
      }
    }
    if (failed) await this.deps.recover(documentName, 'failure');
    if (clientFailed.length > 0) await this.deps.clientChangesFailed(documentName, clientFailed);
  }

  /** Commits changes (server updates, and everyone's events and projections) in one transaction; the error, or null. */
  private async commit(documentName: string, changes: PendingChange[]): Promise<unknown> {
    let publish: (() => void) | undefined;
    let receipts: Array<CommitReceipt | undefined> | undefined;
    const observer = this.deps.observer();
    const server = changes.filter((change) => isServerOrigin(change.origin));
    const observedChanges = changes.filter((c) => c.derived != null);
    const seqOf = new Map<PendingChange, number>();
    const logged: HistoryUpdate[] = [];
    const idle = this.idleSeqs.get(documentName) ?? [];
    this.idleSeqs.delete(documentName);
    const timer = this.deps.metrics?.commitDuration.startTimer();
    const appending = server.map((change) => ({ document: documentName, update: change.update!, author: authorOf(change.origin), derived: true, runId: change.run }));
    const observed = observedChanges.map((c) => ({ derived: c.derived, origin: c.origin, seqs: c.seqs, run: c.run }));
    const logAppended = (appended: AppendedRow[]) =>
      server.forEach((change, i) => {
        seqOf.set(change, appended[i]!.seq);
        logged.push(historyUpdateOf(appended[i]!.seq, appended[i]!.createdAt, change.update!, authorOf(change.origin)));
      });
    try {
      // Server changes alone, each observed, nothing else to mark derived: the observer may write the whole commit in one statement,
      // atomic without `begin` and `commit` (two round trips fewer). The failpoint stands where the transaction's would, before any write.
      // (Tables only: a doc's or html body's commit always writes more than one statement.)
      const aloneHead =
        observer?.persistAlone && idle.length === 0 && server.length === changes.length && observed.length === changes.length && parseDocumentName(documentName)?.kind === 'tables'
          ? appendHead(this.deps.db, appending)
          : null;
      let alone = false;
      if (aloneHead) {
        this.deps.failpoints.hit('document.commit');
        const persisted = await observer!.persistAlone!(this.deps.db, documentName, observed, aloneHead);
        if (persisted) {
          // The append rides in the observer's statement whenever it takes the commit alone.
          if (!persisted.appended) throw new Error('the observer wrote a commit alone without its log append');
          ({ publish, receipts } = persisted);
          logAppended(persisted.appended);
          alone = true;
        }
      }
      if (!alone) await this.deps.db.transaction().execute(async (tx) => {
        let deferred: number[] = [];
        // The observer writes the append before its own writes, in its first statement where it can (one round trip fewer); else it goes first here.
        const head = observed.length > 0 && observer ? appendHead(tx, appending) : null;
        let appended = head ? null : await appendStampedUpdates(tx, appending);
        if (observed.length > 0 && observer) {
          const persisted = await observer.persist(tx, documentName, observed, head);
          ({ publish, deferred, receipts } = persisted);
          if (head) appended = persisted.appended ?? null;
        }
        // An observer that wrote nothing and did not take it.
        appended ??= await appendStampedUpdates(tx, appending);
        logAppended(appended);
        const held = new Set(deferred);
        const derived = [...idle, ...changes.flatMap((c) => c.seqs)].filter((seq) => !held.has(seq));
        await markUpdatesDerived(tx, documentName, derived);
        // Passed once a commit: before the one statement it tried alone (it then wrote nothing).
        if (!aloneHead) this.deps.failpoints.hit('document.commit');
        if (server.length < changes.length) this.deps.failpoints.hit('document.derived.commit');
      });
    } catch (error) {
      timer?.({ outcome: 'failed' });
      // Their updates are in the log, not derived: the next commit (or load) takes them.
      for (const seq of idle) this.noteIdle(documentName, seq);
      if (changes.length > 1) this.deps.log.warn({ err: error, documentName, changes: changes.length }, 'a batch of document changes did not commit; trying them one by one');
      return error;
    }
    timer?.({ outcome: 'committed' });
    recordLogged(this.deps.db, documentName, logged);
    if (server.length > 0) this.deps.metrics?.logAppends.inc({ source: 'server' }, server.length);
    for (const change of server) {
      this.deps.appended(documentName, change.update!.byteLength);
      this.broadcastCommitted(documentName, change.update!);
    }
    publish?.();
    const receiptOf = new Map(observedChanges.map((change, i) => [change, receipts?.[i]]));
    for (const change of changes) {
      change.settled?.resolve();
      const seq = seqOf.get(change);
      this.waiters.get(change.origin)?.resolve(seq === undefined ? receiptOf.get(change) : { ...receiptOf.get(change), seq });
      this.waiters.delete(change.origin);
    }
    // Detached: a follow-up change made from inside this queue task would wait on the queue behind itself.
    for (const change of changes) if (!isServerOrigin(change.origin) && change.derived != null) this.afterClientChange(documentName, change.derived);
    return null;
  }

  /** ceilings: the caller gets `error`; the document is rebuilt from its log once the server changes before this one settle. */
  private refuseServerChange(documentName: string, change: PendingChange, error: Error) {
    this.queuedOrigins.add(change.origin as object);
    this.failServerChange(change, error);
    void this.deps.recover(documentName, 'refusal');
  }

  private failServerChange(change: PendingChange, error: Error) {
    change.settled?.resolve();
    this.waiters.get(change.origin)?.reject(error);
    this.waiters.delete(change.origin);
  }

  /** One log line per failed change, naming the document and, for a server change, the request that made it. */
  private logFailure(documentName: string, change: PendingChange, error: unknown) {
    const serverMade = isServerOrigin(change.origin);
    this.deps.log.error(
      { err: error, documentName, ...(change.requestId ? { reqId: change.requestId } : {}), source: serverMade ? 'server' : 'client' },
      serverMade ? 'a document change did not commit; no client saw it' : "a sync client's change is in the log but its events and projections did not commit",
    );
  }

  private afterClientChange(documentName: string, derived: unknown) {
    const observer = this.deps.observer();
    const follow = observer?.afterClientChange;
    if (!follow) return;
    setImmediate(() => {
      follow.call(observer, documentName, derived).catch((error) => this.deps.log.error({ err: error, documentName }, 'follow-up to a client change failed'));
    });
  }

  private noteIdle(documentName: string, seq: number) {
    const idle = this.idleSeqs.get(documentName);
    if (idle) idle.push(seq);
    else this.idleSeqs.set(documentName, [seq]);
  }
}

/** Postgres data exceptions (SQLSTATE class 22): the value was the problem, not the database. */
function isInputError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}
