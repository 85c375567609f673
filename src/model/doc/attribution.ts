/**
 * Authorship of a doc body: its plain text (as `docToText` gives it, the
 * `format=text` read) cut into spans, each with the principal whose update
 * inserted it. The walk goes over the body's Y items in document order and
 * asks a lookup (src/model/attribution.ts) who made each item's id; it
 * knows nothing of where the lookup came from. Browser-safe.
 *
 * The text must equal `docToText(readDocBody(doc))` character for character,
 * so the walk follows the same path the read takes: y-prosemirror's
 * fragment-to-JSON, the lenient JSON reader (unknown node types unwrapped,
 * text that is not a string dropped, nesting past 128 cut), then
 * `docToText` (non-blank textblocks joined by a blank line, inline leaves
 * as `inlineNodeText` writes them).
 */
import * as Y from 'yjs';
import type { AttributionLookup, PrincipalKey } from '../attribution.js';
import { bodyFragment } from './body.js';
import { docSchema } from './schema.js';
import { inlineNodeText } from './text.js';

/** A stretch of the text and who wrote it; `known` false where the log holds no update with those items. */
export type AuthorSpan = { text: string; key: PrincipalKey; known: boolean };

/** Text whose characters are items `clock, clock + 1, ...` of `client`, or one item (`atomic`) standing for all of it. */
type Piece = { text: string; client: number; clock: number; atomic: boolean };

type Block = { id: Y.ID; pieces: Piece[] };

export type AuthorshipOptions = {
  /**
   * Open suggested insertions (text with the `suggestInsert` mark) are left
   * out unless `include`, as the text read leaves them out (the doc as if
   * they were rejected); suggested deletions stay, as they do there.
   */
  suggestions?: 'exclude' | 'include';
};

// The lenient reader's bound (json.ts): deeper nodes are not read.
const MAX_DEPTH = 128;
const SUGGEST_INSERT = 'suggestInsert';

/** y-prosemirror keeps overlapping marks of one type apart as `name--hash`. */
function markName(attribute: string): string {
  return /(.*)(--[a-zA-Z0-9+/=]{8})$/.exec(attribute)?.[1] ?? attribute;
}

function textPieces(text: Y.XmlText, out: Piece[], options: AuthorshipOptions): void {
  const marks = new Map<string, unknown>();
  for (let item = text._start; item !== null; item = item.right) {
    if (item.deleted) continue;
    const content = item.content;
    if (content instanceof Y.ContentFormat) {
      if (content.value === null) marks.delete(markName(content.key));
      else marks.set(markName(content.key), content.value);
    } else if (content instanceof Y.ContentString) {
      if (options.suggestions !== 'include' && marks.has(SUGGEST_INSERT)) continue;
      out.push({ text: content.str, client: item.id.client, clock: item.id.clock, atomic: false });
    }
    // Embeds and nested types are not text in the read either.
  }
}

/** The text an inline leaf (hard break, mention, image) reads as, by the read's own rule. */
function leafText(element: Y.XmlElement): string {
  try {
    return inlineNodeText(docSchema.nodes[element.nodeName]!.create(element.getAttributes()));
  } catch {
    return '';
  }
}

function visit(node: Y.XmlElement | Y.XmlText | Y.XmlHook, block: Block | null, blocks: Block[], depth: number, options: AuthorshipOptions): void {
  if (depth > MAX_DEPTH) return;
  if (node instanceof Y.XmlText) {
    // Text outside a textblock is not in the text read.
    if (block) textPieces(node, block.pieces, options);
    return;
  }
  if (!(node instanceof Y.XmlElement)) return;
  const type = docSchema.nodes[node.nodeName];
  const children = node.toArray();
  if (!type) {
    // An unknown wrapper's content stays where it is.
    for (const child of children) visit(child, block, blocks, depth + 1, options);
    return;
  }
  if (block) {
    // Inside a textblock only text and inline leaves read as text.
    if (type.isInline && type.isLeaf) {
      const text = leafText(node);
      if (text !== '') block.pieces.push({ text, client: node._item!.id.client, clock: node._item!.id.clock, atomic: true });
    }
    return;
  }
  if (type.isTextblock) {
    const own: Block = { id: node._item!.id, pieces: [] };
    for (const child of children) visit(child, own, blocks, depth + 1, options);
    blocks.push(own);
    return;
  }
  for (const child of children) visit(child, null, blocks, depth + 1, options);
}

/**
 * Spans covering the body's text in order, adjacent spans of one principal
 * merged. The blank line between two blocks goes to whoever made the block
 * after it (in an editor, the person who pressed Enter).
 */
export function docAuthorship(ydoc: Y.Doc, lookup: AttributionLookup, options: AuthorshipOptions = {}): AuthorSpan[] {
  const blocks: Block[] = [];
  for (const child of bodyFragment(ydoc).toArray()) visit(child, null, blocks, 1, options);
  const spans: AuthorSpan[] = [];
  const push = (text: string, key: PrincipalKey, known: boolean) => {
    if (text === '') return;
    const last = spans[spans.length - 1];
    if (last && last.key === key && last.known === known) last.text += text;
    else spans.push({ text, key, known });
  };
  let first = true;
  for (const block of blocks) {
    if (block.pieces.map((p) => p.text).join('').trim() === '') continue;
    if (!first) {
      const made = lookup(block.id.client, block.id.clock);
      push('\n\n', made.key, made.known);
    }
    first = false;
    for (const piece of block.pieces) {
      if (piece.atomic) {
        const made = lookup(piece.client, piece.clock);
        push(piece.text, made.key, made.known);
        continue;
      }
      // One item may hold the typing of several updates (Yjs merges adjacent items of one client).
      let at = 0;
      while (at < piece.text.length) {
        const made = lookup(piece.client, piece.clock + at);
        const upTo = Math.min(piece.text.length, made.end - piece.clock);
        push(piece.text.slice(at, upTo), made.key, made.known);
        at = upTo;
      }
    }
  }
  return spans;
}
