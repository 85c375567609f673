/**
 * Suggested row changes, held beside the rows instead of applied to them
 * (issue 25 item 2, docs/SUGGESTIONS.md). They live in the table document so
 * that they sync live and work offline like the rows they would change:
 *
 *   suggestions: Y.Map<suggestionId, Y.Map{ id, kind, sheetId, rowId, values?, base?,
 *                                           author, at, status, decidedBy?, decidedAt? }>
 *
 * `kind` is `create` (rowId is the id the row gets when accepted), `update`
 * (`values` the suggested cells) or `delete`. `base` holds the cells the
 * suggester read, so a reader can tell which cells someone else changed
 * since (a conflict). Each field is a plain JSON value set as a whole: a
 * decision (status, decidedBy, decidedAt) and the author editing the values
 * touch different fields. Reads are forgiving: an entry of the wrong shape
 * is not listed. Nothing here touches rows; applying an accepted suggestion
 * is the domain's ordinary row change, in the same transaction as its status.
 */
import * as Y from 'yjs';
import type { RowSuggestionKind, SuggestionStatus } from '../schemas/suggestions.js';
import { compareCodeUnits, copyJson } from './layout.js';
import { TableDocumentError } from './types.js';

export const SUGGESTIONS_ROOT = 'suggestions';

export type { RowSuggestionKind, SuggestionStatus };

/** Who suggested or decided: enough to show a name without asking the server. */
export interface SuggestionPerson {
  principalType: 'user' | 'agent';
  id: string;
  name: string;
}

export interface RowSuggestionEntry {
  id: string;
  kind: RowSuggestionKind;
  sheetId: string;
  rowId: string;
  /** create and update: the suggested cells by column key. */
  values?: Record<string, unknown>;
  /** The cells as the suggester read them (at the base version it named, else when it suggested). */
  base?: Record<string, unknown>;
  author: SuggestionPerson;
  /** ISO time of the suggestion. */
  at: string;
  status: SuggestionStatus;
  decidedBy?: SuggestionPerson;
  decidedAt?: string;
  /** Set on acceptance of an update or delete: the cells just before it was applied (shown once the row has changed since). */
  previous?: Record<string, unknown>;
}

type EntryMap = Y.Map<unknown>;

const KINDS: readonly RowSuggestionKind[] = ['create', 'update', 'delete'];
const STATUSES: readonly SuggestionStatus[] = ['open', 'accepted', 'rejected'];
const FIELDS = ['id', 'kind', 'sheetId', 'rowId', 'values', 'base', 'author', 'at', 'status', 'decidedBy', 'decidedAt', 'previous'] as const;

export function suggestionsRoot(doc: Y.Doc): Y.Map<EntryMap> {
  return doc.getMap<EntryMap>(SUGGESTIONS_ROOT);
}

/** Writes a new entry in one transaction; 409-style `row_exists` error when the id is taken. Returns the entry as it reads. */
export function addRowSuggestion(doc: Y.Doc, entry: RowSuggestionEntry, origin: unknown): RowSuggestionEntry {
  if (suggestionsRoot(doc).has(entry.id)) {
    throw new TableDocumentError('row_exists', `A suggestion ${entry.id} already exists.`, [{ path: ['id'], code: 'suggestion_exists', message: 'id taken' }]);
  }
  doc.transact(() => {
    const map: EntryMap = new Y.Map();
    // Set first: a Y.Map takes fields once it is in the document.
    suggestionsRoot(doc).set(entry.id, map);
    for (const field of FIELDS) {
      const value = field === 'author' || field === 'decidedBy' ? entry[field] && personOf(entry[field]) : entry[field];
      if (value !== undefined) map.set(field, copyJson(value));
    }
  }, origin);
  return getRowSuggestion(doc, entry.id)!;
}

export function getRowSuggestion(doc: Y.Doc, id: string): RowSuggestionEntry | null {
  const map: unknown = suggestionsRoot(doc).get(id);
  return map instanceof Y.Map ? readEntry(id, map as EntryMap) : null;
}

