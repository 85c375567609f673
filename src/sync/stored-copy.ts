import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import type { StoredDocument } from '../persistence/documents';
import { MESSAGE_SYNC, SYNC_STEP_1, SYNC_STEP_2, syncMessage } from './update-message';

/**
 * How long a load waits for the copy to reach the client's socket before it
 * applies the stored state (which holds the event loop, so a copy still in
 * the process's buffers would wait for the whole apply). Bounded so that a
 * client that does not read cannot hold the load back.
 */
const FLUSH_WAIT_MS = 1_000;

/**
 * Hocuspocus's ClientConnection as far as this module reads it: until the
 * document is loaded, a connection's messages wait in
 * `incomingMessageQueue` (by address), and `hookPayloads` says which
 * addresses passed `onAuthenticate`. Internal to @hocuspocus/server 4.x;
 * test/sync/cold-load.test.ts notices if that changes.
 */
type QueueingClient = {
  socketId: string;
  incomingMessageQueue: Record<string, Uint8Array[] | undefined>;
  hookPayloads: Record<string, { connectionConfig: { isAuthenticated: boolean } } | undefined>;
};

type Socket = { readyState: number; OPEN: number; send(data: Uint8Array, callback: (error?: Error) => void): void };

/** A fresh client's sync step 1 waiting in a queue, answered from the stored copy. */
type Waiting = { queue: Uint8Array[]; index: number; message: Uint8Array; address: string };

/** What one load does for the clients waiting on it (`StoredCopies.forLoad`). */
export type LoadAnswers = {
  /** The stored state was read and is about to be applied: answer the fresh clients waiting from it. */
  read(stored: StoredDocument): Promise<void>;
  /**
   * The document now holds exactly the stored state: their queued step 1
   * asks only for what comes after the copy. Returns the copy that was
   * sent (the document's whole state as one V1 update), null when none was.
   */
  loaded(doc: Y.Doc): Uint8Array | null;
};

const NOTHING: LoadAnswers = { read: async () => {}, loaded: () => null };

/**
 * Answers a fresh client's sync step 1 from the stored state while the
 * document loads. The first client of an unloaded document used to wait
 * for the whole load (decoding the snapshot into a Y document, about a
 * second of the serving thread for a 50,000-row table) and then for the
 * document to be encoded again for it; the stored snapshot and log tail
 * are already that state, so they go out as its sync step 2 (merged into
 * one V1 update) the moment they are read, and the client applies them
 * while the server loads. Its queued step 1 is then rewritten to the
 * copy's state vector, so Hocuspocus's own answer after the load carries
 * only what was logged meanwhile (and the delete set), and its own step 1
 * and everything else the client sent are handled as always.
 *
 * Only the connection whose authentication started the load is answered
 * (Hocuspocus loads a document for a connection only after its
 * `onAuthenticate` passed, and a sync connection reads a whole document or
 * nothing: docs/SYNC.md), and only at addresses that passed it. Only
 * committed state is sent: the snapshot and the log, read in one
 * repeatable-read transaction, as the load reads them.
 */
export class StoredCopies {
  private readonly clients = new Map<string, { client: QueueingClient; socket: Socket }>();

  /** A websocket client of the engine; returns what forgets it (its socket closed). */
  track(client: unknown, socket: Socket): () => void {
    const queueing = client as QueueingClient;
    this.clients.set(queueing.socketId, { client: queueing, socket });
    return () => this.clients.delete(queueing.socketId);
  }

  forLoad(socketId: string, documentName: string): LoadAnswers {
    const entry = this.clients.get(socketId);
    if (!entry) return NOTHING;
    let served: { waiting: Waiting[]; copy: Uint8Array } | null = null;
    return {
      read: async (stored) => {
        const waiting = freshSyncRequests(entry.client, documentName);
        if (waiting.length === 0 || entry.socket.readyState !== entry.socket.OPEN) return;
        const copy = copyOf(stored);
        // Not decodable: the load fails the same way, and nothing was served.
        if (!copy) return;
        served = { waiting, copy };
        const flushed = waiting.map(({ address }) => new Promise<void>((resolve) => entry.socket.send(syncStep2(address, copy), () => resolve())));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.all(flushed), new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS).unref()))]);
        clearTimeout(timer);
      },
      loaded: (doc) => {
        if (!served) return null;
        const stateVector = Y.encodeStateVector(doc);
        for (const { queue, index, message, address } of served.waiting) {
          if (queue[index] === message) queue[index] = syncStep1(address, stateVector);
        }
        return served.copy;
      },
    };
  }
}

/** Sync step 1 messages with an empty state vector, queued at the document's authenticated addresses. */
function freshSyncRequests(client: QueueingClient, documentName: string): Waiting[] {
  const waiting: Waiting[] = [];
  for (const [address, queue] of Object.entries(client.incomingMessageQueue)) {
    if (!queue || documentOf(address) !== documentName || client.hookPayloads[address]?.connectionConfig.isAuthenticated !== true) continue;
    queue.forEach((message, index) => {
      if (isFreshSyncStep1(message)) waiting.push({ queue, index, message, address });
    });
  }
  return waiting;
}

const documentOf = (address: string) => (address.includes('\0') ? address.slice(0, address.indexOf('\0')) : address);

function isFreshSyncStep1(message: Uint8Array): boolean {
  try {
    const decoder = decoding.createDecoder(message);
    decoding.readVarString(decoder);
    if (decoding.readVarUint(decoder) !== MESSAGE_SYNC || decoding.readVarUint(decoder) !== SYNC_STEP_1) return false;
    const stateVector = decoding.createDecoder(decoding.readVarUint8Array(decoder));
    return decoding.readVarUint(stateVector) === 0;
  } catch {
    return false;
  }
}

/**
 * The stored state as one V1 update (the sync protocol's format): the V2
 * snapshot converted, with the logged tail merged in one pass; a kept V1
 * copy of the snapshot as it is. Null when
 * it does not decode.
 */
function copyOf(stored: StoredDocument): Uint8Array | null {
  const tail = stored.updates.map(({ update }) => update);
  try {
    if (!stored.snapshot) return Y.mergeUpdates(tail.length === 1 ? [tail[0]!, new Uint8Array([0, 0])] : tail);
    // The V1 copy a compaction kept (document-store.ts SYNC_COPY_MIN_BYTES): sent as read, or merged with the tail.
    if (stored.snapshot.encoding === 'v1') return tail.length === 0 ? stored.snapshot.state : Y.mergeUpdates([stored.snapshot.state, ...tail]);
    if (tail.length === 0) return Y.convertUpdateFormatV2ToV1(stored.snapshot.state);
    return Y.mergeUpdatesV2([stored.snapshot.state, ...tail.map((update) => Y.convertUpdateFormatV1ToV2(update))], Y.UpdateDecoderV2, Y.UpdateEncoderV1);
  } catch {
    return null;
  }
}

const syncStep2 = (address: string, update: Uint8Array) => syncMessage(address, MESSAGE_SYNC, SYNC_STEP_2, update);
const syncStep1 = (address: string, stateVector: Uint8Array) => syncMessage(address, MESSAGE_SYNC, SYNC_STEP_1, stateVector);
