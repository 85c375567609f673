import { MessageReceiver, OutgoingMessage, type Connection, type Document, type IncomingMessage } from '@hocuspocus/server';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import { SYNC_STEP_1, SYNC_STEP_2 } from './update-message';

/**
 * How many bytes of full-state answers are kept, all documents together
 * (a 50,000-row table's is 11.8 MB: about five of those). Past it the
 * answer kept longest unused is dropped; an answer larger than the whole
 * cap is sent and not kept.
 */
export const FULL_STATE_ANSWERS_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Every encoding of a document's whole state for a fresh client's sync
 * step 1 (the work a kept answer saves): read by tests, as
 * `readsOfTheLog` (src/persistence/versions.ts) is.
 */
export const fullStateEncodes = { count: 0 };

type Kept = { doc: Y.Doc; store: Y.Doc['store']; update: Uint8Array };

/**
 * Keeps, per loaded document, the last answer to a fresh client's sync
 * step 1 (an empty state vector): `Y.encodeStateAsUpdate` of the whole
 * document, which Hocuspocus otherwise encodes anew for every such client
 * (11.8 MB and 0.3-1.2 s of the serving thread for a 50,000-row table; a
 * team opening the same table after a meeting paid it once per person).
 *
 * An answer is kept only while the document is exactly what it encoded:
 * it is dropped on the document's next 'update' (Yjs emits one for every
 * transaction that changed anything: an applied client update, a server
 * change, a relayed one, a deletion that leaves the state vector as it
 * was), and when the document's struct store is replaced without one (a
 * recovery's `replaceDocumentState`, src/sync/document-store.ts). Not
 * on every transaction: each fresh client answers the server's step 1
 * with an empty update, a transaction that changes nothing, and would
 * drop the answer before the next client. A transaction that emits no
 * update leaves the store as it was, except for updates Yjs holds back
 * for missing dependencies (pending structs or deletions, which an
 * encoding includes): a document holding any is encoded every time, as
 * before. Yjs encodes the same store to the same bytes, so a kept encoding
 * is byte for byte what Hocuspocus would encode at that moment (a copy
 * kept at load, `keepLoaded`, is the same state in other bytes); and it is
 * served at that very moment (`answerFreshStep1`), so what the client
 * receives, and its order against every later update on its connection,
 * are what they were.
 */
export class FullStateAnswers {
  /** By document name, the longest unused first (a hit moves an answer to the end). */
  private readonly kept = new Map<string, Kept>();
  private keptBytes = 0;
  private readonly watched = new WeakSet<Y.Doc>();

  constructor(private readonly maxBytes = FULL_STATE_ANSWERS_MAX_BYTES) {
    installFreshStep1Answer();
  }

  /** A loaded document: its fresh clients are answered through `fullState` from now on. */
  serve(document: Document) {
    answering.set(document, this);
  }

  /**
   * A document just loaded from `update` and nothing else (the stored copy
   * its first client was sent, stored-copy.ts): that update is the answer
   * until the document changes, so the next fresh client is not encoded
   * the whole document again (0.7 s of the serving thread for a 50,000-row
   * table, right after the 1.7 s load). It is the same state as an
   * encoding of the document, not always the same bytes (a merged log tail
   * keeps deleted content the document collected), which a client applies
   * to the same document. Not kept while the document holds pending
   * updates (the copy would hold them as they were read, an encoding as
   * they are now).
   */
  keepLoaded(document: Document, update: Uint8Array) {
    if (update.byteLength > this.maxBytes || holdsPending(document)) return;
    this.keep(document, update);
  }

  /** The document's whole state as one V1 update: the kept answer while valid, else encoded (and kept). */
  fullState(document: Document): Uint8Array {
    const name = document.name;
    const kept = this.kept.get(name);
    if (kept && kept.doc === document && kept.store === document.store && !holdsPending(document)) {
      this.kept.delete(name);
      this.kept.set(name, kept);
      return kept.update;
    }
    this.forget(name);
    fullStateEncodes.count++;
    const update = Y.encodeStateAsUpdate(document);
    if (update.byteLength > this.maxBytes || holdsPending(document)) return update;
    this.keep(document, update);
    return update;
  }

