import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Hocuspocus, type DirectConnection, type Document } from '@hocuspocus/server';
import { WebSocketServer, type WebSocket } from 'ws';
import type * as Y from 'yjs';
import type { Tx } from '../persistence/database';
import type { Services } from '../services';
import { authenticateConnection, ConnectionAccessMonitor, DecisionCache } from './connection-auth';
import { append, compact, compactionDue, loadInto } from './document-store';
import { parseDocumentName } from './document-names';
import { ChangeBatches, UpdateLog } from './group-commit';
import { isConnectionOrigin, isServerOrigin, type ServerOrigin } from './origins';

export const SYNC_PATH = '/api/sync';

/**
 * What the engine asks of the observer (src/events/observer.ts): derive a
 * summary of a committed transaction synchronously (Y transactions do not
 * outlive their callbacks), then persist it (events, projections) inside the
 * DB transaction that also logs the update when the server made the change.
 */
export interface TransactionObserver<Derived = unknown> {
  derive(documentName: string, doc: Y.Doc, transaction: Y.Transaction): Derived | null;
  persist(tx: Tx, documentName: string, derived: Derived, origin: unknown): Promise<() => void>;
  /** Several consecutive changes of one document in one DB transaction (group commit); `persist` is used when absent. */
  persistBatch?(tx: Tx, documentName: string, changes: Array<{ derived: Derived; origin: unknown }>): Promise<() => void>;
  /** After a client's change is durable: enforce caps that a CRDT cannot refuse up front. */
  afterClientChange?(documentName: string, derived: Derived): Promise<void>;
  /** Records whatever it holds back (coalesced typing events) before shutdown. */
  flush?(): Promise<void>;
}

type PendingChange = { origin: unknown; derived: unknown; update?: Uint8Array };
type Waiter = { resolve(): void; reject(error: unknown): void };
type Held = { connection: DirectConnection; lastUsed: number };

const HOLD_IDLE_MS = 60_000;
/** How long sync clients' changes to a doc or html body may wait to share one events transaction (see group-commit.ts). */
const CLIENT_BATCH_LINGER_MS = 50;
const SWEEP_INTERVAL_MS = 10_000;

/**
 * Y documents over Hocuspocus at `/api/sync`, made durable: a client's
 * update is appended to the log before Hocuspocus applies and acknowledges
 * it, and a server-side change is logged (with its events) before the REST
 * call that made it returns. See docs/SYNC.md.
 */
