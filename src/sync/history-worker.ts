import * as Y from 'yjs';
import { ownsWholeBuffer, serveWorkerTasks } from '../lib/worker-pool';
import { updateRanges } from '../model/attribution';
import { listSheetIds } from '../model/table/document';
import { decodeContent, encodeContent } from '../persistence/version-content';
import type { EditorCount, LogEntry } from '../persistence/versions';
import { countChanges, diffContents } from './content-diff';
import { principalKey, type Capture, type EncodedVersion, type PackedUpdates, type ReplayInput, type ReplayOutput, type StartState } from './history-thread';
import { replayRun } from './replay-run';
import { isEmptyContent, readSurfaceContent, surfacesChangedBy, type HistorySurface, type SurfaceContent } from './surface-content';

/**
 * The history thread's script (./history-thread.ts runs it): replays a
 * document's logged updates in its state at the version cursor, captures
 * each changed surface's content at the points the serving thread names,
 * counts who edited what, diffs and encodes the versions, and keeps the
 * state for the next pass. Tasks run one at a time.
 */

const HISTORY_LOAD = { source: 'history-load' } as const;
const HISTORY_REPLAY = { source: 'history-replay' } as const;

/**
 * The state at the cursor of recently indexed documents, live, so the next
 * pass neither reads nor decodes its checkpoint. Bounded by the states'
 * encoded size (a decoded document takes several times that in the heap);
 * a document larger than a quarter of the bound is dropped after its pass.
 */
const MAX_HELD_STATE_BYTES = 16 * 1024 * 1024;
const MAX_HELD_DOCUMENTS = 32;
const held = new Map<string, { seq: number; doc: Y.Doc; bytes: number }>();
let heldBytes = 0;
/** States being built for the serving thread (a rebuild from snapshot and log), by name. */
const scratches = new Map<string, { doc: Y.Doc; bytes: number }>();
/** Per document: the contents its last replay captured, until `versions` encodes them. */
const captured = new Map<string, Array<Capture & { content: SurfaceContent }>>();

function drop(document: string) {
  const entry = held.get(document);
  if (!entry) return;
  held.delete(document);
  heldBytes -= entry.bytes;
  entry.doc.destroy();
}

/** Keeps `doc` as the document's state at `seq`, the newest entry; older ones go past the bounds. */
function hold(document: string, seq: number, doc: Y.Doc, bytes: number) {
  const previous = held.get(document);
  if (previous?.doc !== doc) drop(document);
  else {
    held.delete(document);
    heldBytes -= previous.bytes;
  }
  held.set(document, { seq, doc, bytes });
  heldBytes += bytes;
  for (const [name] of held) {
    if (name === document || (heldBytes <= MAX_HELD_STATE_BYTES && held.size <= MAX_HELD_DOCUMENTS)) break;
    drop(name);
  }
}

function decoded(state: Uint8Array | null): Y.Doc {
  const doc = new Y.Doc({ gc: true });
  if (state) Y.applyUpdateV2(doc, state, HISTORY_LOAD);
  return doc;
}

/** The document's state at `seq`: the one held, else the one `start` gives; null when neither. */
function stateAt(document: string, seq: number, start?: StartState): Y.Doc | null {
  if (start) {
    drop(document);
    if ('scratch' in start) {
      const scratch = scratches.get(start.scratch);
      scratches.delete(start.scratch);
      if (!scratch) return null;
      hold(document, seq, scratch.doc, scratch.bytes);
      return scratch.doc;
    }
    const doc = decoded(start.state);
    hold(document, seq, doc, start.state?.byteLength ?? 0);
    return doc;
  }
  const entry = held.get(document);
  if (entry?.seq === seq) return entry.doc;
  drop(document);
  return null;
}

/** Bytes that own their whole buffer, so it can be handed over rather than copied. */
function transferable(bytes: Uint8Array): Uint8Array {
  return ownsWholeBuffer(bytes) ? bytes : bytes.slice();
}

function* unpack(updates: PackedUpdates) {
  let from = 0;
  for (let i = 0; i < updates.ends.length; i++) {
    yield { seq: updates.seqs[i]!, author: updates.authors[i]!, update: updates.bytes.subarray(from, updates.ends[i]) };
    from = updates.ends[i]!;
  }
}

