import * as decoding from 'lib0/decoding';

// Hocuspocus wire format: documentName, message type, then for sync messages
// the y-protocols sync type and the update bytes.
const MESSAGE_SYNC = 0;
const MESSAGE_SYNC_REPLY = 4;
const SYNC_STEP_2 = 1;
const SYNC_UPDATE = 2;

/**
 * The Y update a raw client message carries (sync step 2 or update), or
 * null for everything else (step 1, awareness, auth, stateless...). Step 2
 * matters: it carries edits a client made offline.
 */
export function documentUpdateOf(message: Uint8Array): Uint8Array | null {
  const decoder = decoding.createDecoder(message);
  decoding.readVarString(decoder);
  const type = decoding.readVarUint(decoder);
  if (type !== MESSAGE_SYNC && type !== MESSAGE_SYNC_REPLY) return null;
  const syncType = decoding.readVarUint(decoder);
  if (syncType !== SYNC_STEP_2 && syncType !== SYNC_UPDATE) return null;
  return decoding.readVarUint8Array(decoder);
}

const SYNC_STEP_1 = 0;

/** A client's sync step 1: it asks for the document's state (the server answers with step 2). */
export function isSyncStep1(message: Uint8Array): boolean {
  try {
    const decoder = decoding.createDecoder(message);
    decoding.readVarString(decoder);
    const type = decoding.readVarUint(decoder);
    if (type !== MESSAGE_SYNC && type !== MESSAGE_SYNC_REPLY) return false;
    return decoding.readVarUint(decoder) === SYNC_STEP_1;
  } catch {
    return false;
  }
}
