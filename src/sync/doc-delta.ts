/**
 * What one committed transaction did to a doc or html document, read from
 * the transaction's own structs (the items it created and the ones it
 * deleted) rather than from the whole document, so it costs the size of the
 * change, not the size of the document: a sync client sends one transaction
 * per keystroke.
 *
 * Runs inside `afterTransaction`, before Yjs garbage-collects the deleted
 * items, so their content can still be read. Never writes to the document.
 */
import * as Y from 'yjs';
import { mentionKey, type DocMention } from '../model/doc/mentions.js';
import { MENTION_KINDS, type MentionKind } from '../model/doc/schema.js';
import { DOC_BODY_FIELD } from '../model/doc/body.js';

const MENTION_NODE = 'mention';
/** Inserted text kept for the summary; the rest is only counted. */
const KEEP_TEXT = 200;

export type DocDelta = {
  /** The first characters inserted, in the order they were created. */
  insertedText: string;
  insertedChars: number;
  deletedChars: number;
  /** Top-level blocks of the doc body added or removed. */
  blocksAdded: number;
  blocksRemoved: number;
  /** Node attributes (heading level, task checked, mention fields) and marks that changed. */
  formatChanges: number;
  /** Mention elements this transaction created, deleted or edited. */
  mentionElements: Set<Y.XmlElement>;
};

type Struct = Y.Item | Y.GC | Y.Skip;

/** The delta of `transaction`, or null when it changed nothing (the empty transaction the first getXmlFragment fires, say). */
export function docTransactionDelta(transaction: Y.Transaction): DocDelta | null {
  const doc = transaction.doc;
  const body = doc.share.get(DOC_BODY_FIELD);
  const delta: DocDelta = { insertedText: '', insertedChars: 0, deletedChars: 0, blocksAdded: 0, blocksRemoved: 0, formatChanges: 0, mentionElements: new Set() };
  let touched = false;

  forEachNewStruct(transaction, (struct) => {
    touched = true;
    if (!(struct instanceof Y.Item)) return;
    noteMention(struct, delta);
    if (struct.deleted) return; // created and deleted in the same transaction
    const content = struct.content;
    if (content instanceof Y.ContentString) {
      delta.insertedChars += content.str.length;
      if (delta.insertedText.length < KEEP_TEXT) delta.insertedText += content.str.slice(0, KEEP_TEXT - delta.insertedText.length);
    } else if (content instanceof Y.ContentFormat || struct.parentSub !== null) {
      delta.formatChanges++;
    } else if (content instanceof Y.ContentType && struct.parent === body) {
      delta.blocksAdded++;
    }
  });

  forEachDeletedStruct(transaction, (struct, overlap) => {
    touched = true;
    if (!(struct instanceof Y.Item) || isNew(struct, transaction)) return;
    noteMention(struct, delta);
    const content = struct.content;
    if (content instanceof Y.ContentString) delta.deletedChars += overlap;
    else if (content instanceof Y.ContentType && struct.parent === body) delta.blocksRemoved++;
  });

  return touched ? delta : null;
}

/** A mention element created or deleted, or one whose attributes (kind, id, label) were set. */
function noteMention(item: Y.Item, delta: DocDelta) {
  const content = item.content;
  if (content instanceof Y.ContentType && isMentionElement(content.type)) delta.mentionElements.add(content.type);
  else if (item.parentSub !== null && isMentionElement(item.parent)) delta.mentionElements.add(item.parent);
}

function isMentionElement(type: unknown): type is Y.XmlElement {
  return type instanceof Y.XmlElement && type.nodeName === MENTION_NODE;
}

