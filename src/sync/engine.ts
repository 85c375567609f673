import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Hocuspocus, type Document, type Extension } from '@hocuspocus/server';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type * as Y from 'yjs';
import { DocumentTooLargeError } from '../errors';
import type { Config } from '../config';
import type { Clock } from '../lib/clock';
import type { Failpoints } from '../lib/failpoints';
import type { Metrics } from '../metrics/index';
import type { Db } from '../persistence/database';
import type { StoredDocument } from '../persistence/documents';
import type { InstanceLease } from '../persistence/instances';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { parseDocumentName } from '../model/document-names';
import type { CommitReceipt, DocumentSync } from './document-sync';
import type { ConnectionGate } from './connection-gate';
import type { TransactionObserver } from './transaction-observer';
import { adoptMessageQueue } from './message-queue';
import { loadInto } from './document-store';
import { StoredCopies } from './stored-copy';
import { FullStateAnswers } from './full-state-answers';
import { UpdateLog } from './group-commit';
import { DigestResponder } from './digest';
import { authorOf, type ConnectionContext, type ServerOrigin } from './origins';
import { documentChangeOf, documentUpdateOf, isSyncStep1 } from './update-message';
import { suggestionOnlyRefusal } from './suggestion-check';
import { repairMessageText } from './update-text';
import { writeFramesPerTurn } from './turn-writes';
import { SyncCeilings } from './ceilings';
import { DocumentQueues } from './document-queues';
import { HeldDocuments } from './held-documents';
import { CompactionSchedule } from './compaction-schedule';
import { DocumentRecovery } from './recovery';
import { Rederivation } from './rederivation';
import { ChangeCommits } from './change-commits';
import { WaitingRequests } from './waiting-requests';

export const SYNC_PATH = '/api/sync';

/** What the engine needs of the app's services; the full bag (src/domain/services.ts) satisfies it. */
export type SyncEngineDeps = {
  db: Db;
  config: Pick<Config, 'documentLoadBudgetBytes' | 'compactAfterUpdates' | 'syncCeilings' | 'databaseUrl'>;
  log: Logger;
  clock: Clock;
  failpoints: Failpoints;
  metrics?: Metrics;
};

const SWEEP_INTERVAL_MS = 10_000;

/**
 * How long the serving thread may apply queued client messages before it
 * hands the event loop back. After a group commit, the messages it logged
 * ahead (thousands, when a client pipelines) are applied and acknowledged
 * one after another in a chain of promises that never waits on I/O: without
 * a break, every other socket, request and timer waited for the whole
 * backlog (over a second under the typing trace).
 */
const MESSAGE_TURN_BUDGET_MS = 10;

/**
 * The same while an HTTP request of this server waits for its answer
 * (waiting-requests.ts). Each step of a REST request (its body, every
 * database round trip, the commit) resumes in a turn of its own, and behind
 * a typist's backlog each such turn came after up to 10 ms of queued
 * messages: a create of ten steps waited ~100 ms for turns alone.
 * On Postgres only: there the statements run in another process and the
 * turns are the serving thread's to give. On the embedded database the
 * typist's statements run on the serving thread too, the dialect already
 * serves a request's statements first (pglite-dialect.ts), and shorter
 * slices slowed the typist in two pairs of runs without a better p99
 * (docs/PERFORMANCE.md, session 16, h16-typist).
 */
const MESSAGE_TURN_BUDGET_WITH_REQUESTS_MS = 1;

/**
 * Y documents over Hocuspocus at `/api/sync`, made durable: a client's
 * update is appended to the log before Hocuspocus applies and acknowledges
 * it, and a server-side change is logged (with its events) before the REST
 * call that made it returns. See docs/SYNC.md.
 *
 * The engine accepts connections and wires the parts that do the work,
 * each behind its own narrow interface (docs/ARCHITECTURE.md, "The sync
 * engine"): the update log with group commit (group-commit.ts), the commits
 * of derived changes (change-commits.ts), the per-document queues
 * (document-queues.ts), compaction's schedule (compaction-schedule.ts),
 * rebuilding a document after a failed commit (recovery.ts), deriving again
 * what was never derived (rederivation.ts, orphaned-updates.ts), which
 * documents stay loaded (held-documents.ts) and the ceilings (ceilings.ts).
 */
