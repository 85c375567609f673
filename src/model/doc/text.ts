/**
 * Plain-text projections of a doc body: the `format=text` view and the
 * per-heading sections that feed search. Browser-safe.
 */
import type { Node as PMNode } from 'prosemirror-model';

/** Text of one inline node: a hard break is a newline, a mention `@label`, an image its alt text. */
export function inlineNodeText(child: PMNode): string {
  if (child.isText) return child.text ?? '';
  if (child.type.name === 'hardBreak') return '\n';
  if (child.type.name === 'mention') return `@${child.attrs.label ?? ''}`;
  if (child.type.name === 'image') return child.attrs.alt ?? '';
  return '';
}

/**
 * Text of one textblock (see inlineNodeText). Suggested insertions and
 * deletions are both plain text here; callers that want one reading resolve
 * them first (suggestions.ts).
 */
export function inlineText(block: PMNode): string {
  let text = '';
  block.forEach((child) => {
    text += inlineNodeText(child);
  });
  return text;
}

/**
 * Each textblock with text in `node` (table cells included), in document
 * order, with the position where its content starts (`contentStart` is
 * where `node`'s own content starts: 0 for a doc).
 */
function eachTextblock(node: PMNode, contentStart: number, visit: (block: PMNode, text: string, contentStart: number) => void): void {
  if (node.isTextblock) {
    const text = inlineText(node);
    if (text.trim() !== '') visit(node, text, contentStart);
    return;
  }
  node.forEach((child, offset) => eachTextblock(child, contentStart + offset + 1, visit));
}

function blockTexts(nodes: readonly PMNode[]): string[] {
  const out: string[] = [];
  for (const node of nodes) eachTextblock(node, 0, (_block, text) => out.push(text));
  return out;
}

/** Plain text of a doc: every non-empty textblock (table cells included), separated by a blank line. */
export function docToText(node: PMNode): string {
  return blockTexts([node]).join('\n\n');
}

/**
 * `docToText(doc)` with the doc position each of its characters comes from:
 * -1 for the blank line between blocks, and the node's own position for
 * every character of a mention, image or hard break. Lays what is read from
 * the text (who wrote which span) back onto the doc.
 */
export function docTextPositions(doc: PMNode): { text: string; positions: number[] } {
  let text = '';
  const positions: number[] = [];
  eachTextblock(doc, 0, (block, _text, start) => {
    if (text !== '') {
      text += '\n\n';
      positions.push(-1, -1);
    }
    block.forEach((child, offset) => {
      const piece = inlineNodeText(child);
      text += piece;
      for (let i = 0; i < piece.length; i++) positions.push(child.isText ? start + offset + i : start + offset);
    });
  });
  return { text, positions };
}

export interface DocSection {
  /** Heading text, or null for the content before the first heading. */
  heading: string | null;
  /** Heading level 1-6; 0 for the untitled leading section. */
  level: number;
  /** Plain text of the blocks under the heading, up to the next top-level heading of any level. */
  text: string;
  /** Position of the section in the list (0-based), stable while headings above it are unchanged. */
  index: number;
  /** Index of the section's first top-level block in the doc. */
  blockIndex: number;
}

/**
 * What one top-level block gives the sections: a heading starts one, any
 * other block adds the texts of its textblocks to the section it is in.
 * Kept per block by body-sections.ts, so a change reads only its blocks.
 */
export type SectionPart = { heading: string; level: number } | { texts: string[] };

/** A top-level block's part of the sections (headings nested in lists or quotes are content). */
export function sectionPart(block: PMNode): SectionPart {
  if (block.type.name === 'heading') return { heading: inlineText(block).replace(/\n/g, ' '), level: block.attrs.level };
  return { texts: blockTexts([block]) };
}

/**
 * Splits a doc at its top-level headings (headings nested in lists or quotes
 * are content). Leading content before any heading forms an untitled section
 * only when it has text.
 */
export function docSections(doc: PMNode): DocSection[] {
  const parts: SectionPart[] = [];
  doc.forEach((block) => parts.push(sectionPart(block)));
  return sectionsOfParts(parts);
}

/** `docSections` from the parts of the doc's top-level blocks, in order. */
export function sectionsOfParts(parts: readonly SectionPart[]): DocSection[] {
  const drafts: Array<{ heading: string | null; level: number; blockIndex: number; texts: string[] }> = [{ heading: null, level: 0, blockIndex: 0, texts: [] }];
  parts.forEach((part, i) => {
    if ('heading' in part) drafts.push({ heading: part.heading, level: part.level, blockIndex: i, texts: [] });
    else for (const text of part.texts) drafts[drafts.length - 1].texts.push(text);
  });
  return drafts
    .map((d) => ({ ...d, text: d.texts.join('\n\n') }))
    .filter((d) => d.heading !== null || d.text !== '')
    .map((d, index) => ({ heading: d.heading, level: d.level, text: d.text, index, blockIndex: d.blockIndex }));
}
