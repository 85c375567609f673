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
 * A pass starts from the checkpoint (the document's state at the cursor,
 * stored with it, and kept in memory for recently indexed documents), reads
 * at most PASS_MAX_UPDATES logged updates after the cursor and replays them
 * one by one in that state (which surfaces each changes), yielding to the
 * event loop every few milliseconds, takes the content at each point, and
 * commits the versions, the advanced cursor and the new checkpoint in one
 * transaction. Its cost is in proportion to what arrived since the last
 * pass; only a document without a checkpoint (its first pass, or a cursor
 * from before checkpoints) is rebuilt once from its snapshot and log.
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
  lowestHold,
  markStartPoints,
  prepareVersions,
  pruneHolds,
  readLogAfter,
  snapshotInfo,
  snapshotState,
  versionContent,
  writeVersions,
  type EditorCount,
  type HistoryUpdate,
  type LogEntry,
  type NewVersion,
  type StoredVersion,
  type VersionCursor,
} from '../persistence/versions';
import { countChanges, diffContents } from './content-diff';
import { parseDocumentName } from '../model/document-names';
import { isEmptyContent, readSurfaceContent, surfacesChangedBy, type HistorySurface, type SurfaceContent } from './surface-content';
import { getRow, listSheetIds, type RowData } from '../model/table/document';

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
/** Replaying updates yields to the event loop after this long, so no request waits behind background work. */
const SLICE_MS = 40;

const HISTORY_LOAD = { source: 'history-load' } as const;
const HISTORY_REPLAY = { source: 'history-replay' } as const;

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

/**
 * The state at the cursor of recently indexed documents, live, so the next
 * pass neither reads nor decodes its checkpoint. Bounded by the checkpoints'
 * encoded size (a decoded document takes several times that in the heap).
 */
const MAX_CACHED_STATE_BYTES = 16 * 1024 * 1024;
const MAX_CACHED_DOCUMENTS = 32;
const cached = new Map<string, { seq: number; doc: Y.Doc; bytes: number }>();
let cachedBytes = 0;

function takeCached(document: string, seq: number): { doc: Y.Doc; bytes: number } | null {
  const entry = cached.get(document);
  if (!entry) return null;
  cached.delete(document);
  cachedBytes -= entry.bytes;
  if (entry.seq === seq) return entry;
  entry.doc.destroy();
  return null;
}

function putCached(document: string, seq: number, doc: Y.Doc, bytes: number) {
  takeCached(document, -1);
  if (bytes > MAX_CACHED_STATE_BYTES / 4) return doc.destroy();
  cached.set(document, { seq, doc, bytes });
  cachedBytes += bytes;
  for (const [name, entry] of cached) {
    if (cachedBytes <= MAX_CACHED_STATE_BYTES && cached.size <= MAX_CACHED_DOCUMENTS) break;
    cached.delete(name);
    cachedBytes -= entry.bytes;
    entry.doc.destroy();
  }
}

