/**
 * A plain write of a doc body is made against the doc as its writer read
 * it: with open suggestions rejected (GET /doc). Written as it is, it would
 * silently reject every suggestion in the blocks it keeps. This puts the
 * suggestions back where the writer left the text alone: each block of the
 * target that equals a current block as read becomes that current block,
 * marks and all, and blocks that only a suggestion inserted stay where they
 * are. A block the writer changed takes the writer's version (its open
 * suggestions are overridden by the edit). Browser-safe.
 */
import type { Node as PMNode } from 'prosemirror-model';
import { matchSequences } from './block-diff';
import { docSchema } from './schema';
import { hasSuggestions, withSuggestionsRejected } from './suggestions';

type Block = { current: PMNode; read: PMNode | null };

/** Each current block with the block a reader sees in its place (null: only a suggestion inserted it). */
function blocksAsRead(current: PMNode): Block[] {
  return current.content.content.map((block) => {
    if (!hasSuggestions(block)) return { current: block, read: block };
    const read = withSuggestionsRejected(docSchema.topNodeType.create(null, [block]));
    // Rejecting a block that only a suggestion inserted leaves nothing (or the empty paragraph an empty doc reads as).
    const only = read.childCount === 1 ? read.firstChild! : null;
    const vanished = !only || (only.type.name === 'paragraph' && only.content.size === 0 && !(block.type.name === 'paragraph' && block.content.size === 0));
    return { current: block, read: vanished ? null : only };
  });
}

export function keepOpenSuggestions(current: PMNode, target: PMNode): PMNode {
  if (!hasSuggestions(current)) return target;
  const blocks = blocksAsRead(current);
  const readable = blocks.flatMap((block, index) => (block.read ? [{ index, read: block.read }] : []));
  const wanted = target.content.content;
  const kept = matchSequences(
    readable.map((r) => r.read),
    wanted,
    (read, next) => read !== null && read.eq(next),
  );
  const out: PMNode[] = [];
  let nextCurrent = 0;
  let nextWanted = 0;
  const suggestedOnlyUpTo = (end: number) => {
    for (; nextCurrent < end; nextCurrent++) if (blocks[nextCurrent]!.read === null) out.push(blocks[nextCurrent]!.current);
  };
  for (const [readAt, wantedAt] of kept) {
    const currentAt = readable[readAt]!.index;
    suggestedOnlyUpTo(currentAt);
    out.push(...wanted.slice(nextWanted, wantedAt), blocks[currentAt]!.current);
    nextCurrent = currentAt + 1;
    nextWanted = wantedAt + 1;
  }
  suggestedOnlyUpTo(blocks.length);
  out.push(...wanted.slice(nextWanted));
  return docSchema.topNodeType.create(target.attrs, out);
}