export class SyncEngine {
  readonly hocuspocus: Hocuspocus;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 * 1024 });
  private readonly held = new Map<string, Held>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly waiters = new Map<unknown, Waiter>();
  private readonly tails = new Map<string, { updates: number; bytes: number; snapshotBytes: number }>();
  private readonly pending = new WeakMap<Y.Doc, PendingChange>();
  private readonly queuedOrigins = new WeakSet<object>();
  private readonly monitor: ConnectionAccessMonitor;
  /** Group commit: client updates share log commits, and a document's queued changes persist as one batch. */
  private readonly log: UpdateLog;
  private readonly batches: ChangeBatches<PendingChange>;
  private readonly decisions = new DecisionCache();
  private sweeper: NodeJS.Timeout | undefined;
  private attachedTo: HttpServer | undefined;
  private observer: TransactionObserver | undefined;

  constructor(private readonly services: Services) {
    this.monitor = new ConnectionAccessMonitor(services, () => this.hocuspocus);
    this.log = new UpdateLog(services.db, (name, bytes) => this.noteAppended(name, bytes));
    this.batches = new ChangeBatches((name, task) => this.enqueue(name, task), (name, changes) => this.persistChanges(name, changes), {
      urgent: (change) => isServerOrigin(change.origin),
      // Doc and html bodies take a transaction per keystroke; table edits are rare enough to persist at once.
      lingerMs: (name) => (parseDocumentName(name)?.kind === 'tables' ? 0 : CLIENT_BATCH_LINGER_MS),
    });
    this.hocuspocus = new Hocuspocus({
      name: 'trellis',
      quiet: true,
      // Small edits are broadcast as they come: the default merge costs more than it saves (STACK-NOTES).
      flushDelay: false,
      // Nothing is stored on a debounce: the log is written before acknowledgement.
      debounce: 0,
      unloadImmediately: true,
      yDocOptions: { gc: true, gcFilter: () => true },
      onAuthenticate: (payload) => authenticateConnection(services, payload, this.decisions),
      onLoadDocument: async ({ document, documentName }) => {
        const loaded = await loadInto(services.db, documentName, document);
        this.tails.set(documentName, { updates: loaded.tailUpdates, bytes: loaded.tailBytes, snapshotBytes: loaded.snapshotBytes });
      },
      afterLoadDocument: async ({ document, documentName }) => this.observe(documentName, document),
      beforeHandleMessage: async ({ connection, update: message, documentName }) => {
        this.monitor.assertStillAllowed(connection);
        if (connection.readOnly) return;
        await this.log.logMessage(connection, documentName, message);
      },
      afterUnloadDocument: async ({ documentName }) => {
        this.tails.delete(documentName);
      },
    });
  }

  setObserver(observer: TransactionObserver) {
    this.observer = observer;
  }

  /** Serves `/api/sync` on the app's own port and starts background work. */
  attach(server: HttpServer) {
    this.monitor.start();
    this.sweeper = setInterval(() => void this.releaseIdle(), SWEEP_INTERVAL_MS).unref();
    if (this.attachedTo === server) return;
    this.attachedTo = server;
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '').split('?')[0];
      if (path !== SYNC_PATH) return;
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, request));
    });
  }

  private accept(ws: WebSocket, request: IncomingMessage) {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const webRequest = new Request(`http://localhost${request.url ?? SYNC_PATH}`, { headers });
    const client = this.hocuspocus.handleConnection(ws as never, webRequest, { remoteAddress: request.socket.remoteAddress });
    ws.on('message', (data: Buffer) => client.handleMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
    ws.on('close', (code, reason) => client.handleClose({ code, reason: reason.toString() }));
    ws.on('error', () => ws.terminate());
  }

  /**
   * Runs `change` on the document as one Y transaction attributed to
   * `origin`, and resolves once the update and the events it produced are
   * durable. Connected clients receive it at once.
   */
  async transact<T>(documentName: string, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<T> {
    const doc = await this.open(documentName);
    let waiter!: Waiter;
    const durable = new Promise<void>((resolve, reject) => (waiter = { resolve, reject }));
    this.waiters.set(origin, waiter);
    try {
      const result = doc.transact(() => change(doc), origin);
      // The update listener queues the change synchronously; nothing queued means nothing changed.
      if (this.queuedOrigins.has(origin)) await durable;
      return result;
    } finally {
      this.waiters.delete(origin);
    }
  }

  /** Read access to a loaded (or loaded now) document; do not mutate it here. */
  async read<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T> {
    const doc = await this.open(documentName);
    return reader(doc);
  }


  /** Keeps a document loaded while the REST layer uses it, released when idle. */
  private async open(documentName: string): Promise<Document> {
    const held = this.held.get(documentName);
    const loaded = this.hocuspocus.documents.get(documentName);
    if (held && loaded) {
      held.lastUsed = Date.now();
      return loaded;
    }
    const connection = await this.hocuspocus.openDirectConnection(documentName, { system: true });
    const previous = this.held.get(documentName);
    this.held.set(documentName, { connection, lastUsed: Date.now() });
    if (previous) void previous.connection.disconnect().catch(() => {});
    const document = this.hocuspocus.documents.get(documentName);
    if (!document) throw new Error(`document ${documentName} did not load`);
    return document;
  }

  private async releaseIdle() {
    const cutoff = Date.now() - HOLD_IDLE_MS;
    for (const [name, held] of this.held) {
      if (held.lastUsed > cutoff) continue;
      this.held.delete(name);
      // Safe to unload: every change is already in the log, nothing waits for a store.
      await this.enqueue(name, () => held.connection.disconnect()).catch(() => {});
    }
  }

  private observe(documentName: string, doc: Document) {
    doc.on('afterTransaction', (transaction: Y.Transaction) => {
      const origin = transaction.origin;
      if (!isServerOrigin(origin) && !isConnectionOrigin(origin)) return this.pending.delete(doc);
      const derived = this.observer?.derive(documentName, doc, transaction) ?? null;
      this.pending.set(doc, { origin, derived });
    });
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      const change = this.pending.get(doc);
      this.pending.delete(doc);
      if (!change || change.origin !== origin) return;
      change.update = update;
      if (typeof origin === 'object' && origin) this.queuedOrigins.add(origin);
      this.batches.push(documentName, change);
    });
  }

  /** A batch of a document's changes in one database transaction; one by one if the batch fails, so one bad change fails alone. */
  private async persistChanges(documentName: string, changes: PendingChange[]) {
    if (changes.length > 1 && this.observer?.persistBatch && (await this.persistBatch(documentName, changes))) return;
    for (const change of changes) await this.persistChange(documentName, change);
  }

  private async persistBatch(documentName: string, changes: PendingChange[]): Promise<boolean> {
    let publish: (() => void) | undefined;
    try {
      await this.services.db.transaction().execute(async (tx) => {
        for (const change of changes) if (isServerOrigin(change.origin)) await append(tx, documentName, change.update!);
        const observed = changes.filter((c) => c.derived != null).map((c) => ({ derived: c.derived, origin: c.origin }));
        if (observed.length > 0) publish = await this.observer!.persistBatch!(tx, documentName, observed);
      });
    } catch (error) {
      this.services.log.warn({ err: error, documentName, changes: changes.length }, 'could not persist a batch of changes; retrying one by one');
      return false;
    }
    for (const change of changes) if (isServerOrigin(change.origin)) this.noteAppended(documentName, change.update!.byteLength);
    publish?.();
    for (const change of changes) {
      this.waiters.get(change.origin)?.resolve();
      this.waiters.delete(change.origin);
    }
    for (const change of changes) {
      if (!isServerOrigin(change.origin) && change.derived != null) this.afterClientChange(documentName, change.derived);
    }
    return true;
  }

  private async persistChange(documentName: string, change: PendingChange) {
    const waiter = this.waiters.get(change.origin);
    this.waiters.delete(change.origin);
    try {
      let publish: (() => void) | undefined;
      const serverMade = isServerOrigin(change.origin);
      await this.services.db.transaction().execute(async (tx) => {
        // A client's update was logged before it was applied; a server change is logged here.
        if (serverMade) await append(tx, documentName, change.update!);
        if (change.derived != null && this.observer) publish = await this.observer.persist(tx, documentName, change.derived, change.origin);
      });
      if (serverMade) this.noteAppended(documentName, change.update!.byteLength);
      publish?.();
      waiter?.resolve();
      // Detached: a follow-up change made from inside this queue task would wait on the queue behind itself.
      if (!serverMade && change.derived != null) this.afterClientChange(documentName, change.derived);
    } catch (error) {
      this.services.log.error({ err: error, documentName }, 'could not persist a document change');
      if (isServerOrigin(change.origin)) await this.discardMemoryState(documentName);
      waiter?.reject(error);
    }
  }

  private afterClientChange(documentName: string, derived: unknown) {
    const follow = this.observer?.afterClientChange;
    if (!follow) return;
    setImmediate(() => {
      follow.call(this.observer, documentName, derived).catch((error) => this.services.log.error({ err: error, documentName }, 'follow-up to a client change failed'));
    });
  }

  /** The log is the truth: when a change could not be logged, drop the in-memory copy so it reloads from the log. */
  private async discardMemoryState(documentName: string) {
    const held = this.held.get(documentName);
    this.held.delete(documentName);
    this.hocuspocus.closeConnections(documentName);
    await held?.connection.disconnect().catch(() => {});
  }

  private noteAppended(documentName: string, bytes: number) {
    const tail = this.tails.get(documentName) ?? { updates: 0, bytes: 0, snapshotBytes: 0 };
    tail.updates += 1;
    tail.bytes += bytes;
    this.tails.set(documentName, tail);
    if (compactionDue(tail)) {
      this.tails.set(documentName, { updates: 0, bytes: 0, snapshotBytes: tail.snapshotBytes });
      void this.enqueue(documentName, () => this.compactNow(documentName));
    }
  }

  async compactNow(documentName: string) {
    try {
      const result = await compact(this.services.db, documentName, this.services.clock.now());
      const tail = this.tails.get(documentName);
      if (result && tail) tail.snapshotBytes = result.bytes;
    } catch (error) {
      this.services.log.warn({ err: error, documentName }, 'compaction failed; the log still holds every update');
    }
  }

  /** Per-document serial queue: persistence happens in transaction order. */
  private enqueue(documentName: string, task: () => Promise<unknown>): Promise<void> {
    const previous = this.queues.get(documentName) ?? Promise.resolve();
    const run = previous.then(task);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.queues.set(documentName, settled);
    void settled.then(() => {
      if (this.queues.get(documentName) === settled) this.queues.delete(documentName);
    });
    return run.then(() => {});
  }

  /** Waits until every queued persistence task has finished (tests, shutdown). */
  async drain() {
    await Promise.all([...this.queues.values()]);
  }

  async close() {
    clearInterval(this.sweeper);
    this.monitor.stop();
    this.hocuspocus.closeConnections();
    for (const client of this.wss.clients) client.terminate();
    await this.drain();
    await this.observer?.flush?.();
    for (const [, held] of this.held) await held.connection.disconnect().catch(() => {});
    this.held.clear();
  }
}
