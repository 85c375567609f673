import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { storableJson } from '../lib/text';
import { MESSAGE_SYNC, MESSAGE_SYNC_REPLY, SYNC_STEP_2, SYNC_UPDATE, syncMessage } from './update-message';

/**
 * Well-formed text inside sync updates, before anything is applied or logged.
 *
 * Yjs writes strings as UTF-8 and the server decodes them with a
 * replacing UTF-8 decoder, so text content, map keys, map values and XML
 * attributes arrive well-formed whatever a client sends. The exceptions are
 * the contents Yjs encodes as JSON text (formatting attributes of rich
 * text, embeds, and the legacy JSON content): `JSON.parse` turns an escape
 * such as `\ud800` back into a lone surrogate, which no Postgres projection
 * can store. Such strings become U+FFFD here, and the update is re-encoded.
 *
 * A lone surrogate can only come from such an escape, so messages whose
 * bytes hold no `\ud`/`\uD` skip the decoding entirely (the hot path).
 */

type DeleteSet = { clients: Map<number, Array<{ clock: number; len: number }>> };

const BACKSLASH_U_D = Buffer.from('\\ud');
const BACKSLASH_U_UPPER_D = Buffer.from('\\uD');

/** The raw client message with its update's text repaired, or the same message when nothing needed it. */
export function repairMessageText(message: Uint8Array): Uint8Array {
  const bytes = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  if (!bytes.includes(BACKSLASH_U_D) && !bytes.includes(BACKSLASH_U_UPPER_D)) return message;
  let address: string;
  let type: number;
  let syncType: number;
  let update: Uint8Array;
  try {
    const decoder = decoding.createDecoder(message);
    address = decoding.readVarString(decoder);
    type = decoding.readVarUint(decoder);
    if (type !== MESSAGE_SYNC && type !== MESSAGE_SYNC_REPLY) return message;
    syncType = decoding.readVarUint(decoder);
    if (syncType !== SYNC_STEP_2 && syncType !== SYNC_UPDATE) return message;
    update = decoding.readVarUint8Array(decoder);
  } catch {
    return message; // not ours to judge: Hocuspocus refuses a malformed message itself
  }
  const repaired = repairUpdateText(update);
  if (repaired === update) return message;
  return syncMessage(address, type, syncType, repaired);
}

/** A V1 update with JSON-borne strings made storable; the same array when nothing needed repair. */
export function repairUpdateText(update: Uint8Array): Uint8Array {
  let decoded: { structs: Array<Y.Item | Y.GC | Y.Skip>; ds: DeleteSet };
  try {
    decoded = Y.decodeUpdate(update) as typeof decoded;
  } catch {
    return update;
  }
  let changed = false;
  for (const struct of decoded.structs) {
    if (struct instanceof Y.Item && repairContent(struct.content)) changed = true;
  }
  return changed ? encodeUpdate(decoded.structs, decoded.ds) : update;
}

/** Repairs JSON-borne strings of one item's content in place; true when something changed. */
function repairContent(content: unknown): boolean {
  if (content instanceof Y.ContentFormat) {
    const key = storableJson(content.key);
    const value = storableJson(content.value);
    if (key === content.key && value === content.value) return false;
    content.key = key;
    content.value = value;
    return true;
  }
  if (content instanceof Y.ContentEmbed) {
    const embed = storableJson(content.embed);
    if (embed === content.embed) return false;
    content.embed = embed;
    return true;
  }
  if (content instanceof Y.ContentJSON || content instanceof Y.ContentAny) {
    const arr = storableJson(content.arr);
    if (arr === content.arr) return false;
    content.arr = arr;
    return true;
  }
  return false;
}

/** Writes decoded structs and a delete set back as a V1 update (the layout Yjs's own encoder uses). */
function encodeUpdate(structs: Array<Y.Item | Y.GC | Y.Skip>, ds: DeleteSet): Uint8Array {
  const encoder = new Y.UpdateEncoderV1();
  const runs: Array<Array<Y.Item | Y.GC | Y.Skip>> = [];
  for (const struct of structs) {
    const run = runs.at(-1);
    if (run && run[0]!.id.client === struct.id.client) run.push(struct);
    else runs.push([struct]);
  }
  encoding.writeVarUint(encoder.restEncoder, runs.length);
  for (const run of runs) {
    encoding.writeVarUint(encoder.restEncoder, run.length);
    encoder.writeClient(run[0]!.id.client);
    encoding.writeVarUint(encoder.restEncoder, run[0]!.id.clock);
    for (const struct of run) struct.write(encoder, 0);
  }
  encoding.writeVarUint(encoder.restEncoder, ds.clients.size);
  for (const [client, items] of [...ds.clients.entries()].sort((a, b) => b[0] - a[0])) {
    encoder.resetDsCurVal();
    encoding.writeVarUint(encoder.restEncoder, client);
    encoding.writeVarUint(encoder.restEncoder, items.length);
    for (const item of items) {
      encoder.writeDsClock(item.clock);
      encoder.writeDsLen(item.len);
    }
  }
  return encoder.toUint8Array();
}