  /** Replaces what was kept for the document's name, then drops the longest unused past the cap. */
  private keep(document: Document, update: Uint8Array) {
    this.forget(document.name);
    this.kept.set(document.name, { doc: document, store: document.store, update });
    this.keptBytes += update.byteLength;
    for (const [oldest, { update: bytes }] of this.kept) {
      if (this.keptBytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.keptBytes -= bytes.byteLength;
    }
    this.dropOnNextChange(document);
  }

  /** Drops the document's kept answer (it changed, or it was unloaded). */
  forget(name: string) {
    const kept = this.kept.get(name);
    if (!kept) return;
    this.kept.delete(name);
    this.keptBytes -= kept.update.byteLength;
  }

  clear() {
    this.kept.clear();
    this.keptBytes = 0;
  }

  /** What is kept, all documents together (tests). */
  get bytes(): number {
    return this.keptBytes;
  }

  /**
   * One listener a document, there only while an answer may be kept: an
   * edit of a document with nothing kept pays nothing. An encoding never
   * runs inside a transaction (Hocuspocus handles a step 1 in a task of its
   * own, and Yjs transactions, their observers included, are synchronous),
   * so no change can fall between an encoding and this listener.
   */
  private dropOnNextChange(document: Document) {
    if (this.watched.has(document)) return;
    this.watched.add(document);
    document.once('update', () => {
      this.watched.delete(document);
      if (this.kept.get(document.name)?.doc === document) this.forget(document.name);
    });
  }
}

/** Yjs holds updates back for missing dependencies: they change what an encoding holds without emitting an update. */
const holdsPending = (document: Y.Doc) => document.store.pendingStructs !== null || document.store.pendingDs !== null;

/** Which engine's answers serve a document (several engines share a process in tests). */
const answering = new WeakMap<Y.Doc, FullStateAnswers>();

type SyncReading = (
  this: unknown,
  message: IncomingMessage,
  document: Document,
  connection?: Connection,
  reply?: (message: Uint8Array) => void,
  requestFirstSync?: boolean,
) => Promise<0 | 1 | 2>;

let installed = false;

/**
 * Hooks the one place where Hocuspocus 4 answers a sync step 1,
 * `MessageReceiver.readSyncMessage` (it calls y-protocols' readSyncStep1,
 * which encodes the whole document for an empty state vector, with no
 * place in between to hand it an encoding already made). For a fresh step
 * 1 of a document an engine serves, its step 1 branch is done here as
 * Hocuspocus does it, in the same order and with nothing awaited but what
 * it awaits (`beforeSync`), the step 2 written from `fullState`; every
 * other message goes to Hocuspocus's own code. Internal to
 * @hocuspocus/server 4.x; test/sync/full-state-answers.test.ts compares
 * what a fresh client receives with the server document's encoding.
 */
function installFreshStep1Answer() {
  if (installed) return;
  const prototype = MessageReceiver.prototype as unknown as { readSyncMessage: SyncReading };
  const readSyncMessage = prototype.readSyncMessage;
  if (typeof readSyncMessage !== 'function') throw new Error('@hocuspocus/server no longer has MessageReceiver.readSyncMessage: see src/sync/full-state-answers.ts');
  installed = true;
  prototype.readSyncMessage = function (message, document, connection, reply, requestFirstSync = true) {
    const answers = answering.get(document);
    if (!answers || !isFreshSyncStep1(message)) return readSyncMessage.call(this, message, document, connection, reply, requestFirstSync);
    return answerFreshStep1(answers, message, document, connection, reply, requestFirstSync);
  };
}

/** Hocuspocus 4.7's step 1 branch of `readSyncMessage`, with `fullState` in place of readSyncStep1's encoding. */
async function answerFreshStep1(
  answers: FullStateAnswers,
  message: IncomingMessage,
  document: Document,
  connection: Connection | undefined,
  reply: ((message: Uint8Array) => void) | undefined,
  requestFirstSync: boolean,
): Promise<0> {
  const type = message.readVarUint();
  const address = connection?.messageAddress ?? document.name;
  if (connection) await connection.callbacks.beforeSync(connection, { type, payload: message.peekVarUint8Array() });
  message.readVarUint8Array();
  // What readSyncStep1 writes (y-protocols writeSyncStep2), the document encoded (or kept) now, as it would be.
  encoding.writeVarUint(message.encoder, SYNC_STEP_2);
  encoding.writeVarUint8Array(message.encoder, answers.fullState(document));
  if (reply && requestFirstSync) reply(new OutgoingMessage(address).createSyncReplyMessage().writeFirstSyncStepFor(document).toUint8Array());
  else if (connection) connection.send(new OutgoingMessage(address).createSyncMessage().writeFirstSyncStepFor(document).toUint8Array());
  return SYNC_STEP_1;
}

/** The sync message about to be read is a step 1 with an empty state vector (the message is not consumed). */
function isFreshSyncStep1(message: IncomingMessage): boolean {
  try {
    const decoder = decoding.clone(message.decoder);
    if (decoding.readVarUint(decoder) !== SYNC_STEP_1) return false;
    const stateVector = decoding.readVarUint8Array(decoder);
    return stateVector.byteLength === 1 && stateVector[0] === 0;
  } catch {
    return false;
  }
}
