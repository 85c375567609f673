/**
 * Sequence matching for replacing a doc body block by block: which old blocks
 * are kept as they are, so only the others are edited. Browser-safe, generic.
 */

export type MatchedPair = readonly [oldIndex: number, newIndex: number];

// Above this many cells the quadratic table is not worth it; unmatched
// middles are then edited position by position instead.
const MAX_LCS_CELLS = 4_000_000;

export function longestCommonSubsequence<A, B>(a: readonly A[], b: readonly B[], equal: (a: A, b: B) => boolean): MatchedPair[] {
  const rows = a.length + 1;
  const cols = b.length + 1;
  if (rows * cols > MAX_LCS_CELLS) return [];
  // table[i][j] = LCS length of a[i..] and b[j..], filled from the end.
  const table = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * cols + j] = equal(a[i], b[j])
        ? table[(i + 1) * cols + j + 1] + 1
        : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
    }
  }
  const pairs: MatchedPair[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (equal(a[i], b[j])) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (table[(i + 1) * cols + j] >= table[i * cols + j + 1]) i++;
    else j++;
  }
  return pairs;
}

/**
 * Pairs of equal items, ascending in both sequences: the common prefix and
 * suffix, plus a longest common subsequence of what lies between them.
 */
export function matchSequences<A, B>(a: readonly A[], b: readonly B[], equal: (a: A, b: B) => boolean): MatchedPair[] {
  let start = 0;
  while (start < a.length && start < b.length && equal(a[start], b[start])) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && equal(a[a.length - 1 - end], b[b.length - 1 - end])) end++;

  const pairs: MatchedPair[] = [];
  for (let i = 0; i < start; i++) pairs.push([i, i]);
  const middle = longestCommonSubsequence(a.slice(start, a.length - end), b.slice(start, b.length - end), equal);
  for (const [i, j] of middle) pairs.push([start + i, start + j]);
  for (let k = end; k > 0; k--) pairs.push([a.length - k, b.length - k]);
  return pairs;
}
