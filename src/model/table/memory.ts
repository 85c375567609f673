/**
 * Heap relief for a document just loaded from storage. Yjs decodes every
 * map value into an array grown by `push`, which V8 sizes for 17 elements:
 * about 130 bytes of slack per cell. Re-creating each small array at its
 * exact length gives that back; short repeated strings (status values, row
 * ids listed both as a `rows` key and in an `order`) are shared while at it.
 * On a 50,000-row, 5-column table: 151 MB of heap after applyUpdate (V1),
 * 116 MB after this; 158 and 123 MB with V2; it costs 100 to 150 ms
 * (bench/table-load.ts).
 *
 * Only values are replaced by equal ones, never structure, so it is safe at
 * any time outside a transaction; call it once after applying the stored
 * state, before peers connect.
 */
import * as Y from 'yjs';

/** Strings up to this length are interned: long enough for ids and option values, short enough to be worth it. */
const INTERNED_MAX_LENGTH = 24;

export function compactDecodedContent(doc: Y.Doc): { arraysCompacted: number } {
  const interned = new Map<string, string>();
  const intern = (value: unknown): unknown => {
    if (typeof value !== 'string' || value.length > INTERNED_MAX_LENGTH) return value;
    const shared = interned.get(value);
    if (shared !== undefined) return shared;
    interned.set(value, value);
    return value;
  };
  let arraysCompacted = 0;
  for (const structs of doc.store.clients.values()) {
    for (const struct of structs) {
      if (!(struct instanceof Y.Item)) continue;
      // Map keys too: a row id is both a `rows` key and an `order` value.
      if (struct.parentSub !== null) struct.parentSub = intern(struct.parentSub) as string;
      if (struct.content instanceof Y.ContentAny && !struct.deleted) {
        struct.content.arr = struct.content.arr.map(intern);
        arraysCompacted++;
      }
    }
  }
  return { arraysCompacted };
}
