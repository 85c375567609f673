/**
 * Three-way merge of doc bodies by top-level block, for writes that name
 * the version they were based on (docs/VERSIONS.md, "Writes with a base").
 * Blocks are compared by their JSON; the merge itself is
 * `mergeSequences` (./sequence-merge.ts). Browser-safe.
 */
import type { Node as PMNode } from 'prosemirror-model';
import { docSchema } from './schema.js';
import { mergeSequences, type MergeConflict } from './sequence-merge.js';

export type BlockConflict = MergeConflict<PMNode>;

const keyOf = (block: PMNode) => JSON.stringify(block.toJSON());

/** What `yours` changed relative to `base`, applied to `theirs`; where both changed the same blocks, theirs is kept and reported. */
export function mergeDocBodies(base: PMNode, yours: PMNode, theirs: PMNode): { doc: PMNode; conflicts: BlockConflict[] } {
  const { merged, conflicts } = mergeSequences(blocksOf(base), blocksOf(yours), blocksOf(theirs), keyOf);
  const doc = merged.length > 0 ? docSchema.topNodeType.create(null, merged) : docSchema.topNodeType.createAndFill()!;
  return { doc, conflicts };
}

/** The blocks of a body; an empty body (one empty paragraph) has none, so inserting into it is not a change of that paragraph. */
function blocksOf(doc: PMNode): PMNode[] {
  if (doc.childCount === 1 && doc.firstChild!.type.name === 'paragraph' && doc.firstChild!.content.size === 0) return [];
  return [...doc.content.content];
}
