/**
 * What a run did to a text: a doc body (the ProseMirror Y.XmlFragment) or
 * an html page's Y.Text, recorded per transaction and undone later while
 * everyone else's edits stay (docs/RUNS.md).
 *
 * Recording (`recordTextTransaction`) runs inside Yjs's afterTransaction,
 * where the items a transaction deleted still hold their content (Yjs
 * garbage-collects it right after): it keeps the ids of the items the
 * transaction inserted, and for what it deleted the content itself, with
 * the deleted item's id as the place to put it back. A deleted item's
 * tombstone stays in its parent's list as long as the parent lives (with
 * garbage collection its content goes, its id and position stay), so the id
 * finds the place again after compaction, a restart or a version restore.
 *
 * Undoing (`planTextRevert`, `applyTextRevert`) deletes the items the run
 * inserted that are still there (text others typed later, even inside them,
 * stays: a block the run made is kept when someone else's content is in
 * it) and inserts what it deleted back before its tombstone, with the marks
 * it had. Yjs 13 has no way to undo another origin's changes after the fact;
 * this is that, from the run's own record.
 */
import * as Y from 'yjs';
import { IdRanges, type IdRange } from './id-ranges.js';

type ItemId = [client: number, clock: number];
type Attributes = Record<string, unknown>;

/** An element or text block as it was before the transaction that deleted it, with each part's item id. */
export type SerializedNode =
  | { el: string; id: ItemId; attrs: Attributes; children: SerializedNode[] }
  | { id: ItemId; text: Array<{ s: string; id: ItemId; a?: Attributes }> };

/** Items a transaction inserted: `s` is the text when they hold text. */
export type InsertedPiece = { c: number; k: number; n: number; s?: string };

/**
 * Content a transaction deleted: text inside a text that still exists (with
 * its marks), or a whole block whose parent still exists. `c`/`k` is the
 * deleted item's id, which is also where it goes back.
 */
export type DeletedPiece = { t: 'text'; c: number; k: number; s: string; a?: Attributes } | { t: 'node'; c: number; k: number; node: SerializedNode };

/** A node attribute (heading level, task checked, link...) set or removed on an element that existed before. */
export type AttributeChange = { c: number; k: number; key: string; before?: unknown; after?: unknown };

export type TextRecord = { inserted: InsertedPiece[]; deleted: DeletedPiece[]; attributes: AttributeChange[] };

// ----------------------------------------------------------------- recording

/** What `transaction` did under `root`, or null when it did nothing there. Call from afterTransaction. */
export function recordTextTransaction(transaction: Y.Transaction, root: Y.AbstractType<any>): TextRecord | null {
  const record: TextRecord = { inserted: [], deleted: [], attributes: [] };
  const store = transaction.doc.store;
  transaction.afterState.forEach((after, client) => {
    const before = transaction.beforeState.get(client) ?? 0;
    if (after <= before) return;
    const structs = store.clients.get(client)!;
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
      const struct = structs[i]!;
      if (struct.id.clock >= after) break;
      if (!(struct instanceof Y.Item) || struct.deleted || !isUnder(struct, root)) continue;
      if (struct.parentSub !== null) {
        noteAttribute(record, struct, transaction);
        continue;
      }
      const piece: InsertedPiece = { c: client, k: struct.id.clock, n: struct.length };
      if (struct.content instanceof Y.ContentString) piece.s = struct.content.str;
      appendInserted(record.inserted, piece);
    }
  });
  const deletedText = new Map<Y.AbstractType<any>, Y.Item[]>();
  transaction.deleteSet.clients.forEach((ranges, client) => {
    const structs = store.clients.get(client);
    if (!structs) return;
    const before = transaction.beforeState.get(client) ?? 0;
    for (const { clock, len } of ranges) {
      const end = Math.min(clock + len, before);
      for (let i = clock < end ? Y.findIndexSS(structs, clock) : structs.length; i < structs.length && structs[i]!.id.clock < end; i++) {
        const struct = structs[i]!;
        if (!(struct instanceof Y.Item) || !isUnder(struct, root)) continue;
        const parent = struct.parent as Y.AbstractType<any>;
        // Inside a block deleted with it: the block records it.
        if (parent._item?.deleted && parent !== root) continue;
        if (struct.parentSub !== null) {
          const head = parent._map.get(struct.parentSub);
          // Set anew in this transaction: noted with the new value.
          if (!parent._item || !existedBefore(parent._item, transaction) || (head && !head.deleted)) continue;
          record.attributes.push({ c: parent._item.id.client, k: parent._item.id.clock, key: struct.parentSub, before: lastValue(struct) });
          continue;
        }
        if (struct.content instanceof Y.ContentString) {
          const list = deletedText.get(parent) ?? [];
          list.push(struct);
          deletedText.set(parent, list);
        } else if (struct.content instanceof Y.ContentType) {
          record.deleted.push({ t: 'node', c: struct.id.client, k: struct.id.clock, node: serialize(struct, transaction) });
        }
      }
    }
  });
  for (const [parent, items] of deletedText) record.deleted.push(...textPieces(parent, items, transaction));
  return record.inserted.length + record.deleted.length + record.attributes.length > 0 ? record : null;
}

