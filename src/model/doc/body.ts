/**
 * The body of a doc surface's Y document: the Y.XmlFragment `default`
 * (Tiptap's field name) holding ProseMirror content in `docSchema`.
 * This is the only module that touches that fragment; everything else reads
 * and writes ProseMirror nodes through it.
 *
 * A replace keeps every unchanged top-level block untouched and updates a
 * changed block in place with y-prosemirror's `updateYFragment` (the diff a
 * browser editor's sync plugin runs), so concurrent edits elsewhere in the
 * document survive a REST replace. New blocks use y-prosemirror's encoding too.
 */
import * as Y from 'yjs';
import { updateYFragment, yXmlFragmentToProsemirrorJSON } from 'y-prosemirror';
import type { Node as PMNode } from 'prosemirror-model';
import { docSchema } from './schema.js';
import { docFromJSONLenient, nodesFromJSONLenient } from './json.js';
import { matchSequences } from './block-diff.js';

export { extractMentions, diffMentions, mentionKey, type DocMention } from './mentions.js';
export { docSections, type DocSection } from './text.js';

/** Name of the body fragment, shared with Tiptap's Collaboration extension. */
export const DOC_BODY_FIELD = 'default';

/** The body fragment itself, for the modules beside this one that address positions in it (doc-anchors.ts). */
export function bodyFragment(ydoc: Y.Doc): Y.XmlFragment {
  return ydoc.getXmlFragment(DOC_BODY_FIELD);
}

// y-prosemirror's BindingMetadata; a fresh one means "no known mapping", so
// blocks are matched by content equality.
function emptyMeta() {
  return { mapping: new Map(), isOMark: new Map() };
}

/**
 * Reads the body as a doc node. An empty fragment reads as an empty doc.
 * Goes through JSON rather than yXmlFragmentToProseMirrorRootNode because the
 * latter deletes Y content it cannot build in our schema (a peer's unknown
 * mark, say); a server read must never edit the document.
 */
export function readDocBody(ydoc: Y.Doc): PMNode {
  return docFromJSONLenient(yXmlFragmentToProsemirrorJSON(bodyFragment(ydoc)));
}

/** The blocks a top-level Y child reads as, as `readDocBody` reads it (usually one; none for stray text, several for an unknown wrapper). */
export function blocksOfYChild(child: Y.XmlElement | Y.XmlText | Y.XmlHook): PMNode[] {
  if (!(child instanceof Y.XmlElement)) return [];
  // The helper reads `child` as a fragment: its own text children come back as
  // nested arrays of text nodes, which a node's content holds flat.
  const content = (yXmlFragmentToProsemirrorJSON(child).content as unknown[]).flat();
  return nodesFromJSONLenient({ type: child.nodeName, attrs: child.getAttributes(), content });
}

/** The block a top-level Y child holds, or null when it is not one block of our schema. */
function blockOfYChild(child: Y.XmlElement | Y.XmlText | Y.XmlHook): PMNode | null {
  const nodes = blocksOfYChild(child);
  return nodes.length === 1 ? nodes[0] : null;
}

/**
 * Edits one unmatched stretch of the body: old blocks in `[yFrom, yFrom + yCount)`
 * become `blocks`. Blocks are paired by position; a pair of the same type is
 * updated in place (y-prosemirror diffs it down to characters, so a peer's
 * concurrent typing in it merges), anything else is deleted or inserted.
 */
function replaceStretch(ydoc: Y.Doc, fragment: Y.XmlFragment, yFrom: number, yCount: number, blocks: readonly PMNode[]): void {
  const paired = Math.min(yCount, blocks.length);
  for (let k = 0; k < paired; k++) {
    const child = fragment.get(yFrom + k);
    if (child instanceof Y.XmlElement && child.nodeName === blocks[k].type.name) {
      // Its own transact joins the caller's, so observers see the caller's origin.
      updateYFragment(ydoc, child, blocks[k], emptyMeta());
    } else {
      fragment.delete(yFrom + k, 1);
      insertBlocks(ydoc, fragment, yFrom + k, [blocks[k]]);
    }
  }
  if (yCount > paired) fragment.delete(yFrom + paired, yCount - paired);
  if (blocks.length > paired) insertBlocks(ydoc, fragment, yFrom + paired, blocks.slice(paired));
}

/**
 * Makes the body equal to `node` (a `doc` node) in one transaction with
 * `origin`, changing only what differs: top-level blocks equal to a block in
 * the new body (longest common subsequence) are not touched at all, so a
 * peer's concurrent edit to one of them always survives; the stretches
 * between them are edited as in `replaceStretch`.
 */
export function replaceDocBody(ydoc: Y.Doc, node: PMNode, origin: unknown): void {
  if (node.type !== docSchema.topNodeType) throw new TypeError(`replaceDocBody expects a doc node, got ${node.type.name}`);
  const fragment = bodyFragment(ydoc);
  const oldBlocks = fragment.toArray().map(blockOfYChild);
  const newBlocks = node.content.content;
  const kept = matchSequences(oldBlocks, newBlocks, (old, next) => old !== null && old.eq(next));
  ydoc.transact(() => {
    // Walk the stretches between kept blocks; `shift` tracks how earlier edits moved Y indices.
    let shift = 0;
    let oldFrom = 0;
    let newFrom = 0;
    for (const [oldAt, newAt] of [...kept, [oldBlocks.length, newBlocks.length] as const]) {
      const yCount = oldAt - oldFrom;
      const stretch = newBlocks.slice(newFrom, newAt);
      if (yCount > 0 || stretch.length > 0) replaceStretch(ydoc, fragment, oldFrom + shift, yCount, stretch);
      shift += stretch.length - yCount;
      oldFrom = oldAt + 1;
      newFrom = newAt + 1;
    }
  }, origin);
}

/**
 * Inserts blocks at `index` in y-prosemirror's own encoding: an empty element
 * is inserted first and then filled by updateYFragment, which (unlike filling
 * a detached element) never reads a type before it belongs to the document.
 */
function insertBlocks(ydoc: Y.Doc, fragment: Y.XmlFragment, index: number, blocks: readonly PMNode[]): void {
  fragment.insert(index, blocks.map((block) => new Y.XmlElement(block.type.name)));
  blocks.forEach((block, k) => updateYFragment(ydoc, fragment.get(index + k) as Y.XmlElement, block, emptyMeta()));
}

/**
 * Appends blocks at the end of the body in one transaction with `origin`,
 * without touching existing blocks. Returns the number of blocks appended.
 */
export function appendBlocks(ydoc: Y.Doc, nodes: readonly PMNode[], origin: unknown): number {
  const blocks = nodes.filter((n) => n.isBlock);
  if (blocks.length !== nodes.length) throw new TypeError('appendBlocks expects block nodes');
  if (blocks.length === 0) return 0;
  const fragment = bodyFragment(ydoc);
  ydoc.transact(() => insertBlocks(ydoc, fragment, fragment.length, blocks), origin);
  return blocks.length;
}
