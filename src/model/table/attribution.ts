/**
 * The last writer of each cell of a row: a cell is one entry of the row's
 * Y.Map, and the item holding its current value was made by the update
 * that last set it. The lookup (src/model/attribution.ts) says whose update
 * that was. Browser-safe.
 */
import type { AttributionLookup, Attribution } from '../attribution.js';
import { rowMapOf } from './layout.js';
import type * as Y from 'yjs';

/** Per column key of the row's stored cells, who set its current value; null when the row does not exist. */
export function cellWriters(doc: Y.Doc, rowId: string, lookup: AttributionLookup): Record<string, Attribution> | null {
  const rowMap = rowMapOf(doc, rowId);
  if (!rowMap) return null;
  const writers: Record<string, Attribution> = {};
  for (const [key, item] of rowMap._map) {
    if (item.deleted) continue;
    // The value read is the item's last element (readRowData), whose clock is the item's last.
    writers[key] = lookup(item.id.client, item.id.clock + item.length - 1);
  }
  return writers;
}