/** Two records of one text as one (folding treats a text's records as a whole, in order). */
export function mergeTextRecords(first: TextRecord, next: TextRecord): TextRecord {
  const inserted = [...first.inserted];
  for (const piece of next.inserted) appendInserted(inserted, { ...piece });
  return { inserted, deleted: [...first.deleted, ...next.deleted], attributes: [...first.attributes, ...next.attributes] };
}

function noteAttribute(record: TextRecord, item: Y.Item, transaction: Y.Transaction) {
  const element = (item.parent as Y.AbstractType<any>)._item;
  // Attributes of a block made in this transaction belong to its insertion.
  if (!element || !existedBefore(element, transaction)) return;
  let previous = item.left;
  while (previous && !wasAliveBefore(previous, transaction)) previous = previous.left;
  const change: AttributeChange = { c: element.id.client, k: element.id.clock, key: item.parentSub!, after: lastValue(item) };
  if (previous) change.before = lastValue(previous);
  record.attributes.push(change);
}

/** Consecutive items of one client typed in one go are one piece. */
function appendInserted(pieces: InsertedPiece[], piece: InsertedPiece) {
  const last = pieces.at(-1);
  if (last && last.c === piece.c && last.k + last.n === piece.k && (last.s === undefined) === (piece.s === undefined)) {
    last.n += piece.n;
    if (last.s !== undefined) last.s += piece.s;
    return;
  }
  pieces.push(piece);
}

/** Deleted text of one parent, with the marks each had: one walk of the parent whatever the number of deletions. */
function textPieces(parent: Y.AbstractType<any>, items: Y.Item[], transaction: Y.Transaction): DeletedPiece[] {
  const wanted = new Set(items);
  const pieces: DeletedPiece[] = [];
  const marks = new Map<string, unknown>();
  let previous: Y.Item | null = null;
  for (let item = parent._start; item !== null && wanted.size > 0; item = item.right) {
    if (item.content instanceof Y.ContentFormat && wasAliveBefore(item, transaction)) {
      const { key, value } = item.content;
      if (value === null) marks.delete(key);
      else marks.set(key, value);
    }
    if (!wanted.has(item)) continue;
    wanted.delete(item);
    const s = (item.content as Y.ContentString).str;
    const a = marks.size > 0 ? Object.fromEntries(marks) : undefined;
    const last = pieces.at(-1);
    // A run of deleted text of one client, back to back, with the same marks: one piece.
    if (last?.t === 'text' && previous === item.left && last.c === item.id.client && last.k + last.s.length === item.id.clock && sameAttributes(last.a, a)) {
      last.s += s;
    } else {
      pieces.push({ t: 'text', c: item.id.client, k: item.id.clock, s, ...(a ? { a } : {}) });
    }
    previous = item;
  }
  return pieces;
}

