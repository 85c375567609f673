/**
 * Turns a document's update log into versions of its surfaces before
 * compaction folds the log away (docs/VERSIONS.md).
 *
 * Sessions: each principal's edits form sessions of at most 10 minutes from
 * their first edit (the log's `created_at`); other principals may edit in
 * between. A session gives two points: the state right before its first
 * edit (a start point, which never moves) and the state after its last edit
 * so far (which moves on while the session grows, under the same version
 * id). At a point, every surface changed since its previous point gets a
 * version: its content at that log position, who edited it since (edits per
 * principal) and counts of what changed. For a table document the surfaces
 * are its sheets.
 *
 * A pass reads at most PASS_MAX_UPDATES logged updates after the cursor
 * and hands them to the history thread (./history-thread.ts), which
 * replays them one by one in the document's state at the cursor (which it
 * keeps between passes for recently indexed documents, else starts from
 * the checkpoint stored with the cursor), takes the content at each point,
 * diffs and encodes it; this thread then commits the versions, the
 * advanced cursor and the new checkpoint in one transaction. Its cost is in
 * proportion to what arrived since the last pass; only a document without
 * a checkpoint (its first pass, or a cursor from before checkpoints) is
 * rebuilt once from its snapshot and log.
 * Compaction runs passes first and folds only what the cursor has passed,
 * and no log position a recent read handed out as a base version (`ETag`),
 * so a stale write can still be merged.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import * as Y from 'yjs';
import { newId } from '../lib/ids';
import type { Db } from '../persistence/database';
import {
  advanceCursor,
  encodedVersionContent,
  movablePoints,
  findDocumentVersionsAt,
  findVersionAt,
  firstUnderived,
  holdBase,
  latestVersionBefore,
  loadCheckpoint,
  loadCursor,
  logEntryAt,
  logHead,
  logTailAfter,
  lowestHold,
  markStartPoints,
  pruneHolds,
  readLogAfter,
  snapshotInfo,
  snapshotState,
  versionContent,
  writeVersions,
  type HistoryUpdate,
  type LogEntry,
  type PreparedVersion,
  type StoredVersion,
  type VersionCursor,
} from '../persistence/versions';
import { historyThread, packUpdates, principalKey, type Capture, type ReplayInput, type StartState } from './history-thread';
import { parseDocumentName } from '../model/document-names';
import { loggedAfter } from './logged-tail';
import { keepPassRanges } from './pass-attribution';
import { readSurfaceContent, type HistorySurface, type SurfaceContent } from './surface-content';
import { getRow, type RowData } from '../model/table/document';

/** A session is at most this long, from its first edit. */
export const SESSION_WINDOW_MS = 10 * 60_000;
/** A log position handed out as a base version stays reconstructible at least this long. */
export const BASE_HOLD_MS = 60 * 60_000;
/** Holds are kept per document and bucket of this length (the lowest position in each). */
const HOLD_BUCKET_MS = 10 * 60_000;
/** One pass reads and replays at most this many updates: its memory and time stay bounded whatever the backlog. */
export const PASS_MAX_UPDATES = 10_000;
/** Rows read from the log per query while rebuilding a state. */
const PAGE_ROWS = 2_000;
/** Replaying updates (a read at an old base, on this thread) yields to the event loop after this long, so no request waits behind it. */
const SLICE_MS = 40;

const HISTORY_LOAD = { source: 'history-load' } as const;

export type HistoryPass = {
  cursor: VersionCursor;
  /** The newest log position this pass reached (the cursor). */
  head: number;
  /** The requested surface's content at `head`. */
  atHead?: SurfaceContent;
  /** False when the log holds more updates after `head` than one pass takes: run another. */
  caughtUp: boolean;
  /** The document's state at `head` (Yjs update V2), when this pass wrote it. */
  checkpoint?: Uint8Array;
};

const locks = new Map<string, Promise<unknown>>();

/** Serialises passes and compaction of one document in this process. */
export function withHistoryLock<T>(document: string, task: () => Promise<T>): Promise<T> {
  const previous = locks.get(document) ?? Promise.resolve();
  const run = previous.then(task, task);
  const settled = run.catch(() => {});
  locks.set(document, settled);
  void settled.then(() => {
    if (locks.get(document) === settled) locks.delete(document);
  });
  return run;
}