/** The last author's key: a replay's updates come in runs of one author (each entry its own object, from the thread's message). */
let lastAuthor: LogEntry['author'] | undefined;
let lastAuthorKey = '';

function authorKey(author: LogEntry['author']): string {
  const same = author === lastAuthor || (author && lastAuthor && author.id === lastAuthor.id && author.principalType === lastAuthor.principalType);
  if (!same) {
    lastAuthor = author;
    lastAuthorKey = principalKey(author);
  }
  return lastAuthorKey;
}

function addEdits(pending: Map<string, Map<string, EditorCount>>, surfaceId: string, author: LogEntry['author'], edits: number) {
  let editors = pending.get(surfaceId);
  if (!editors) pending.set(surfaceId, (editors = new Map()));
  const key = authorKey(author);
  const editor = editors.get(key) ?? { principalType: author?.principalType ?? null, id: author?.id ?? null, edits: 0 };
  editor.edits += edits;
  editors.set(key, editor);
}

function replay(input: ReplayInput): { result: ReplayOutput; transfer?: ArrayBuffer[] } {
  const { document, own } = input;
  const doc = stateAt(document, input.base, input.start);
  if (!doc) return { result: { missing: true } };
  try {
    const pending = new Map<string, Map<string, EditorCount>>();
    for (const version of input.moving) {
      for (const editor of version.editors) addEdits(pending, version.surfaceId, editor.principalType && editor.id ? { principalType: editor.principalType, id: editor.id } : null, editor.edits);
    }
    const captures: Array<Capture & { content: SurfaceContent }> = [];
    const surfaceOf = (id: string): HistorySurface => own ?? { id, kind: 'table' };
    const capture = (seq: number, force: readonly string[] = []) => {
      for (const id of new Set([...pending.keys(), ...force])) {
        const content = readSurfaceContent(doc, surfaceOf(id));
        if (!pending.has(id) && isEmptyContent(content)) continue;
        captures.push({ seq, surfaceId: id, content, editors: [...(pending.get(id)?.values() ?? [])] });
      }
      pending.clear();
    };
    if (input.captureBase) capture(input.base, input.captureBase === 'all' ? (own ? [own.id] : listSheetIds(doc)) : []);
    const startPoints = new Set(input.startPoints);
    const endPoints = new Set(input.endPoints);
    let author: LogEntry['author'] | undefined;
    const onTransaction = (transaction: Y.Transaction) => {
      if (author === undefined || transaction.origin !== HISTORY_REPLAY) return;
      for (const id of surfacesChangedBy(transaction, own)) addEdits(pending, id, author, 1);
    };
    let head = input.base;
    // Each update's clock ranges, for compaction's attribution (pass-attribution.ts): index, client, from, to.
    let claims: number[] | null = [];
    let index = 0;
    const updates = [...unpack(input.tail)];
    const rangesOf = (update: Uint8Array): Array<{ client: number; from: number; to: number }> | null => {
      if (!claims) return null;
      try {
        const ranges = updateRanges(update);
        for (const range of ranges) claims.push(index, range.client, range.from, range.to);
        return ranges;
      } catch {
        claims = null; // compaction reads the log for attribution, as before
        return null;
      }
    };
    const isCapturePoint = (seq: number) => startPoints.has(seq) || endPoints.has(seq);
    doc.on('afterTransaction', onTransaction);
    try {
      let i = 0;
      while (i < updates.length) {
        const update = updates[i]!;
        if (own && claims && !isCapturePoint(update.seq) && i + 1 < updates.length) {
          // A run of updates up to the next capture point, applied in one transaction: Yjs's cleanup (merges, observers,
          // the afterTransaction call) once a run instead of once a keystroke. Each update still counts as its author's
          // edit when it changed the document on its own: it integrated structs (its clients' clocks moved) or deleted.
          const end = replayRun(doc, updates, i, isCapturePoint, rangesOf, (edited) => {
            index++;
            if (edited) addEdits(pending, own.id, edited.author, 1);
          }, HISTORY_REPLAY);
          if (end > i) {
            i = end;
            head = updates[i - 1]!.seq;
            if (isCapturePoint(head)) capture(head);
            continue;
          }
        }
        rangesOf(update.update);
        index++;
        author = update.author;
        Y.applyUpdate(doc, update.update, HISTORY_REPLAY);
        author = undefined;
        head = update.seq;
        if (isCapturePoint(update.seq)) capture(update.seq);
        i++;
      }
    } finally {
      doc.off('afterTransaction', onTransaction);
    }
    const atHead = input.atHead ? readSurfaceContent(doc, input.atHead) : undefined;
    const checkpoint = transferable(Y.encodeStateAsUpdateV2(doc));
    captured.set(document, captures);
    if (checkpoint.byteLength > MAX_HELD_STATE_BYTES / 4) drop(document);
    else hold(document, head, doc, checkpoint.byteLength);
    const claimed = claims ? new Float64Array(claims) : null;
    return {
      result: { captures: captures.map(({ seq, surfaceId, editors }) => ({ seq, surfaceId, editors })), atHead, checkpoint, claims: claimed },
      transfer: claimed ? [checkpoint.buffer as ArrayBuffer, claimed.buffer] : [checkpoint.buffer as ArrayBuffer],
    };
  } catch (error) {
    // Replayed part way: the state is at no known position any more.
    drop(document);
    throw error;
  }
}

