import type * as Y from 'yjs';
import type { Author } from '../model/schemas/common';
import type { Tx } from '../persistence/database';
import { replaceDocSections, type DocSectionRow } from '../persistence/doc-sections';
import type { Logger } from 'pino';
import type { Db } from '../persistence/database';
import type { EventDeps } from './emit';
import type { DocMention } from '../model/doc/mentions';
import { docTransactionDelta, MentionTracker, summarizeDelta, type DocDelta } from '../sync/doc-delta';
import { bodySections, settleBodySections } from '../model/doc/body-sections';
import { surfaceDocumentName, type ParsedDocumentName } from '../model/document-names';
import { isConnectionOrigin, isServerOrigin } from '../sync/origins';
import { markUpdatesDerived } from '../persistence/document-log';
import { publishEvents, recordEvents } from './emit';
import type { EventDraft } from '../model/event-record';
import { recordSeenSuggestions, type SeenSuggestion } from './suggestion-records';
import { docSuggestionsSeen } from './suggestion-stamps';
import { DOC_BODY_FIELD } from '../model/doc/body';
import { HTML_FIELD } from '../model/html';
import { mergeTextRecords, recordTextTransaction, type TextRecord } from '../model/runs/text';
import type { RunChangeWrite } from '../persistence/runs';
import { writeRunChanges } from './run-changes';

/**
 * Doc and html documents, for the observer (src/events/observer.ts):
 *
 * - `doc.updated` for every committed transaction that changed something,
 *   whoever made it, with `{ surfaceId, text }` (a one-line summary);
 * - `doc.mention_added` when a transaction makes a mention (kind + id) new
 *   to the body, with `{ surfaceId, mentions }` holding only the new ones;
 * - the `doc_sections` projection: rebuilt with the change itself for
 *   server-made changes (REST, MCP), and at most once per
 *   `SECTIONS_DEBOUNCE_MS` per document for sync clients, who send a
 *   transaction per keystroke. Events never lag; the projection may, by up
 *   to that delay.
 *
 * `derive` runs inside Yjs's afterTransaction and looks only at the
 * transaction's own structs (src/sync/doc-delta.ts); the projection reads
 * only the top-level blocks changed since it last ran
 * (src/model/doc/body-sections.ts), or takes the sections a doc import
 * computed in its conversion thread.
 */

export const SECTIONS_DEBOUNCE_MS = 2_000;

/**
 * A person typing commits a transaction per keystroke. Their `doc.updated`
 * events are coalesced per (surface, principal) into one per burst: emitted
 * after `TYPING_QUIET_MS` without an edit, or `TYPING_MAX_MS` after the
 * burst began, whichever comes first. One event per keystroke would flood
 * SSE subscribers, the audit log and webhook receivers (a free plan's
 * monthly webhook deliveries would last a paragraph). REST and MCP writes
 * each get their own event at once; mentions are never delayed.
 */
export const TYPING_QUIET_MS = 2_000;
export const TYPING_MAX_MS = 10_000;
/**
 * A burst also ends after this many updates: its updates stay underived
 * (unfoldable by compaction) until its event is recorded, so a stream faster
 * than any typist (a script, a replayed trace) must not hold back 10 s of
 * them (issue 21).
 */
export const TYPING_MAX_UPDATES = 2_000;
/** The keystrokes of a burst whose summaries its `doc.updated` joins. */
const BURST_SUMMARIES = 5;

type TypingBurst = {
  draft: EventDraft;
  summaries: string[];
  changes: number;
  startedAt: number;
  /** When its newest keystroke came: the one timer checks it when it fires, instead of a new timer a keystroke. */
  lastAt: number;
  timer: NodeJS.Timeout | null;
  /** The document and the log sequence numbers of the typed updates: marked derived when the burst's event is recorded. */
  documentName: string;
  seqs: number[];
  /** What the typed updates did for the runs they joined: recorded with the event, as their updates are marked derived then. */
  runWrites: RunChangeWrite[];
};

/**
 * Where a change's updates are in the log, for the typing bursts that take
 * them over, and the run it joined with the collector of what runs changed
 * (written in the transaction that marks the updates derived).
 */
export type ChangeLog = { documentName: string; seqs: readonly number[]; deferred: number[]; run: string | null; runWrites: RunChangeWrite[] };