/** Brings a document's versions up to its newest update; with `atHead`, also answers that surface's content there. */
export function indexVersions(db: Db, document: string, atHead?: HistorySurface): Promise<HistoryPass | null> {
  return withHistoryLock(document, () => passesUntilCaughtUp(db, document, atHead));
}

/** Passes until the cursor reaches the log's head (each bounded; the caller holds the history lock). */
export async function passesUntilCaughtUp(db: Db, document: string, atHead?: HistorySurface, maxPasses = Infinity): Promise<HistoryPass | null> {
  let pass = await runHistoryPass(db, document, atHead);
  for (let n = 1; pass && !pass.caughtUp && n < maxPasses; n++) pass = await runHistoryPass(db, document, atHead);
  return pass;
}

/** Applies updates in log order, yielding to the event loop between slices of at most SLICE_MS. */
async function applyInSlices(updates: readonly HistoryUpdate[], apply: (update: HistoryUpdate) => void) {
  let sliceStart = performance.now();
  for (const update of updates) {
    apply(update);
    if (performance.now() - sliceStart >= SLICE_MS) {
      await yieldToLoop();
      sliceStart = performance.now();
    }
  }
}

/**
 * The document's state at `seq` rebuilt from its snapshot and log, a page
 * at a time (null when the snapshot already folded past `seq`), for a read
 * at a log position the checkpoint does not reach.
 */
async function rebuildState(db: Db, document: string, seq: number): Promise<Y.Doc | null> {
  const snapshot = await snapshotState(db, document);
  if ((snapshot?.uptoSeq ?? 0) > seq) return null;
  const doc = new Y.Doc({ gc: true });
  if (snapshot) Y.applyUpdateV2(doc, snapshot.state, HISTORY_LOAD);
  let after = snapshot?.uptoSeq ?? 0;
  while (after < seq) {
    const page = await readLogAfter(db, document, after, PAGE_ROWS, seq);
    if (page.length === 0) break;
    await applyInSlices(page, (update) => Y.applyUpdate(doc, update.update, HISTORY_LOAD));
    after = page.at(-1)!.seq;
  }
  return doc;
}

/** The surface a doc or html document holds; null for a table document (its surfaces are sheets); undefined when the name is not a document. */
function ownSurface(document: string): HistorySurface | null | undefined {
  const parsed = parseDocumentName(document);
  if (!parsed) return undefined;
  return parsed.kind === 'tables' ? null : { id: parsed.surfaceId!, kind: parsed.kind };
}

let scratchNames = 0;

/**
 * Where the history thread starts the document's state at `seq`: the
 * checkpoint when it is at `seq` (and `fromCheckpoint`), else the snapshot
 * and the log after it, handed to the thread a page at a time (`inScratch`:
 * built there even when the snapshot alone is the state); null when the
 * snapshot already folded past `seq`.
 */
async function startingState(db: Db, document: string, seq: number, options: { fromCheckpoint: boolean; inScratch?: boolean }): Promise<StartState | null> {
  if (options.fromCheckpoint) {
    const checkpoint = await loadCheckpoint(db, document);
    if (checkpoint?.seq === seq) return { state: checkpoint.state };
  }
  const snapshot = await snapshotState(db, document);
  const from = snapshot?.uptoSeq ?? 0;
  if (from > seq) return null;
  if (from === seq && !options.inScratch) return { state: snapshot?.state ?? null };
  const scratch = `${document}#${++scratchNames}`;
  await historyThread.scratch(scratch, snapshot?.state ?? null);
  try {
    const held = await heldBetween(db, document, from, seq);
    if (held) {
      for (let at = 0; at < held.length; at += PAGE_ROWS) await historyThread.extendScratch(scratch, packUpdates(held.slice(at, at + PAGE_ROWS)));
    } else {
      for (let after = from; after < seq; ) {
        const page = await readLogAfter(db, document, after, PAGE_ROWS, seq);
        if (page.length === 0) break;
        await historyThread.extendScratch(scratch, packUpdates(page));
        after = page.at(-1)!.seq;
      }
    }
  } catch (error) {
    await historyThread.encodeScratch(scratch).catch(() => {});
    throw error;
  }
  return { scratch };
}

