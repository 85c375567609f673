/**
 * A doc version, and two versions compared, drawn as the doc is shown
 * (doc-view.ts): headings, lists and formatting, not Markdown source. The
 * history panel loads this module when it first shows a doc.
 */
import { Decoration, DecorationSet } from 'prosemirror-view';
import type { Node as PMNode } from 'prosemirror-model';
import { docFromJSONLenient } from '../../../src/model/doc/json';
import { readOnlyDocView } from './doc-view';

/** A top-level block of either side of a comparison, in reading order. */
export interface ComparedBlock {
  node: unknown;
  change: 'same' | 'added' | 'removed';
  /** In a changed textblock, the stretch of its text that differs from the other side (character offsets). */
  differs?: [number, number];
}

export type ShownDoc = { destroy(): void };

/** A version's body (ProseMirror JSON, as `GET .../versions/{id}` answers it). */
export function showDocVersion(mount: HTMLElement, content: unknown): ShownDoc {
  const shown = readOnlyDocView(mount, 'The doc as it was');
  shown.show(docFromJSONLenient(content));
  return shown;
}

/** Both sides in one doc: removed blocks struck in red, added ones in green, the words that changed inside a block marked. */
export function showComparedDoc(mount: HTMLElement, blocks: ComparedBlock[]): ShownDoc {
  const shown = readOnlyDocView(mount, 'What changed');
  const doc = docFromJSONLenient({ type: 'doc', content: blocks.map((block) => block.node) });
  shown.show(doc, (drawn) => comparisonDecorations(drawn, blocks));
  return shown;
}

function comparisonDecorations(doc: PMNode, blocks: ComparedBlock[]): DecorationSet {
  const decorations: Decoration[] = [];
  // The lenient reader keeps one top-level node per block it can read; a block it drops would shift the rest, so match by count.
  if (doc.childCount !== blocks.length) return DecorationSet.empty;
  doc.forEach((node, pos, index) => {
    const block = blocks[index]!;
    if (block.change === 'same') return;
    decorations.push(Decoration.node(pos, pos + node.nodeSize, { class: `diff-block diff-${block.change}`, 'data-diff': block.change }));
    if (block.differs && node.isTextblock && block.differs[1] > block.differs[0]) {
      const [from, to] = block.differs;
      decorations.push(Decoration.inline(pos + 1 + from, pos + 1 + to, { class: `diff-words diff-words-${block.change}` }));
    }
  });
  return DecorationSet.create(doc, decorations);
}