/** Forgets what this process holds of a document's history (its log was rewritten offline, or tests). */
export function forgetHistoryState(document?: string) {
  for (const name of document ? [document] : [...cached.keys()]) takeCached(name, -1);
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
 * at a time (null when the snapshot already folded past `seq`). Only for a
 * document without a usable checkpoint.
 */
export async function rebuildState(db: Db, document: string, seq: number): Promise<Y.Doc | null> {
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

function principalKey(author: LogEntry['author']): string {
  return author ? `${author.principalType}:${author.id}` : 'system';
}

type Capture = { seq: number; entry: { createdAt: Date; author: LogEntry['author'] }; surface: HistorySurface; content: SurfaceContent; editors: EditorCount[] };

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

  const hit = fresh ? null : takeCached(document, base);
  let doc = hit?.doc ?? null;
  if (!doc && !fresh) {
    const checkpoint = await loadCheckpoint(db, document);
    if (checkpoint?.seq === base) {
      doc = new Y.Doc({ gc: true });
      Y.applyUpdateV2(doc, checkpoint.state, HISTORY_LOAD);
    }
  }
  doc ??= await rebuildState(db, document, base);
  // Compacted past `base` meanwhile (another instance): its own pass moved the cursor, so there is nothing for this one to record.
  if (!doc) return { cursor: previous ?? (await loadCursor(db, document))!, head: base, caughtUp: false };

  let kept = false;
  try {
    const tail: HistoryUpdate[] = [];
    // In pages: on the embedded database each statement holds the event loop while it runs.
    for (let after = base; tail.length < PASS_MAX_UPDATES; ) {
      const wanted = Math.min(PAGE_ROWS, PASS_MAX_UPDATES - tail.length);
      const page = await readLogAfter(db, document, after, wanted);
      tail.push(...page);
      if (page.length < wanted) break;
      after = page.at(-1)!.seq;
    }
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
      const atHeadContent = atHead ? readSurfaceContent(doc, atHead) : undefined;
      putCached(document, base, doc, hit?.bytes ?? Y.encodeStateAsUpdateV2(doc).byteLength);
      kept = true;
      return { cursor, head, atHead: atHeadContent, caughtUp };
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
    const pending = new Map<string, Map<string, EditorCount>>();
    for (const version of moving) {
      for (const editor of version.editors) addEdits(pending, version.surfaceId, editor.principalType && editor.id ? { principalType: editor.principalType, id: editor.id } : null, editor.edits);
    }

    const captures: Capture[] = [];
    const scratch = doc;
    const surfaceOf = (id: string): HistorySurface => own ?? { id, kind: 'table' };
    const capture = (seq: number, entry: Capture['entry'], force: readonly string[] = []) => {
      for (const id of new Set([...pending.keys(), ...force])) {
        const content = readSurfaceContent(scratch, surfaceOf(id));
        if (!pending.has(id) && isEmptyContent(content)) continue;
        captures.push({ seq, entry, surface: surfaceOf(id), content, editors: [...(pending.get(id)?.values() ?? [])] });
      }
      pending.clear();
    };
    if (fresh && snapshotUpto > 0) {
      // History starts with what the snapshot holds.
      capture(base, { createdAt: snapshot!.storedAt, author: null }, own ? [own.id] : listSheetIds(doc));
      startPoints.add(base);
    } else if (startPoints.has(base)) {
      capture(base, (await logEntryAt(db, document, base)) ?? { createdAt: snapshot?.storedAt ?? new Date(0), author: null });
    }
    let current: HistoryUpdate | null = null;
    const onTransaction = (transaction: Y.Transaction) => {
      if (!current || transaction.origin !== HISTORY_REPLAY) return;
      for (const id of surfacesChangedBy(transaction, own)) addEdits(pending, id, current.author, 1);
    };
    doc.on('afterTransaction', onTransaction);
    await applyInSlices(tail, (update) => {
      current = update;
      Y.applyUpdate(scratch, update.update, HISTORY_REPLAY);
      current = null;
      if (startPoints.has(update.seq) || endPoints.has(update.seq)) capture(update.seq, update);
    });
    doc.off('afterTransaction', onTransaction);
    const headContent = atHead && caughtUp ? readSurfaceContent(doc, atHead) : undefined;
    const checkpoint = Y.encodeStateAsUpdateV2(doc);

    const versions = await countedVersions(db, document, workspaceId, captures, startPoints, moving);
    const prepared = await prepareVersions(versions);
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
    if (!recorded) return { cursor: (await loadCursor(db, document)) ?? cursor, head, atHead: headContent, caughtUp: false };
    putCached(document, head, doc, checkpoint.byteLength);
    kept = true;
    return { cursor, head, atHead: headContent, caughtUp, checkpoint };
  } finally {
    if (!kept) doc.destroy();
  }
}

const CURSOR_MOVED = new Error('the version cursor moved');

/** The first log position compaction may not fold: an update whose events are still to be derived (null: none). */
export function underivedFrom(db: Db, document: string, afterSeq: number): Promise<number | null> {
  return firstUnderived(db, document, afterSeq);
}

function addEdits(pending: Map<string, Map<string, EditorCount>>, surfaceId: string, author: LogEntry['author'], edits: number) {
  let editors = pending.get(surfaceId);
  if (!editors) pending.set(surfaceId, (editors = new Map()));
  const key = principalKey(author);
  const editor = editors.get(key) ?? { principalType: author?.principalType ?? null, id: author?.id ?? null, edits: 0 };
  editor.edits += edits;
  editors.set(key, editor);
}

/** Versions for the captures, each with the counts of what changed since the surface's previous version. */
async function countedVersions(db: Db, document: string, workspaceId: string, captures: Capture[], startPoints: ReadonlySet<number>, moving: readonly StoredVersion[]): Promise<NewVersion[]> {
  const reference = new Map<string, SurfaceContent | null>();
  const versions: NewVersion[] = [];
  // The first point of a surface in this pass takes over the id of its moving version.
  const movingOf = new Map(moving.map((version) => [version.surfaceId, version]));
  const movingIds = moving.map((version) => version.id);
  for (const capture of captures) {
    const id = capture.surface.id;
    if (!reference.has(id)) {
      const stored = await latestVersionBefore(db, workspaceId, id, capture.seq, movingIds);
      reference.set(id, stored ? await versionContent<SurfaceContent>(db, stored.id) : null);
    }
    const moved = movingOf.get(id);
    movingOf.delete(id);
    versions.push({
      ...(moved ? { id: moved.id, moved: true } : { id: newId('ver') }),
      workspaceId,
      surfaceId: id,
      document,
      kind: 'auto',
      name: null,
      seq: capture.seq,
      startPoint: startPoints.has(capture.seq),
      createdAt: capture.entry.createdAt,
      author: capture.entry.author,
      editors: capture.editors,
      changes: countChanges(diffContents(reference.get(id)!, capture.content)),
      content: capture.content,
    });
    reference.set(id, capture.content);
  }
  return versions;
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
      const hit = takeCached(document, cursor.uptoSeq);
      if (hit) {
        // Read from a copy: the cached state stays the state at the cursor.
        doc = new Y.Doc({ gc: true });
        Y.applyUpdateV2(doc, Y.encodeStateAsUpdateV2(hit.doc), HISTORY_LOAD);
        putCached(document, cursor.uptoSeq, hit.doc, hit.bytes);
      } else {
        const checkpoint = await loadCheckpoint(db, document);
        if (checkpoint?.seq === cursor.uptoSeq) {
          doc = new Y.Doc({ gc: true });
          Y.applyUpdateV2(doc, checkpoint.state, HISTORY_LOAD);
        }
      }
      if (doc) from = cursor.uptoSeq;
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
