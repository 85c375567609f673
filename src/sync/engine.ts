import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Hocuspocus, type DirectConnection, type Document, type Extension, type onAuthenticatePayload } from '@hocuspocus/server';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import * as Y from 'yjs';
import { DocumentTooLargeError, DocumentWriteError } from '../errors';
import { currentRequestId } from '../lib/request-context';
import type { Config } from '../config';
import type { Clock } from '../lib/clock';
import type { Failpoints } from '../lib/failpoints';
import type { Metrics } from '../metrics/index';
import type { Db, Tx } from '../persistence/database';
import type { CommitReceipt, DocumentSync } from './document-sync';
import type { Principal } from '../policy/actor';
import { appendUpdates, listUnderivedUpdates, markUpdatesDerived, type UpdateAuthor } from '../persistence/document-log';
import { claimUnderived, type InstanceLease } from '../persistence/instances';
import { findPrincipals } from '../persistence/workspaces';
import { adoptMessageQueue } from './message-queue';
import { compact, COMPACT_QUIET_MS, compactionDue, compactionUrgent, loadInto, replaceDocumentState, replayUnderived, type CompactResult } from './document-store';
import { parseDocumentName } from '../model/document-names';
import { ChangeBatches, UpdateLog } from './group-commit';
import { DigestResponder } from './digest';
import { isConnectionOrigin, isServerOrigin, principalOfOrigin, serverOrigin, SYSTEM_PRINCIPAL, type ConnectionContext, type ServerOrigin } from './origins';
import { documentUpdateOf, isSyncStep1 } from './update-message';
import { suggestionOnlyRefusal } from './suggestion-check';
import { repairMessageText } from './update-text';
import { SyncCeilings, type LoadedDocuments } from './ceilings';
import { OrphanedUpdates } from './orphaned-updates';

export const SYNC_PATH = '/api/sync';

/**
 * What the engine asks of the observer (src/events/observer.ts): derive a
 * summary of a committed transaction synchronously (Y transactions do not
 * outlive their callbacks), then persist it (events, projections) inside the
 * database transaction that also logs the update when the server made it.
 */
export interface TransactionObserver<Derived = unknown> {
  /** `run`: the run the change joins (docs/RUNS.md): its details are recorded with its events. */
  derive(documentName: string, doc: Y.Doc, transaction: Y.Transaction, run: string | null): Derived | null;
  /**
   * Events and projections of consecutive changes of one document, in the
   * engine's transaction. A change from a sync client carries the log
   * sequence numbers of its update (`seqs`): its events get keys from them
   * (so deriving the update twice records them once), and they are marked
   * derived in this transaction unless the observer returns them as
   * `deferred` (it then marks them itself when it records their events,
   * e.g. coalesced typing). `receipts` (by position in `changes`) is what
   * each change's caller gets back from `transactWithReceipt`.
   */
  persist(tx: Tx, documentName: string, changes: ObservedChange<Derived>[]): Promise<{ publish(): void; deferred: number[]; receipts?: Array<CommitReceipt | undefined> }>;
  /** After a client's change is durable: enforce caps that a CRDT cannot refuse up front. */
  afterClientChange?(documentName: string, derived: Derived): Promise<void>;
  /** Records whatever it holds back (coalesced typing events) before shutdown. */
  flush?(): Promise<void>;
  /** Records what it holds back for one document, so its updates count as derived (compaction folds only derived updates). */
  settle?(documentName: string): Promise<void>;
  /**
   * After the engine rebuilt a document from its log (a commit failed) or
   * derived missed events again: forget what was derived from the old state
   * and rewrite the document's projections from `doc`, so they agree with
   * the log.
   */
  reproject?(tx: Tx, documentName: string, doc: Y.Doc): Promise<void>;
}

/**
 * Who may open a document and keep it open. Deciding that is an access
 * concern (src/access/connection-auth.ts, the same policy REST asks); the
 * engine only asks, so it is handed one at bootstrap and imports nothing above it.
 */
export interface ConnectionGate {
  /** Hocuspocus `onAuthenticate`: refuses by throwing; a read-only caller gets `payload.connectionConfig.readOnly`. */
  authenticate(payload: onAuthenticatePayload): Promise<ConnectionContext>;
  /** Called before every message: throws once the connection has lost its access. */
  assertStillAllowed(connection: unknown): void;
  /**
   * The run the connection's next update joins (docs/RUNS.md): the run it
   * named, the automatic run of its key, or none. Throws (closing the
   * connection) when the run it named has ended.
   */
  runOf(connection: unknown): Promise<string | null>;
  /** Starts re-deciding the open connections of `hocuspocus` (a revoked key closes them). */
  start(hocuspocus: () => Hocuspocus): void;
  stop(): void;
}

/** What the engine needs of the app's services; the full bag (src/domain/services.ts) satisfies it. */
export type SyncEngineDeps = {
  db: Db;
  config: Pick<Config, 'documentLoadBudgetBytes' | 'compactAfterUpdates' | 'syncCeilings'>;
  log: Logger;
  clock: Clock;
  failpoints: Failpoints;
  metrics?: Metrics;
};

export type ObservedChange<Derived = unknown> = { derived: Derived; origin: unknown; seqs: readonly number[]; run: string | null };

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
type Held = { connection: DirectConnection; lastUsed: number };
/** Hocuspocus broadcasts an update to a document's connections from here (flushDelay: false). */
type Broadcasting = { broadcastUpdate(update: Uint8Array): void };