/**
 * The logged updates in (`from`, `upto`], in log order, when this process
 * holds every one of them (./logged-tail.ts), else null (read the log).
 * What is held is rows of the log, so the same count, at the times held,
 * with the snapshot still at `from`, is the same rows. A pass takes its
 * tail from here, and so does a fold short of the history cursor (a typing
 * burst not yet derived, a held base), which rebuilt its state from
 * 2,000-row pages of the log: the longest statements of PGlite's pauses
 * under the typing trace (docs/PERFORMANCE.md, issue 38, session 10).
 */
async function heldBetween(db: Db, document: string, from: number, upto = Number.MAX_SAFE_INTEGER): Promise<HistoryUpdate[] | null> {
  const held = loggedAfter(db, document, from);
  let end = held.length;
  while (end > 0 && held[end - 1]!.seq > upto) end--;
  if (end === 0) return null;
  const log = await logTailAfter(db, document, from, upto);
  const taken = held.slice(0, end);
  return log.foldedUpTo <= from && log.rows === end && sameTimes(taken, log.earliest, log.latest) ? taken : null;
}

/**
 * The document's state at `seq` (Yjs update V2), rebuilt from its snapshot
 * and log in the history thread; null when the snapshot already folded past
 * `seq` (compaction's fold short of the cursor).
 */
export async function encodedStateAt(db: Db, document: string, seq: number): Promise<Uint8Array | null> {
  const start = await startingState(db, document, seq, { fromCheckpoint: false, inScratch: true });
  return start && 'scratch' in start ? historyThread.encodeScratch(start.scratch) : null;
}

