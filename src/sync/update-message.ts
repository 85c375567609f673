import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';

// Hocuspocus wire format: the address (document name, or name and session), message type, then for sync messages
// the y-protocols sync type and the update bytes.
export const MESSAGE_SYNC = 0;
export const MESSAGE_SYNC_REPLY = 4;
export const SYNC_STEP_1 = 0;
export const SYNC_STEP_2 = 1;
export const SYNC_UPDATE = 2;

/** A sync message to `address` carrying `payload` (a state vector for step 1, an update otherwise). */
export function syncMessage(address: string, messageType: number, syncType: number, payload: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarString(encoder, address);
  encoding.writeVarUint(encoder, messageType);
  encoding.writeVarUint(encoder, syncType);
  encoding.writeVarUint8Array(encoder, payload);
  return encoding.toUint8Array(encoder);
}

/**
 * The Y update a raw client message carries (sync step 2 or update), or
 * null for everything else (step 1, awareness, auth, stateless...). Step 2
 * matters: it carries edits a client made offline.
 */
export function documentUpdateOf(message: Uint8Array): Uint8Array | null {
  return readMessage(message).update;
}

/**
 * What each message carries, once read: the message hook asks about one
 * message three or four times (its size, whether it is a step 1, its
 * change, the log's append), each a decode of its address string. A
 * message's bytes are not changed once received. Weakly held, so a large
 * message is not kept alive after it is handled.
 */
const readMessages = new WeakMap<Uint8Array, { update: Uint8Array | null; step1: boolean }>();

function readMessage(message: Uint8Array): { update: Uint8Array | null; step1: boolean } {
  const known = readMessages.get(message);
  if (known) return known;
  const decoder = decoding.createDecoder(message);
  decoding.readVarString(decoder);
  const type = decoding.readVarUint(decoder);
  let read: { update: Uint8Array | null; step1: boolean };
  if (type !== MESSAGE_SYNC && type !== MESSAGE_SYNC_REPLY) read = { update: null, step1: false };
  else {
    const syncType = decoding.readVarUint(decoder);
    if (syncType !== SYNC_STEP_2 && syncType !== SYNC_UPDATE) read = { update: null, step1: syncType === SYNC_STEP_1 };
    else read = { update: decoding.readVarUint8Array(decoder), step1: false };
  }
  readMessages.set(message, read);
  return read;
}

/**
 * The update a raw client message carries when it can change the document:
 * `documentUpdateOf`, but null also for a V1 update that holds nothing (no
 * structs, no deletions), what every fresh client answers the server's sync
 * step 1 with when it has nothing the server lacks. Applying that changes
 * nothing, so there is nothing to log or to join a run: logging it put a row
 * per connecting client in the log, which held a fold back (underived) and
 * made each such client cost a compaction of the whole document
 * (docs/PERFORMANCE.md, "h8-cold").
 */
export function documentChangeOf(message: Uint8Array): Uint8Array | null {
  const update = documentUpdateOf(message);
  return update && !(update.byteLength === 2 && update[0] === 0 && update[1] === 0) ? update : null;
}

/** A client's sync step 1: it asks for the document's state (the server answers with step 2). */
export function isSyncStep1(message: Uint8Array): boolean {
  try {
    return readMessage(message).step1;
  } catch {
    return false;
  }
}
