import type { Document } from '@hocuspocus/server';
import type { Logger } from 'pino';
import * as Y from 'yjs';
import type { SyncCeilingsConfig } from '../config';
import { ApiError } from '../errors';
import type { Metrics } from '../metrics/index';
import { documentUpdateOf } from './update-message';

/**
 * The sync ceilings (SYNC_MAX_*; docs/LIMITS.md): past one, the connection
 * or the writer is refused with a documented code and reason, and nothing
 * past it is logged, applied or held in memory. Counts are per instance:
 * each process sees its own connections and loaded documents.
 */

/** Sync close codes: 4429 a count ceiling (connections, loaded documents), 4413 a size ceiling. */
export const CLOSE_TOO_MANY = 4429;
export const CLOSE_TOO_LARGE = 4413;

/** How a sync connection is refused: Hocuspocus closes it with `code` and sends `reason`, whose first word is the ceiling's token. */
export type SyncRefusal = { code: number; reason: string };

/** A frame's document name, message type and length prefixes, over the update it carries. */
const FRAMING_BYTES = 64 * 1024;
const MIN_MAX_PAYLOAD = 32 * 1024 * 1024;
/** Seconds a REST caller refused for `too_many_documents` is told to wait. */
const RETRY_AFTER_SECONDS = 5;

/** Where a loaded document stands for the loaded-documents ceiling; the engine answers. */
export interface LoadedDocuments {
  count(): number;
  /** Documents only the engine's own direct connection holds (no client), with when it last used each. */
  idle(): Array<{ name: string; lastUsed: number }>;
  /** Unloads an idle document (every change of it is already in the log). */
  unload(name: string): Promise<void>;
}