/** A one-line human summary for `doc.updated`'s `text`. */
export function summarizeDelta(delta: DocDelta): string {
  const parts: string[] = [];
  if (delta.insertedChars > 0) {
    const shown = delta.insertedText.replace(/\s+/g, ' ').trim();
    const clipped = shown.length > 60 || delta.insertedChars > delta.insertedText.length ? `${shown.slice(0, 60).trimEnd()}…` : shown;
    parts.push(clipped ? `inserted "${clipped}"` : `inserted ${plural(delta.insertedChars, 'character')}`);
  }
  if (delta.deletedChars > 0) parts.push(`deleted ${plural(delta.deletedChars, 'character')}`);
  if (delta.blocksAdded > 0) parts.push(`added ${plural(delta.blocksAdded, 'block')}`);
  if (delta.blocksRemoved > 0) parts.push(`removed ${plural(delta.blocksRemoved, 'block')}`);
  if (parts.length === 0 && delta.formatChanges > 0) parts.push('changed formatting');
  const text = parts.join('; ') || 'edited';
  return text[0]!.toUpperCase() + text.slice(1);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// --------------------------------------------------------------- mentions

/**
 * Which mentions a transaction makes new to the document: a mention
 * (kind + id) counts as added when no mention with that identity existed
 * before the transaction and one exists after it. Keeps a count of live
 * mention elements per identity for each loaded document, built once by a
 * scan of the body (rewound to the state before the transaction that first
 * needs it) and then updated from each transaction's mention elements only.
 */
export class MentionTracker {
  private readonly counts = new WeakMap<Y.Doc, Map<string, number>>();

  /** Forget what is known about `doc` (a change the tracker did not see). The next `added` rebuilds it. */
  forget(doc: Y.Doc) {
    this.counts.delete(doc);
  }

  added(transaction: Y.Transaction, elements: ReadonlySet<Y.XmlElement>): DocMention[] {
    if (elements.size === 0) return [];
    const changes = [...elements].map((element) => ({ before: keyBefore(element, transaction), after: mentionAfter(element) }));
    const doc = transaction.doc;
    let counts = this.counts.get(doc);
    if (!counts) {
      counts = countMentions(doc);
      // The scan saw the state after this transaction: rewind it.
      for (const change of changes) {
        if (change.after) bump(counts, mentionKey(change.after), -1);
        if (change.before) bump(counts, change.before, +1);
      }
      this.counts.set(doc, counts);
    }
    const presentBefore = new Set(changes.flatMap((c) => (c.after && (counts.get(mentionKey(c.after)) ?? 0) > 0 ? [mentionKey(c.after)] : [])));
    for (const change of changes) if (change.before) bump(counts, change.before, -1);
    const added = new Map<string, DocMention>();
    for (const change of changes) {
      if (!change.after) continue;
      const key = mentionKey(change.after);
      bump(counts, key, +1);
      if (!presentBefore.has(key) && !added.has(key)) added.set(key, change.after);
    }
    return [...added.values()];
  }
}

function bump(counts: Map<string, number>, key: string, by: number) {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

function asMention(kind: unknown, id: unknown, label: unknown): DocMention | null {
  if (typeof id !== 'string' || id === '' || !MENTION_KINDS.includes(kind as MentionKind)) return null;
  return { kind: kind as MentionKind, id, label: typeof label === 'string' ? label : '' };
}

function mentionAfter(element: Y.XmlElement): DocMention | null {
  if (!element._item || element._item.deleted) return null;
  return asMention(element.getAttribute('kind'), element.getAttribute('id'), element.getAttribute('label'));
}

/** The identity the element had before the transaction, or null when it did not exist (or was not a valid mention) then. */
function keyBefore(element: Y.XmlElement, transaction: Y.Transaction): string | null {
  const item = element._item;
  if (!item || !existedBefore(item, transaction)) return null;
  const mention = asMention(attributeBefore(element, 'kind', transaction), attributeBefore(element, 'id', transaction), '');
  return mention ? mentionKey(mention) : null;
}

function attributeBefore(element: Y.XmlElement, key: string, transaction: Y.Transaction): unknown {
  // A map key's values form a chain through `left`; the newest is the one in `_map`.
  let item: Y.Item | null = element._map.get(key) ?? null;
  while (item && isNew(item, transaction)) item = item.left;
  if (!item || !existedBefore(item, transaction)) return undefined;
  return item.content.getContent().at(-1);
}

function existedBefore(item: Y.Item, transaction: Y.Transaction): boolean {
  return !isNew(item, transaction) && (!item.deleted || Y.isDeleted(transaction.deleteSet, item.id));
}

function countMentions(doc: Y.Doc): Map<string, number> {
  const counts = new Map<string, number>();
  const body = doc.share.get(DOC_BODY_FIELD);
  if (!(body instanceof Y.XmlFragment)) return counts;
  const walk = (parent: Y.XmlFragment) => {
    for (let item = parent._start; item !== null; item = item.right) {
      if (item.deleted || !(item.content instanceof Y.ContentType)) continue;
      const type = item.content.type;
      if (!(type instanceof Y.XmlElement)) continue;
      if (type.nodeName === MENTION_NODE) {
        const mention = mentionAfter(type);
        if (mention) bump(counts, mentionKey(mention), +1);
      } else {
        walk(type);
      }
    }
  };
  walk(body);
  return counts;
}

// ------------------------------------------------------------ struct walks

function isNew(item: Y.Item | Y.GC | Y.Skip, transaction: Y.Transaction): boolean {
  return item.id.clock >= (transaction.beforeState.get(item.id.client) ?? 0);
}

function structsOf(transaction: Y.Transaction, client: number): Struct[] | undefined {
  return transaction.doc.store.clients.get(client) as Struct[] | undefined;
}

/** Every struct the transaction created (local edits and integrated remote ones). */
function forEachNewStruct(transaction: Y.Transaction, visit: (struct: Struct) => void) {
  transaction.afterState.forEach((after, client) => {
    const before = transaction.beforeState.get(client) ?? 0;
    if (after <= before) return;
    const structs = structsOf(transaction, client);
    if (!structs) return;
    for (let i = Y.findIndexSS(structs as never, before); i < structs.length; i++) {
      const struct = structs[i]!;
      if (struct.id.clock >= after) break;
      visit(struct);
    }
  });
}

/** Every struct in the transaction's delete set, with how many of its units were deleted. Read-only: never splits a struct. */
function forEachDeletedStruct(transaction: Y.Transaction, visit: (struct: Struct, overlap: number) => void) {
  transaction.deleteSet.clients.forEach((ranges, client) => {
    const structs = structsOf(transaction, client);
    if (!structs) return;
    for (const { clock, len } of ranges) {
      for (let i = Y.findIndexSS(structs as never, clock); i < structs.length; i++) {
        const struct = structs[i]!;
        const start = struct.id.clock;
        if (start >= clock + len) break;
        const overlap = Math.min(start + struct.length, clock + len) - Math.max(start, clock);
        if (overlap > 0) visit(struct, overlap);
      }
    }
  });
}
