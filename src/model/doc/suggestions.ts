/**
 * Suggestions in a doc body (docs/SUGGESTIONS.md): proposed insertions and
 * deletions held in the body itself as the marks `suggestInsert` and
 * `suggestDelete` (schema.ts), so they sync live, work offline and survive
 * concurrent edits like any other text. This module is what the server and
 * the web app call: the readings and decisions (suggestion-rules.ts), the
 * writers (suggestion-writer.ts), and here the listing, what a transaction
 * suggested, and the check of a connection limited to suggesting.
 *
 * Browser-safe: Yjs and prosemirror-model only.
 */
import * as Y from 'yjs';
import { Fragment, type Node as PMNode } from 'prosemirror-model';
import { docSchema, SUGGESTION_MARKS, type SuggestionMarkName } from './schema.js';
import { bodyFragment, readDocBody } from './body.js';
import { inlineNodeText } from './text.js';
import { nodesFromJSONLenient } from './json.js';
import {
  blockGone,
  DELETE,
  hasInline,
  hasSuggestions,
  INSERT,
  isSuggestionMarkName,
  markNameOfAttr,
  marksKeyOf,
  REJECT_ALL,
  resolveNode,
  stampFromMarkAttrs,
  suggestionAttrsOfMarks,
  withSuggestionsRejected,
  type SuggestionAuthor,
  type SuggestionStamp,
} from './suggestion-rules.js';

export {
  decideDocSuggestion,
  hasSuggestions,
  stampFromMarkAttrs,
  suggestionMarkAttrs,
  withSuggestionDecided,
  withSuggestionsAccepted,
  withSuggestionsRejected,
  type SuggestionAuthor,
  type SuggestionMarkAttrs,
  type SuggestionStamp,
} from './suggestion-rules.js';
export { suggestDocAppend, suggestDocReplace } from './suggestion-writer.js';

export type DocSuggestionView = { id: string; author: SuggestionAuthor; at: string; inserted: string; removed: string; before: string; after: string };

/** Characters of context on each side in `docSuggestions`. */
const CONTEXT_CHARS = 80;

// ============================================================== listing

type ViewDraft = { stamp: SuggestionStamp; inserted: string[]; removed: string[]; start: number; end: number; last: Record<SuggestionMarkName, string> };

/** Up to `count` code points from the end (`fromEnd`) or the start of `text`. */
function clip(text: string, count: number, fromEnd: boolean): string {
  const points = Array.from(text);
  return (fromEnd ? points.slice(-count) : points.slice(0, count)).join('');
}

const SUMMARY_MAX = 500;

/** `+ inserted` and `− removed`, one per line, at most 500 characters: what a doc suggestion would change (lists, events, inbox). */
export function docSuggestionSummary(view: Pick<DocSuggestionView, 'inserted' | 'removed'>): string {
  const text = [view.inserted ? `+ ${view.inserted}` : '', view.removed ? `− ${view.removed}` : ''].filter(Boolean).join('\n');
  return text.length > SUMMARY_MAX ? `${text.slice(0, SUMMARY_MAX - 1)}…` : text;
}

/**
 * Open suggestions in document order, with up to 80 characters of plain text
 * before and after (the text as if suggestions were rejected; blocks are
 * separated by a newline). `inserted` and `removed` join the suggestion's
 * pieces: with a newline between blocks, ` … ` between pieces of one block.
 */
