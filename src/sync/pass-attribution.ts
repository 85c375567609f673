import type { Db } from '../persistence/database';
import type { HistoryUpdate } from '../persistence/versions';
import { ClockRanges, type PrincipalKey } from '../model/attribution';

/**
 * The clock ranges of the updates the history passes replayed, kept for
 * compaction's attribution: a fold writes who made the updates it deletes,
 * and reading them back from the log (`rangesOfLog`) read every update a
 * second time, base64-encoded, on the serving thread. The history thread
 * already decodes each update it replays; it hands back each update's
 * ranges, and a fold claims those in log order, exactly as the read does
 * (the same ranges of the same rows, in the same order). A pass's tail is
 * every row of the log in (base, head] (read, or held and counted against
 * the log: logged-tail.ts), and logged rows never change, so the passes'
 * ranges answer any fold inside what they covered, back to back.
 *
 * Only a cache, bounded: a fold outside what is held (a restart, another
 * instance's pass or fold, a pass that failed part way, the cap) reads the
 * log as before.
 */

/** Stretches held for all documents (about 50 bytes each). */
export const PASS_ATTRIBUTION_MAX_STRETCHES = 250_000;

/** The ranges of one pass: per stretch, the seq of the update that holds it, its client, clocks and principal. */
type Piece = { base: number; head: number; seqs: number[]; clients: number[]; froms: number[]; tos: number[]; keys: PrincipalKey[] };

const held = new WeakMap<Db, { documents: Map<string, Piece[]>; stretches: number }>();

function heldIn(db: Db) {
  let store = held.get(db);
  if (!store) held.set(db, (store = { documents: new Map(), stretches: 0 }));
  return store;
}

const stretchesOf = (pieces: readonly Piece[]) => pieces.reduce((sum, piece) => sum + piece.seqs.length, 0);

/**
 * Keeps a pass's ranges: `claims` holds, per stretch, the index in `tail`
 * of the update holding it, then client, from and to (the history
 * thread's `updateRanges` of each update, in order).
 */
export function keepPassRanges(db: Db, document: string, base: number, tail: readonly HistoryUpdate[], claims: ArrayLike<number>): void {
  if (tail.length === 0) return;
  const piece: Piece = { base, head: tail[tail.length - 1]!.seq, seqs: [], clients: [], froms: [], tos: [], keys: [] };
  for (let i = 0; i < claims.length; i += 4) {
    const update = tail[claims[i]!]!;
    piece.seqs.push(update.seq);
    piece.clients.push(claims[i + 1]!);
    piece.froms.push(claims[i + 2]!);
    piece.tos.push(claims[i + 3]!);
    piece.keys.push(update.attributedTo);
  }
  const store = heldIn(db);
  const pieces = store.documents.get(document) ?? [];
  store.documents.delete(document);
  // Back to back with what is held, or a new run of passes (the held one no longer leads here).
  const kept = pieces.length > 0 && pieces[pieces.length - 1]!.head === base ? pieces : [];
  if (kept !== pieces) store.stretches -= stretchesOf(pieces);
  kept.push(piece);
  store.stretches += piece.seqs.length;
  store.documents.set(document, kept);
  for (const [name, other] of store.documents) {
    if (store.stretches <= PASS_ATTRIBUTION_MAX_STRETCHES) break;
    store.documents.delete(name);
    store.stretches -= stretchesOf(other);
  }
}

/** Who made the logged updates in (afterSeq, uptoSeq], from the passes' ranges; null when they do not cover it all. */
export function passRangesOf(db: Db, document: string, afterSeq: number, uptoSeq: number): ClockRanges | null {
  const pieces = held.get(db)?.documents.get(document);
  if (!pieces || pieces.length === 0 || pieces[0]!.base > afterSeq || pieces[pieces.length - 1]!.head < uptoSeq) return null;
  const ranges = new ClockRanges();
  for (const piece of pieces) {
    if (piece.head <= afterSeq) continue;
    if (piece.base >= uptoSeq) break;
    for (let i = 0; i < piece.seqs.length; i++) {
      const seq = piece.seqs[i]!;
      if (seq > afterSeq && seq <= uptoSeq) ranges.claim(piece.clients[i]!, piece.froms[i]!, piece.tos[i]!, piece.keys[i]!);
    }
  }
  return ranges;
}

/** Drops what a fold up to `seq` deleted from the log. */
export function forgetPassRangesThrough(db: Db, document: string, seq: number): void {
  const store = held.get(db);
  const pieces = store?.documents.get(document);
  if (!store || !pieces) return;
  const kept: Piece[] = [];
  for (const piece of pieces) {
    if (piece.head <= seq) {
      store.stretches -= piece.seqs.length;
      continue;
    }
    if (piece.base < seq) {
      let cut = 0;
      while (cut < piece.seqs.length && piece.seqs[cut]! <= seq) cut++;
      for (const list of [piece.seqs, piece.clients, piece.froms, piece.tos, piece.keys] as unknown[][]) list.splice(0, cut);
      store.stretches -= cut;
      piece.base = seq;
    }
    kept.push(piece);
  }
  if (kept.length === 0) store.documents.delete(document);
  else store.documents.set(document, kept);
}
