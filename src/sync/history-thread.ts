import { WorkerPool, workerScript } from '../lib/worker-pool';
import type { EncodedContent } from '../persistence/version-content';
import type { EditorCount, HistoryUpdate, LogEntry, VersionChanges } from '../persistence/versions';
import type { HistorySurface, SurfaceContent } from './surface-content';

/**
 * The history pass's CPU work, in a worker thread of its own
 * (./history-worker.ts): replaying the logged updates, reading each
 * surface's content at a version's point, diffing it against the one
 * before and encoding it, and encoding the checkpoint. On the serving
 * thread a typist's pass (5,000 updates at every compaction) and a large
 * write's (a 1 MB doc's whole body read, diffed and compressed) held the
 * event loop for hundreds of milliseconds at a time; what stays there is
 * the SQL (./version-index.ts reads the log and writes the versions).
 *
 * One thread, not a pool: it keeps each recently indexed document's state
 * at its cursor between passes (so a pass neither reads nor decodes the
 * checkpoint), and every pass must reach the thread that holds it. It goes
 * away after HISTORY_THREAD_IDLE_MS without a pass, with what it held (the
 * next pass starts from the stored checkpoint, as after a restart). A
 * stream of writes (an import, a fast typist) passes every few seconds and
 * keeps it; a person typing passes every few minutes, long after a kept
 * state would have paid off. An idle thread's heap stays as large as its
 * largest pass made it (about 200 MB after a 50,000-row import's, for ten
 * minutes before): ending the thread is what gives it back. Not sooner
 * than a minute: with 10 s, a loaded machine's import (passes tens of
 * seconds apart) restarted the thread and decoded the checkpoint again at
 * each pass, and the compaction right after the import with it.
 *
 * What crosses the boundary is plain data: the log's updates packed into
 * one buffer, the points to capture and who made each update; back come
 * which surface got a version at which point with its editors, then each
 * version's change counts and encoded content, and the checkpoint.
 */

const HISTORY_THREAD_IDLE_MS = 60_000;

let pool: WorkerPool | null = null;

function thread(): WorkerPool {
  pool ??= new WorkerPool(workerScript(import.meta.url, 'history-worker'), 1, HISTORY_THREAD_IDLE_MS);
  return pool;
}

/** Whose edits these are, as a version's editors are counted. */
export function principalKey(author: LogEntry['author']): string {
  return author ? `${author.principalType}:${author.id}` : 'system';
}

/** Logged updates in one buffer (`ends[i]` is where update i ends): one copy to the thread, not one per update. */
export type PackedUpdates = { bytes: Uint8Array; ends: number[]; seqs: number[]; authors: Array<LogEntry['author']> };

export function packUpdates(updates: readonly HistoryUpdate[]): PackedUpdates {
  const bytes = new Uint8Array(bytesOf(updates));
  const ends: number[] = [];
  const seqs: number[] = [];
  const authors: Array<LogEntry['author']> = [];
  // One loop, and nothing after it but the result. Called once a pass with thousands of updates, the function is
  // compiled for its loop alone (OSR) before the code after the loop has ever run; with a `map` after the loop, that
  // cached compile was entered again at each pass and fell out at the `map` (up to 52 deoptimizations a 60,000-edit
  // trace; PERFORMANCE.md "h17-deopt").
  let at = 0;
  for (const { update, seq, author } of updates) {
    bytes.set(update, at);
    ends.push((at += update.byteLength));
    seqs.push(seq);
    authors.push(author);
  }
  return { bytes, ends, seqs, authors };
}

function bytesOf(updates: readonly HistoryUpdate[]): number {
  let sum = 0;
  for (const { update } of updates) sum += update.byteLength;
  return sum;
}

/**
 * Where the thread starts a document's replay when it does not hold its
 * state at the cursor: an encoded state (V2; null: an empty document), or
 * a state it was handed in parts under a scratch name (`buildState`).
 */
export type StartState = { state: Uint8Array | null } | { scratch: string };

export type ReplayInput = {
  document: string;
  /** The log position the replay starts after (the cursor). */
  base: number;
  start?: StartState;
  /** The document's own surface; null for a table document (its surfaces are its sheets). */
  own: HistorySurface | null;
  /** Editors of the versions that move on in this pass, counted toward where they move, in this order. */
  moving: Array<{ surfaceId: string; editors: EditorCount[] }>;
  /** A point at `base` itself: 'all' surfaces (history starts with what the snapshot holds) or those with edits pending. */
  captureBase: 'all' | 'pending' | null;
  tail: PackedUpdates;
  startPoints: number[];
  endPoints: number[];
  /** Also answer this surface's content after the tail. */
  atHead?: HistorySurface;
};

export type Capture = { seq: number; surfaceId: string; editors: EditorCount[] };

/** `missing`: the thread holds no state at `base` (call again with `start`). */
export type ReplayOutput =
  | { missing: true }
  /** `claims`: each update's clock ranges (its index in the tail, client, from, to), what attribution claims for it; null when one could not be decoded. */
  | { captures: Capture[]; atHead?: SurfaceContent; checkpoint: Uint8Array; claims: Float64Array | null };

export type EncodedVersion = { changes: VersionChanges; encoded: EncodedContent };

export const historyThread = {
  /** Replays the tail in the document's state at `base`, capturing the points; the thread keeps the captured contents for `versions`. */
  replay: (input: ReplayInput) => thread().run<ReplayOutput>('replay', input),
  /**
   * Each capture of the document's last replay, in order, with its counts
   * of what changed against the one before (for a surface's first capture,
   * its stored version `references` names, encoded as stored; null: none)
   * and its content encoded.
   */
  versions: (document: string, references: Array<[surfaceId: string, content: Uint8Array | null]>) =>
    thread().run<EncodedVersion[]>('versions', { document, references }),
  /** A surface's content in the document's state at `seq` (null: the thread holds no state there and no `start` was given). */
  read: (input: { document: string; seq: number; surface: HistorySurface; start?: StartState }) => thread().run<SurfaceContent | null>('read', input),
  /** Starts a scratch state from an encoded one (null: empty). */
  scratch: (name: string, state: Uint8Array | null) => thread().run<void>('scratch', { name, state }),
  /** Applies logged updates to a scratch state, in order. */
  extendScratch: (name: string, updates: PackedUpdates) => thread().run<void>('extendScratch', { name, updates }),
  /** A V2 state converted to a V1 update, as the sync protocol sends it (a snapshot's sync copy: stored-copy.ts). */
  syncCopy: (state: Uint8Array) => thread().run<Uint8Array>('syncCopy', { state }),
  /** A scratch state encoded (V2), and dropped. */
  encodeScratch: (name: string) => thread().run<Uint8Array>('encodeScratch', { name }),
};