/** One pass; the caller holds the document's history lock. */
export async function runHistoryPass(db: Db, document: string, atHead?: HistorySurface): Promise<HistoryPass | null> {
  const own = ownSurface(document);
  const workspaceId = parseDocumentName(document)?.workspaceId;
  if (own === undefined || !workspaceId) return null;
  const previous = await loadCursor(db, document);
  // Nothing new since the last pass: no need to read the document.
  if (previous && !atHead && (await logHead(db, document)) <= previous.uptoSeq) return { cursor: previous, head: previous.uptoSeq, caughtUp: true };
  const snapshot = await snapshotInfo(db, document);
  const snapshotUpto = snapshot?.uptoSeq ?? 0;
  // No cursor yet, or the log was folded past it: history starts at the snapshot.
  const fresh = !previous || previous.uptoSeq < snapshotUpto;
  const base = fresh ? snapshotUpto : previous.uptoSeq;
  // Compacted past `base` meanwhile (another instance): its own pass moved the cursor, so there is nothing for this one to record.
  const compactedPast = async (): Promise<HistoryPass> => ({ cursor: previous ?? (await loadCursor(db, document))!, head: base, caughtUp: false });
  // The history thread holds the state at the cursor from the last pass, unless it went away or history starts here.
  let start: StartState | undefined;
  if (fresh) {
    const fromSnapshot = await startingState(db, document, base, { fromCheckpoint: false });
    if (!fromSnapshot) return compactedPast();
    start = fromSnapshot;
  }
  /** When the thread does not hold the state at the cursor: from the checkpoint, else rebuilt (false: compacted past it). */
  const startAgain = async (): Promise<boolean> => {
    start = (await startingState(db, document, base, { fromCheckpoint: true })) ?? undefined;
    return start !== undefined;
  };

  const tail = await passTail(db, document, base);
  // What follows until the tail is handed to the history thread is JavaScript on the serving thread (its
  // sessions, then packing and posting it: ~30 ms for PASS_MAX_UPDATES), which on the embedded database ran
  // in the same turn as the statements before it, since PGlite's answers resolve as microtasks: the
  // pass made the longest pauses under the typing trace (docs/PERFORMANCE.md, issue 38, session 11).
  await yieldToLoop();
  const caughtUp = tail.length < PASS_MAX_UPDATES;
  const head = tail.at(-1)?.seq ?? base;
  const sessions = fresh ? {} : structuredClone(previous.sessions);
  const cursor: VersionCursor = {
    uptoSeq: head,
    historyFromSeq: fresh ? (previous?.historyFromSeq ?? snapshotUpto) : previous.historyFromSeq,
    historyFrom: fresh ? (previous?.historyFrom ?? snapshot?.storedAt ?? null) : previous.historyFrom,
    sessions,
  };
  if (!fresh && tail.length === 0) {
    if (!atHead) return { cursor, head, caughtUp };
    let content = await historyThread.read({ document, seq: base, surface: atHead });
    if (content === null) {
      if (!(await startAgain())) return compactedPast();
      content = await historyThread.read({ document, seq: base, surface: atHead, start });
    }
    return { cursor, head, atHead: content ?? undefined, caughtUp };
  }

  // Points, from who made each update and when (no decoding needed).
  const startPoints = new Set<number>();
  const movedEnds = new Set<number>();
  let before = base;
  for (const update of tail) {
    const key = principalKey(update.author);
    const open = sessions[key];
    if (open && update.createdAt.getTime() - Date.parse(open.startedAt) < SESSION_WINDOW_MS) {
      if (open.endSeq <= base) movedEnds.add(open.endSeq);
      open.endSeq = update.seq;
    } else {
      if (before > 0) startPoints.add(before);
      sessions[key] = { startSeq: update.seq, startedAt: update.createdAt.toISOString(), endSeq: update.seq };
    }
    before = update.seq;
  }
  const endPoints = new Set(Object.values(sessions).flatMap((s) => (s.endSeq > base ? [s.endSeq] : [])));
  const lastAt = tail.at(-1)?.createdAt.getTime();
  for (const [key, session] of Object.entries(sessions)) {
    if (lastAt !== undefined && lastAt - Date.parse(session.startedAt) >= SESSION_WINDOW_MS) delete sessions[key];
  }

  // A moved end that is still its surface's newest version moves on under its id (a listed id never goes away); its editors count toward where it moves.
  const moving = await movablePoints(db, document, [...movedEnds].filter((seq) => !startPoints.has(seq)));

  // Who made the update at each point, and when.
  const entries = new Map<number, { createdAt: Date; author: LogEntry['author'] }>(tail.map((update) => [update.seq, update]));
  let captureBase: ReplayInput['captureBase'] = null;
  if (fresh && snapshotUpto > 0) {
    // History starts with what the snapshot holds.
    captureBase = 'all';
    entries.set(base, { createdAt: snapshot!.storedAt, author: null });
    startPoints.add(base);
  } else if (startPoints.has(base)) {
    captureBase = 'pending';
    entries.set(base, (await logEntryAt(db, document, base)) ?? { createdAt: snapshot?.storedAt ?? new Date(0), author: null });
  }

  const input: ReplayInput = {
    document,
    base,
    own,
    moving: moving.map((version) => ({ surfaceId: version.surfaceId, editors: version.editors })),
    captureBase,
    tail: packUpdates(tail),
    startPoints: [...startPoints],
    endPoints: [...endPoints],
    atHead: atHead && caughtUp ? atHead : undefined,
  };
  await yieldToLoop();
  let replayed = await historyThread.replay({ ...input, start });
  if ('missing' in replayed) {
    if (!(await startAgain())) return compactedPast();
    replayed = await historyThread.replay({ ...input, start });
    if ('missing' in replayed) throw new Error(`The history thread lost the state of ${document} it was just given.`);
  }
  const { captures, checkpoint } = replayed;
  if (replayed.claims) keepPassRanges(db, document, base, tail, replayed.claims);

  const versions = await encodedVersions(db, document, workspaceId, captures, moving);
  const prepared: PreparedVersion[] = captures.map((capture, i) => ({
    ...versions[i]!,
    workspaceId,
    surfaceId: capture.surfaceId,
    document,
    kind: 'auto',
    name: null,
    seq: capture.seq,
    startPoint: startPoints.has(capture.seq),
    createdAt: entries.get(capture.seq)!.createdAt,
    author: entries.get(capture.seq)!.author,
    editors: capture.editors,
  }));
  const recorded = await db
    .transaction()
    .execute(async (tx) => {
      if (!(await advanceCursor(tx, document, cursor, previous ? previous.uptoSeq : null, checkpoint))) throw CURSOR_MOVED;
      await markStartPoints(tx, document, [...startPoints].filter((seq) => seq <= base));
      await writeVersions(tx, prepared);
      return true;
    })
    .catch((error) => {
      // Another instance recorded this stretch first: nothing of ours is written.
      if (error !== CURSOR_MOVED) throw error;
      return false;
    });
  if (!recorded) return { cursor: (await loadCursor(db, document)) ?? cursor, head, atHead: replayed.atHead, caughtUp: false };
  return { cursor, head, atHead: replayed.atHead, caughtUp, checkpoint };
}