export function docSuggestions(body: PMNode): DocSuggestionView[] {
  if (!hasSuggestions(body)) return [];
  const drafts = new Map<string, ViewDraft>();
  let plain = '';
  let blockNumber = 0;
  const addPiece = (draft: ViewDraft, kind: SuggestionMarkName, text: string, where: string) => {
    const pieces = kind === INSERT ? draft.inserted : draft.removed;
    const previous = draft.last[kind];
    if (pieces.length > 0 && previous === where) pieces[pieces.length - 1] += text;
    else if (pieces.length > 0) pieces.push(`${previous.split(':')[0] === where.split(':')[0] ? ' … ' : '\n'}${text}`);
    else pieces.push(text);
  };
  body.descendants((block) => {
    if (!block.isTextblock) return true;
    blockNumber++;
    let blockStarted = false;
    const appendPlain = (text: string) => {
      if (text === '') return;
      if (!blockStarted && plain !== '') plain += '\n';
      blockStarted = true;
      plain += text;
    };
    block.forEach((child, _offset, index) => {
      if (!child.isText) {
        appendPlain(inlineNodeText(child));
        return;
      }
      const marks = suggestionAttrsOfMarks(child.marks);
      const kind = marks[INSERT] ? INSERT : marks[DELETE] ? DELETE : null;
      const stamp = kind ? stampFromMarkAttrs(marks[kind]) : null;
      const start = plain.length + (kind !== INSERT && !blockStarted && plain !== '' ? 1 : 0);
      if (kind !== INSERT) appendPlain(child.text ?? '');
      if (!kind || !stamp) return;
      let draft = drafts.get(stamp.id);
      if (!draft) {
        draft = { stamp, inserted: [], removed: [], start, end: plain.length, last: { suggestInsert: '', suggestDelete: '' } };
        drafts.set(stamp.id, draft);
      }
      // Pieces of one block join when they touch: the key says block and the index the next piece would have.
      addPiece(draft, kind, child.text ?? '', `${blockNumber}:${index}`);
      draft.last[kind] = `${blockNumber}:${index + 1}`;
      draft.start = Math.min(draft.start, start);
      draft.end = Math.max(draft.end, plain.length);
    });
    return false;
  });
  return [...drafts.values()].map((d) => ({
    id: d.stamp.id,
    author: d.stamp.author,
    at: d.stamp.at,
    inserted: d.inserted.join(''),
    removed: d.removed.join(''),
    before: clip(plain.slice(0, d.start), CONTEXT_CHARS, true),
    after: clip(plain.slice(d.end), CONTEXT_CHARS, false),
  }));
}

// ===================================================== the observer's view

/** Every item the transaction created (as in src/sync/doc-delta.ts, which the model may not import). */
function forEachNewItem(transaction: Y.Transaction, visit: (item: Y.Item) => void): void {
  transaction.afterState.forEach((after, client) => {
    const before = transaction.beforeState.get(client) ?? 0;
    if (after <= before) return;
    const structs = transaction.doc.store.clients.get(client);
    if (!structs) return;
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
      const struct = structs[i];
      if (struct.id.clock >= after) break;
      if (struct instanceof Y.Item) visit(struct);
    }
  });
}

/** The suggestion attribute values in effect at `item` in its Y.XmlText: the nearest live format item of each key to its left. */
function suggestionValuesAt(item: Y.Item): unknown[] {
  const seen = new Set<string>();
  const values: unknown[] = [];
  for (let n = item.left; n !== null && seen.size < SUGGESTION_MARKS.length; n = n.left) {
    if (n.deleted || !(n.content instanceof Y.ContentFormat)) continue;
    const name = markNameOfAttr(n.content.key);
    if (!isSuggestionMarkName(name) || seen.has(name)) continue;
    seen.add(name);
    if (n.content.value !== null) values.push(n.content.value);
  }
  return values;
}

/**
 * The stamps of suggestions this transaction marked (new ids, or ids
 * extended), for the observer, which records suggestion.created once per id.
 * Reads only the transaction's own items: a format item that sets a
 * suggestion attribute, or new text inside such a range (a person typing in
 * suggesting mode extends their range without a new format item). The
 * second costs a walk to the nearest format item on the left. Call it in
 * `afterTransaction`, before Yjs merges and garbage-collects the structs.
 */
export function suggestionStampsIn(transaction: Y.Transaction): SuggestionStamp[] {
  const found = new Map<string, SuggestionStamp>();
  const note = (value: unknown) => {
    const stamp = stampFromMarkAttrs(value);
    if (stamp && !found.has(stamp.id)) found.set(stamp.id, stamp);
  };
  // Text typed where no suggestion range can be: the walk to the left would visit the whole paragraph for nothing.
  const inRanges = mayHoldSuggestionFormats(transaction.doc);
  forEachNewItem(transaction, (item) => {
    if (item.deleted) return;
    const content = item.content;
    if (content instanceof Y.ContentFormat) {
      if (isSuggestionMarkName(markNameOfAttr(content.key))) note(content.value);
    } else if (inRanges && content instanceof Y.ContentString && item.parent instanceof Y.XmlText) {
      for (const value of suggestionValuesAt(item)) note(value);
    }
  });
  return [...found.values()];
}