function serialize(item: Y.Item, transaction: Y.Transaction): SerializedNode {
  const type = (item.content as Y.ContentType).type;
  const id: ItemId = [item.id.client, item.id.clock];
  if (type instanceof Y.XmlText || type instanceof Y.Text) {
    const text: Array<{ s: string; id: ItemId; a?: Attributes }> = [];
    const marks = new Map<string, unknown>();
    for (let child = type._start; child !== null; child = child.right) {
      if (!wasAliveBefore(child, transaction)) continue;
      if (child.content instanceof Y.ContentFormat) {
        if (child.content.value === null) marks.delete(child.content.key);
        else marks.set(child.content.key, child.content.value);
      } else if (child.content instanceof Y.ContentString) {
        text.push({ s: child.content.str, id: [child.id.client, child.id.clock], ...(marks.size > 0 ? { a: Object.fromEntries(marks) } : {}) });
      }
    }
    return { id, text };
  }
  const attrs: Attributes = {};
  for (const [key, head] of type._map) {
    let entry: Y.Item | null = head;
    while (entry && !wasAliveBefore(entry, transaction)) entry = entry.left;
    if (entry) attrs[key] = lastValue(entry);
  }
  const children: SerializedNode[] = [];
  for (let child = type._start; child !== null; child = child.right) {
    if (wasAliveBefore(child, transaction) && child.content instanceof Y.ContentType) children.push(serialize(child, transaction));
  }
  return { el: (type as Y.XmlElement).nodeName ?? 'paragraph', id, attrs, children };
}

// ------------------------------------------------------------------- folding

/** A run's record of one text, folded: what it inserted and did not delete itself, what it deleted that it had not inserted. */
export type FoldedText = {
  /** Every id the run inserted (its own deletions included): content of these never comes back. */
  everInserted: IdRanges;
  /** Ids the run inserted and did not delete again. */
  inserted: IdRanges;
  /** The text of `inserted`, piece by piece. */
  insertedText: InsertedPiece[];
  deleted: DeletedPiece[];
  attributes: AttributeChange[];
};

export function foldText(records: readonly TextRecord[]): FoldedText {
  const everInserted = new IdRanges();
  const removed = new IdRanges();
  for (const record of records) {
    for (const piece of record.inserted) everInserted.add(piece.c, piece.k, piece.n);
    for (const piece of record.deleted) forEachId(piece, (c, k, n) => removed.add(c, k, n));
  }
  const inserted = everInserted.minus(removed);
  const insertedText = records.flatMap((record) =>
    record.inserted.flatMap((piece) =>
      piece.s === undefined ? [] : inserted.within(piece.c, piece.k, piece.n).map(([k, n]) => ({ c: piece.c, k, n, s: piece.s!.slice(k - piece.k, k - piece.k + n) })),
    ),
  );
  const deleted = records.flatMap((record) => record.deleted.flatMap((piece) => withoutIds(piece, everInserted)));
  const attributes = foldAttributes(records.flatMap((record) => record.attributes).filter((change) => !everInserted.has(change.c, change.k)));
  return { everInserted, inserted, insertedText, deleted, attributes };
}

/** Every item id a deleted piece holds. */
function forEachId(piece: DeletedPiece, visit: (client: number, clock: number, length: number) => void) {
  if (piece.t === 'text') return visit(piece.c, piece.k, piece.s.length);
  const walk = (node: SerializedNode) => {
    visit(node.id[0], node.id[1], 1);
    if ('text' in node) for (const part of node.text) visit(part.id[0], part.id[1], part.s.length);
    else node.children.forEach(walk);
  };
  walk(piece.node);
}