const CURSOR_MOVED = new Error('the version cursor moved');

/** Whether the held updates span the times the log's rows have (tests and benchmarks age a log's rows in place). */
function sameTimes(updates: readonly HistoryUpdate[], earliest: Date | null, latest: Date | null): boolean {
  let low = Infinity;
  let high = -Infinity;
  for (const { createdAt } of updates) {
    low = Math.min(low, createdAt.getTime());
    high = Math.max(high, createdAt.getTime());
  }
  return earliest?.getTime() === low && latest?.getTime() === high;
}

/**
 * The logged updates after `base` a pass takes, at most PASS_MAX_UPDATES,
 * in log order: the ones this process appended and still holds
 * (`heldBetween`), else read from the log.
 */
async function passTail(db: Db, document: string, base: number): Promise<HistoryUpdate[]> {
  const held = await heldBetween(db, document, base);
  if (held) return held.slice(0, PASS_MAX_UPDATES);
  const tail: HistoryUpdate[] = [];
  // In pages: on the embedded database each statement holds the event loop while it runs.
  for (let after = base; tail.length < PASS_MAX_UPDATES; ) {
    const wanted = Math.min(PAGE_ROWS, PASS_MAX_UPDATES - tail.length);
    const page = await readLogAfter(db, document, after, wanted);
    tail.push(...page);
    if (page.length < wanted) break;
    after = page.at(-1)!.seq;
  }
  return tail;
}

/** The first log position compaction may not fold: an update whose events are still to be derived (null: none). */
export function underivedFrom(db: Db, document: string, afterSeq: number): Promise<number | null> {
  return firstUnderived(db, document, afterSeq);
}

/**
 * Ids, change counts and encoded contents of the captures, in order: the
 * history thread counts each against the surface's previous version (for
 * its first capture in this pass, the newest stored one before it, read
 * here) and encodes it. The first point of a surface in this pass takes
 * over the id of its moving version.
 */
async function encodedVersions(db: Db, document: string, workspaceId: string, captures: readonly Capture[], moving: readonly StoredVersion[]) {
  const firstSeq = new Map<string, number>();
  for (const capture of captures) if (!firstSeq.has(capture.surfaceId)) firstSeq.set(capture.surfaceId, capture.seq);
  const movingIds = moving.map((version) => version.id);
  const references: Array<[string, Uint8Array | null]> = [];
  for (const [surfaceId, seq] of firstSeq) {
    const stored = await latestVersionBefore(db, workspaceId, surfaceId, seq, movingIds);
    references.push([surfaceId, stored ? await encodedVersionContent(db, stored.id) : null]);
  }
  const encoded = await historyThread.versions(document, references);
  const movingOf = new Map(moving.map((version) => [version.surfaceId, version]));
  return captures.map((capture, i) => {
    const moved = movingOf.get(capture.surfaceId);
    movingOf.delete(capture.surfaceId);
    return { ...(moved ? { id: moved.id, moved: true } : { id: newId('ver') }), ...encoded[i]! };
  });
}

/**
 * How far compaction may fold this document's log: up to the version
 * cursor (what the last pass turned into versions), and not past any base
 * handed out in the last hour. Null: no limit from history.
 */