/** Every readable entry, oldest first (time, then id: the same order on every peer). */
export function rowSuggestionEntries(doc: Y.Doc): RowSuggestionEntry[] {
  const entries: RowSuggestionEntry[] = [];
  for (const [id, map] of suggestionsRoot(doc).entries()) {
    const entry = map instanceof Y.Map ? readEntry(id, map) : null;
    if (entry) entries.push(entry);
  }
  return entries.sort((a, b) => compareCodeUnits(a.at, b.at) || compareCodeUnits(a.id, b.id));
}

/**
 * Records a decision (or reopens one: `open` clears the decider). Call it
 * inside the transaction that applies an accepted change so both land as one
 * update. Returns the entry after, or null when there is no such entry.
 */
export function setRowSuggestionStatus(
  doc: Y.Doc,
  id: string,
  status: SuggestionStatus,
  decider: SuggestionPerson | null,
  at: string | null,
  origin: unknown,
  previous?: Record<string, unknown>,
): RowSuggestionEntry | null {
  const map: unknown = suggestionsRoot(doc).get(id);
  if (!(map instanceof Y.Map)) return null;
  doc.transact(() => {
    if (previous !== undefined) map.set('previous', copyJson(previous));
    else if (status === 'open') map.delete('previous');
    map.set('status', status);
    if (status === 'open' || !decider) map.delete('decidedBy');
    else map.set('decidedBy', personOf(decider));
    if (status === 'open' || !at) map.delete('decidedAt');
    else map.set('decidedAt', at);
  }, origin);
  return getRowSuggestion(doc, id);
}

/** Takes an entry out (a suggester withdrawing its own open suggestion); false when there was none. */
export function removeRowSuggestion(doc: Y.Doc, id: string, origin: unknown): boolean {
  if (!suggestionsRoot(doc).has(id)) return false;
  doc.transact(() => suggestionsRoot(doc).delete(id), origin);
  return true;
}

// ---------------------------------------------------------------------------
// For the observer: what one transaction did to the suggestions. Both read
// the root as it is (never converting it mid-observation, see layout.ts
// `existingRoots`) and cost time in proportion to the transaction.

/** Entries this transaction added (readable ones), in the order they were added. */
export function rowSuggestionStampsIn(transaction: Y.Transaction): RowSuggestionEntry[] {
  const root = transaction.doc.share.get(SUGGESTIONS_ROOT);
  if (!root) return [];
  const added: RowSuggestionEntry[] = [];
  for (const [client, structs] of transaction.doc.store.clients) {
    const beforeClock = transaction.beforeState.get(client) ?? 0;
    const last = structs[structs.length - 1];
    if (!last || last.id.clock + last.length <= beforeClock) continue;
    for (let i = Y.findIndexSS(structs, beforeClock); i < structs.length; i++) {
      const item = structs[i];
      if (!(item instanceof Y.Item) || item.deleted || item.parent !== root || item.parentSub === null) continue;
      const map = mapOf(item);
      const entry = map ? readEntry(item.parentSub, map) : null;
      if (entry) added.push(entry);
    }
  }
  return added;
}

/** Ids of entries this transaction removed outright (withdrawn), not replaced by another map under the same id. */
export function rowSuggestionsRemovedIn(transaction: Y.Transaction): string[] {
  const root = transaction.doc.share.get(SUGGESTIONS_ROOT);
  if (!root) return [];
  const removed: string[] = [];
  for (const [client, deletions] of transaction.deleteSet.clients) {
    const structs = transaction.doc.store.clients.get(client);
    const beforeClock = transaction.beforeState.get(client) ?? 0;
    if (!structs) continue;
    for (const { clock, len } of deletions) {
      const end = Math.min(clock + len, beforeClock);
      for (let i = clock < end ? Y.findIndexSS(structs, clock) : structs.length; i < structs.length && structs[i]!.id.clock < end; i++) {
        const item = structs[i];
        if (!(item instanceof Y.Item) || item.parent !== root || item.parentSub === null) continue;
        const head = root._map.get(item.parentSub);
        if (!head || head.deleted) removed.push(item.parentSub);
      }
    }
  }
  return removed;
}