const HOLD_IDLE_MS = 60_000;
/** How long sync clients' changes to a doc or html body may wait to share one events transaction (see group-commit.ts). */
const CLIENT_BATCH_LINGER_MS = 50;
const SWEEP_INTERVAL_MS = 10_000;
/** A compaction held back by derivation runs again after this long (typing bursts end after 2 s without an edit), at most this many times without folding. */
const FOLLOW_UP_MS = 2_500;
const FOLLOW_UP_ATTEMPTS = 8;
/** Backpressure starts when a document's unfolded log holds this many compactions' worth (see keepPace). */
const PACE_FACTOR = 10;
const PACE_WAIT_MS = 2_000;

/**
 * Y documents over Hocuspocus at `/api/sync`, made durable: a client's
 * update is appended to the log before Hocuspocus applies and acknowledges
 * it, and a server-side change is logged (with its events) before the REST
 * call that made it returns. See docs/SYNC.md.
 */
export class SyncEngine implements DocumentSync {
  readonly hocuspocus: Hocuspocus;
  private readonly wss: WebSocketServer;
  /** SYNC_MAX_* (src/sync/ceilings.ts): the hooks below marked "ceilings" call it. */
  private readonly ceilings: SyncCeilings;
  private readonly held = new Map<string, Held>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly waiters = new Map<unknown, Waiter>();
  private readonly tails = new Map<string, { updates: number; bytes: number; snapshotBytes: number }>();
  private readonly pending = new WeakMap<Y.Doc, PendingChange>();
  private readonly queuedOrigins = new WeakSet<object>();
  private readonly gate: ConnectionGate;
  /** Group commit: client updates share log commits, and a document's queued changes persist as one batch. */
  private readonly log: UpdateLog;
  private readonly batches: ChangeBatches<PendingChange>;
  private readonly digests: DigestResponder;
  /** Hocuspocus's own broadcast of each loaded document; server changes go out through it only once durable. */
  private readonly broadcasters = new WeakMap<Document, (update: Uint8Array) => void>();
  /** The document a server change is being applied to right now: its update is held back, not broadcast. */
  private capturing: Document | null = null;
  /** Per document: settles once the newest server change queued so far is committed or failed. */
  private readonly lastServerChange = new Map<string, Promise<void>>();
  /** Per document: bumped by every recovery; server changes from an older generation are void. */
  private readonly generations = new Map<string, number>();
  /** Documents being rebuilt from their log after a failed commit; everything else on them waits. */
  private readonly recovering = new Map<string, Promise<void>>();
  private readonly applying = new WeakMap<object, Applying>();
  /** Per document: logged client updates that changed nothing to derive; marked derived with the next commit. */
  private readonly idleSeqs = new Map<string, number[]>();
  /** Updates whose instance died before deriving them: derived here, whoever has their document open. */
  private readonly orphans: OrphanedUpdates;
  /** Documents loaded with updates still to derive: after the load, those no live instance will derive are derived here. */
  private readonly loadedUnderived = new Set<string>();
  private sweeper: NodeJS.Timeout | undefined;
  private attachedTo: HttpServer | undefined;
  private observer: TransactionObserver | undefined;