/**
 * Per document state (its struct store, which a recovery swaps for a rebuilt
 * one): how far each client's structs were searched for a suggestion format
 * item, and whether one was found.
 */
const formatSearches = new WeakMap<object, { searched: Map<number, number>; found: boolean }>();

/**
 * Whether the document holds (or ever held, since this was first asked) a
 * format item that sets a suggestion attribute. Without one, no text is
 * inside a suggestion range. Searches only the structs added since it last
 * asked, whatever their origin (a load, a relayed update), so a typist pays
 * for their own keystrokes, not for the paragraph.
 */
function mayHoldSuggestionFormats(doc: Y.Doc): boolean {
  let search = formatSearches.get(doc.store);
  if (!search) formatSearches.set(doc.store, (search = { searched: new Map(), found: false }));
  if (search.found) return true;
  for (const [client, structs] of doc.store.clients) {
    const last = structs[structs.length - 1];
    if (!last) continue;
    const from = search.searched.get(client) ?? 0;
    const end = last.id.clock + last.length;
    if (end <= from) continue;
    for (let i = from === 0 ? 0 : Y.findIndexSS(structs, from); i < structs.length; i++) {
      const struct = structs[i];
      if (struct instanceof Y.Item && struct.content instanceof Y.ContentFormat && isSuggestionMarkName(markNameOfAttr(struct.content.key))) {
        search.found = true;
        return true;
      }
    }
    search.searched.set(client, end);
  }
  return false;
}

// ============================================== suggest-only connections

/**
 * The body as the suggest-only check compares it: blocks with no inline content
 * (an empty paragraph, list item, quote or cell) left out. A suggesting editor
 * adds them (Enter) before the first suggested character is typed into them,
 * and a block filled only with suggested text reads as absent once
 * suggestions are rejected, so they are not a change of text either way.
 */
function withoutEmptyBlocks(node: PMNode): PMNode {
  if (node.isTextblock || node.isLeaf) return node;
  const out: PMNode[] = [];
  node.forEach((child) => {
    if (!child.isLeaf && !hasInline(child)) return;
    out.push(withoutEmptyBlocks(child));
  });
  return node.copy(Fragment.fromArray(out));
}

/** What a suggestion consists of: its marked text as runs of one formatting each (so another edit splitting a run does not count), and its marks' attrs. */
type Signature = { authors: Set<string>; inserted: Array<[string, string]>; removed: Array<[string, string]>; attrs: Set<string> };

function authorKey(attrs: Record<string, unknown>): string {
  return `${String(attrs.authorType)}:${String(attrs.authorId)}`;
}

function signatures(body: PMNode): Map<string, Signature> {
  const out = new Map<string, Signature>();
  body.descendants((node) => {
    if (!node.isText) return true;
    const marks = suggestionAttrsOfMarks(node.marks);
    for (const kind of SUGGESTION_MARKS) {
      const attrs = marks[kind];
      if (!attrs) continue;
      const id = String(attrs.id);
      let sig = out.get(id);
      if (!sig) out.set(id, (sig = { authors: new Set(), inserted: [], removed: [], attrs: new Set() }));
      sig.authors.add(authorKey(attrs));
      sig.attrs.add(JSON.stringify(attrs));
      const runs = kind === INSERT ? sig.inserted : sig.removed;
      const key = marksKeyOf(node.marks);
      const last = runs[runs.length - 1];
      if (last && last[0] === key) last[1] += node.text;
      else runs.push([key, node.text ?? '']);
    }
    return false;
  });
  return out;
}

