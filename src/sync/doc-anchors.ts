/**
 * Anchors of doc-range comments: a range of the doc body stored as Yjs
 * relative positions in the body fragment of that surface's document, so it
 * follows every concurrent edit (text typed before it moves it, text typed
 * inside it grows it, words typed over it replace it) instead of pointing at
 * fixed offsets.
 *
 * The API speaks ProseMirror positions of the body exactly as `GET /doc`
 * returns it (`readDocBody`). y-prosemirror's own converters need the
 * type-to-node mapping of a live editor binding; the server has none, so
 * this module walks the Y tree with the same sizes the reader produces: a
 * text run counts its UTF-16 units, a leaf node (image, mention, hard break)
 * one, any other known node its content plus its two tags, and a node the
 * schema does not know nothing of its own (the lenient reader unwraps it).
 *
 * Each side also keeps a block-level position (the top-level block it sits
 * in), used when the text-level one no longer resolves: deleting a whole
 * block garbage-collects the characters inside it, but the block's own item
 * stays in the body, so the anchor collapses to where that block was.
 */
import type { Node as PMNode } from 'prosemirror-model';
import * as Y from 'yjs';
import { docSchema } from '../model/doc/schema.js';
import { bodyFragment, readDocBody } from '../model/doc/body.js';

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook;
type YParent = Y.XmlFragment | Y.XmlElement;
type YLocation = { type: Y.AbstractType<any>; index: number };

/** What is stored for a doc-range anchor (JSON, base64 of `Y.encodeRelativePosition`). */
export type StoredDocAnchor = { start: string; end: string; startBlock: string; endBlock: string };

/** The range as it reads now: positions in the current body and the text between them. */
export type ResolvedDocRange = { from: number; to: number; text: string };

export class DocAnchorError extends Error {
  constructor(
    readonly code: 'out_of_range' | 'inverted',
    message: string,
  ) {
    super(message);
    this.name = 'DocAnchorError';
  }
}

// Both sides stick to the character after them. Text typed just before the range stays outside
// it; text typed at its end, or replacing its words (a deleted character's position is where it
// was, and new text goes after it), falls inside, so a changed word reads as what replaced it.
const START_ASSOC = 0;
const END_ASSOC = 0;
// The block fallback of the end sticks to its block, so it stays after that block.
const END_BLOCK_ASSOC = -1;

/**
 * Anchors `[from, to]` (ProseMirror positions of the current body) and
 * returns what to store with the text it spans now. Throws DocAnchorError
 * for positions outside the body or `from > to`.
 */
export function anchorDocRange(ydoc: Y.Doc, from: number, to: number): { stored: StoredDocAnchor; text: string } {
  const fragment = bodyFragment(ydoc);
  const body = currentBody(ydoc);
  const size = body.content.size;
  if (from > to) throw new DocAnchorError('inverted', `from (${from}) is after to (${to}).`);
  if (from < 0 || to > size) throw new DocAnchorError('out_of_range', `The range ${from}..${to} is outside the doc body (0..${size}).`);
  const start = fragment.length === 0 ? { type: fragment, index: 0 } : locate(fragment, from);
  const end = fragment.length === 0 ? { type: fragment, index: 0 } : locate(fragment, to);
  if (!start || !end) throw new DocAnchorError('out_of_range', `The range ${from}..${to} does not fall inside the doc body.`);
  const stored: StoredDocAnchor = {
    start: encode(Y.createRelativePositionFromTypeIndex(start.type, start.index, START_ASSOC)),
    end: encode(Y.createRelativePositionFromTypeIndex(end.type, end.index, END_ASSOC)),
    startBlock: encode(Y.createRelativePositionFromTypeIndex(fragment, blockIndexAt(fragment, from, 'start'), START_ASSOC)),
    endBlock: encode(Y.createRelativePositionFromTypeIndex(fragment, blockIndexAt(fragment, to, 'end'), END_BLOCK_ASSOC)),
  };
  return { stored, text: rangeText(body, from, to) };
}

/**
 * Where stored anchors point in the current body, and the text there; null
 * for one of which nothing resolves. The body is read once for all of them.
 */