  constructor(
    private readonly services: SyncEngineDeps,
    options: {
      /** Who may connect (src/access/connection-auth.ts). */
      gate: ConnectionGate;
      /** Extra Hocuspocus extensions: the Redis relay when several instances share documents (src/sync/redis-relay.ts). */
      extensions?: Extension[];
      /** This process's number among the instances sharing the database, stamped on the client updates it logs. */
      instance: InstanceLease;
    },
  ) {
    const extensions = options.extensions ?? [];
    this.gate = options.gate;
    this.ceilings = new SyncCeilings(services.config.syncCeilings, services.log, services.metrics);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.ceilings.maxPayload });
    this.orphans = new OrphanedUpdates({ db: services.db, instance: options.instance, log: services.log, derive: (name) => this.deriveOrphans(name) });
    this.log = new UpdateLog(
      services.db,
      options.instance.number,
      (name, bytes) => {
        services.metrics?.logAppends.inc({ source: 'client' });
        this.noteAppended(name, bytes);
      },
      (name, update, aheadBytes) => this.ceilings.mayLogAhead(name, update, aheadBytes), // ceilings
    );
    this.digests = new DigestResponder({ log: services.log, metrics: services.metrics, committed: (name) => this.committed(name) });
    this.batches = new ChangeBatches((name, task) => this.enqueue(name, task), (name, changes) => this.persistChanges(name, changes), {
      urgent: (change) => isServerOrigin(change.origin),
      // Doc and html bodies take a transaction per keystroke; table edits are rare enough to persist at once.
      lingerMs: (name) => (parseDocumentName(name)?.kind === 'tables' ? 0 : CLIENT_BATCH_LINGER_MS),
    });
    this.hocuspocus = new Hocuspocus({
      name: 'trellis',
      quiet: true,
      // A copy: Hocuspocus appends its own configuration (store hooks included) to the array it is given.
      extensions: [...extensions],
      // Small edits are broadcast as they come: the default merge costs more than it saves (STACK-NOTES).
      flushDelay: false,
      // Nothing is stored on a debounce: the log is written before acknowledgement.
      debounce: 0,
      unloadImmediately: true,
      yDocOptions: { gc: true, gcFilter: () => true },
      onAuthenticate: (payload) => this.gate.authenticate(payload),
      onLoadDocument: async ({ document, documentName }) => {
        await this.ceilings.makeRoom(documentName, this.loadedDocuments); // ceilings
        const loaded = await loadInto(services.db, documentName, document, services.config.documentLoadBudgetBytes).catch((error) => {
          if (error instanceof DocumentTooLargeError) {
            services.log.error({ documentName, stored: error.stored, estimatedBytes: error.estimatedBytes, budgetBytes: error.budgetBytes }, 'refused to load a document over the memory budget; compact it with `npm run admin -- compact-document`');
          }
          throw error;
        });
        this.tails.set(documentName, { updates: loaded.tailUpdates, bytes: loaded.tailBytes, snapshotBytes: loaded.snapshotBytes });
        this.ceilings.track(documentName, document, loaded.snapshotBytes + loaded.tailBytes); // ceilings
        this.unfolded.set(documentName, loaded.tailUpdates);
        if (loaded.underived > 0) this.loadedUnderived.add(documentName);
      },
      afterLoadDocument: async ({ document, documentName }) => {
        this.holdServerBroadcasts(document);
        this.observe(documentName, document);
        // Events a crash kept from being recorded are derived again, before any new change's (those of a live instance are its own to derive).
        if (this.loadedUnderived.delete(documentName)) void this.enqueue(documentName, () => this.deriveOrphansNow(documentName)).catch(() => {});
      },
      // ceilings: a connection past SYNC_MAX_CONNECTIONS_PER_DOCUMENT is closed (4429), whether or not it sent anything yet.
      connected: async ({ connection, documentName }) => this.ceilings.admitOrClose(this.hocuspocus.documents, documentName, connection),
      // Runs before Hocuspocus unloads a document its last client left (socketId "server": the engine's own direct connections).
      onDisconnect: async ({ document, documentName, socketId }) => {
        if (socketId !== 'server') await this.holdAfterClient(documentName, document);
      },
      beforeHandleMessage: async ({ connection, update: message, documentName, document }) => {
        adoptMessageQueue(connection as never);
        this.gate.assertStillAllowed(connection);
        this.ceilings.checkMessage(this.hocuspocus.documents, connection, document, message); // ceilings: 4429 / 4413 before it is logged or applied
        await this.settledRecovery(documentName);
        // A client syncing now is sent the document's state: never a server change that may still fail.
        if (isSyncStep1(message)) return this.serverChangesSettled(documentName);
        if (connection.readOnly) return;
        this.assertSuggestionsOnly(connection as never, documentName, message);
        await this.keepPace(documentName);
        const run = documentUpdateOf(message) ? await this.gate.runOf(connection) : null;
        const seq = await this.log.logMessage(connection, documentName, message, authorOf(connection.context as ConnectionContext), run);
        if (seq !== null) this.applying.set(connection, { documentName, seq, queued: false, run });
      },
      afterHandleMessage: async ({ connection }) => {
        const applied = this.applying.get(connection);
        this.applying.delete(connection);
        // Nothing was queued for it (nothing to derive, or read-only since): still derived once the next commit of the document says so.
        if (applied && !applied.queued && !connection.readOnly) this.noteIdle(applied.documentName, applied.seq);
      },
      // Digest questions (checked convergence, src/sync/digest.ts); other stateless messages are not the engine's.
      onStateless: async (payload) => void this.digests.answer(payload),
      afterUnloadDocument: async ({ documentName }) => {
        this.ceilings.forget(documentName);
        this.tails.delete(documentName);
        this.unfolded.delete(documentName);
        this.behind.delete(documentName);
      },
    });
    this.skipIdleStoreHooks(extensions);
  }

  /**
   * A connection that may only suggest sends updates that are checked
   * before they are logged or applied: one that changes anything but its
   * author's own suggestions closes the connection (4403), so the change
   * never reaches the log, the document or another client.
   */
  private assertSuggestionsOnly(connection: { context: ConnectionContext }, documentName: string, message: Uint8Array) {
    const context = connection.context;
    if (!context?.suggestOnly || !context.actor) return;
    const update = documentUpdateOf(message);
    const document = update ? this.hocuspocus.documents.get(documentName) : undefined;
    const parsed = parseDocumentName(documentName);
    if (!update || !document || !parsed) return;
    const refusal = suggestionOnlyRefusal(parsed, document, update, context.actor.principal);
    if (refusal === null) return;
    this.services.log.info({ documentName, principal: context.actor.principal.id, refusal }, 'refused a sync update that was not a suggestion');
    // Not an Error: Hocuspocus logs what closes a connection, and a refusal is no fault of the server's (no stack in the log).
    throw { code: 4403, reason: 'forbidden', refusal };
  }

  /**
   * With `debounce: 0` Hocuspocus runs its store hooks after every update (a
   * mutex, a hook chain and a timer per keystroke) although no extension
   * stores anything: the log is written before the update is applied. The
   * immediate runs (a direct connection closing) still go through, as they
   * decide when a document unloads. Its onChange hooks, which nothing here
   * uses, are skipped the same way.
   */
  private skipIdleStoreHooks(extensions: readonly Extension[]) {
    // Our own configuration sets no store hook; only an extension passed in could.
    if (extensions.some((e) => e.onStoreDocument || e.afterStoreDocument)) return;
    const instance = this.hocuspocus as unknown as {
      storeDocumentHooks(document: Document, payload: unknown, immediately?: boolean): Promise<void>;
      handleDocumentUpdate(document: Document, origin: unknown, update: Uint8Array): void;
    };
    const store = instance.storeDocumentHooks.bind(instance);
    instance.storeDocumentHooks = (document, payload, immediately) => (immediately ? store(document, payload, immediately) : Promise.resolve());
    // Nobody listens to onChange either: skip building its payload (a URL parse and two objects an update).
    if (!extensions.some((e) => e.onChange)) instance.handleDocumentUpdate = () => {};
  }

  setObserver(observer: TransactionObserver) {
    this.observer = observer;
  }

  /** Serves `/api/sync` on the app's own port and starts background work. */
  attach(server: HttpServer) {
    this.closing = false;
    this.gate.start(() => this.hocuspocus);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS).unref();
    this.orphans.start();
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
    // Text inside updates is made well-formed before Hocuspocus logs, applies or relays anything (update-text.ts).
    ws.on('message', (data: Buffer) => client.handleMessage(repairMessageText(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))));
    ws.on('close', (code, reason) => client.handleClose({ code, reason: reason.toString() }));
    ws.on('error', () => ws.terminate());
  }

  /**
   * Runs `change` on the document as one Y transaction attributed to
   * `origin`, and resolves once the update and the events it produced are
   * durable. Connected clients receive the update only then: until its
   * commit, Hocuspocus's broadcast of it is held back (and a client that
   * asks for the document's state waits), so a failed commit leaves nothing
   * behind on any client.
   */
  async transact<T>(documentName: string, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<T> {
    return (await this.transactWithReceipt(documentName, origin, change)).result;
  }

  /** `transact`, and what the commit stored about the change (a table change's rows, as stored). */
  async transactWithReceipt<T>(documentName: string, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<{ result: T; receipt: CommitReceipt }> {
    let doc = await this.open(documentName);
    // A recovery swaps the document's state: never apply a change to what is being replaced (nor to one unloaded meanwhile: ceilings).
    while (this.recovering.has(documentName) || this.hocuspocus.documents.get(documentName) !== doc) {
      await this.settledRecovery(documentName);
      doc = await this.open(documentName);
    }
    let waiter!: Waiter;
    const durable = new Promise<CommitReceipt | undefined>((resolve, reject) => (waiter = { resolve, reject }));
    durable.catch(() => {}); // heard below, unless `change` throws first
    this.waiters.set(origin, waiter);
    try {
      this.capturing = doc;
      let result: T;
      try {
        result = doc.transact(() => change(doc), origin);
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

  /** Reads the document as committed: waits for server changes still being committed (they may yet fail). */
  async read<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T> {
    await this.settledRecovery(documentName);
    const doc = await this.open(documentName);
    await this.serverChangesSettled(documentName);
    return reader(doc);
  }

  /**
   * Resolves once every change applied to the document so far, a sync
   * client's included, is committed: its new rows are judged by the row cap
   * and the removal of refused ones has begun (it is applied at once).
   */
  async changesCommitted(documentName: string): Promise<void> {
    await this.enqueue(documentName, async () => {});
    // The observer starts a refusal's removal on the turn after its commit.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  async settleWorkspace(workspaceId: string): Promise<void> {
    const names = [...this.hocuspocus.documents.keys()].filter((name) => parseDocumentName(name)?.workspaceId === workspaceId);
    for (const name of names) {
      await this.changesCommitted(name);
      await this.observer?.settle?.(name);
    }
  }

  /**
   * Resolves once no server change of the document is being committed or
   * undone: its state is then what the log holds, and may be sent to other
   * instances (src/sync/redis-relay.ts).
   */
  async committed(documentName: string): Promise<void> {
    for (;;) {
      const recovering = this.recovering.get(documentName);
      const last = this.lastServerChange.get(documentName);
      await recovering?.catch(() => {});
      await last?.catch(() => {});
      if (this.recovering.get(documentName) === recovering && this.lastServerChange.get(documentName) === last) return;
    }
  }

  private async settledRecovery(documentName: string) {
    await this.recovering.get(documentName)?.catch(() => {});
  }

  private async serverChangesSettled(documentName: string) {
    await this.lastServerChange.get(documentName)?.catch(() => {});
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
    const document = this.hocuspocus.documents.get(documentName);
    if (document) this.broadcasters.get(document)?.(update);
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

  /**
   * A document a sync client leaves stays loaded for HOLD_IDLE_MS, as one
   * the REST layer used does: a reload, a reconnect or the next person to
   * open it is answered from memory instead of loading it again (a
   * 50,000-row table: about a second of the serving thread and a peak of
   * its decoded size each time). Idle held documents give way to the
   * loaded-documents ceiling like any other.
   */
  private async holdAfterClient(documentName: string, document: Document) {
    if (this.closing || this.hocuspocus.documents.get(documentName) !== document) return;
    await this.open(documentName).catch(() => {});
  }

  private closing = false;

  private async sweep() {
    for (const name of [...this.staleProjections]) await this.enqueue(name, () => this.reproject(name)).catch(() => {});
    for (const name of [...this.idleSeqs.keys()]) await this.enqueue(name, () => this.commitIdle(name)).catch(() => {});
    for (const name of [...this.pendingDerivations.keys()]) await this.enqueue(name, () => this.retryDerivation(name)).catch(() => {});
    await this.releaseIdle();
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
      const applying = isConnectionOrigin(origin) ? this.applying.get(origin.connection) : undefined;
      const run = isServerOrigin(origin) ? origin.context.run : (applying?.run ?? null);
      const derived = this.observer?.derive(documentName, doc, transaction, run) ?? null;
      this.pending.set(doc, { origin, derived, generation: this.generationOf(documentName), seqs: applying ? [applying.seq] : [], run });
    });
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      const change = this.pending.get(doc);
      this.pending.delete(doc);
      if (!change || change.origin !== origin) return;
      change.update = update;
      // ceilings: a server change over a size ceiling is refused (413) and taken back out; nothing is logged.
      const refusal = isServerOrigin(origin) ? this.ceilings.serverRefusal(documentName, doc, update) : null;
      if (refusal) return this.refuseServerChange(documentName, change, refusal);
      if (isServerOrigin(origin)) {
        let settled!: Waiter;
        this.lastServerChange.set(documentName, new Promise<void>((resolve, reject) => (settled = { resolve: () => resolve(), reject })).catch(() => {}));
        change.settled = settled;
        change.requestId = currentRequestId();
      }
      if (isConnectionOrigin(origin)) {
        const applying = this.applying.get(origin.connection);
        if (applying && change.seqs.includes(applying.seq)) applying.queued = true;
      }
      if (typeof origin === 'object' && origin) this.queuedOrigins.add(origin);
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
    const generation = this.generationOf(documentName);
    const live = changes.filter((change) => !(isServerOrigin(change.origin) && change.generation < generation));
    for (const change of changes) if (!live.includes(change)) this.failServerChange(change, new DocumentWriteError(documentName, false));
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
    if (failed) await this.recover(documentName);
    // A client's change stays applied (it is in the log): its events are derived again from the log, and projections rewritten.
    if (clientFailed.length > 0) {
      for (const seq of clientFailed) this.toDeriveAgain(documentName).add(seq);
      await this.retryDerivation(documentName);
    }
  }

  /** Commits changes (server updates, and everyone's events and projections) in one transaction; the error, or null. */
  private async commit(documentName: string, changes: PendingChange[]): Promise<unknown> {
    let publish: (() => void) | undefined;
    let receipts: Array<CommitReceipt | undefined> | undefined;
    const server = changes.filter((change) => isServerOrigin(change.origin));
    const observedChanges = changes.filter((c) => c.derived != null);
    const seqOf = new Map<PendingChange, number>();
    const idle = this.idleSeqs.get(documentName) ?? [];
    this.idleSeqs.delete(documentName);
    const timer = this.services.metrics?.commitDuration.startTimer();
    try {
      await this.services.db.transaction().execute(async (tx) => {
        const serverSeqs = await appendUpdates(
          tx,
          server.map((change) => ({ document: documentName, update: change.update!, author: authorOf(change.origin), derived: true, runId: change.run })),
        );
        server.forEach((change, i) => seqOf.set(change, serverSeqs[i]!));
        const observed = observedChanges.map((c) => ({ derived: c.derived, origin: c.origin, seqs: c.seqs, run: c.run }));
        let deferred: number[] = [];
        if (observed.length > 0 && this.observer) ({ publish, deferred, receipts } = await this.observer.persist(tx, documentName, observed));
        const held = new Set(deferred);
        const derived = [...idle, ...changes.flatMap((c) => c.seqs)].filter((seq) => !held.has(seq));
        await markUpdatesDerived(tx, documentName, derived);
        this.services.failpoints.hit('document.commit');
        if (server.length < changes.length) this.services.failpoints.hit('document.derived.commit');
      });
    } catch (error) {
      timer?.({ outcome: 'failed' });
      // Their updates are in the log, not derived: the next commit (or load) takes them.
      for (const seq of idle) this.noteIdle(documentName, seq);
      if (changes.length > 1) this.services.log.warn({ err: error, documentName, changes: changes.length }, 'a batch of document changes did not commit; trying them one by one');
      return error;
    }
    timer?.({ outcome: 'committed' });
    if (server.length > 0) this.services.metrics?.logAppends.inc({ source: 'server' }, server.length);
    for (const change of server) {
      this.noteAppended(documentName, change.update!.byteLength);
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
    void this.recover(documentName, 'refusal');
  }

  /** ceilings: what SYNC_MAX_LOADED_DOCUMENTS may unload: documents only the engine holds, none with work in flight. */
  private readonly loadedDocuments: LoadedDocuments = {
    count: () => this.hocuspocus.getDocumentsCount() + this.hocuspocus.loadingDocuments.size,
    idle: () =>
      [...this.held]
        .filter(([name]) => this.hocuspocus.documents.get(name)?.getConnectionsCount() === 1 && !this.queues.has(name) && !this.recovering.has(name))
        .map(([name, held]) => ({ name, lastUsed: held.lastUsed })),
    unload: async (name) => {
      const held = this.held.get(name);
      if (!held) return;
      this.held.delete(name);
      await this.enqueue(name, () => held.connection.disconnect()).catch(() => {});
      const document = this.hocuspocus.documents.get(name);
      if (document) await this.hocuspocus.unloadDocument(document);
    },
  };

  private failServerChange(change: PendingChange, error: Error) {
    change.settled?.resolve();
    this.waiters.get(change.origin)?.reject(error);
    this.waiters.delete(change.origin);
  }

  /** One log line per failed change, naming the document and, for a server change, the request that made it. */
  private logFailure(documentName: string, change: PendingChange, error: unknown) {
    const serverMade = isServerOrigin(change.origin);
    this.services.log.error(
      { err: error, documentName, ...(change.requestId ? { reqId: change.requestId } : {}), source: serverMade ? 'server' : 'client' },
      serverMade ? 'a document change did not commit; no client saw it' : "a sync client's change is in the log but its events and projections did not commit",
    );
  }

  private afterClientChange(documentName: string, derived: unknown) {
    const follow = this.observer?.afterClientChange;
    if (!follow) return;
    setImmediate(() => {
      follow.call(this.observer, documentName, derived).catch((error) => this.services.log.error({ err: error, documentName }, 'follow-up to a client change failed'));
    });
  }

  private generationOf(documentName: string): number {
    return this.generations.get(documentName) ?? 0;
  }

  /**
   * The log is the truth. After a server change failed to commit, the
   * loaded document still holds it (and whatever was built on it), though no
   * client saw it. Rebuild the document's state from the log, in place, so
   * every connection stays open, then rewrite its projections from it.
   * Everything else on the document waits meanwhile: client messages (so
   * nothing is applied to the state being replaced), server changes and
   * reads.
   */
  private recover(documentName: string, cause: 'failure' | 'refusal' = 'failure'): Promise<void> {
    // A failed commit voids the server changes made after it (built on it); a refused change voids none: those
    // before it commit first (the rebuild waits for them), those after wait for the rebuild.
    if (cause === 'failure') this.generations.set(documentName, this.generationOf(documentName) + 1);
    const running = this.recovering.get(documentName);
    if (running) return running;
    const run = (async () => {
      if (cause === 'refusal') await this.lastServerChange.get(documentName)?.catch(() => {});
      // Messages that passed the gate before it closed finish logging first, so the rebuilt state holds them.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.log.settled();
      const document = this.hocuspocus.documents.get(documentName);
      if (!document) return; // unloaded meanwhile: the next load reads the log
      const rebuilt = new Y.Doc({ gc: true });
      try {
        await loadInto(this.services.db, documentName, rebuilt, this.services.config.documentLoadBudgetBytes);
        replaceDocumentState(document, rebuilt);
      } catch (error) {
        // Could not even read the log: drop the document (closing its connections) so nobody edits a state the log lacks.
        this.services.log.error({ err: error, documentName }, 'could not rebuild a document from its log; unloading it');
        rebuilt.destroy();
        this.hocuspocus.closeConnections(documentName);
        const held = this.held.get(documentName);
        this.held.delete(documentName);
        await held?.connection.disconnect().catch(() => {});
        return;
      }
      this.services.log.info({ documentName }, 'document rebuilt from its log after a failed commit');
      await this.reproject(documentName);
    })().finally(() => {
      if (this.recovering.get(documentName) === run) this.recovering.delete(documentName);
    });
    this.recovering.set(documentName, run);
    return run;
  }

  private noteIdle(documentName: string, seq: number) {
    const idle = this.idleSeqs.get(documentName);
    if (idle) idle.push(seq);
    else this.idleSeqs.set(documentName, [seq]);
  }

  /** Marks idle updates derived when no change of their document came to carry them (the sweeper). */
  private async commitIdle(documentName: string) {
    const idle = this.idleSeqs.get(documentName);
    if (!idle || idle.length === 0) return;
    this.idleSeqs.delete(documentName);
    await markUpdatesDerived(this.services.db, documentName, idle).catch((error) => {
      for (const seq of idle) this.noteIdle(documentName, seq);
      this.services.log.warn({ err: error, documentName }, 'could not mark updates derived; will try again');
    });
  }

  /**
   * Once: the updates of a document whose events were never committed (the
   * process that logged them died between a client's update and its events,
   * or their commit failed) are replayed from the log in a scratch
   * document, each in its own transaction attributed to its author, and
   * their events and projections committed as if they had just arrived.
   * Event keys come from the updates' sequence numbers, and the commit first
   * claims the updates under the document's log lock (another instance may
   * be deriving them too: the one that finds them still underived records
   * them, the other reads again). The loaded document's projections are then
   * rewritten from its full state. Resolves whether the updates are derived.
   */
  private async deriveAgain(documentName: string, seqs: readonly number[]): Promise<boolean> {
    const observer = this.observer;
    if (!observer || seqs.length === 0) return true;
    let derived = 0;
    try {
      for (let attempt = 1; ; attempt++) {
        const underived = await listUnderivedUpdates(this.services.db, documentName);
        const wanted = new Set(seqs);
        const todo = underived.filter((row) => wanted.has(row.seq));
        if (todo.length === 0) break;
        if (await this.replayAndRecord(documentName, observer, todo)) {
          derived = todo.length;
          break;
        }
        if (attempt === 3) throw new Error('other instances kept deriving the same updates first');
      }
    } catch (error) {
      this.services.log.error({ err: error, documentName }, 'could not derive the events of logged updates again; will try again');
      return false;
    }
    if (derived > 0) this.services.log.info({ documentName, updates: derived }, 'derived the events of logged updates again');
    await this.reproject(documentName);
    return true;
  }

  /** Replays `updates` and commits what they derive, if they are still underived when claimed; false when another instance was first. */
  private async replayAndRecord(
    documentName: string,
    observer: TransactionObserver,
    updates: Array<{ seq: number; principalId: string | null; runId: string | null }>,
  ): Promise<boolean> {
    const seqs = updates.map((u) => u.seq);
    const authors = await this.authorsOf(updates);
    const runs = new Map(updates.map((u) => [u.seq, u.runId]));
    const changes: ObservedChange[] = [];
    await replayUnderived(
      this.services.db,
      documentName,
      (update) => serverOrigin(authors.get(update.seq) ?? SYSTEM_PRINCIPAL, 'replay', runs.get(update.seq) ?? null),
      (doc, transaction, update) => {
        const run = runs.get(update.seq) ?? null;
        const derived = observer.derive(documentName, doc, transaction, run);
        changes.push({ derived, origin: transaction.origin, seqs: [update.seq], run });
      },
      new Set(seqs),
    );
    let publish: (() => void) | undefined;
    const claimed = await this.services.db.transaction().execute(async (tx) => {
      if (!(await claimUnderived(tx, documentName, seqs))) return false;
      const observed = changes.filter((c) => c.derived != null);
      if (observed.length > 0) ({ publish } = await observer.persist(tx, documentName, observed));
      // Every claimed update, also one that changed nothing (a client's resend).
      await markUpdatesDerived(tx, documentName, seqs);
      this.services.failpoints.hit('document.derived.commit');
      return true;
    });
    if (claimed) publish?.();
    return claimed;
  }

  /** Derives again what this process failed to derive (a failed commit); what stays pending is retried by the sweeper. */
  private async retryDerivation(documentName: string) {
    const pending = this.pendingDerivations.get(documentName);
    if (!pending) return;
    const seqs = [...pending];
    if (!(await this.deriveAgain(documentName, seqs))) return;
    for (const seq of seqs) pending.delete(seq);
    if (pending.size === 0) this.pendingDerivations.delete(documentName);
  }

  /** Per document: logged updates of this process whose events still have to be derived again (retried by the sweeper). */
  private readonly pendingDerivations = new Map<string, Set<number>>();

  private toDeriveAgain(documentName: string): Set<number> {
    let pending = this.pendingDerivations.get(documentName);
    if (!pending) this.pendingDerivations.set(documentName, (pending = new Set()));
    return pending;
  }

  /** The orphan sweep (orphaned-updates.ts): the document's updates left by a dead instance, derived in its queue (loading it first). */
  private async deriveOrphans(documentName: string) {
    await this.open(documentName);
    await this.enqueue(documentName, () => this.deriveOrphansNow(documentName));
  }

  private async deriveOrphansNow(documentName: string) {
    const seqs = await this.orphans.of(documentName);
    if (seqs.length > 0 && !(await this.deriveAgain(documentName, seqs))) throw new Error(`could not derive ${seqs.length} updates of ${documentName}`);
  }

  /** Who made each of these updates, as full principals. */
  private async authorsOf(rows: ReadonlyArray<{ seq: number; principalId: string | null }>): Promise<Map<number, Principal>> {
    const principals = await findPrincipals(
      this.services.db,
      rows.flatMap((r) => (r.principalId ? [r.principalId] : [])),
    );
    const authors = new Map<number, Principal>();
    for (const row of rows) {
      const principal = row.principalId ? principals.get(row.principalId) : undefined;
      if (principal) authors.set(row.seq, principal);
    }
    return authors;
  }

  /** Documents whose projections could not be rewritten yet; the sweeper tries again. */
  private readonly staleProjections = new Set<string>();

  /** Rewrites a loaded document's projections from its current state (after a failure left them behind). */
  private async reproject(documentName: string) {
    const document = this.hocuspocus.documents.get(documentName);
    const observer = this.observer;
    if (!document || !observer?.reproject) return;
    try {
      await this.services.db.transaction().execute((tx) => observer.reproject!(tx, documentName, document));
      this.staleProjections.delete(documentName);
    } catch (error) {
      this.staleProjections.add(documentName);
      this.services.log.error({ err: error, documentName }, 'could not rewrite projections; will try again');
    }
  }

  private noteAppended(documentName: string, bytes: number) {
    this.unfolded.set(documentName, (this.unfolded.get(documentName) ?? 0) + 1);
    const tail = this.tails.get(documentName) ?? { updates: 0, bytes: 0, snapshotBytes: 0 };
    tail.updates += 1;
    tail.bytes += bytes;
    this.tails.set(documentName, tail);
    const afterUpdates = this.services.config.compactAfterUpdates;
    if (!compactionDue(tail, afterUpdates)) return;
    clearTimeout(this.quietCompactions.get(documentName)?.timer);
    this.quietCompactions.delete(documentName);
    const start = () => {
      this.quietCompactions.delete(documentName);
      // Not for a document unloaded meanwhile: its next load counts its tail anew.
      if (this.tails.get(documentName) === tail) this.tails.set(documentName, { updates: 0, bytes: 0, snapshotBytes: tail.snapshotBytes });
      this.queueCompaction(documentName);
    };
    if (compactionUrgent(tail, afterUpdates)) start();
    else this.quietCompactions.set(documentName, { timer: setTimeout(start, COMPACT_QUIET_MS).unref(), start });
  }

  /** Per document: a compaction due by bytes, waiting for its appends to pause (compactionUrgent); `drain` starts it at once. */
  private readonly quietCompactions = new Map<string, { timer: NodeJS.Timeout; start: () => void }>();

  /** Documents with a compaction queued and not started yet: one covers everything logged before it starts. */
  private readonly compactionQueued = new Set<string>();
  /** Per document: the newest compaction queued or running. */
  private readonly compactions = new Map<string, Promise<void>>();

  /**
   * Compaction runs beside the document's persistence queue, not in it: a
   * history pass and a fold never hold back the commits that derive
   * clients' updates (which compaction waits for). Passes and folds of one
   * document take turns through the history lock, and a load reads the
   * snapshot and the log in one snapshot-consistent read.
   */
  private queueCompaction(documentName: string) {
    if (this.compactionQueued.has(documentName)) return;
    this.compactionQueued.add(documentName);
    const previous = this.compactions.get(documentName) ?? Promise.resolve();
    const run = previous.then(() => {
      this.compactionQueued.delete(documentName);
      return this.compactNow(documentName);
    });
    this.compactions.set(documentName, run);
    void run.finally(() => {
      if (this.compactions.get(documentName) === run) this.compactions.delete(documentName);
    });
  }

  async compactNow(documentName: string) {
    try {
      // Updates held back for a coalesced event, or that derived nothing, count as underived until marked: the fold
      // would stop at them until a typing burst ends or the sweeper comes, which a stream can put off indefinitely.
      await this.observer?.settle?.(documentName).catch(() => {});
      await this.enqueue(documentName, () => this.commitIdle(documentName)).catch(() => {});
      const result = await compact(this.services.db, documentName, this.services.clock.now());
      const tail = this.tails.get(documentName);
      if (result && tail && result.folded > 0) tail.snapshotBytes = result.bytes;
      this.services.log.debug({ documentName, ...result }, 'compacted');
      if (result) this.unfolded.set(documentName, result.remaining);
      // Only a compaction that got somewhere paces clients: waiting for one that folds nothing (derivation
      // lagging behind the stream) would admit one message per compaction and never let the lag close.
      this.behind.set(documentName, (result?.blockedBy === 'history' || result?.blockedBy === 'underived') && result.folded > 0);
      this.followUpCompaction(documentName, result);
    } catch (error) {
      this.services.log.warn({ err: error, documentName }, 'compaction failed; the log still holds every update');
    }
  }

  /** Per document: rows in the unfolded log as far as this process knows (set by each compaction, counted up by appends). */
  private readonly unfolded = new Map<string, number>();
  /** Per document: whether its last compaction was held back by history or derivation still to catch up (not by a held base). */
  private readonly behind = new Map<string, boolean>();

  /**
   * Backpressure: while a document's unfolded log is over PACE_FACTOR
   * compactions' worth and its compaction is behind (history or derivation
   * still catching up), a client's next update waits for the running
   * compaction, at most PACE_WAIT_MS. A stream faster than the background
   * work it causes is slowed to that work's pace instead of growing the log
   * (and the next load) without bound. Held bases never slow anyone.
   */
  private async keepPace(documentName: string) {
    if ((this.unfolded.get(documentName) ?? 0) <= this.services.config.compactAfterUpdates * PACE_FACTOR) return;
    if (this.behind.get(documentName) === false) return;
    this.queueCompaction(documentName);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.compactions.get(documentName), new Promise<void>((resolve) => (timer = setTimeout(resolve, PACE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Per document: a compaction to run again soon, and how many in a row folded nothing. */
  private readonly followUps = new Map<string, { timer: NodeJS.Timeout; idle: number }>();

  /**
   * A fold held back by updates whose events are still being derived (a
   * typing burst in flight) or by history still to index is tried again
   * shortly: the tail of a stream is folded after the stream ends, not when
   * the next few thousand updates come. A fold held back by a base a read
   * handed out waits for the next due compaction.
   */
  private followUpCompaction(documentName: string, result: CompactResult | null) {
    const previous = this.followUps.get(documentName);
    if (previous) clearTimeout(previous.timer);
    this.followUps.delete(documentName);
    if (!result || result.remaining === 0 || (result.blockedBy !== 'underived' && result.blockedBy !== 'history')) return;
    const idle = result.folded > 0 ? 0 : (previous?.idle ?? 0) + 1;
    if (idle > FOLLOW_UP_ATTEMPTS) return;
    const timer = setTimeout(() => {
      if (this.followUps.get(documentName)?.timer === timer) this.queueCompaction(documentName);
    }, FOLLOW_UP_MS).unref();
    this.followUps.set(documentName, { timer, idle });
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

  stats() {
    return { connections: this.wss.clients.size, documents: this.hocuspocus.getDocumentsCount() };
  }

  /** Waits until every queued persistence task has finished (tests, shutdown). */
  async drain() {
    await Promise.all([...this.queues.values()]);
    for (const { timer, start } of [...this.quietCompactions.values()]) {
      clearTimeout(timer);
      start();
    }
    await Promise.all([...this.compactions.values()]);
  }

  async close() {
    this.closing = true;
    clearInterval(this.sweeper);
    this.orphans.stop();
    for (const { timer } of this.followUps.values()) clearTimeout(timer);
    this.followUps.clear();
    this.gate.stop();
    this.hocuspocus.closeConnections();
    for (const client of this.wss.clients) client.terminate();
    await this.drain();
    await this.observer?.flush?.();
    for (const [, held] of this.held) await held.connection.disconnect().catch(() => {});
    this.held.clear();
  }
}

/** Postgres data exceptions (SQLSTATE class 22): the value was the problem, not the database. */
function isInputError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** Who an update is attributed to in the log: a connection's caller, or a server change's principal (null for the system). */
function authorOf(source: ConnectionContext | unknown): UpdateAuthor {
  const principal =
    source && typeof source === 'object' && 'actor' in source ? ((source as ConnectionContext).actor?.principal ?? null) : principalOfOrigin(source);
  if (!principal || principal.id === SYSTEM_PRINCIPAL.id) return null;
  return { principalType: principal.principalType, id: principal.id };
}