export class SyncEngine implements DocumentSync {
  readonly hocuspocus: Hocuspocus;
  private readonly wss: WebSocketServer;
  /** SYNC_MAX_* (src/sync/ceilings.ts): the hooks below marked "ceilings" call it. */
  private readonly ceilings: SyncCeilings;
  private readonly gate: ConnectionGate;
  /** Group commit: client updates share log commits. */
  private readonly log: UpdateLog;
  private readonly digests: DigestResponder;
  private readonly queues = new DocumentQueues();
  private readonly held: HeldDocuments;
  private readonly compaction: CompactionSchedule;
  private readonly recovery: DocumentRecovery;
  private readonly rederivation: Rederivation;
  private readonly commits: ChangeCommits;
  private readonly storedCopies = new StoredCopies();
  /** The last answer to a fresh client's sync step 1, per loaded document, while it is unchanged. */
  private readonly fullStates = new FullStateAnswers();
  /** Breaks in the handling of queued messages (MESSAGE_TURN_BUDGET_MS). */
  private readonly waitingRequests = new WaitingRequests();
  private readonly messageTurns: EventLoopTurns;
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
    const requestsFirst = services.config.databaseUrl ? { budgetMs: MESSAGE_TURN_BUDGET_WITH_REQUESTS_MS, when: () => this.waitingRequests.any() } : undefined;
    this.messageTurns = new EventLoopTurns(MESSAGE_TURN_BUDGET_MS, requestsFirst);
    const { db, log, failpoints, metrics } = services;
    const enqueue = (name: string, task: () => Promise<unknown>) => this.queues.enqueue(name, task);
    const document = (name: string) => this.hocuspocus.documents.get(name);
    const observer = () => this.observer;
    this.gate = options.gate;
    this.ceilings = new SyncCeilings(services.config.syncCeilings, log, metrics);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.ceilings.maxPayload });
    this.held = new HeldDocuments({ hocuspocus: () => this.hocuspocus, enqueue, busy: (name) => this.queues.busy(name) || this.recovery.running(name) !== undefined });
    this.rederivation = new Rederivation({ db, log, failpoints, instance: options.instance, observer, enqueue, open: (name) => this.held.open(name), document });
    this.compaction = new CompactionSchedule({
      db,
      log,
      failpoints,
      clock: services.clock,
      compactAfterUpdates: services.config.compactAfterUpdates,
      settle: async (name) => {
        await this.observer?.settle?.(name).catch(() => {});
        await enqueue(name, () => this.commits.commitIdle(name)).catch(() => {});
      },
    });
    this.log = new UpdateLog(
      db,
      options.instance.number,
      (name, bytes) => {
        metrics?.logAppends.inc({ source: 'client' });
        this.compaction.appended(name, bytes);
      },
      (name, update, aheadBytes) => this.ceilings.mayLogAhead(name, update, aheadBytes), // ceilings
    );
    this.recovery = new DocumentRecovery({
      db,
      log,
      failpoints,
      loadBudgetBytes: services.config.documentLoadBudgetBytes,
      document,
      logSettled: () => this.log.settled(),
      serverChangesSettled: (name) => this.commits.serverChangesSettled(name),
      reproject: (name) => this.rederivation.reproject(name),
      drop: async (name) => {
        this.hocuspocus.closeConnections(name);
        await this.held.release(name);
      },
    });
    this.commits = new ChangeCommits({
      db,
      log,
      failpoints,
      metrics,
      observer,
      enqueue,
      document,
      serverRefusal: (name, doc, update) => this.ceilings.serverRefusal(name, doc, update), // ceilings
      generationOf: (name) => this.recovery.generationOf(name),
      recover: (name, cause) => this.recovery.recover(name, cause),
      appended: (name, bytes) => this.compaction.appended(name, bytes),
      clientChangesFailed: (name, seqs) => this.rederivation.clientChangesFailed(name, seqs),
    });
    this.digests = new DigestResponder({ log, metrics, committed: (name) => this.committed(name) });
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
      onLoadDocument: async ({ document, documentName, socketId }) => {
        await this.ceilings.makeRoom(documentName, this.held.loadedDocuments); // ceilings
        // The client whose connection starts the load is answered from what is stored while it loads (stored-copy.ts).
        const answers = this.storedCopies.forLoad(socketId, documentName);
        const read = async (stored: StoredDocument) => {
          await answers.read(stored);
          await failpoints.pass('document.load');
        };
        const loaded = await loadInto(db, documentName, document, services.config.documentLoadBudgetBytes, read).catch((error) => {
          if (error instanceof DocumentTooLargeError) {
            log.error({ documentName, stored: error.stored, estimatedBytes: error.estimatedBytes, budgetBytes: error.budgetBytes }, 'refused to load a document over the memory budget; compact it with `npm run admin -- compact-document`');
          }
          throw error;
        });
        const sentCopy = answers.loaded(document);
        // Later fresh clients of the loaded document share one encoding of it while it is unchanged (full-state-answers.ts).
        this.fullStates.serve(document);
        // Nothing ran between the load and here: the copy its first client was sent is the whole document.
        if (sentCopy) this.fullStates.keepLoaded(document, sentCopy);
        this.compaction.loaded(documentName, loaded);
        this.ceilings.track(documentName, document, loaded.snapshotBytes + loaded.tailBytes); // ceilings
        this.rederivation.loaded(documentName, loaded.underived);
      },
      afterLoadDocument: async ({ document, documentName }) => {
        this.commits.watch(documentName, document);
        this.rederivation.afterLoad(documentName);
      },
      // ceilings: a connection past SYNC_MAX_CONNECTIONS_PER_DOCUMENT is closed (4429), whether or not it sent anything yet.
      connected: async ({ connection, documentName }) => this.ceilings.admitOrClose(this.hocuspocus.documents, documentName, connection),
      // Runs before Hocuspocus unloads a document its last client left (socketId "server": the engine's own direct connections).
      onDisconnect: async ({ document, documentName, socketId }) => {
        if (socketId !== 'server') await this.held.holdAfterClient(documentName, document);
      },
      beforeHandleMessage: async ({ connection, update: message, documentName, document }) => {
        adoptMessageQueue(connection as never);
        // Still in order: Hocuspocus handles a connection's next message only once this hook resolved.
        // Each wait below is awaited only when there is something to wait for: an await is a promise and a microtask a keystroke.
        if (this.messageTurns.isLong()) await this.messageTurns.nextTurn();
        this.gate.assertStillAllowed(connection);
        this.ceilings.checkMessage(this.hocuspocus.documents, connection, document, message); // ceilings: 4429 / 4413 before it is logged or applied
        if (this.recovery.running(documentName)) await this.recovery.settled(documentName);
        // A client syncing now is sent the document's state: never a server change that may still fail.
        if (isSyncStep1(message)) return this.commits.serverChangesSettled(documentName);
        if (connection.readOnly) return;
        this.assertSuggestionsOnly(connection as never, documentName, message);
        const pace = this.compaction.keepPace(documentName);
        if (pace) await pace;
        // A message that changes nothing (a fresh client's empty answer) is not logged, so it opens no automatic run either.
        const run = documentChangeOf(message) ? await this.gate.runOf(connection) : null;
        const seq = await this.log.logMessage(connection, documentName, message, authorOf(connection.context as ConnectionContext), run);
        if (seq !== null) this.commits.applyingClientUpdate(connection, documentName, seq, run);
      },
      afterHandleMessage: async ({ connection }) => this.commits.clientMessageHandled(connection, connection.readOnly),
      // Digest questions (checked convergence, src/sync/digest.ts); other stateless messages are not the engine's.
      onStateless: async (payload) => void this.digests.answer(payload),
      afterUnloadDocument: async ({ documentName }) => {
        this.fullStates.forget(documentName);
        this.ceilings.forget(documentName);
        this.compaction.unloaded(documentName);
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
    this.held.startHolding();
    this.gate.start(() => this.hocuspocus);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS).unref();
    this.rederivation.start();
    if (this.attachedTo === server) return;
    this.attachedTo = server;
    this.waitingRequests.watch(server);
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '').split('?')[0];
      if (path !== SYNC_PATH) return;
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, request, socket));
    });
  }

  private accept(ws: WebSocket, request: IncomingMessage, socket: Duplex) {
    writeFramesPerTurn(ws, socket);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const path = request.url ?? SYNC_PATH;
    const webRequest = new Request(`http://localhost${path}`, { headers });
    // Hocuspocus reads the request's parameters for every message's two hook payloads, parsing an absolute URL each
    // time (getParameters: `new URL(url).searchParams`); from the path it only splits the query off. The same
    // parameters either way, and nothing else reads the request's URL.
    Object.defineProperty(webRequest, 'url', { value: path });
    const client = this.hocuspocus.handleConnection(ws as never, webRequest, { remoteAddress: request.socket.remoteAddress });
    const forget = this.storedCopies.track(client, ws);
    // Text inside updates is made well-formed before Hocuspocus logs, applies or relays anything (update-text.ts).
    ws.on('message', (data: Buffer) => client.handleMessage(repairMessageText(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))));
    ws.on('close', (code, reason) => {
      forget();
      client.handleClose({ code, reason: reason.toString() });
    });
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
    let doc = await this.held.open(documentName);
    // A recovery swaps the document's state: never apply a change to what is being replaced (nor to one unloaded meanwhile: ceilings).
    while (this.recovery.running(documentName) || this.hocuspocus.documents.get(documentName) !== doc) {
      await this.recovery.settled(documentName);
      doc = await this.held.open(documentName);
    }
    return this.commits.transact(doc, origin, change);
  }

  /** Reads the document as committed: waits for server changes still being committed (they may yet fail). */
  async read<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T> {
    await this.recovery.settled(documentName);
    const doc = await this.held.open(documentName);
    await this.commits.serverChangesSettled(documentName);
    return reader(doc);
  }

  async readApplied<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T> {
    await this.recovery.settled(documentName);
    return reader(await this.held.open(documentName));
  }

  /**
   * Resolves once every change applied to the document so far, a sync
   * client's included, is committed: its new rows are judged by the row cap
   * and the removal of refused ones has begun (it is applied at once).
   */
  async changesCommitted(documentName: string): Promise<void> {
    await this.queues.enqueue(documentName, async () => {});
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
      const recovering = this.recovery.running(documentName);
      const last = this.commits.lastServerChangeOf(documentName);
      await recovering?.catch(() => {});
      await last?.catch(() => {});
      if (this.recovery.running(documentName) === recovering && this.commits.lastServerChangeOf(documentName) === last) return;
    }
  }

  compactNow(documentName: string): Promise<void> {
    return this.compaction.compactNow(documentName);
  }

  private async sweep() {
    await this.commits.sweep();
    await this.rederivation.sweep();
    await this.held.releaseIdle();
  }

  stats() {
    return { connections: this.wss.clients.size, documents: this.hocuspocus.getDocumentsCount() };
  }

  /** Waits until every queued persistence task has finished (tests, shutdown). */
  async drain() {
    await this.queues.drain();
    await this.compaction.drain();
  }

  async close() {
    this.held.stopHolding();
    clearInterval(this.sweeper);
    this.rederivation.stop();
    this.compaction.stop();
    this.gate.stop();
    this.hocuspocus.closeConnections();
    for (const client of this.wss.clients) client.terminate();
    await this.drain();
    await this.observer?.flush?.();
    await this.held.releaseAll();
    this.fullStates.clear();
  }
}
