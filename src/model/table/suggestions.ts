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

/** The suggestions root when the document has one, without creating it (readers and observers must not add a root). */
export function existingSuggestionsRoot(doc: Y.Doc): Y.AbstractType<any> | undefined {
  return doc.share.get(SUGGESTIONS_ROOT);
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

/**
 * Replaces the suggested cells of an open entry (its author changing its
 * mind), and its base where given; null when there is no such entry.
 */
export function editRowSuggestion(doc: Y.Doc, id: string, values: Record<string, unknown>, base: Record<string, unknown> | undefined, origin: unknown): RowSuggestionEntry | null {
  const map: unknown = suggestionsRoot(doc).get(id);
  if (!(map instanceof Y.Map)) return null;
  doc.transact(() => {
    map.set('values', copyJson(values));
    if (base !== undefined) map.set('base', copyJson(base));
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
  const root = existingSuggestionsRoot(transaction.doc);
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
  const root = existingSuggestionsRoot(transaction.doc);
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
  // Held back by Yjs until content nobody has sent arrives: it would apply then, unchecked.
  const pending = after.store as unknown as { pendingStructs: unknown; pendingDs: unknown };
  if (pending.pendingStructs || pending.pendingDs) return 'refers to content the server does not have';
  const touched = new Set<string>();
  const beforeRoot = existingSuggestionsRoot(before);
  const afterRoot = existingSuggestionsRoot(after);

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
    const structs = before.store.clients.get(client) ?? [];
    const beforeClock = Y.getState(before.store, client);
    for (const { clock, len } of ranges) {
      // Deleting what nobody has sent yet would be held and applied when another client sends it.
      if (clock + len > Y.getState(after.store, client)) return 'deletes content the server does not have';
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

  return judgeEntries(touched, (id) => liveEntry(beforeRoot, id), (id) => liveEntry(afterRoot, id), author);
}

type EntryRead = RowSuggestionEntry | null | 'unreadable';

/**
 * `checkTableSuggestionOnlyChange` for an update not yet applied, without
 * building the document it would make: the update's items are located from
 * their parents (or their neighbours) in `doc` or in the update itself, and
 * the entries they touch are read as `doc` has them with the update's field
 * writes on top. Costs time in proportion to the update. Conservative where
 * the two would need Yjs's own ordering to tell: a field written over
 * another value than the one `doc` holds now (a concurrent change), two
 * live writes of one field, an update naming content `doc` lacks, or
 * content that is not plain JSON are refused.
 */
export function checkTableSuggestionOnlyUpdate(doc: Y.Doc, update: Uint8Array, author: { principalType: string; id: string }): string | null {
  let decoded: ReturnType<typeof Y.decodeUpdate>;
  try {
    decoded = Y.decodeUpdate(update);
  } catch {
    return 'not a Yjs update';
  }
  return new UpdateReading(doc, decoded.structs, decoded.ds).judge(author);
}

type DeleteSet = ReturnType<typeof Y.decodeUpdate>['ds'];

type Container = { root: string } | { type: Y.AbstractType<any> } | { fresh: Y.Item };

/** An update's items and deletions read against the document they would apply to. */
class UpdateReading {
  private readonly root: Y.AbstractType<any> | undefined;
  /** The update's items the document lacks, by client, in clock order. */
  private readonly fresh = new Map<number, Y.Item[]>();
  private readonly located = new Map<Y.Item, { container: Container; key: string | null } | { reason: string }>();

  constructor(
    private readonly doc: Y.Doc,
    structs: ReadonlyArray<Y.Item | Y.GC | Y.Skip>,
    private readonly ds: DeleteSet,
  ) {
    this.root = existingSuggestionsRoot(doc);
    for (const struct of structs) {
      if (!(struct instanceof Y.Item) || struct.id.clock + struct.length <= Y.getState(doc.store, struct.id.client)) continue;
      const list = this.fresh.get(struct.id.client) ?? [];
      list.push(struct);
      this.fresh.set(struct.id.client, list);
    }
  }

  judge(author: { principalType: string; id: string }): string | null {
    const touched = new Set<string>();
    for (const list of this.fresh.values()) {
      for (const item of list) {
        const where = this.entryOfFresh(item);
        if (typeof where !== 'string') return where.reason;
        touched.add(where);
      }
    }
    for (const [client, ranges] of this.ds.clients) {
      const known = Y.getState(this.doc.store, client);
      const structs = this.doc.store.clients.get(client) ?? [];
      for (const { clock, len } of ranges) {
        if (clock + len > known && !this.freshCovers(client, Math.max(clock, known), clock + len)) return 'deletes content the server does not have';
        const end = Math.min(clock + len, known);
        for (let i = clock < end ? Y.findIndexSS(structs, clock) : structs.length; i < structs.length && structs[i]!.id.clock < end; i++) {
          const struct = structs[i]!;
          if (!(struct instanceof Y.Item) || struct.deleted) continue;
          const where = entryOf(struct, this.root, this.doc);
          if (typeof where !== 'string') return where.reason;
          touched.add(where);
        }
      }
    }
    let refusal: string | null = null;
    const after = (id: string): EntryRead => {
      const read = this.entryAfter(id);
      if (typeof read === 'object' && read !== null && 'reason' in read) {
        refusal ??= read.reason;
        return null;
      }
      return read;
    };
    const judged = judgeEntries(touched, (id) => liveEntry(this.root, id), after, author);
    return refusal ?? judged;
  }

  // -- where an item of the update goes

  private findFresh(id: Y.ID): Y.Item | null {
    const list = this.fresh.get(id.client);
    if (!list) return null;
    for (const item of list) if (item.id.clock <= id.clock && id.clock < item.id.clock + item.length) return item;
    return null;
  }

  private freshCovers(client: number, from: number, to: number): boolean {
    let at = from;
    for (const item of this.fresh.get(client) ?? []) {
      if (item.id.clock <= at && at < item.id.clock + item.length) at = item.id.clock + item.length;
    }
    return at >= to;
  }

  private findExisting(id: Y.ID): Y.Item | null {
    if (id.clock >= Y.getState(this.doc.store, id.client)) return null;
    const struct = Y.getItem(this.doc.store, id);
    return struct instanceof Y.Item ? struct : null;
  }

  private locate(item: Y.Item): { container: Container; key: string | null } | { reason: string } {
    const known = this.located.get(item);
    if (known) return known;
    // Guards a neighbour chain that loops back on itself (a crafted update).
    this.located.set(item, { reason: 'malformed update' });
    let result: { container: Container; key: string | null } | { reason: string };
    const parent = item.parent as unknown;
    if (typeof parent === 'string') result = { container: { root: parent }, key: item.parentSub };
    else if (parent instanceof Y.ID) {
      const fresh = this.findFresh(parent);
      const existing = fresh ? null : this.findExisting(parent);
      if (fresh) result = { container: { fresh }, key: item.parentSub };
      else if (existing && existing.content instanceof Y.ContentType) result = { container: { type: existing.content.type }, key: item.parentSub };
      else result = { reason: 'refers to content the server does not have' };
    } else {
      // No parent written: it is its neighbour's.
      const neighbour = item.origin ?? item.rightOrigin;
      const fresh = neighbour ? this.findFresh(neighbour) : null;
      const existing = neighbour && !fresh ? this.findExisting(neighbour) : null;
      if (fresh) result = this.locate(fresh);
      else if (existing && existing.parent instanceof Y.AbstractType) result = { container: { type: existing.parent }, key: existing.parentSub };
      else result = { reason: 'refers to content the server does not have' };
    }
    this.located.set(item, result);
    return result;
  }

  private entryOfFresh(item: Y.Item): string | { reason: string } {
    const where = this.locate(item);
    if ('reason' in where) return where;
    const { container, key } = where;
    if ('root' in container) {
      if (container.root !== SUGGESTIONS_ROOT) return { reason: `changes the table's ${container.root}` };
      return key === null ? { reason: 'malformed suggestion' } : key;
    }
    if ('fresh' in container) return this.entryOfFresh(container.fresh);
    const type = container.type;
    if (type._item === null) {
      if (type !== this.root) return { reason: `changes the table's ${rootName(type, this.doc)}` };
      return key === null ? { reason: 'malformed suggestion' } : key;
    }
    return entryOf(type._item, this.root, this.doc);
  }

  // -- the entries as the update would leave them

  private deletedByUpdate(id: Y.ID): boolean {
    for (const { clock, len } of this.ds.clients.get(id.client) ?? []) if (clock <= id.clock && id.clock < clock + len) return true;
    return false;
  }

  /** The update's live writes under `key` of `container`: at most one, written over what the document holds now. */
  private writeOf(container: Container, key: string, head: Y.Item | null): Y.Item | null | { reason: string } {
    const writes: Y.Item[] = [];
    for (const list of this.fresh.values()) {
      for (const item of list) {
        const where = this.locate(item);
        if ('reason' in where || where.key !== key || !sameContainer(where.container, container)) continue;
        if (!this.deletedByUpdate(item.id)) writes.push(item);
      }
    }
    if (writes.length === 0) return null;
    if (writes.length > 1) return { reason: `writes ${key} twice` };
    // Walk back through the update's own earlier writes to what it overwrote: it must be what the document holds.
    let origin = writes[0]!.origin;
    for (let fresh = origin ? this.findFresh(origin) : null; fresh; fresh = origin ? this.findFresh(origin) : null) origin = fresh.origin;
    const expected = head ? head.lastId : null;
    const same = origin === null ? expected === null : expected !== null && origin.client === expected.client && origin.clock === expected.clock;
    return same ? writes[0]! : { reason: `changes ${key} concurrently with another change` };
  }

  private entryAfter(id: string): EntryRead | { reason: string } {
    const rootContainer: Container = this.root ? { type: this.root } : { root: SUGGESTIONS_ROOT };
    const head = this.root?._map.get(id) ?? null;
    const written = this.writeOf(rootContainer, id, head);
    if (written && 'reason' in written) return written;
    // A map written by the update under the entry's id, or the one there now unless the update deletes it.
    let fields: Map<string, unknown>;
    let container: Container;
    if (written) {
      if (!(written.content instanceof Y.ContentType) || !(written.content.type instanceof Y.Map)) return 'unreadable';
      fields = new Map();
      container = { fresh: written };
    } else {
      if (!head || head.deleted || this.deletedByUpdate(head.id)) return null;
      const map = mapOf(head);
      if (!map) return 'unreadable';
      fields = new Map();
      for (const [field, item] of map._map) {
        if (item.deleted || this.deletedByUpdate(item.id)) continue;
        const content = item.content.getContent();
        fields.set(field, content[content.length - 1]);
      }
      container = { type: map };
    }
    const existingMap = 'type' in container ? container.type : null;
    const keys = new Set<string>();
    for (const list of this.fresh.values()) {
      for (const item of list) {
        const where = this.locate(item);
        if (!('reason' in where) && where.key !== null && sameContainer(where.container, container)) keys.add(where.key);
      }
    }
    for (const key of keys) {
      const write = this.writeOf(container, key, existingMap?._map.get(key) ?? null);
      if (write === null) continue;
      if ('reason' in write) return write;
      if (write.content instanceof Y.ContentType || write.content instanceof Y.ContentDeleted) return 'unreadable';
      const content = write.content.getContent();
      fields.set(key, content[content.length - 1]);
    }
    return readEntry(id, fields) ?? 'unreadable';
  }
}

function sameContainer(a: Container, b: Container): boolean {
  if ('root' in a && 'root' in b) return a.root === b.root;
  if ('type' in a && 'type' in b) return a.type === b.type;
  if ('fresh' in a && 'fresh' in b) return a.fresh === b.fresh;
  // The suggestions root named by its name in the update and held as a type here.
  const named = 'root' in a ? a : 'root' in b ? b : null;
  const typed = 'type' in a ? a : 'type' in b ? b : null;
  return named !== null && typed !== null && typed.type._item === null && named.root === SUGGESTIONS_ROOT && typed.type === (typed.type.doc?.share.get(SUGGESTIONS_ROOT) ?? null);
}

/** Whether every touched entry was absent or `author`'s open one before, and is absent or `author`'s undecided open one after. */
function judgeEntries(touched: Iterable<string>, was: (id: string) => EntryRead, is: (id: string) => EntryRead, author: { principalType: string; id: string }): string | null {
  const mine = (entry: RowSuggestionEntry) => entry.author.principalType === author.principalType && entry.author.id === author.id;
  for (const id of touched) {
    const before = was(id);
    const after = is(id);
    if (before === 'unreadable' || after === 'unreadable') return `suggestion ${id} is not a well-formed entry`;
    if (before && (!mine(before) || before.status !== 'open')) return `changes suggestion ${id}, which is not an open suggestion of this connection`;
    if (after && !mine(after)) return `suggestion ${id} names another author`;
    if (after && (after.status !== 'open' || after.decidedBy !== undefined || after.decidedAt !== undefined || after.previous !== undefined)) return `decides suggestion ${id}`;
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

/** An entry from its fields: a live entry map, or the fields an update would leave (a plain Map). */
function readEntry(id: string, map: { get(field: string): unknown; has(field: string): boolean }): RowSuggestionEntry | null {
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