export async function foldableUpTo(db: Db, document: string, pass: HistoryPass | null, now: Date): Promise<number | null> {
  const held = await lowestHold(db, document, new Date(now.getTime() - BASE_HOLD_MS - HOLD_BUCKET_MS));
  const limits = [pass?.cursor.uptoSeq, held].filter((n): n is number => typeof n === 'number');
  return limits.length > 0 ? Math.min(...limits) : null;
}

const heldInProcess = new Map<string, { bucket: number; seq: number }>();

/**
 * Records that a read handed out `seq` of this document as a base version:
 * compaction keeps it reconstructible for at least BASE_HOLD_MS. At most one
 * write per document and bucket, unless an older position comes along.
 */
export async function holdBaseVersion(db: Db, document: string, seq: number, now: Date): Promise<void> {
  const bucket = Math.floor(now.getTime() / HOLD_BUCKET_MS) * HOLD_BUCKET_MS;
  const known = heldInProcess.get(document);
  if (known && known.bucket === bucket && known.seq <= seq) return;
  if (heldInProcess.size > 10_000) heldInProcess.clear();
  heldInProcess.set(document, { bucket, seq: Math.min(seq, known?.bucket === bucket ? known.seq : seq) });
  await holdBase(db, document, new Date(bucket), seq);
}

export async function pruneBaseHolds(db: Db, now: Date): Promise<void> {
  await pruneHolds(db, new Date(now.getTime() - BASE_HOLD_MS - HOLD_BUCKET_MS));
}

/**
 * Reads the document as it was at a log position, or answers undefined
 * when compaction has folded past it. Starts from the checkpoint when it
 * is at or before `seq` (then only the log after it is read), else from the
 * snapshot.
 */
export async function readAt<T>(db: Db, document: string, seq: number, read: (doc: Y.Doc) => T): Promise<T | undefined> {
  return withHistoryLock(document, async () => {
    const cursor = await loadCursor(db, document);
    let doc: Y.Doc | null = null;
    let from = 0;
    if (cursor && cursor.uptoSeq <= seq) {
      const checkpoint = await loadCheckpoint(db, document);
      if (checkpoint?.seq === cursor.uptoSeq) {
        doc = new Y.Doc({ gc: true });
        Y.applyUpdateV2(doc, checkpoint.state, HISTORY_LOAD);
        from = cursor.uptoSeq;
      }
    }
    doc ??= await rebuildState(db, document, seq);
    if (!doc) return undefined;
    if (from > 0) {
      try {
        for (let after = from; after < seq; ) {
          const page = await readLogAfter(db, document, after, PAGE_ROWS, seq);
          if (page.length === 0) break;
          await applyInSlices(page, (update) => Y.applyUpdate(doc!, update.update, HISTORY_LOAD));
          after = page.at(-1)!.seq;
        }
      } catch (error) {
        doc.destroy();
        throw error;
      }
    }
    try {
      return read(doc);
    } finally {
      doc.destroy();
    }
  });
}

/**
 * A surface's content at a log position: replayed when the log still
 * reaches it, else a stored version at exactly that position. Null when
 * neither exists any more.
 */
export async function surfaceContentAt(db: Db, document: string, surface: HistorySurface, seq: number): Promise<SurfaceContent | null> {
  const replayed = await readAt(db, document, seq, (doc) => readSurfaceContent(doc, surface));
  if (replayed !== undefined) return replayed;
  const workspaceId = parseDocumentName(document)?.workspaceId;
  const version = workspaceId ? await findVersionAt(db, workspaceId, surface.id, seq) : null;
  return version ? versionContent<SurfaceContent>(db, version.id) : null;
}

/** A row's cells at a log position (null: no such row then; undefined: that position is no longer known). */
export async function rowDataAt(db: Db, document: string, rowId: string, seq: number): Promise<RowData | null | undefined> {
  const replayed = await readAt(db, document, seq, (doc) => getRow(doc, rowId)?.data ?? null);
  if (replayed !== undefined) return replayed;
  for (const version of await findDocumentVersionsAt(db, document, seq)) {
    const content = await versionContent<SurfaceContent>(db, version.id);
    const row = content.kind === 'sheet' ? content.rows.find((r) => r.id === rowId) : undefined;
    if (row) return row.data;
  }
  return undefined;
}