export function resolveDocAnchors(ydoc: Y.Doc, anchors: readonly StoredDocAnchor[]): Array<ResolvedDocRange | null> {
  const fragment = bodyFragment(ydoc);
  const body = currentBody(ydoc);
  const size = body.content.size;
  const sizes = new Sizes();
  return anchors.map((stored) => {
    const from = resolveSide(ydoc, fragment, sizes, stored.start, stored.startBlock);
    const to = resolveSide(ydoc, fragment, sizes, stored.end, stored.endBlock);
    if (from === null || to === null) return null;
    const start = Math.min(Math.max(from, 0), size);
    // A collapsed range with text typed into it would otherwise end before it starts.
    const end = Math.min(Math.max(to, start), size);
    return { from: start, to: end, text: rangeText(body, start, end) };
  });
}

export function resolveDocAnchor(ydoc: Y.Doc, stored: StoredDocAnchor): ResolvedDocRange | null {
  return resolveDocAnchors(ydoc, [stored])[0]!;
}

const bodies = new WeakMap<Y.Doc, { body: PMNode | null }>();

/**
 * The body as `GET /doc` reads it, kept until the document next changes:
 * building it is the costly part of anchoring and resolving, and pages of
 * comments are read far more often than the document is edited.
 */
function currentBody(ydoc: Y.Doc): PMNode {
  let cached = bodies.get(ydoc);
  if (!cached) {
    const entry: { body: PMNode | null } = { body: null };
    ydoc.on('afterTransaction', (transaction: Y.Transaction) => {
      if (transaction.changed.size > 0 || transaction.deleteSet.clients.size > 0) entry.body = null;
    });
    bodies.set(ydoc, (cached = entry));
  }
  return (cached.body ??= readDocBody(ydoc));
}

/**
 * Whether the text under an anchor differs from its snapshot. Whitespace is
 * not compared: clients join blocks with nothing, a space or a newline, and
 * a reflowed paragraph still holds the same words.
 */
export function anchorTextDrifted(expected: string, current: string): boolean {
  const words = (s: string) => s.replace(/\s+/gu, '');
  return words(expected) !== words(current);
}

/** The text of a body range: blocks on their own lines, mentions as `@label`, images as their alt text. */
export function rangeText(body: PMNode, from: number, to: number): string {
  return body.textBetween(from, to, '\n', leafText);
}

function leafText(node: PMNode): string {
  switch (node.type.name) {
    case 'hardBreak':
      return '\n';
    case 'mention':
      return `@${node.attrs.label ?? ''}`;
    case 'image':
      return node.attrs.alt ?? '';
    default:
      return '';
  }
}

// ------------------------------------------------------------------ sizes

function nodeTypeOf(element: Y.XmlElement) {
  return docSchema.nodes[element.nodeName] as (typeof docSchema.nodes)[string] | undefined;
}

/**
 * How many ProseMirror positions a Y child takes in the body the reader
 * builds, each element measured once per document read (resolving many
 * anchors would otherwise re-measure the same blocks for each).
 */
class Sizes {
  private readonly known = new Map<Y.XmlElement, number>();

  of(child: YChild): number {
    if (child instanceof Y.XmlText) return child.length;
    if (!(child instanceof Y.XmlElement)) return 0;
    let size = this.known.get(child);
    if (size === undefined) {
      const type = nodeTypeOf(child);
      const inner = type?.isLeaf ? 0 : child.toArray().reduce((sum, grandchild) => sum + this.of(grandchild as YChild), 0);
      size = type?.isLeaf ? 1 : type ? inner + 2 : inner;
      this.known.set(child, size);
    }
    return size;
  }

  private readonly offsets = new Map<YParent, { children: YChild[]; before: Map<YChild, number>; total: number[] }>();

  /** Where each child of a parent starts, relative to the parent's content, worked out once per parent. */
  private offsetsOf(parent: YParent) {
    let known = this.offsets.get(parent);
    if (!known) {
      const children = parent.toArray() as YChild[];
      const before = new Map<YChild, number>();
      const total = [0];
      children.forEach((child, i) => {
        before.set(child, total[i]!);
        total.push(total[i]! + this.of(child));
      });
      known = { children, before, total };
      this.offsets.set(parent, known);
    }
    return known;
  }

  /** The positions taken by the first `count` children of a parent. */
  ofFirst(parent: YParent, count: number): number {
    const { total } = this.offsetsOf(parent);
    return total[Math.min(count, total.length - 1)]!;
  }

  /** The positions taken by the children before `child` in its parent. */
  before(parent: YParent, child: YChild): number {
    return this.offsetsOf(parent).before.get(child) ?? 0;
  }
}

/** Whether an element's content starts after an opening tag (known, non-leaf) or in place (unknown wrapper). */
function opensTag(child: YChild): boolean {
  if (!(child instanceof Y.XmlElement)) return false;
  const type = nodeTypeOf(child);
  return Boolean(type && !type.isLeaf);
}

