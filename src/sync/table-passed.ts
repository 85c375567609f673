/**
 * Which rows of a loaded table document have passed the row cap
 * (docs/LIMITS.md "Rows over sync"). A sync client's new row is in the live
 * document as soon as its update is applied, but the cap judges it only in
 * the commit that records the update, and a refused row leaves the document
 * only after that. REST and MCP show a row once it has passed: once the row
 * projection, which holds exactly the committed, accepted rows, has it.
 *
 * Per document this keeps the rows not yet known to have passed: every row
 * when REST first reads the document, then each row a sync client of this
 * instance makes, until a lookup finds it in the projection. A row the
 * server makes (REST, MCP) was held to the cap before it was written, and
 * nobody reads it before its commit. A row relayed from another instance is
 * that instance's to judge: it counts at once here (docs/LIMITS.md names
 * the window this leaves with several instances).
 */
import type * as Y from 'yjs';
import { isRelayedOrigin, isServerOrigin } from './origins.js';
import { tableIndex } from '../model/table/row-index.js';
import { existingRoots, rowsRoot } from '../model/table/layout.js';

type PassedState = {
  unknown: Set<string>;
  /** Row keys changed while a lookup was out: its answer no longer speaks for them. */
  lookups: Set<Set<string>>;
};

/** A projection lookup in flight: the rows it asks about. */
export type PassedLookup = { ids: string[]; changed: Set<string> };

const states = new WeakMap<Y.Doc, PassedState>();

function stateOf(doc: Y.Doc): PassedState {
  let state = states.get(doc);
  if (state) return state;
  const created: PassedState = { unknown: new Set(rowsRoot(doc).keys()), lookups: new Set() };
  doc.on('afterTransaction', (transaction: Y.Transaction) => {
    const rows = existingRoots(doc).rows;
    const keys = rows ? transaction.changed.get(rows) : undefined;
    if (!keys || keys.size === 0) return;
    const judged = isServerOrigin(transaction.origin) || isRelayedOrigin(transaction.origin);
    for (const key of keys) {
      if (key === null) continue;
      const item = rows!._map.get(key);
      if (!judged && item && !item.deleted) created.unknown.add(key);
      else created.unknown.delete(key);
      for (const changed of created.lookups) changed.add(key);
    }
  });
  states.set(doc, created);
  state = created;
  return state;
}

/** Placed rows the cap has not (yet) let through: a client's rows awaiting their commit, refused rows awaiting removal. */
export function unpassedRows(doc: Y.Doc): ReadonlySet<string> {
  const { unknown } = stateOf(doc);
  if (unknown.size === 0) return unknown;
  const placements = tableIndex(doc).placements;
  const placed = new Set<string>();
  for (const id of unknown) if (placements.has(id)) placed.add(id);
  return placed;
}

/**
 * `unpassedRows` for a reader that must not start tracking the document (the
 * observer, computing a change's rollups): none when REST has not read it
 * yet, as nothing is known to be held back then.
 */
export function trackedUnpassedRows(doc: Y.Doc): ReadonlySet<string> {
  return states.has(doc) ? unpassedRows(doc) : new Set();
}

/** Whether the row (if it is one) has passed the cap, as far as the last lookup knows. */
export function hasPassed(doc: Y.Doc, rowId: string): boolean {
  return !stateOf(doc).unknown.has(rowId);
}

/** Starts a lookup of the placed rows not known to have passed the cap; end it with `endLookup`. */
export function beginLookup(doc: Y.Doc): PassedLookup {
  const lookup = { ids: [...unpassedRows(doc)], changed: new Set<string>() };
  if (lookup.ids.length > 0) stateOf(doc).lookups.add(lookup.changed);
  return lookup;
}

/** Records the rows of `lookup` the projection holds (`found`; none when the lookup failed). */
export function endLookup(doc: Y.Doc, lookup: PassedLookup, found: Iterable<string>): void {
  const state = stateOf(doc);
  state.lookups.delete(lookup.changed);
  for (const id of found) if (!lookup.changed.has(id)) state.unknown.delete(id);
}