function sameSignature(a: Signature | undefined, b: Signature | undefined): boolean {
  if (!a || !b) return a === b;
  const same = (x: Array<[string, string]>, y: Array<[string, string]>) => x.length === y.length && x.every(([key, text], i) => y[i][0] === key && y[i][1] === text);
  return same(a.inserted, b.inserted) && same(a.removed, b.removed) && a.attrs.size === b.attrs.size && [...a.attrs].every((x) => b.attrs.has(x));
}

/**
 * For a sync connection limited to suggesting: null when the change from
 * `before` to `after` only adds, extends or withdraws suggestions of
 * `author` (the body with all suggestions rejected is unchanged, blocks
 * with no text aside (`withoutEmptyBlocks`); every other author's suggestions are unchanged; every
 * new suggestion mark names `author`), else a short reason. Reads both
 * bodies whole: it is meant for the few connections that are limited.
 */
export function checkSuggestionOnlyChange(before: Y.Doc, after: Y.Doc, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  const oldBody = readDocBody(before);
  const newBody = readDocBody(after);
  if (!withoutEmptyBlocks(withSuggestionsRejected(oldBody)).eq(withoutEmptyBlocks(withSuggestionsRejected(newBody)))) {
    return EDITS_TEXT;
  }
  return signatureRefusal(oldBody, newBody, author);
}

const EDITS_TEXT = 'the change edits the document itself; only suggestions may be added or withdrawn';

function signatureRefusal(oldBody: PMNode, newBody: PMNode, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  const own = `${author.principalType}:${author.id}`;
  const oldSigs = signatures(oldBody);
  const newSigs = signatures(newBody);
  for (const id of new Set([...oldSigs.keys(), ...newSigs.keys()])) {
    const was = oldSigs.get(id);
    const is = newSigs.get(id);
    const onlyOwn = [...(was?.authors ?? []), ...(is?.authors ?? [])].every((a) => a === own);
    if (onlyOwn || sameSignature(was, is)) continue;
    return was ? 'the change alters a suggestion by someone else' : 'a new suggestion must name the connection\'s own principal as its author';
  }
  return null;
}

// ------------------------------------------------------ by the update alone

const idKey = (id: Y.ID) => `${id.client}:${id.clock}`;

/** Which items a reading sees: the document before a transaction, or as it is. */
type Visible = (item: Y.Item) => boolean;

const visibleNow: Visible = (item) => !item.deleted;

/** The document before `transaction`, read inside its `afterTransaction` (the content it deleted is still there). */
function visibleBefore(transaction: Y.Transaction): Visible {
  return (item) =>
    item.id.clock < (transaction.beforeState.get(item.id.client) ?? 0) && (!item.deleted || Y.isDeleted(transaction.deleteSet, item.id));
}

function sameAttributes(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** A Y.XmlText's runs as `visible` sees them (Y.Text#toDelta, for one reading). */
function runsOf(text: Y.XmlText, visible: Visible): TextRunLike[] {
  const runs: TextRunLike[] = [];
  const attributes: Record<string, unknown> = {};
  for (let item = text._start; item !== null; item = item.right) {
    if (!visible(item)) continue;
    const content = item.content;
    if (content instanceof Y.ContentFormat) {
      if (content.value === null) delete attributes[content.key];
      else attributes[content.key] = content.value;
    } else if (content instanceof Y.ContentString && content.str !== '') {
      const last = runs[runs.length - 1];
      if (last && sameAttributes(last.attributes, attributes)) last.insert += content.str;
      else runs.push({ insert: content.str, attributes: { ...attributes } });
    }
  }
  return runs;
}

type TextRunLike = { insert: string; attributes: Record<string, unknown> };

/** A map attribute as `visible` sees it: the newest visible value of its chain. */
function attributesOf(element: Y.XmlElement, visible: Visible): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  element._map.forEach((newest, key) => {
    let item: Y.Item | null = newest;
    while (item !== null && !visible(item)) item = item.left;
    if (item !== null) out[key] = item.content.getContent().at(-1);
  });
  return out;
}

function childrenOf(parent: Y.XmlElement | Y.XmlFragment, visible: Visible): YChildLike[] {
  const out: YChildLike[] = [];
  for (let item = parent._start; item !== null; item = item.right) {
    if (visible(item) && item.content instanceof Y.ContentType) out.push(item.content.type as YChildLike);
  }
  return out;
}

