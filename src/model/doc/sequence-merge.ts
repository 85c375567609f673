/**
 * Matching and three-way merging of sequences of keyed items (doc blocks by
 * their JSON, html lines, row ids). Browser-safe, generic.
 *
 * Matching is patience diff: common prefix and suffix, then items that occur
 * exactly once on both sides anchor a longest increasing subsequence, and
 * the stretches between anchors are matched the same way; a stretch without
 * unique items falls back to the quadratic LCS when it is small. That keeps
 * a 5,000-block document with edits at both ends to a few milliseconds
 * where a plain LCS would need a 25-million-cell table.
 */
import { longestCommonSubsequence, type MatchedPair } from './block-diff.js';

const MAX_LCS_CELLS = 4_000_000;

/** Pairs of equal keys, ascending in both sequences. */
export function matchKeys(a: readonly string[], b: readonly string[]): MatchedPair[] {
  const pairs: MatchedPair[] = [];
  matchRange(a, b, 0, a.length, 0, b.length, pairs);
  return pairs;
}

function matchRange(a: readonly string[], b: readonly string[], aLo: number, aHi: number, bLo: number, bHi: number, out: MatchedPair[]): void {
  while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) out.push([aLo++, bLo++]);
  const suffix: MatchedPair[] = [];
  while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) suffix.push([--aHi, --bHi]);
  if (aLo < aHi && bLo < bHi) {
    const anchors = uniqueAnchors(a, b, aLo, aHi, bLo, bHi);
    if (anchors.length > 0) {
      let [ai, bi] = [aLo, bLo];
      for (const [x, y] of anchors) {
        matchRange(a, b, ai, x, bi, y, out);
        out.push([x, y]);
        [ai, bi] = [x + 1, y + 1];
      }
      matchRange(a, b, ai, aHi, bi, bHi, out);
    } else if ((aHi - aLo) * (bHi - bLo) <= MAX_LCS_CELLS) {
      const middle = longestCommonSubsequence(a.slice(aLo, aHi), b.slice(bLo, bHi), (x, y) => x === y);
      for (const [x, y] of middle) out.push([aLo + x, bLo + y]);
    }
  }
  for (let k = suffix.length - 1; k >= 0; k--) out.push(suffix[k]!);
}

/** Keys occurring once in each range, paired, reduced to their longest run ascending in both (patience sorting). */
function uniqueAnchors(a: readonly string[], b: readonly string[], aLo: number, aHi: number, bLo: number, bHi: number): MatchedPair[] {
  const inA = new Map<string, number>();
  for (let i = aLo; i < aHi; i++) inA.set(a[i]!, inA.has(a[i]!) ? -1 : i);
  const inB = new Map<string, number>();
  for (let j = bLo; j < bHi; j++) inB.set(b[j]!, inB.has(b[j]!) ? -1 : j);
  const candidates: MatchedPair[] = [];
  for (let j = bLo; j < bHi; j++) {
    const i = inA.get(b[j]!);
    if (i !== undefined && i >= 0 && inB.get(b[j]!) === j) candidates.push([i, j]);
  }
  // Longest increasing subsequence of the a-indexes (candidates are in b order).
  const tails: number[] = [];
  const previous: number[] = new Array(candidates.length).fill(-1);
  for (let k = 0; k < candidates.length; k++) {
    const ai = candidates[k]![0];
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (candidates[tails[middle]!]![0] < ai) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[k] = tails[low - 1]!;
    tails[low] = k;
  }
  const anchors: MatchedPair[] = [];
  for (let k = tails.at(-1) ?? -1; k >= 0; k = previous[k]!) anchors.push(candidates[k]!);
  return anchors.reverse();
}

/** One side's change to the base: base items [start, end) become `items`. */
type Hunk<T> = { start: number; end: number; items: T[] };

function hunksOf<T>(base: readonly string[], side: readonly T[], sideKeys: readonly string[]): Array<Hunk<T>> {
  const hunks: Array<Hunk<T>> = [];
  let [bi, si] = [0, 0];
  for (const [x, y] of [...matchKeys(base, sideKeys), [base.length, side.length] as const]) {
    if (x > bi || y > si) hunks.push({ start: bi, end: x, items: side.slice(si, y) });
    [bi, si] = [x + 1, y + 1];
  }
  return hunks;
}

