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
import {
  blockGone,
  DELETE,
  hasInline,
  hasSuggestions,
  INSERT,
  isSuggestionMarkName,
  markNameOfAttr,
  marksKeyOf,
  nodeOfYElement,
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
  forEachNewItem(transaction, (item) => {
    if (item.deleted) return;
    const content = item.content;
    if (content instanceof Y.ContentFormat) {
      if (isSuggestionMarkName(markNameOfAttr(content.key))) note(content.value);
    } else if (content instanceof Y.ContentString && item.parent instanceof Y.XmlText) {
      for (const value of suggestionValuesAt(item)) note(value);
    }
  });
  return [...found.values()];
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

/** A decoded update's delete set (Yjs does not export the type). */
type DeleteSet = ReturnType<typeof Y.decodeUpdate>['ds'];

const idKey = (id: Y.ID) => `${id.client}:${id.clock}`;

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

/** Every item of `doc` in the ranges of a delete set (read-only: never splits a struct). */
function forEachItemIn(doc: Y.Doc, ds: DeleteSet, visit: (item: Y.Item) => void): void {
  ds.clients.forEach((ranges, client) => {
    const structs = doc.store.clients.get(client);
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

/** The top-level blocks an update touches, by item id; null when it touches something outside the body. */
function touchedBlocks(after: Y.Doc, decoded: { structs: Array<Y.Item | Y.GC | Y.Skip>; ds: DeleteSet }): Set<string> | null {
  const body = bodyFragment(after);
  const touched = new Set<string>();
  let outside = false;
  const note = (item: Y.Item) => {
    const top = topLevelItem(item, body);
    if (top) touched.add(idKey(top.id));
    else outside = true;
  };
  for (const struct of decoded.structs) {
    if (!(struct instanceof Y.Item)) continue;
    const item = Y.getItem(after.store, struct.id);
    if (item instanceof Y.Item) note(item);
  }
  forEachItemIn(after, decoded.ds, note);
  return outside ? null : touched;
}

/**
 * The body's top-level blocks in order: the touched ones as nodes (null for
 * one the schema cannot read), the others as their item id, since they are
 * the same on both sides.
 */
function blockSequence(ydoc: Y.Doc, touched: ReadonlySet<string>): Array<string | { node: PMNode | null }> {
  const out: Array<string | { node: PMNode | null }> = [];
  for (let item = bodyFragment(ydoc)._start; item !== null; item = item.right) {
    if (item.deleted || !(item.content instanceof Y.ContentType)) continue;
    const key = idKey(item.id);
    out.push(touched.has(key) ? { node: nodeOfYElement(item.content.type as Y.XmlElement) } : key);
  }
  return out;
}

/** The rejected view of a block sequence, blocks with no text left out (`withoutEmptyBlocks`). */
function rejectedSequence(sequence: ReadonlyArray<string | { node: PMNode | null }>): Array<string | PMNode> {
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

function touchedBody(sequence: ReadonlyArray<string | { node: PMNode | null }>): PMNode {
  const nodes = sequence.flatMap((entry) => (typeof entry === 'string' || !entry.node ? [] : [entry.node]));
  return docSchema.topNodeType.create(null, Fragment.fromArray(nodes));
}

/**
 * `checkSuggestionOnlyChange` for one update from a sync connection limited
 * to suggesting, reading only the top-level blocks the update touches (the
 * others are the same before and after). `live` is not changed: the update is
 * applied to a copy. Also refuses an update that is not one, that builds on
 * or deletes content the server has not received, that touches anything
 * outside the body, or a block the schema cannot read.
 *
 * Conservative where the whole-body check is not: a block deleted and
 * written again elsewhere (Yjs has no move) is a change even if it crosses
 * only blocks the rejected view leaves out.
 */
export function checkSuggestionOnlyUpdate(live: Y.Doc, update: Uint8Array, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  let decoded: { structs: Array<Y.Item | Y.GC | Y.Skip>; ds: DeleteSet };
  try {
    decoded = Y.decodeUpdate(update);
  } catch {
    return 'not a Yjs update';
  }
  const after = new Y.Doc({ gc: false });
  try {
    Y.applyUpdate(after, Y.encodeStateAsUpdate(live));
    Y.applyUpdate(after, update);
    if (after.store.pendingStructs !== null || after.store.pendingDs !== null) {
      return 'the change builds on content the server has not received';
    }
    const touched = touchedBlocks(after, decoded);
    if (touched === null) return 'the change touches something outside the doc body';
    if (touched.size === 0) return null;
    const before = blockSequence(live, touched);
    const next = blockSequence(after, touched);
    if ([...before, ...next].some((entry) => typeof entry !== 'string' && entry.node === null)) {
      return 'the change touches a block this server cannot read';
    }
    if (!sameSequence(rejectedSequence(before), rejectedSequence(next))) return EDITS_TEXT;
    return signatureRefusal(touchedBody(before), touchedBody(next), author);
  } finally {
    after.destroy();
  }
}