const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 100) / 100} MiB`;

export class SyncCeilings {
  /** Per loaded document: its encoded size (as update v2), an upper bound unless `exact`. */
  private readonly sizes = new Map<string, { bytes: number; exact: boolean }>();
  /** Connections decided on for the connections ceiling: refused ones have their queued messages dropped, never handled. */
  private readonly admitted = new WeakSet<object>();
  private readonly refused = new WeakSet<object>();
  /** Loads waiting for an idle document to unload, so concurrent loads do not pick the same one. */
  private making: Promise<void> = Promise.resolve();

  constructor(
    readonly limits: SyncCeilingsConfig,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {}

  private countRefusal(ceiling: 'connections' | 'update_bytes' | 'document_bytes' | 'loaded_documents') {
    this.metrics?.ceilingRefusals.inc({ ceiling });
  }

  /** The websocket's frame limit: over the update ceiling, so an oversized update gets 4413 `update_too_large` rather than ws's bare 1009. */
  get maxPayload(): number {
    return Math.max(MIN_MAX_PAYLOAD, this.limits.updateBytes + FRAMING_BYTES);
  }

  // --- connections per document ---------------------------------------------------

  /**
   * A connection past SYNC_MAX_CONNECTIONS_PER_DOCUMENT on this instance is
   * refused, by its place in the document's connections (oldest first), so
   * connections arriving together never overshoot. Throws the refusal
   * (Hocuspocus then closes the connection and drops its queued messages).
   */
  admit(document: Document | undefined, connection: object): void {
    if (this.refused.has(connection)) throw this.tooManyConnections();
    if (!document || this.admitted.has(connection)) return;
    const limit = this.limits.connectionsPerDocument;
    // Once per connection: websocket connections only (the engine's own direct connection does not count).
    const connections = document.getConnections();
    if (connections.length <= limit || connections.indexOf(connection as never) < limit) {
      this.admitted.add(connection);
      return;
    }
    this.refused.add(connection);
    this.countRefusal('connections');
    this.log.warn({ documentName: document.name, connections: connections.length, limit }, 'refused a sync connection over SYNC_MAX_CONNECTIONS_PER_DOCUMENT');
    throw this.tooManyConnections();
  }

  /** `admit` for a connection just set up: a refused one is closed here (the `connected` hook cannot throw it). */
  admitOrClose(documents: ReadonlyMap<string, Document>, documentName: string, connection: { close(event: SyncRefusal): void }) {
    try {
      this.admit(documents.get(documentName), connection);
    } catch (refusal) {
      closeSocketIfAlone(documents, connection, refusal as SyncRefusal);
      connection.close(refusal as SyncRefusal);
    }
  }

  private tooManyConnections(): SyncRefusal {
    return {
      code: CLOSE_TOO_MANY,
      reason: `too_many_connections: this document has too many open connections (SYNC_MAX_CONNECTIONS_PER_DOCUMENT is ${this.limits.connectionsPerDocument} per server instance)`,
    };
  }

  // --- sizes ------------------------------------------------------------------------

  /** Starts accounting a loaded document's size from what was stored (snapshot plus logged tail: at least its encoded size). */
  track(documentName: string, doc: Y.Doc, storedBytes: number) {
    this.sizes.set(documentName, { bytes: storedBytes, exact: false });
    // Every update counts, whoever made it (clients, REST, other instances): a sum of updates bounds the state's size from above.
    doc.on('update', (update: Uint8Array) => {
      const size = this.sizes.get(documentName);
      if (size) {
        size.bytes += update.byteLength;
        size.exact = false;
      }
    });
  }

  forget(documentName: string) {
    this.sizes.delete(documentName);
  }

  /**
   * Before a sync message is handled: a connection past the connections
   * ceiling (4429), a message over SYNC_MAX_UPDATE_BYTES, or an update that
   * would take the document past SYNC_MAX_DOCUMENT_BYTES (4413) is refused
   * before it is logged or applied: throws the refusal, which Hocuspocus
   * closes the connection with. Per message this costs a length and an
   * addition; the document is encoded only when the running bound says it
   * may be over.
   */
  checkMessage(documents: ReadonlyMap<string, Document>, connection: { readOnly: boolean }, document: Document, message: Uint8Array): void {
    try {
      this.admit(document, connection);
      this.checkSize(document.name, connection.readOnly ? undefined : document, message);
    } catch (refusal) {
      if (isRefusal(refusal)) closeSocketIfAlone(documents, connection, refusal);
      throw refusal;
    }
  }

  private checkSize(documentName: string, doc: Y.Doc | undefined, message: Uint8Array): void {
    // The update a sync message carries is measured (as group commit's look-ahead measures it); any other message whole.
    const update = updateOf(message);
    const bytes = update?.byteLength ?? message.byteLength;
    if (bytes > this.limits.updateBytes) {
      this.log.warn({ documentName, bytes, limit: this.limits.updateBytes }, 'refused a sync update over SYNC_MAX_UPDATE_BYTES');
      this.countRefusal('update_bytes');
      throw { code: CLOSE_TOO_LARGE, reason: this.updateTooLargeText(bytes) } satisfies SyncRefusal;
    }
    if (!doc || !update) return;
    const size = this.measuredIfOver(documentName, doc, update.byteLength);
    if (size + update.byteLength <= this.limits.documentBytes) return;
    this.log.warn({ documentName, bytes: size, update: update.byteLength, limit: this.limits.documentBytes }, 'refused a sync update over SYNC_MAX_DOCUMENT_BYTES');
    this.countRefusal('document_bytes');
    throw { code: CLOSE_TOO_LARGE, reason: `document_too_large: ${this.documentTooLargeText(size, update.byteLength)}` } satisfies SyncRefusal;
  }

  /**
   * A server change (REST, MCP) already applied in memory: the 413 it is
   * refused with, or null. The caller takes it back out (engine: rebuilt
   * from the log) and nothing is logged.
   */
  serverRefusal(documentName: string, doc: Y.Doc, update: Uint8Array): ApiError | null {
    if (update.byteLength > this.limits.updateBytes) {
      this.countRefusal('update_bytes');
      return payloadTooLarge(this.updateTooLargeText(update.byteLength), { ceiling: 'SYNC_MAX_UPDATE_BYTES', limit: this.limits.updateBytes, bytes: update.byteLength });
    }
    // The document's own update listener has counted this update already.
    const size = this.measuredIfOver(documentName, doc, 0);
    if (size <= this.limits.documentBytes) return null;
    // Taken back out by a rebuild, which counts its state anew.
    const entry = this.sizes.get(documentName);
    if (entry) entry.exact = false;
    this.countRefusal('document_bytes');
    return payloadTooLarge(this.documentTooLargeText(size - update.byteLength, update.byteLength), {
      ceiling: 'SYNC_MAX_DOCUMENT_BYTES',
      limit: this.limits.documentBytes,
      bytes: size,
    });
  }

  /**
   * Group commit logs the updates waiting on a connection ahead of their
   * turn (group-commit.ts): only those certain to pass the size checks at
   * their turn, so a refused update never reaches the log that way either.
   * No encoding here: an update the running bound cannot clear waits for its turn.
   */
  mayLogAhead(documentName: string, update: Uint8Array, aheadBytes: number): boolean {
    if (update.byteLength > this.limits.updateBytes) return false;
    const size = this.sizes.get(documentName);
    return size !== undefined && size.bytes + aheadBytes + update.byteLength <= this.limits.documentBytes;
  }

  /** The document's size bound; encoded exactly (and the bound tightened) only when `adding` more would cross the ceiling. */
  private measuredIfOver(documentName: string, doc: Y.Doc, adding: number): number {
    let size = this.sizes.get(documentName);
    if (!size) this.sizes.set(documentName, (size = { bytes: Number.POSITIVE_INFINITY, exact: false }));
    if (size.bytes + adding <= this.limits.documentBytes || size.exact) return size.bytes;
    size.bytes = Y.encodeStateAsUpdateV2(doc).byteLength;
    size.exact = true;
    return size.bytes;
  }

  private updateTooLargeText(bytes: number): string {
    return `update_too_large: one change of ${mib(bytes)} is over the server's ceiling of ${mib(this.limits.updateBytes)} (SYNC_MAX_UPDATE_BYTES); nothing was written`;
  }

  private documentTooLargeText(bytes: number, adding: number): string {
    return `this change (${mib(adding)}) would take the document (${mib(bytes)}) over the server's ceiling of ${mib(this.limits.documentBytes)} (SYNC_MAX_DOCUMENT_BYTES); nothing was written`;
  }

  // --- loaded documents -------------------------------------------------------------

  /**
   * Called before a document loads: past SYNC_MAX_LOADED_DOCUMENTS the least
   * recently used idle documents are unloaded; with none idle the load is
   * refused (TooManyDocumentsError: sync `too_many_documents`, REST 503).
   */
  makeRoom(documentName: string, loaded: LoadedDocuments): Promise<void> {
    const run = this.making.then(async () => {
      // `count` includes the document being loaded.
      let over = loaded.count() - this.limits.loadedDocuments;
      if (over <= 0) return;
      const idle = loaded
        .idle()
        .filter((d) => d.name !== documentName)
        .sort((a, b) => a.lastUsed - b.lastUsed);
      for (const { name } of idle) {
        if (over <= 0) break;
        await loaded.unload(name);
        over = loaded.count() - this.limits.loadedDocuments;
      }
      if (over > 0) {
        this.log.warn({ documentName, loaded: loaded.count(), limit: this.limits.loadedDocuments }, 'refused to load a document over SYNC_MAX_LOADED_DOCUMENTS');
        this.countRefusal('loaded_documents');
        throw new TooManyDocumentsError(this.limits.loadedDocuments);
      }
    });
    this.making = run.catch(() => {});
    return run;
  }
}

