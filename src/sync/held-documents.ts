import type { DirectConnection, Document, Hocuspocus } from '@hocuspocus/server';
import type { LoadedDocuments } from './ceilings';

/** A document held loaded this long after its last use is unloaded by the next sweep. */
const HOLD_IDLE_MS = 60_000;

type Held = { connection: DirectConnection; lastUsed: number };

/**
 * Which documents stay loaded without a client: the engine holds a document
 * through a direct connection of its own while the REST layer uses it, and
 * for HOLD_IDLE_MS after the last sync client leaves. A reload, a reconnect
 * or the next person to open it is answered from memory instead of loading
 * it again (a 50,000-row table: about a second of the serving thread and a
 * peak of its decoded size each time). Idle held documents give way to the
 * loaded-documents ceiling like any other (`loadedDocuments`).
 */
export class HeldDocuments {
  private readonly held = new Map<string, Held>();
  private closing = false;

  constructor(
    private readonly deps: {
      hocuspocus: () => Hocuspocus;
      /** Runs `task` in the document's persistence queue: a document is released only after the work queued on it. */
      enqueue(documentName: string, task: () => Promise<unknown>): Promise<void>;
      /** Whether the document has work in flight (queued persistence, a recovery): such a document is never unloaded for room. */
      busy(documentName: string): boolean;
    },
  ) {}

  /** Loads the document if needed and holds it; resolves with the loaded document. */
  async open(documentName: string): Promise<Document> {
    const hocuspocus = this.deps.hocuspocus();
    const held = this.held.get(documentName);
    const loaded = hocuspocus.documents.get(documentName);
    if (held && loaded) {
      held.lastUsed = Date.now();
      return loaded;
    }
    const connection = await hocuspocus.openDirectConnection(documentName, { system: true });
    const previous = this.held.get(documentName);
    this.held.set(documentName, { connection, lastUsed: Date.now() });
    if (previous) void previous.connection.disconnect().catch(() => {});
    const document = hocuspocus.documents.get(documentName);
    if (!document) throw new Error(`document ${documentName} did not load`);
    return document;
  }

  /** A sync client left `document` (Hocuspocus `onDisconnect`): keep it loaded a while, unless the engine is closing. */
  async holdAfterClient(documentName: string, document: Document) {
    if (this.closing || this.deps.hocuspocus().documents.get(documentName) !== document) return;
    await this.open(documentName).catch(() => {});
  }

  /** Stops holding the document at once (its connections were closed: a recovery could not read its log). */
  async release(documentName: string) {
    const held = this.held.get(documentName);
    this.held.delete(documentName);
    await held?.connection.disconnect().catch(() => {});
  }

  /** Releases documents unused for HOLD_IDLE_MS (the sweeper). */
  async releaseIdle() {
    const cutoff = Date.now() - HOLD_IDLE_MS;
    for (const [name, held] of this.held) {
      if (held.lastUsed > cutoff) continue;
      this.held.delete(name);
      // Safe to unload: every change is already in the log, nothing waits for a store.
      await this.deps.enqueue(name, () => held.connection.disconnect()).catch(() => {});
    }
  }

  /** ceilings: what SYNC_MAX_LOADED_DOCUMENTS may unload: documents only the engine holds, none with work in flight. */
  readonly loadedDocuments: LoadedDocuments = {
    count: () => this.deps.hocuspocus().getDocumentsCount() + this.deps.hocuspocus().loadingDocuments.size,
    idle: () =>
      [...this.held]
        .filter(([name]) => this.deps.hocuspocus().documents.get(name)?.getConnectionsCount() === 1 && !this.deps.busy(name))
        .map(([name, held]) => ({ name, lastUsed: held.lastUsed })),
    unload: async (name) => {
      const held = this.held.get(name);
      if (!held) return;
      this.held.delete(name);
      await this.deps.enqueue(name, () => held.connection.disconnect()).catch(() => {});
      const document = this.deps.hocuspocus().documents.get(name);
      if (document) await this.deps.hocuspocus().unloadDocument(document);
    },
  };

  /** Holds documents again after `stopHolding` (the engine attached anew). */
  startHolding() {
    this.closing = false;
  }

  /** The engine is closing: a client leaving no longer keeps its document loaded. */
  stopHolding() {
    this.closing = true;
  }

  /** Releases every held document (shutdown, after the queues drained). */
  async releaseAll() {
    for (const [, held] of this.held) await held.connection.disconnect().catch(() => {});
    this.held.clear();
  }
}