type YChildLike = Y.XmlElement | Y.XmlText | Y.XmlHook;

/** ProseMirror JSON of a Y child as `visible` sees it, as y-prosemirror's yXmlFragmentToProsemirrorJSON writes it. */
function jsonOf(child: YChildLike, visible: Visible): unknown[] {
  if (child instanceof Y.XmlText) {
    return runsOf(child, visible).map((run) => ({
      type: 'text',
      text: run.insert,
      marks: Object.entries(run.attributes).map(([key, attrs]) => ({ type: markNameOfAttr(key), attrs })),
    }));
  }
  if (child instanceof Y.XmlElement) {
    return [{ type: child.nodeName, attrs: attributesOf(child, visible), content: childrenOf(child, visible).flatMap((c) => jsonOf(c, visible)) }];
  }
  return [];
}

function blockAt(element: Y.XmlElement, visible: Visible): PMNode | null {
  const [json] = jsonOf(element, visible);
  const nodes = nodesFromJSONLenient(json);
  return nodes.length === 1 ? nodes[0] : null;
}

/** The top-level block item `item` belongs to, or null when it is not in the body. */
function topLevelItem(item: Y.Item, body: Y.XmlFragment): Y.Item | null {
  let current = item;
  for (;;) {
    const parent = current.parent;
    if (parent === body) return current;
    if (!(parent instanceof Y.AbstractType) || parent._item === null) return null;
    current = parent._item;
  }
}

/** The items a transaction created and the ones it deleted (read-only: never splits a struct). */
function forEachItemOf(transaction: Y.Transaction, visit: (item: Y.Item) => void): void {
  forEachNewItem(transaction, visit);
  transaction.deleteSet.clients.forEach((ranges, client) => {
    const structs = transaction.doc.store.clients.get(client);
    if (!structs) return;
    for (const { clock, len } of ranges) {
      for (let i = Y.findIndexSS(structs, clock); i < structs.length; i++) {
        const struct = structs[i];
        if (struct.id.clock >= clock + len) break;
        if (struct instanceof Y.Item) visit(struct);
      }
    }
  });
}

/** The top-level blocks a transaction touched, by item id; null when it touched something outside the body. */
function touchedBlocks(transaction: Y.Transaction): Set<string> | null {
  const body = bodyFragment(transaction.doc);
  const touched = new Set<string>();
  let outside = false;
  forEachItemOf(transaction, (item) => {
    const top = topLevelItem(item, body);
    if (top) touched.add(idKey(top.id));
    else outside = true;
  });
  return outside ? null : touched;
}

type SequenceEntry = string | { node: PMNode | null };

/**
 * The body's top-level blocks in order, as `visible` sees them: the touched
 * ones as nodes (null for one the schema cannot read), the others as their
 * item id, since they are the same on both sides.
 */
function blockSequence(ydoc: Y.Doc, touched: ReadonlySet<string>, visible: Visible): SequenceEntry[] {
  const out: SequenceEntry[] = [];
  for (let item = bodyFragment(ydoc)._start; item !== null; item = item.right) {
    if (!visible(item) || !(item.content instanceof Y.ContentType)) continue;
    const key = idKey(item.id);
    const type = item.content.type;
    out.push(touched.has(key) ? { node: type instanceof Y.XmlElement ? blockAt(type, visible) : null } : key);
  }
  return out;
}

/** The rejected view of a block sequence, blocks with no text left out (`withoutEmptyBlocks`). */
function rejectedSequence(sequence: readonly SequenceEntry[]): Array<string | PMNode> {
  const out: Array<string | PMNode> = [];
  for (const entry of sequence) {
    if (typeof entry === 'string') {
      out.push(entry);
      continue;
    }
    const node = entry.node!;
    if (blockGone(node, REJECT_ALL)) continue;
    const resolved = resolveNode(node, REJECT_ALL);
    if (!resolved.isLeaf && !hasInline(resolved)) continue;
    out.push(withoutEmptyBlocks(resolved));
  }
  return out;
}

