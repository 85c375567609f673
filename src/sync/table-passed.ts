/**
 * Which rows of a loaded table document have passed the row cap
 * (docs/LIMITS.md "Rows over sync"). A sync client's new row is in the live
 * document as soon as its update is applied, but the cap judges it only in
 * the commit that records the update, and a refused row leaves the document
 * only after that. REST and MCP show a row once it has passed: once the row
 * projection, which holds exactly the committed, accepted rows, has it.
 *
 * Per document this keeps the ids already found in the projection, so a
 * read looks up only rows it has not met yet. Once in the projection a row
 * stays accepted; only a change to the `rows` root's key (the row deleted,
 * or made again under the same id) makes it unknown again.
 */
import type * as Y from 'yjs';
import { tableIndex, type TableIndex } from './table-index.js';
import { existingRoots } from './table-layout.js';

type PassedState = {
  ids: Set<string>;
  /** Bumped whenever `ids` or the set of row keys changes. */
  version: number;
  unpassed: { index: TableIndex; version: number; ids: ReadonlySet<string> } | null;
  /** Row keys changed while a lookup was out: its answer no longer speaks for them. */
  lookups: Set<Set<string>>;
};

/** A projection lookup in flight: the rows it asks about. */
export type PassedLookup = { ids: string[]; changed: Set<string> };

const states = new WeakMap<Y.Doc, PassedState>();

function stateOf(doc: Y.Doc): PassedState {
  let state = states.get(doc);
  if (state) return state;
  const created: PassedState = { ids: new Set(), version: 0, unpassed: null, lookups: new Set() };
  doc.on('afterTransaction', (transaction: Y.Transaction) => {
    const rows = existingRoots(doc).rows;
    const keys = rows ? transaction.changed.get(rows) : undefined;
    if (!keys || keys.size === 0) return;
    for (const key of keys) {
      if (key === null) continue;
      created.ids.delete(key);
      for (const changed of created.lookups) changed.add(key);
    }
    created.version++;
  });
  states.set(doc, created);
  state = created;
  return state;
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
  for (const id of found) if (!lookup.changed.has(id)) state.ids.add(id);
  state.version++;
}

/** Placed rows the cap has not (yet) let through: a client's rows awaiting their commit, refused rows awaiting removal. */
export function unpassedRows(doc: Y.Doc): ReadonlySet<string> {
  const state = stateOf(doc);
  const index = tableIndex(doc);
  const cached = state.unpassed;
  if (cached && cached.index === index && cached.version === state.version) return cached.ids;
  const ids = new Set<string>();
  for (const id of index.placements.keys()) if (!state.ids.has(id)) ids.add(id);
  // A table function appends to the index in place, which also changes a root key (and so the version).
  state.unpassed = { index, version: state.version, ids };
  return ids;
}

/** Whether the row has passed the cap, as far as the last lookup knows. */
export function hasPassed(doc: Y.Doc, rowId: string): boolean {
  return stateOf(doc).ids.has(rowId);
}