/** A deleted piece without the content the run had inserted itself (that never comes back); nothing when none is left. */
function withoutIds(piece: DeletedPiece, ids: IdRanges): DeletedPiece[] {
  if (piece.t === 'text') {
    return ids.without(piece.c, piece.k, piece.s.length).map(([k, n]) => ({ ...piece, k, s: piece.s.slice(k - piece.k, k - piece.k + n) }));
  }
  const node = nodeWithout(piece.node, ids);
  return node ? [{ ...piece, node }] : [];
}

function nodeWithout(node: SerializedNode, ids: IdRanges): SerializedNode | null {
  if (ids.has(node.id[0], node.id[1])) return null;
  if ('text' in node) {
    const text = node.text.flatMap((part) => ids.without(part.id[0], part.id[1], part.s.length).map(([k, n]) => ({ ...part, id: [part.id[0], k] as ItemId, s: part.s.slice(k - part.id[1], k - part.id[1] + n) })));
    return { ...node, text };
  }
  return { ...node, children: node.children.flatMap((child) => nodeWithout(child, ids) ?? []) };
}

/** Per element and key: the value before the run's first change and after its last; changes that end where they began drop out. */
function foldAttributes(changes: AttributeChange[]): AttributeChange[] {
  const folded = new Map<string, AttributeChange>();
  for (const change of changes) {
    const key = `${change.c}:${change.k}:${change.key}`;
    const first = folded.get(key);
    if (!first) folded.set(key, { ...change });
    else if ('after' in change) first.after = change.after;
    else delete first.after;
  }
  return [...folded.values()].filter((change) => !sameValue(change.before, change.after));
}

/** The text a folded record inserted and deleted, each in document order (as far as the text still places it), side by side pieces as one. */
export function presentText(folded: FoldedText, root: Y.AbstractType<any> | null): { inserted: string[]; deleted: string[] } {
  const order = root ? documentOrder(root) : new Map<Y.Item, number>();
  const place = (c: number, k: number) => {
    const item = root ? itemAt(root.doc!, c, k) : null;
    const at = item ? order.get(item) : undefined;
    return { at: at === undefined ? Number.MAX_SAFE_INTEGER : at, parent: item?.parent ?? null };
  };
  const inserted = folded.insertedText.map((piece) => ({ c: piece.c, k: piece.k, text: piece.s!, joins: true, ...place(piece.c, piece.k) }));
  const deleted = folded.deleted.map((piece) =>
    piece.t === 'text' ? { c: piece.c, k: piece.k, text: piece.s, joins: true, ...place(piece.c, piece.k) } : { c: piece.c, k: piece.k, text: plainText(piece.node), joins: false, ...place(piece.c, piece.k) },
  );
  return { inserted: joinAdjacent(inserted), deleted: joinAdjacent(deleted) };
}

/** Texts in document order; pieces of one parent whose item ids follow each other (typed or deleted a character at a time) read as one. */
function joinAdjacent(pieces: Array<{ c: number; k: number; text: string; joins: boolean; at: number; parent: unknown }>): string[] {
  pieces.sort((a, b) => a.at - b.at || a.c - b.c || a.k - b.k);
  const texts: string[] = [];
  let last: (typeof pieces)[number] | null = null;
  for (const piece of pieces) {
    if (last && piece.joins && last.joins && last.parent === piece.parent && last.c === piece.c && last.k + last.text.length === piece.k) texts[texts.length - 1] += piece.text;
    else texts.push(piece.text);
    last = piece;
  }
  return texts.filter(Boolean);
}

function plainText(node: SerializedNode): string {
  if ('text' in node) return node.text.map((part) => part.s).join('');
  const inline = node.children.every((child) => 'text' in child);
  return node.children.map(plainText).join(inline ? '' : '\n');
}