/**
 * One line saying what an entry would change, from the entry alone (the
 * observer has nothing else): `Row r1: estimate 3 → 5`, `New row: title
 * "Draft"`, `Delete row r1 ("Draft")`. Values are shortened; the line is at
 * most 500 characters.
 */
export function rowSuggestionSummary(entry: RowSuggestionEntry): string {
  const cells = Object.entries(entry.values ?? {});
  let line: string;
  if (entry.kind === 'create') line = `New row: ${cells.map(([key, value]) => `${key} ${shortValue(value)}`).join(', ') || '(empty)'}`;
  else if (entry.kind === 'delete') {
    const title = Object.values(entry.base ?? {}).find((value): value is string => typeof value === 'string' && value !== '');
    line = `Delete row ${entry.rowId}${title ? ` (${shortValue(title)})` : ''}`;
  } else line = `Row ${entry.rowId}: ${cells.map(([key, value]) => `${key} ${shortValue(entry.base?.[key])} → ${shortValue(value)}`).join(', ')}`;
  return line.length > 500 ? `${line.slice(0, 499)}…` : line;
}

function shortValue(value: unknown): string {
  const text = value === undefined || value === null || value === '' ? '(empty)' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

// ---------------------------------------------------------------------------
// The check for connections that may only suggest.

/**
 * Null when going from `before` to `after` only adds open entries authored
 * by `author`, or edits or withdraws `author`'s own open entries; otherwise
 * a short reason. Rows, sheets, views, other people's entries and decisions
 * must stay as they were. New items are read from `after` (in proportion to
 * what is new); deletions come from the delete set of `update` when the
 * caller has the update that made `after` (in proportion to the update),
 * else from `after`'s whole delete set (in proportion to the document),
 * each looked up in `before`.
 */
export function checkTableSuggestionOnlyChange(
  before: Y.Doc,
  after: Y.Doc,
  author: { principalType: string; id: string },
  update?: Uint8Array,
): string | null {
  const touched = new Set<string>();
  const beforeRoot = before.share.get(SUGGESTIONS_ROOT);
  const afterRoot = after.share.get(SUGGESTIONS_ROOT);

  for (const [client, structs] of after.store.clients) {
    const beforeClock = Y.getState(before.store, client);
    const last = structs[structs.length - 1];
    if (!last || last.id.clock + last.length <= beforeClock) continue;
    for (let i = Y.findIndexSS(structs, beforeClock); i < structs.length; i++) {
      const struct = structs[i]!;
      // Garbage-collected ranges carry no content and change nothing that exists.
      if (!(struct instanceof Y.Item)) continue;
      const where = entryOf(struct, afterRoot, after);
      if (typeof where !== 'string') return where.reason;
      touched.add(where);
    }
  }

  const deleted = update ? Y.decodeUpdate(update).ds : Y.snapshot(after).ds;
  for (const [client, ranges] of deleted.clients) {
    const structs = before.store.clients.get(client);
    if (!structs) continue;
    const beforeClock = Y.getState(before.store, client);
    for (const { clock, len } of ranges) {
      const end = Math.min(clock + len, beforeClock);
      for (let i = clock < end ? Y.findIndexSS(structs, clock) : structs.length; i < structs.length && structs[i]!.id.clock < end; i++) {
        const struct = structs[i]!;
        if (!(struct instanceof Y.Item) || struct.deleted) continue;
        const where = entryOf(struct, beforeRoot, before);
        if (typeof where !== 'string') return where.reason;
        touched.add(where);
      }
    }
  }

  const mine = (entry: RowSuggestionEntry) => entry.author.principalType === author.principalType && entry.author.id === author.id;
  for (const id of touched) {
    const was = liveEntry(beforeRoot, id);
    const is = liveEntry(afterRoot, id);
    if (was === 'unreadable' || is === 'unreadable') return `suggestion ${id} is not a well-formed entry`;
    if (was && (!mine(was) || was.status !== 'open')) return `changes suggestion ${id}, which is not an open suggestion of this connection`;
    if (is && !mine(is)) return `suggestion ${id} names another author`;
    if (is && (is.status !== 'open' || is.decidedBy !== undefined || is.decidedAt !== undefined || is.previous !== undefined)) return `decides suggestion ${id}`;
  }
  return null;
}

/** The entry id an item belongs to (it is the entry's map or lies inside it), or why it is not a suggestion. */
function entryOf(item: Y.Item, root: Y.AbstractType<any> | undefined, doc: Y.Doc): string | { reason: string } {
  let current: Y.Item = item;
  for (;;) {
    const parent = current.parent;
    if (!(parent instanceof Y.AbstractType)) return { reason: 'changes content outside the table layout' };
    if (parent._item === null) {
      if (parent === root && current.parentSub !== null) return current.parentSub;
      return { reason: `changes the table's ${rootName(parent, doc)}` };
    }
    current = parent._item;
  }
}

function rootName(type: Y.AbstractType<any>, doc: Y.Doc): string {
  for (const [name, root] of doc.share) if (root === type) return name;
  return 'content';
}

/** The live entry under `id`, null when there is none, `unreadable` when something else is there. */
function liveEntry(root: Y.AbstractType<any> | undefined, id: string): RowSuggestionEntry | null | 'unreadable' {
  const head = root?._map.get(id);
  if (!head || head.deleted) return null;
  const map = mapOf(head);
  return (map && readEntry(id, map)) ?? 'unreadable';
}

// ---------------------------------------------------------------------------
// Reading

function mapOf(item: Y.Item): EntryMap | null {
  return item.content instanceof Y.ContentType && item.content.type instanceof Y.Map ? (item.content.type as EntryMap) : null;
}

function readEntry(id: string, map: EntryMap): RowSuggestionEntry | null {
  const kind = map.get('kind');
  const status = map.get('status');
  const sheetId = map.get('sheetId');
  const rowId = map.get('rowId');
  const at = map.get('at');
  const author = readPerson(map.get('author'));
  if (map.get('id') !== id || !KINDS.includes(kind as RowSuggestionKind) || !STATUSES.includes(status as SuggestionStatus)) return null;
  if (typeof sheetId !== 'string' || typeof rowId !== 'string' || typeof at !== 'string' || !author) return null;
  const values = readRecord(map.get('values'));
  const base = readRecord(map.get('base'));
  const previous = readRecord(map.get('previous'));
  if (values === null || base === null) return null;
  if (kind !== 'delete' && values === undefined) return null;
  const decidedBy = map.has('decidedBy') ? readPerson(map.get('decidedBy')) : undefined;
  const decidedAt = map.get('decidedAt');
  return {
    id,
    kind: kind as RowSuggestionKind,
    sheetId,
    rowId,
    ...(values !== undefined ? { values } : {}),
    ...(base !== undefined ? { base } : {}),
    author,
    at,
    status: status as SuggestionStatus,
    ...(decidedBy ? { decidedBy } : {}),
    ...(typeof decidedAt === 'string' ? { decidedAt } : {}),
    ...(previous ? { previous } : {}),
  };
}

/** A plain object copied out of the document; undefined when absent, null when of the wrong shape. */
function readRecord(value: unknown): Record<string, unknown> | undefined | null {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Y.AbstractType) return null;
  return copyJson(value as Record<string, unknown>);
}

function readPerson(value: unknown): SuggestionPerson | null {
  if (value === null || typeof value !== 'object') return null;
  const { principalType, id, name } = value as Record<string, unknown>;
  if ((principalType !== 'user' && principalType !== 'agent') || typeof id !== 'string') return null;
  return { principalType, id, name: typeof name === 'string' ? name : '' };
}

function personOf(person: SuggestionPerson): SuggestionPerson {
  return { principalType: person.principalType, id: person.id, name: person.name };
}