export type MergeConflict<T> = {
  /** Where the kept (their) items start in the merged sequence. */
  at: number;
  base: T[];
  yours: T[];
  theirs: T[];
};

/**
 * Three-way merge: what `yours` changed relative to `base` is applied to
 * `theirs` (the current state). Changes to different items both apply;
 * both sides inserting at the same place keeps theirs, then yours. Where
 * both changed the same items differently, theirs is kept and the
 * conflict reported (with the base, your and their items).
 */
export function mergeSequences<T>(base: readonly T[], yours: readonly T[], theirs: readonly T[], keyOf: (item: T) => string): { merged: T[]; conflicts: Array<MergeConflict<T>> } {
  const baseKeys = base.map(keyOf);
  const mine = hunksOf(baseKeys, yours, yours.map(keyOf)).map((h) => ({ ...h, side: 'yours' as const }));
  const other = hunksOf(baseKeys, theirs, theirs.map(keyOf)).map((h) => ({ ...h, side: 'theirs' as const }));
  const all = [...mine, ...other].sort((p, q) => p.start - q.start || p.end - q.end);
  const merged: T[] = [];
  const conflicts: Array<MergeConflict<T>> = [];
  let position = 0;
  const same = (p: readonly T[], q: readonly T[]) => p.length === q.length && p.every((item, i) => keyOf(item) === keyOf(q[i]!));
  for (let k = 0; k < all.length; ) {
    // A group: hunks whose base ranges overlap, or insertions at one point.
    const group = [all[k]!];
    let end = all[k]!.end;
    for (k++; k < all.length && joins(all[k]!, group[0]!.start, end); k++) {
      group.push(all[k]!);
      end = Math.max(end, all[k]!.end);
    }
    const start = group[0]!.start;
    merged.push(...base.slice(position, start));
    position = end;
    const rebuild = (side: 'yours' | 'theirs') => applyHunks(base, start, end, group.filter((h) => h.side === side));
    const mineHere = group.some((h) => h.side === 'yours');
    const theirsHere = group.some((h) => h.side === 'theirs');
    const your = rebuild('yours');
    const their = rebuild('theirs');
    if (!mineHere) merged.push(...their);
    else if (!theirsHere) merged.push(...your);
    else if (same(your, their)) merged.push(...their);
    else if (start === end) merged.push(...their, ...your);
    else if (your.length === end - start && their.length === end - start) {
      // Same shape on both sides: item by item, so edits to different items both apply.
      for (let i = 0; i < your.length; i++) {
        const original = base[start + i]!;
        if (keyOf(your[i]!) === keyOf(original)) merged.push(their[i]!);
        else if (keyOf(their[i]!) === keyOf(original) || keyOf(their[i]!) === keyOf(your[i]!)) merged.push(your[i]!);
        else {
          conflicts.push({ at: merged.length, base: [original], yours: [your[i]!], theirs: [their[i]!] });
          merged.push(their[i]!);
        }
      }
    } else {
      conflicts.push({ at: merged.length, base: base.slice(start, end), yours: your, theirs: their });
      merged.push(...their);
    }
  }
  merged.push(...base.slice(position));
  return { merged, conflicts };
}

function joins<T>(hunk: Hunk<T>, groupStart: number, groupEnd: number): boolean {
  if (hunk.start < groupEnd) return true;
  // Two insertions at one point meet; touching ranges, and an insertion at a range's edge, stay apart.
  return hunk.start === hunk.end && groupStart === groupEnd && hunk.start === groupStart;
}

/** Base items [start, end) with one side's hunks (all inside that range) applied. */
function applyHunks<T>(base: readonly T[], start: number, end: number, hunks: ReadonlyArray<Hunk<T>>): T[] {
  const out: T[] = [];
  let position = start;
  for (const hunk of hunks) {
    out.push(...base.slice(position, hunk.start), ...hunk.items);
    position = hunk.end;
  }
  out.push(...base.slice(position, end));
  return out;
}