export type DocDerived = {
  kind: 'doc' | 'html';
  workspaceId: string;
  surfaceId: string;
  /** What the transaction did, for `doc.updated`'s one-line summary (made only where an event shows it). */
  delta: DocDelta;
  mentionsAdded: DocMention[];
  /**
   * Sections to project with this change (server-made changes to doc
   * bodies), else null: `read` reads the live document's, called under the
   * projection's lock (src/persistence/doc-sections.ts), not when the change
   * was made.
   */
  sections: { generation: number; read: () => DocSectionRow[] } | null;
  /** Made by a sync client (typing): its `doc.updated` is coalesced into the burst. */
  fromClient: boolean;
  /** Suggestions the transaction marked: recorded (once each) with the change. */
  suggestions: SeenSuggestion[];
  /** What the transaction did to the text, in detail, when it joined a run (docs/RUNS.md). */
  runRecord: TextRecord | null;
};

type EventContext = {
  id: string;
  slug: string;
  orgId: string;
  orgSlug: string;
  surfaces: Map<string, { id: string; slug: string }>;
};

/** Per document name: a counter of observed changes, the newest one projected, the pending debounce. */
type ProjectionState = { generation: number; projected: number; timer: NodeJS.Timeout | null };

/** What deriving doc events needs; the full bag (src/domain/services.ts) satisfies it. */
export type DocChangesDeps = EventDeps & { db: Db; log: Logger };

export class DocChanges {
  private readonly mentions = new MentionTracker();
  private readonly watched = new WeakSet<Y.Doc>();
  private readonly projections = new Map<string, ProjectionState>();

  constructor(private readonly services: DocChangesDeps) {}

  derive(documentName: string, parsed: ParsedDocumentName, doc: Y.Doc, transaction: Y.Transaction, run: string | null): DocDerived | null {
    if (parsed.kind === 'tables' || !parsed.surfaceId) return null;
    this.watch(doc);
    const delta = docTransactionDelta(transaction);
    if (!delta) return null;
    const root = run ? doc.share.get(parsed.kind === 'html' ? HTML_FIELD : DOC_BODY_FIELD) : undefined;
    const runRecord = root ? recordTextTransaction(transaction, root) : null;
    const fromClient = !isServerOrigin(transaction.origin);
    const { workspaceId, surfaceId } = parsed;
    if (parsed.kind === 'html') return { kind: 'html', workspaceId, surfaceId, delta, runRecord, mentionsAdded: [], sections: null, fromClient, suggestions: [] };

    const mentionsAdded = this.mentions.added(transaction, delta.mentionElements);
    const state = this.projectionOf(documentName);
    state.generation++;
    let sections: DocDerived['sections'] = null;
    if (!fromClient) {
      // REST and MCP writes project at once; this also covers any client edit still waiting for the debounce.
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
      settleBodySections(doc, transaction);
      sections = { generation: state.generation, read: () => this.readSections(doc, state) };
    } else {
      this.scheduleProjection(documentName, doc, workspaceId, surfaceId, state);
    }
    const suggestions = docSuggestionsSeen(doc, transaction, surfaceId);
    return { kind: 'doc', workspaceId, surfaceId, delta, runRecord, mentionsAdded, sections, fromClient, suggestions };
  }

  /**
   * Events (and, for server-made changes, the projection) inside the
   * engine's transaction. A keystroke that only joins its typing burst
   * answers at once, without a promise: a typist's batch holds thousands.
   */
  persist(tx: Tx, context: EventContext, derived: DocDerived, principal: Author | null, log: ChangeLog, notify: string[]): EventDraft[] | Promise<EventDraft[]> {
    const drafts: EventDraft[] = [];
    const runWrite: RunChangeWrite | null =
      log.run && derived.runRecord ? { runId: log.run, document: log.documentName, surfaceId: derived.surfaceId, kind: `${derived.kind}.text`, change: derived.runRecord } : null;
    if (derived.fromClient) {
      // The burst records this change's doc.updated later: until then its updates stay underived in the log.
      this.addToBurst(context, derived, principal, log, runWrite);
      for (const seq of log.seqs) log.deferred.push(seq);
    } else {
      drafts.push(updatedDraft(context, derived, principal, summarizeDelta(derived.delta)));
      if (runWrite) log.runWrites.push(runWrite);
    }
    if (derived.mentionsAdded.length > 0) {
      drafts.push({ ...eventBase(context, derived, principal), event: 'doc.mention_added', data: { surfaceId: derived.surfaceId, mentions: derived.mentionsAdded } });
    }
    if (derived.suggestions.length === 0 && !derived.sections) return drafts;
    return this.persistWrites(tx, context, derived, principal, drafts, notify);
  }