function sameSequence(a: ReadonlyArray<string | PMNode>, b: ReadonlyArray<string | PMNode>): boolean {
  return a.length === b.length && a.every((x, i) => (typeof x === 'string' ? x === b[i] : typeof b[i] !== 'string' && x.eq(b[i] as PMNode)));
}

function touchedBody(sequence: readonly SequenceEntry[]): PMNode {
  const nodes = sequence.flatMap((entry) => (typeof entry === 'string' || !entry.node ? [] : [entry.node]));
  return docSchema.topNodeType.create(null, Fragment.fromArray(nodes));
}

/** Judges the transaction that applied an update to a shadow copy, from inside its `afterTransaction`. */
function judgeTransaction(transaction: Y.Transaction, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  const touched = touchedBlocks(transaction);
  if (touched === null) return 'the change touches something outside the doc body';
  if (touched.size === 0) return null;
  const before = blockSequence(transaction.doc, touched, visibleBefore(transaction));
  const after = blockSequence(transaction.doc, touched, visibleNow);
  if ([...before, ...after].some((entry) => typeof entry !== 'string' && entry.node === null)) {
    return 'the change touches a block this server cannot read';
  }
  if (!sameSequence(rejectedSequence(before), rejectedSequence(after))) return EDITS_TEXT;
  return signatureRefusal(touchedBody(before), touchedBody(after), author);
}

/**
 * A copy of a live document kept in step with it by its `update` events, so
 * an update can be tried on it before it reaches the live document without
 * copying the document each time. It may run ahead of the live document by
 * updates that passed and are on their way there (the live document's own
 * `update` for them is then a no-op here); one an update was refused on is
 * dropped (it holds what the live document never will), and so is one whose
 * live document is destroyed.
 */
const shadows = new WeakMap<Y.Doc, { doc: Y.Doc; detach: () => void }>();

function shadowOf(live: Y.Doc): Y.Doc {
  const known = shadows.get(live);
  if (known) return known.doc;
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(live));
  const follow = (update: Uint8Array) => Y.applyUpdate(doc, update);
  const detach = () => {
    live.off('update', follow);
    live.off('destroy', detach);
    shadows.delete(live);
    doc.destroy();
  };
  live.on('update', follow);
  live.on('destroy', detach);
  shadows.set(live, { doc, detach });
  return doc;
}

/** The origin of the transaction that tries an update on the shadow copy. */
const CHECK_ORIGIN = Symbol('suggestion check');

/**
 * `checkSuggestionOnlyChange` for one update from a sync connection limited
 * to suggesting, in proportion to the update: it is tried on a copy kept in
 * step with `live` (made once per document, `shadowOf`), and only the
 * top-level blocks the update touches are read, before and after it, from
 * that transaction (the other blocks are the same on both sides). `live` is
 * not changed. Also refuses an update that is not one, that builds on or
 * deletes content the server has not received, that touches anything outside
 * the body, or a block the schema cannot read.
 *
 * Conservative where the whole-body check is not: a block deleted and
 * written again elsewhere (Yjs has no move) is a change even if it crosses
 * only blocks the rejected view leaves out.
 */
export function checkSuggestionOnlyUpdate(live: Y.Doc, update: Uint8Array, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  try {
    Y.decodeUpdate(update);
  } catch {
    return 'not a Yjs update';
  }
  const shadow = shadowOf(live);
  let refusal: string | null = null;
  const judge = (transaction: Y.Transaction) => {
    if (transaction.origin === CHECK_ORIGIN) refusal = judgeTransaction(transaction, author);
  };
  shadow.on('afterTransaction', judge);
  try {
    Y.applyUpdate(shadow, update, CHECK_ORIGIN);
    if (shadow.store.pendingStructs !== null || shadow.store.pendingDs !== null) {
      refusal = 'the change builds on content the server has not received';
    }
  } catch {
    refusal = 'not a Yjs update';
  } finally {
    shadow.off('afterTransaction', judge);
  }
  if (refusal !== null) shadows.get(live)?.detach();
  return refusal;
}