/** Every item under `root`, tombstones included, numbered in document order. */
function documentOrder(root: Y.AbstractType<any>): Map<Y.Item, number> {
  const order = new Map<Y.Item, number>();
  const walk = (type: Y.AbstractType<any>) => {
    for (let item = type._start; item !== null; item = item.right) {
      order.set(item, order.size);
      if (item.content instanceof Y.ContentType) walk(item.content.type);
    }
  };
  walk(root);
  return order;
}

function itemAt(doc: Y.Doc, client: number, clock: number): Y.Item | null {
  if (Y.getState(doc.store, client) <= clock) return null;
  const struct = Y.getItem(doc.store, Y.createID(client, clock));
  return struct instanceof Y.Item ? struct : null;
}

// ------------------------------------------------------------------ undoing

export type TextConflict = { before: unknown; run: unknown; now: unknown };

export type TextRevertPlan = {
  /** Ranges of live items to delete. */
  remove: IdRange[];
  /** Deleted pieces whose place still exists. */
  restore: DeletedPiece[];
  attributes: Array<{ element: Y.XmlElement; key: string; value: unknown }>;
  conflicts: TextConflict[];
};

/**
 * What undoing the run would do to the text now: the run's inserted items
 * still there (a block holding anyone else's live content stays; the run's
 * own content in it goes), the deleted pieces whose place is still there
 * (the others are conflicts: someone removed what held them), attribute
 * values that are still the run's. Writes nothing.
 */
export function planTextRevert(root: Y.AbstractType<any>, folded: FoldedText): TextRevertPlan {
  const doc = root.doc!;
  const plan: TextRevertPlan = { remove: [], restore: [], attributes: [], conflicts: [] };
  for (const [client, clock, length] of folded.inserted.ranges()) {
    const structs = doc.store.clients.get(client);
    if (!structs || Y.getState(doc.store, client) <= clock) continue;
    for (let i = Y.findIndexSS(structs, clock); i < structs.length && structs[i]!.id.clock < clock + length; i++) {
      const struct = structs[i]!;
      if (!(struct instanceof Y.Item) || struct.deleted || !isUnder(struct, root)) continue;
      if (struct.content instanceof Y.ContentType && holdsOthers(struct.content.type, folded.inserted)) continue;
      const start = Math.max(clock, struct.id.clock);
      const end = Math.min(clock + length, struct.id.clock + struct.length);
      plan.remove.push([client, start, end - start]);
    }
  }
  for (const piece of folded.deleted) {
    if (placeOf(doc, piece)) plan.restore.push(piece);
    else plan.conflicts.push({ before: piece.t === 'text' ? piece.s : plainText(piece.node), run: null, now: null });
  }
  for (const change of folded.attributes) {
    const item = itemAt(doc, change.c, change.k);
    const element = item && !item.deleted && item.content instanceof Y.ContentType ? item.content.type : null;
    if (!(element instanceof Y.XmlElement)) continue;
    const now = element.getAttribute(change.key);
    if (sameValue(now, change.after)) plan.attributes.push({ element, key: change.key, value: change.before });
    else plan.conflicts.push({ before: change.before ?? null, run: change.after ?? null, now: now ?? null });
  }
  return plan;
}