  /** What a change writes besides its events: the suggestions it made, and the projection of a server-made change. */
  private async persistWrites(tx: Tx, context: EventContext, derived: DocDerived, principal: Author | null, drafts: EventDraft[], notify: string[]): Promise<EventDraft[]> {
    if (derived.suggestions.length > 0) {
      const recorded = await recordSeenSuggestions(tx, context, derived.suggestions, principal, this.services.clock.now());
      drafts.push(...recorded.drafts);
      notify.push(...recorded.notify);
    }
    if (derived.sections) {
      const state = this.projectionOf(surfaceDocumentName(derived.workspaceId, { id: derived.surfaceId, kind: derived.kind })!);
      // Skipped when a projection has read the document since this change (it read this change too).
      if (derived.sections.generation >= state.projected) {
        await replaceDocSections(tx, derived.workspaceId, derived.surfaceId, derived.sections.read, this.services.clock.now());
      }
    }
    return drafts;
  }

  private readonly bursts = new Map<string, TypingBurst>();

  private addToBurst(context: EventContext, derived: DocDerived, principal: Author | null, log: ChangeLog, runWrite: RunChangeWrite | null) {
    const key = `${derived.surfaceId}\u0000${principal?.id ?? ''}`;
    const now = Date.now();
    let burst = this.bursts.get(key);
    if (!burst) {
      // Its text is the burst's summaries, set when it is recorded.
      const draft = updatedDraft(context, derived, principal, '');
      burst = { draft, summaries: [], changes: 0, startedAt: now, lastAt: now, timer: null, documentName: log.documentName, seqs: [], runWrites: [] };
      this.bursts.set(key, burst);
    }
    burst.changes++;
    burst.lastAt = now;
    for (const seq of log.seqs) burst.seqs.push(seq);
    if (runWrite) addRunWrite(burst.runWrites, runWrite);
    // Only the first few keystrokes of a burst are summarised in its event.
    if (burst.summaries.length < BURST_SUMMARIES) {
      const summary = summarizeDelta(derived.delta);
      if (summary) burst.summaries.push(summary);
    }
    if (burst.seqs.length >= TYPING_MAX_UPDATES) {
      if (burst.timer) clearTimeout(burst.timer);
      burst.timer = null;
      void this.flushBurst(key);
      return;
    }
    if (!burst.timer) this.armBurst(key, burst, now);
  }

  /** The burst's one timer, due `TYPING_QUIET_MS` after its newest keystroke or `TYPING_MAX_MS` after its first; later keystrokes move the due time, not the timer. */
  private armBurst(key: string, burst: TypingBurst, now: number) {
    const due = Math.min(burst.lastAt + TYPING_QUIET_MS, burst.startedAt + TYPING_MAX_MS);
    burst.timer = setTimeout(() => {
      burst.timer = null;
      if (this.bursts.get(key) !== burst) return;
      const at = Date.now();
      if (at < Math.min(burst.lastAt + TYPING_QUIET_MS, burst.startedAt + TYPING_MAX_MS)) this.armBurst(key, burst, at);
      else void this.flushBurst(key);
    }, Math.max(0, due - now));
    burst.timer.unref();
  }

  private async flushBurst(key: string) {
    const burst = this.bursts.get(key);
    if (!burst) return;
    this.bursts.delete(key);
    const data = { ...burst.draft.data, text: burst.summaries.join(' … ').slice(0, 280), changes: burst.changes };
    const draft: EventDraft = { ...burst.draft, data, ...(burst.seqs.length > 0 ? { dedupeKey: `${burst.documentName}:${burst.seqs[0]}:typing` } : {}) };
    try {
      const records = await this.services.db.transaction().execute(async (tx) => {
        const recorded = await recordEvents(this.services, tx, [draft]);
        await writeRunChanges(tx, burst.runWrites, this.services.clock.now());
        await markUpdatesDerived(tx, burst.documentName, burst.seqs);
        return recorded;
      });
      publishEvents(this.services, records);
    } catch (error) {
      // The typed updates stay underived in the log: the next load derives them again.
      this.services.log.warn({ err: error }, 'could not record a doc.updated burst');
    }
  }