/**
 * Hocuspocus closes one document of a websocket with a message that
 * carries the reason only (providers report it with code 1000). When the
 * refused document is the only one on its websocket (one provider, one
 * socket: the SDKs' and agents' usual setup), the websocket is closed too,
 * with the code, after that message has gone, so the client sees both.
 */
export function closeSocketIfAlone(documents: ReadonlyMap<string, Document>, connection: unknown, refusal: SyncRefusal) {
  const socketId = (connection as { socketId?: string }).socketId;
  const socket = (connection as { webSocket?: { close(code: number, reason: string): void } }).webSocket;
  if (!socketId || !socket) return;
  for (const document of documents.values()) {
    for (const other of document.getConnections()) if (other !== connection && other.socketId === socketId) return;
  }
  // A close frame's reason holds at most 123 bytes; the token comes first, so it always fits.
  setImmediate(() => socket.close(refusal.code, refusal.reason.slice(0, 123)));
}

/** A malformed message is Hocuspocus's to refuse, not a ceiling's. */
function updateOf(message: Uint8Array): Uint8Array | null {
  try {
    return documentUpdateOf(message);
  } catch {
    return null;
  }
}

function isRefusal(error: unknown): error is SyncRefusal {
  return typeof (error as SyncRefusal | null)?.code === 'number' && typeof (error as SyncRefusal).reason === 'string';
}

function payloadTooLarge(message: string, details: { ceiling: string; limit: number; bytes: number }): ApiError {
  return new ApiError(413, 'payload_too_large', message.replace(/^update_too_large: /, ''), details);
}

/** Every document this process may hold is in use: a new one is refused until one is released. */
export class TooManyDocumentsError extends ApiError {
  /** Hocuspocus sends this to a sync client whose connection it refuses. */
  readonly reason: string;
  constructor(limit: number) {
    super(
      503,
      'too_many_documents',
      `The server holds as many documents as it may (SYNC_MAX_LOADED_DOCUMENTS is ${limit}) and every one is in use; try again shortly.`,
      undefined,
      { 'retry-after': String(RETRY_AFTER_SECONDS) },
    );
    this.name = 'TooManyDocumentsError';
    this.reason = `too_many_documents: ${this.message}`;
  }
}