async function versions(input: { document: string; references: Array<[string, Uint8Array | null]> }): Promise<{ result: EncodedVersion[]; transfer: ArrayBuffer[] }> {
  const captures = captured.get(input.document);
  captured.delete(input.document);
  if (!captures) throw new Error(`The history thread holds no replay of ${input.document} to encode.`);
  const reference = new Map<string, SurfaceContent | null>();
  for (const [surfaceId, content] of input.references) reference.set(surfaceId, content ? await decodeContent<SurfaceContent>(content) : null);
  const result: EncodedVersion[] = [];
  for (const capture of captures) {
    result.push({ changes: countChanges(diffContents(reference.get(capture.surfaceId) ?? null, capture.content)), encoded: await encodeContent(capture.content) });
    reference.set(capture.surfaceId, capture.content);
  }
  return { result, transfer: result.map((version) => version.encoded.bytes.buffer as ArrayBuffer) };
}

serveWorkerTasks({
  async replay(input: ReplayInput) {
    return replay(input);
  },
  versions,
  async read(input: { document: string; seq: number; surface: HistorySurface; start?: StartState }) {
    const doc = stateAt(input.document, input.seq, input.start);
    const result = doc ? readSurfaceContent(doc, input.surface) : null;
    const entry = held.get(input.document);
    if (entry && entry.bytes > MAX_HELD_STATE_BYTES / 4) drop(input.document);
    return { result };
  },
  async scratch(input: { name: string; state: Uint8Array | null }) {
    scratches.get(input.name)?.doc.destroy();
    scratches.set(input.name, { doc: decoded(input.state), bytes: input.state?.byteLength ?? 0 });
    return { result: null };
  },
  async extendScratch(input: { name: string; updates: PackedUpdates }) {
    const scratch = scratches.get(input.name);
    if (!scratch) throw new Error(`The history thread holds no state named ${input.name}.`);
    // One transaction a page: nothing observes a scratch state, so Yjs's cleanup runs once, not once an update.
    scratch.doc.transact(() => {
      for (const update of unpack(input.updates)) Y.applyUpdate(scratch.doc, update.update, HISTORY_LOAD);
    }, HISTORY_LOAD);
    scratch.bytes += input.updates.bytes.byteLength;
    return { result: null };
  },
  async syncCopy(input: { state: Uint8Array }) {
    const copy = transferable(Y.convertUpdateFormatV2ToV1(input.state));
    return { result: copy, transfer: [copy.buffer as ArrayBuffer] };
  },
  async encodeScratch(input: { name: string }) {
    const scratch = scratches.get(input.name);
    scratches.delete(input.name);
    if (!scratch) throw new Error(`The history thread holds no state named ${input.name}.`);
    try {
      const state = transferable(Y.encodeStateAsUpdateV2(scratch.doc));
      return { result: state, transfer: [state.buffer as ArrayBuffer] };
    } finally {
      scratch.doc.destroy();
    }
  },
});