  /** The document's state was replaced (rebuilt from its log): forget what was tracked of it and project it again. */
  async reproject(tx: Tx, documentName: string, parsed: ParsedDocumentName, doc: Y.Doc) {
    this.mentions.forget(doc);
    if (parsed.kind !== 'doc' || !parsed.surfaceId) return;
    const state = this.projectionOf(documentName);
    state.generation++;
    await replaceDocSections(tx, parsed.workspaceId, parsed.surfaceId, () => this.readSections(doc, state), this.services.clock.now());
  }

  /** Emits the pending typing bursts now: of one document (compaction is about to fold its log), or all (shutdown, tests). */
  async flushBursts(documentName?: string) {
    // The bursts open now, not the ones typing opens while these are written: a Map's iteration would visit
    // a key deleted and set again, so a compaction waiting here under a steady stream never got its turn.
    for (const [key, burst] of [...this.bursts]) {
      if (documentName !== undefined && burst.documentName !== documentName) continue;
      if (burst.timer) clearTimeout(burst.timer);
      await this.flushBurst(key);
    }
  }


  /** Changes the observer does not see (the load, updates relayed from another instance) make the mention counts stale. */
  private watch(doc: Y.Doc) {
    if (this.watched.has(doc)) return;
    this.watched.add(doc);
    doc.on('afterTransaction', (transaction: Y.Transaction) => {
      if (!isServerOrigin(transaction.origin) && !isConnectionOrigin(transaction.origin)) this.mentions.forget(doc);
    });
  }

  private projectionOf(documentName: string): ProjectionState {
    let state = this.projections.get(documentName);
    if (!state) {
      state = { generation: 0, projected: 0, timer: null };
      this.projections.set(documentName, state);
    }
    return state;
  }

  private scheduleProjection(documentName: string, doc: Y.Doc, workspaceId: string, surfaceId: string, state: ProjectionState) {
    if (state.timer) return; // the pending run will read the document as it is then
    state.timer = setTimeout(() => {
      state.timer = null;
      void this.project(doc, workspaceId, surfaceId, state);
    }, SECTIONS_DEBOUNCE_MS);
    state.timer.unref();
  }

  /**
   * The live document's sections, read under the projection's lock: the
   * projection that commits last read it last, so search ends with the
   * newest text (read when the debounce fired, an older reading could
   * commit after a REST write's newer one).
   */
  private readSections(doc: Y.Doc, state: ProjectionState): DocSectionRow[] {
    state.projected = Math.max(state.projected, state.generation);
    return bodySections(doc);
  }

  private async project(doc: Y.Doc, workspaceId: string, surfaceId: string, state: ProjectionState) {
    if (state.generation <= state.projected) return;
    try {
      await this.services.db.transaction().execute((tx) => replaceDocSections(tx, workspaceId, surfaceId, () => this.readSections(doc, state), this.services.clock.now()));
    } catch (error) {
      // The projection is rebuilt on the next change; the document itself is safe in the log.
      this.services.log.warn({ err: error, surfaceId }, 'could not project doc sections');
    }
  }
}

/** What every event of a doc change names: the org, the workspace, the surface, who made it. */
function eventBase(context: EventContext, derived: DocDerived, principal: Author | null) {
  const surface = context.surfaces.get(derived.surfaceId);
  return {
    orgId: context.orgId,
    workspace: { id: context.id, slug: context.slug, org: { slug: context.orgSlug } },
    ...(surface ? { surface: { id: surface.id, slug: surface.slug } } : {}),
    principal,
    subjectId: derived.surfaceId,
  };
}

function updatedDraft(context: EventContext, derived: DocDerived, principal: Author | null, text: string): EventDraft {
  return { ...eventBase(context, derived, principal), event: 'doc.updated', data: { surfaceId: derived.surfaceId, text } };
}

/** A keystroke's record joins the one before it when both are of the same run and text: a burst writes a row per run, not per key. */
function addRunWrite(writes: RunChangeWrite[], write: RunChangeWrite) {
  const last = writes.at(-1);
  if (last && last.runId === write.runId && last.surfaceId === write.surfaceId && last.kind === write.kind) {
    last.change = mergeTextRecords(last.change as TextRecord, write.change as TextRecord);
    return;
  }
  writes.push({ ...write });
}