// ------------------------------------------------------------------ ProseMirror position -> Y

/**
 * The Y location of a ProseMirror position counted from the start of
 * `parent`'s content. Inside text the location is in the text run, so it
 * follows character edits; between blocks it is an index of the parent.
 */
function locate(parent: YParent, pos: number, sizes = new Sizes()): YLocation | null {
  let index = 0;
  for (const child of parent.toArray() as YChild[]) {
    if (child instanceof Y.XmlText) {
      if (pos <= child.length) return { type: child, index: pos };
      pos -= child.length;
    } else {
      if (pos === 0) return { type: parent, index };
      const size = sizes.of(child);
      if (pos < size && child instanceof Y.XmlElement) {
        if (opensTag(child)) return locate(child, pos - 1, sizes);
        if (!nodeTypeOf(child)) return locate(child, pos, sizes);
      }
      pos -= size;
    }
    index++;
  }
  return pos === 0 ? { type: parent, index } : null;
}

/** The index of the top-level block a position falls in (`start`) or ends (`end`, as the index after it). */
function blockIndexAt(fragment: Y.XmlFragment, pos: number, side: 'start' | 'end'): number {
  let offset = 0;
  const sizes = new Sizes();
  const children = fragment.toArray() as YChild[];
  for (let i = 0; i < children.length; i++) {
    const size = sizes.of(children[i]!);
    if (side === 'start' ? pos < offset + size : pos <= offset + size) return side === 'start' ? i : i + 1;
    offset += size;
  }
  return children.length;
}

// ------------------------------------------------------------------ Y -> ProseMirror position

function resolveSide(ydoc: Y.Doc, fragment: Y.XmlFragment, sizes: Sizes, encoded: string, encodedBlock: string): number | null {
  const precise = Y.createAbsolutePositionFromRelativePosition(decode(encoded), ydoc);
  if (precise && isLiveIn(precise.type, fragment)) return positionOf(fragment, sizes, precise.type, precise.index);
  const block = Y.createAbsolutePositionFromRelativePosition(decode(encodedBlock), ydoc);
  if (block && block.type === fragment) return positionOf(fragment, sizes, fragment, block.index);
  return null;
}

/** The type is the body itself or inside it, and neither it nor an ancestor was deleted. */
function isLiveIn(type: Y.AbstractType<any>, fragment: Y.XmlFragment): boolean {
  let current: Y.AbstractType<any> = type;
  while (current !== fragment) {
    const item = current._item;
    if (!item || item.deleted) return false;
    current = item.parent as Y.AbstractType<any>;
  }
  return true;
}

/** The ProseMirror position of `index` inside `type`, counted from the start of the body. */
function positionOf(fragment: Y.XmlFragment, sizes: Sizes, type: Y.AbstractType<any>, index: number): number {
  let pos = type instanceof Y.XmlText ? index : sizes.ofFirst(type as YParent, index);
  let current = type;
  while (current !== fragment) {
    if (opensTag(current as YChild)) pos += 1;
    const parent = current._item!.parent as YParent;
    pos += sizes.before(parent, current as YChild);
    current = parent;
  }
  return pos;
}

/**
 * The body positions of relative positions a live editor shares (the
 * `cursor` of y-prosemirror's awareness state), in the same positions
 * `GET /doc` and comment anchors use; null for one that does not resolve
 * inside the body (yet, or any more).
 */
export function bodyPositionsOf(ydoc: Y.Doc, positions: readonly Y.RelativePosition[]): Array<number | null> {
  const fragment = bodyFragment(ydoc);
  const size = currentBody(ydoc).content.size;
  const sizes = new Sizes();
  return positions.map((relative) => {
    let absolute: Y.AbsolutePosition | null;
    try {
      absolute = Y.createAbsolutePositionFromRelativePosition(relative, ydoc);
    } catch {
      return null; // a client's malformed position
    }
    if (!absolute || !isLiveIn(absolute.type, fragment)) return null;
    return Math.min(Math.max(positionOf(fragment, sizes, absolute.type, absolute.index), 0), size);
  });
}

// ------------------------------------------------------------------ encoding

function encode(position: Y.RelativePosition): string {
  return Buffer.from(Y.encodeRelativePosition(position)).toString('base64');
}

function decode(encoded: string): Y.RelativePosition {
  return Y.decodeRelativePosition(new Uint8Array(Buffer.from(encoded, 'base64')));
}