/** Applies a plan made by `planTextRevert` in the caller's transaction on `root`'s document. */
export function applyTextRevert(root: Y.AbstractType<any>, plan: TextRevertPlan): void {
  const doc = root.doc!;
  doc.transact((transaction) => {
    const touched = new Set<Y.AbstractType<any>>();
    for (const [client, clock, length] of plan.remove) {
      let from = clock;
      while (from < clock + length) {
        const item = Y.getItemCleanStart(transaction, Y.createID(client, from));
        if (item.id.clock + item.length > clock + length) Y.getItemCleanEnd(transaction, doc.store, Y.createID(client, clock + length - 1));
        if (!item.deleted) {
          item.delete(transaction);
          touched.add(item.parent as Y.AbstractType<any>);
        }
        from = item.id.clock + item.length;
      }
    }
    // Yjs keeps index caches for local edits only through its own list functions; items deleted by id invalidate them.
    for (const type of touched) if (Array.isArray((type as { _searchMarker?: unknown })._searchMarker)) (type as { _searchMarker: unknown[] })._searchMarker.length = 0;
    // Last place first: pieces side by side go back in their order (each insert lands before the ones put back after it).
    const placed = plan.restore.flatMap((piece) => {
      const place = placeOf(doc, piece);
      return place ? [{ piece, ...place }] : [];
    });
    const parents = new Map<Y.AbstractType<any>, number>();
    for (const { parent } of placed) if (!parents.has(parent)) parents.set(parent, parents.size);
    placed.sort((a, b) => parents.get(a.parent)! - parents.get(b.parent)! || b.index - a.index || b.rank - a.rank);
    for (const { piece, parent, index } of placed) {
      if (piece.t === 'text') (parent as Y.Text).insert(index, piece.s, { ...(piece.a ?? {}) });
      else (parent as Y.XmlFragment).insert(index, [build(piece.node)]);
    }
    for (const { element, key, value } of plan.attributes) {
      if (value === undefined) element.removeAttribute(key);
      else element.setAttribute(key, value as string);
    }
  });
}

/** Where a deleted piece goes back: its parent (still alive), the index of its tombstone, and its rank among the tombstones at that index. */
function placeOf(doc: Y.Doc, piece: DeletedPiece): { parent: Y.AbstractType<any>; index: number; rank: number } | null {
  const item = itemAt(doc, piece.c, piece.k);
  if (!item) return null;
  const parent = item.parent as Y.AbstractType<any>;
  if (parent._item?.deleted) return null;
  let index = 0;
  let rank = piece.k - item.id.clock;
  let counting = true;
  for (let left = item.left; left !== null; left = left.left) {
    if (!left.deleted && left.countable) {
      index += left.length;
      counting = false;
    } else if (counting) {
      rank += 1 << 20;
    }
  }
  return { parent, index, rank };
}

function build(node: SerializedNode): Y.XmlElement | Y.XmlText {
  if ('text' in node) {
    const text = new Y.XmlText();
    text.applyDelta(node.text.map((part) => ({ insert: part.s, ...(part.a ? { attributes: part.a } : {}) })));
    return text;
  }
  const element = new Y.XmlElement(node.el);
  for (const [key, value] of Object.entries(node.attrs)) element.setAttribute(key, value as string);
  element.insert(0, node.children.map(build));
  return element;
}

/** Whether a block holds live content (at any depth) that is not the run's. */
function holdsOthers(type: Y.AbstractType<any>, runs: IdRanges): boolean {
  for (let item = type._start; item !== null; item = item.right) {
    if (item.deleted) continue;
    if (!runs.covers(item.id.client, item.id.clock, item.length)) return true;
    if (item.content instanceof Y.ContentType && holdsOthers(item.content.type, runs)) return true;
  }
  return false;
}

// ------------------------------------------------------------------ helpers

function isUnder(item: Y.Item, root: Y.AbstractType<any>): boolean {
  for (let parent = item.parent as Y.AbstractType<any> | null; parent; parent = (parent._item?.parent as Y.AbstractType<any> | undefined) ?? null) {
    if (parent === root) return true;
  }
  return false;
}

function existedBefore(item: Y.Item, transaction: Y.Transaction): boolean {
  return item.id.clock < (transaction.beforeState.get(item.id.client) ?? 0);
}

function wasAliveBefore(item: Y.Item, transaction: Y.Transaction): boolean {
  return existedBefore(item, transaction) && (!item.deleted || Y.isDeleted(transaction.deleteSet, item.id));
}

function lastValue(item: Y.Item): unknown {
  const content = item.content.getContent();
  return content[content.length - 1];
}

function sameAttributes(a: Attributes | undefined, b: Attributes | undefined): boolean {
  return sameValue(a ?? {}, b ?? {});
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
