import type * as Y from 'yjs';
import type { Author } from '../model/schemas/common';
import { capsFor } from '../limits/plans';
import type { Executor, Tx } from '../persistence/database';
import {
  countWorkspaceRows,
  deleteRowProjections,
  findWorkspaceEventContext,
  lockWorkspaceForRowCap,
  replaceRowProjections,
  upsertRows,
  type RowMeta,
  type RowWrite,
} from '../persistence/table-rows';
import { parseDocumentName } from '../model/document-names';
import type { CommitReceipt, DocumentSync } from '../sync/document-sync';
import type { ObservedChange, TransactionObserver } from '../sync/transaction-observer';
import { isConnectionOrigin, isRelayedOrigin, isServerOrigin, principalOfOrigin, sendToConnection, serverOrigin, SYSTEM_PRINCIPAL } from '../sync/origins';
import { countRows, deleteRow, dropLinksTo, getRow, holdsLinksTo, listRows, openReading, type CellReading, type TableChange, type TableRow, transactionChanges } from '../model/table/document';
import { trackedUnpassedRows } from '../sync/table-passed';
import { getView, type ViewDef } from '../model/table/views';
import { recordTableTransaction, type TableRunRecord } from '../model/table/runs';
import type { RunChangeWrite } from '../persistence/runs';
import type { AppendedRow, AppendHead } from '../persistence/document-log';
import { DocChanges, type DocChangesDeps, type DocDerived } from './doc-changes';
import { recordSeenSuggestions, type SeenSuggestion } from './suggestion-records';
import { rowSuggestionsSeen } from './suggestion-stamps';
import type { InboxFeed } from './inbox-feed';
import { recordEvents, publishEvents } from './emit';
import type { EventDraft, EventRecord } from '../model/event-record';

/**
 * The one observer: every committed change to a document, from REST, MCP or
 * a sync client, becomes events (audit log, SSE, webhooks) attributed to the
 * principal in its transaction origin, and updates the projections queries
 * need. Nothing else emits row or doc events. Table documents are diffed
 * here; doc and html documents in ./doc-changes.ts.
 */

type TableDerived = {
  kind: 'tables';
  workspaceId: string;
  changes: readonly TableChange[];
  /** Row state right after the transaction (later transactions may change the doc before we persist). */
  rows: Map<string, TableRow | null>;
  /** The formula and rollup cells of those rows as they read right after it: row events carry them, the projection does not. */
  formulas: Map<string, Record<string, unknown>>;
  /** How many rows the document held right after the transaction. */
  docRows: number;
  /** Saved views the transaction changed, as they read right after it (null: deleted, or its sheet is gone). */
  views: Map<string, ViewDef | null>;
  /** Rows it deleted that link cells still name (a peer deleted them without `dropLinksTo`): the server takes them out after the commit. */
  danglingLinks: string[];
  /** Row suggestions the transaction added: recorded (once each) with the change. */
  suggestions: SeenSuggestion[];
  /** What the transaction did, in detail, when it joined a run (docs/RUNS.md). */
  runRecords: TableRunRecord[];
};

type Derived = TableDerived | DocDerived;

/** Thrown inside `persistAlone`'s write when the commit needs more than one statement: nothing was written (or it was rolled back). */
const DECLINED = new Error('the commit needs a transaction');

type Persisted = { publish(): void; deferred: number[]; receipts?: Array<CommitReceipt | undefined>; appended?: AppendedRow[] | null };

type WorkspaceEventContext = NonNullable<Awaited<ReturnType<typeof findWorkspaceEventContext>>>;

/** Rows a sync client created past the row cap, refused in the commit that recorded them (docs/LIMITS.md "Rows over sync"). */
type Refusal = { workspaceId: string; rowIds: string[]; cap: number; origin: unknown };

/** What one `persist` call learns about refused rows; applied once its transaction has committed. */
type RefusalLedger = { refusals: Refusal[]; refusedNow: Set<string>; forgotten: string[] };

/** The message a sync client gets on its connection (Hocuspocus stateless) when its rows are refused. */
export const ROWS_REFUSED_MESSAGE = 'trellis.rows_refused';

// Seven parameters an event; Postgres allows 65,535 a statement.
const EVENTS_PER_INSERT = 1_000;


/** What the observer needs; the full bag (src/domain/services.ts) satisfies it. */
export type DocumentObserverDeps = DocChangesDeps & {
  /** Whether other instances share documents (Redis): then the row cap is always counted in the database. */
  cluster: { redisConfigured: boolean };
  /** Signals open inbox streams of the people a new suggestion notifies. */
  inbox: Pick<InboxFeed, 'notify'>;
};

export class DocumentObserver implements TransactionObserver<Derived> {
  constructor(
    private readonly services: DocumentObserverDeps,
    /** The engine it observes, to take back rows a sync client created over the cap. */
    private readonly engine: Pick<DocumentSync, 'transact'>,
  ) {
    this.docs = new DocChanges(services);
  }

  private readonly docs: DocChanges;

  async flush() {
    await this.docs.flushBursts();
  }

  async settle(documentName: string) {
    await this.docs.flushBursts(documentName);
  }

  /** The last document name derive parsed: a typist's keystrokes are one transaction each, all in one document. */
  private parsedName: { name: string; parsed: ReturnType<typeof parseDocumentName> } | null = null;

  derive(documentName: string, doc: Y.Doc, transaction: Y.Transaction, run: string | null): Derived | null {
    if (this.parsedName?.name !== documentName) this.parsedName = { name: documentName, parsed: parseDocumentName(documentName) };
    const parsed = this.parsedName.parsed;
    if (!parsed) return null;
    if (parsed.kind !== 'tables') return this.docs.derive(documentName, parsed, doc, transaction, run);
    // The diff the caches that drop what a transaction changed took in the same cleanup (computed.ts), not taken again.
    const changes = transactionChanges(transaction);
    const suggestions = rowSuggestionsSeen(doc, transaction);
    if (changes.length === 0 && suggestions.length === 0) return null;
    const rows = new Map<string, TableRow | null>();
    const views = new Map<string, ViewDef | null>();
    const formulas = new Map<string, Record<string, unknown>>();
    let reading: CellReading | null = null;
    for (const change of changes) {
      if ('rowId' in change) {
        const row = change.kind === 'row.deleted' ? null : getRow(doc, change.rowId);
        rows.set(change.rowId, row);
        if (row) {
          reading ??= openReading(doc, { hidden: trackedUnpassedRows(doc), now: this.services.clock.now().getTime() });
          const cells = reading.formulaCells(row.id, row.surfaceId);
          if (Object.keys(cells).length > 0) formulas.set(row.id, cells);
        }
      }
      if ('viewId' in change) views.set(change.viewId, change.kind === 'view.deleted' ? null : getView(doc, change.viewId));
    }
    const deleted = changes.flatMap((change) => (change.kind === 'row.deleted' ? [change.rowId] : []));
    // Relayed updates are repaired by the instance that accepted them.
    const danglingLinks = deleted.length > 0 && !isRelayedOrigin(transaction.origin) && holdsLinksTo(doc, deleted) ? deleted : [];
    const runRecords = run ? recordTableTransaction(transaction, changes, rows) : [];
    return { kind: 'tables', workspaceId: parsed.workspaceId, changes, rows, formulas, docRows: countRows(doc), views, danglingLinks, suggestions, runRecords };
  }

  /**
   * Consecutive changes of one document (group commit): one context lookup,
   * one projection write for all their rows, which also inserts the first
   * 1,000 events (then one audit-log insert per 1,000 more). Events of a sync
   * client's change are keyed by its update's sequence number, so deriving
   * it again (after a crash) records them once.
   * Each table change gets a receipt: its rows as stored.
   */
  async persist(tx: Tx, documentName: string, changes: ObservedChange<Derived>[], append: AppendHead | null = null): Promise<Persisted> {
    return (await this.persistIn(tx, documentName, changes, append, false))!;
  }

  /**
   * `persist` with no transaction open: the commit's whole write (the append
   * riding in the projection's upsert, with the runs' changes and the
   * events) as one statement, atomic on its own, so the commit needs no
   * `begin` and `commit` (two round trips). Null, with nothing written, when
   * the changes need more than one statement; the caller then persists them
   * in a transaction. A read before it (the event context, the webhook
   * filters) may still be sent; an organisation with a matching webhook
   * gets its deliveries in a transaction of their own with the events
   * (emit.ts `recordEvents`).
   */
  persistAlone(db: Executor, documentName: string, changes: ObservedChange<Derived>[], append: AppendHead): Promise<Persisted | null> {
    return this.persistIn(db, documentName, changes, append, true);
  }

  private async persistIn(tx: Executor, documentName: string, changes: ObservedChange<Derived>[], append: AppendHead | null, alone: boolean): Promise<Persisted | null> {
    // The commit's log append rides in the projection's upsert when nothing before it writes: server changes of a table, no suggestion among
    // them (their records are written first), none whose created rows are capped (a replay's: tableEvents writes them before the upsert).
    const rides =
      append !== null && changes.every(({ derived, origin }) => derived.kind === 'tables' && derived.suggestions.length === 0 && isServerOrigin(origin) && !capsSyncWrites(origin));
    // Alone, only changes whose events and rows are all written by the upsert: nothing before it writes (tableEvents writes only for suggestions and capped rows).
    if (alone && (!rides || changes.length === 0)) return null;
    const appendedFirst = append && !rides ? await append.alone() : null;
    const none = { publish: () => {}, deferred: [], appended: appendedFirst };
    if (changes.length === 0) return none;
    const context = await this.contextFor(tx, changes[0]!.derived.workspaceId, changes.map((c) => c.derived));
    // No context (the workspace is gone): the caller appends the update on its own, a statement more.
    if (!context) return alone ? null : none;
    const drafts: EventDraft[] = [];
    const deferred: number[] = [];
    const rows = new RowWrites();
    const stored = new Map<string, RowMeta>();
    const ledger: RefusalLedger = { refusals: [], refusedNow: new Set(), forgotten: [] };
    // Typing replayed after a crash: one doc.updated per person and surface, as the live bursts would have made.
    const replayedTyping = new Map<string, EventDraft>();
    const notify: string[] = [];
    const runWrites: RunChangeWrite[] = [];
    for (const { derived, origin, seqs, run } of changes) {
      const principal = principalOfOrigin(origin);
      const making =
        derived.kind === 'tables'
          ? this.tableEvents(tx as Tx, context, derived, principal, { rows, stored, origin, ledger, notify })
          : this.docs.persist(tx as Tx, context, derived, principal, { documentName, seqs, deferred, run, runWrites }, notify);
      // A keystroke joining its burst answers without a promise: no await (a microtask and a promise) for each of thousands.
      const made = Array.isArray(making) ? making : await making;
      if (run && derived.kind === 'tables') runWrites.push(...tableRunWrites(run, documentName, derived, ledger.refusedNow));
      if (seqs.length > 0) made.forEach((draft, n) => (draft.dedupeKey ??= `${documentName}:${seqs[0]}:${n}`));
      for (const draft of made) {
        if (!(isReplay(origin) && draft.event === 'doc.updated')) {
          drafts.push(draft);
          continue;
        }
        const key = `${draft.subjectId}\u0000${principal?.id ?? ''}`;
        const first = replayedTyping.get(key);
        if (!first) replayedTyping.set(key, { ...draft, data: { ...draft.data, changes: 1 } });
        else first.data = { ...first.data, changes: Number(first.data.changes) + 1 };
      }
    }
    drafts.push(...replayedTyping.values());
    // Alone: a webhook that wants these events has its deliveries written with them, a statement more (the outbox answers from its cache).
    if (alone && (drafts.length > EVENTS_PER_INSERT || (await this.services.webhooks.outbox.wants(tx, drafts)))) return null;
    // The runs' changes and the first events ride in the projection's upsert: two round trips fewer in the commit.
    const at = this.services.clock.now();
    let appended = appendedFirst;
    let records: EventRecord[];
    try {
      records = await recordEvents(this.services, tx, drafts.slice(0, EVENTS_PER_INSERT), async (executor, events, now) => {
        // Alone, recordEvents opens a transaction only for deliveries (a webhook added since the check above): declined, rolled back.
        if (alone && executor.isTransaction) throw DECLINED;
        const written = await rows.write(executor, context.id, at, runWrites, { drafts: events, now }, rides ? append : null, alone);
        if (!written) throw DECLINED;
        for (const [id, meta] of written.stored) stored.set(id, meta);
        appended ??= written.appended;
        return written.events;
      });
    } catch (error) {
      if (error === DECLINED) return null;
      throw error;
    }
    for (let from = EVENTS_PER_INSERT; from < drafts.length; from += EVENTS_PER_INSERT) {
      records.push(...(await recordEvents(this.services, tx, drafts.slice(from, from + EVENTS_PER_INSERT))));
    }
    const receipts = changes.map(({ derived }) => (derived.kind === 'tables' ? { rows: rowsOf(derived, stored) } : undefined));
    const repairs = changes.flatMap(({ derived, origin }) =>
      derived.kind === 'tables' && derived.danglingLinks.length > 0 ? [{ rowIds: derived.danglingLinks, principal: principalOfOrigin(origin) }] : [],
    );
    return {
      publish: () => {
        publishEvents(this.services, records);
        for (const recipient of new Set(notify)) this.services.inbox.notify(recipient);
        this.afterRefusals(documentName, ledger);
        this.dropDanglingLinks(documentName, repairs);
      },
      deferred,
      receipts,
      appended,
    };
  }

  /** After the engine rebuilt a document from its log: projections from the rebuilt state, nothing derived from the old one. */
  async reproject(tx: Tx, documentName: string, doc: Y.Doc): Promise<void> {
    const parsed = parseDocumentName(documentName);
    if (!parsed) return;
    if (parsed.kind === 'tables') {
      await replaceRowProjections(tx, parsed.workspaceId, listRows(doc).rows, this.services.clock.now());
      return;
    }
    await this.docs.reproject(tx, documentName, parsed, doc);
  }

  private readonly contexts = new Map<string, { at: number; context: WorkspaceEventContext }>();

  /**
   * Slugs for event records, cached briefly: every write of a busy document
   * would otherwise look them up inside its commit. A surface the cache does
   * not know (just created) forces a fresh lookup; a renamed slug shows in
   * events within CONTEXT_TTL_MS.
   */
  private async contextFor(tx: Executor, workspaceId: string, derived: Derived[]): Promise<WorkspaceEventContext | null> {
    const cached = this.contexts.get(workspaceId);
    const surfaceIds = derived.flatMap(surfaceIdsOf);
    if (cached && Date.now() - cached.at < CONTEXT_TTL_MS && surfaceIds.every((id) => cached.context.surfaces.has(id))) return cached.context;
    const context = await findWorkspaceEventContext(tx, workspaceId);
    if (this.contexts.size > 10_000) this.contexts.clear();
    if (context) this.contexts.set(workspaceId, { at: Date.now(), context });
    return context ?? null;
  }

  /**
   * Row and column events of one table transaction; its rows join the
   * batch's projection write. A sync client's new rows are held to the
   * workspace's row cap: the batch so far is written first, so the count
   * sees every earlier change.
   */
  private async tableEvents(
    tx: Tx,
    context: WorkspaceEventContext,
    derived: TableDerived,
    principal: Author | null,
    { rows, stored, origin, ledger, notify }: { rows: RowWrites; stored: Map<string, RowMeta>; origin: unknown; ledger: RefusalLedger; notify: string[] },
  ): Promise<EventDraft[]> {
    const workspace = { id: context.id, slug: context.slug, org: { slug: context.orgSlug } };
    const surfaceRef = (surfaceId: string | null) => {
      const surface = surfaceId ? context.surfaces.get(surfaceId) : undefined;
      return surface ? { surface: { id: surface.id, slug: surface.slug } } : {};
    };
    const by = principal ? { id: principal.id, type: principal.principalType } : null;
    const drafts: EventDraft[] = [];
    if (derived.suggestions.length > 0) {
      const recorded = await recordSeenSuggestions(tx, context, derived.suggestions, principal, this.services.clock.now());
      drafts.push(...recorded.drafts);
      notify.push(...recorded.notify);
    }
    const created = new Set<string>();
    for (const change of derived.changes) {
      if (change.kind === 'columns.updated') {
        drafts.push({ event: 'columns.updated', orgId: context.orgId, workspace, ...surfaceRef(change.surfaceId), principal, data: { surfaceId: change.surfaceId } });
        continue;
      }
      if (change.kind === 'view.created' || change.kind === 'view.updated' || change.kind === 'view.deleted') {
        const data: Record<string, unknown> = { id: change.viewId, surfaceId: change.surfaceId };
        if (change.kind !== 'view.deleted') data.view = derived.views.get(change.viewId) ?? null;
        if (change.kind === 'view.updated') data.changedFields = change.changedFields;
        drafts.push({ event: change.kind, orgId: context.orgId, workspace, ...surfaceRef(change.surfaceId), principal, subjectId: change.viewId, data });
        continue;
      }
      // A refused row is gone for everyone but the client that made it, until the server's removal reaches it: its later changes are not events.
      if (ledger.refusedNow.has(change.rowId) || this.refusedRows.has(refusedKey(context.id, change.rowId))) {
        if (change.kind === 'row.deleted') ledger.forgotten.push(refusedKey(context.id, change.rowId));
        continue;
      }
      const row = derived.rows.get(change.rowId) ?? null;
      if (change.kind === 'row.deleted' || !row) {
        rows.delete(change.rowId);
        drafts.push({
          event: 'row.deleted',
          orgId: context.orgId,
          workspace,
          ...surfaceRef(change.kind === 'row.deleted' ? change.surfaceId : null),
          principal,
          subjectId: change.rowId,
          data: { id: change.rowId, surfaceId: change.kind === 'row.deleted' ? change.surfaceId : null },
        });
        continue;
      }
      if (change.kind === 'row.created') created.add(row.id);
      rows.put({ id: row.id, workspaceId: context.id, surfaceId: row.surfaceId, position: row.position, data: row.data }, by, change.kind === 'row.created');
      // Recomputed formula and rollup cells of this row; a row whose rollup changed because a linked row did gets no event of its own.
      const data: Record<string, unknown> = { id: row.id, data: { ...row.data, ...derived.formulas.get(row.id) }, position: row.position, surfaceId: row.surfaceId };
      if (change.kind === 'row.updated') data.changedKeys = change.changedKeys;
      if (change.kind === 'row.moved_surface') data.fromSurfaceId = change.fromSurfaceId;
      drafts.push({ event: change.kind, orgId: context.orgId, workspace, ...surfaceRef(row.surfaceId), principal, subjectId: row.id, data });
    }
    if (!capsSyncWrites(origin) || created.size === 0) return drafts;
    for (const [id, meta] of (await rows.write(tx, context.id, this.services.clock.now()))!.stored) stored.set(id, meta);
    const { refused, cap, plan } = await this.rowsOverCap(tx, context.id, created, derived.docRows);
    if (refused.length === 0) return drafts;
    const out = new Set(refused);
    await deleteRowProjections(tx, context.id, refused);
    for (const id of refused) {
      stored.delete(id);
      ledger.refusedNow.add(id);
    }
    ledger.refusals.push({ workspaceId: context.id, rowIds: refused, cap, origin });
    const kept = drafts.filter((draft) => !(draft.subjectId && out.has(draft.subjectId)));
    kept.push({
      event: 'row.refused',
      orgId: context.orgId,
      workspace,
      principal: SYSTEM_PRINCIPAL,
      data: { rowIds: refused, reason: 'over_limit', limit: 'rows', cap, plan, author: principal },
    });
    return kept;
  }

  /**
   * The rows of this change past the workspace's row cap: the cap is counted
   * in this transaction, under a lock on the workspace, with the change's
   * deletions and its new rows already written (so they are taken off the
   * count), so changes committed earlier (from any client, any instance)
   * keep their rows and this one takes what is left, in the order it
   * created them. Rows that existed before are never refused, even over the
   * cap (after a downgrade).
   */
  private async rowsOverCap(tx: Tx, workspaceId: string, created: ReadonlySet<string>, docRows: number) {
    const plan = await lockWorkspaceForRowCap(tx, workspaceId);
    if (!plan) return { refused: [], cap: 0, plan };
    const cap = capsFor(plan).rowsPerWorkspace;
    // One instance (no Redis relay) holds every change of the workspace's table: the projection then holds
    // at most the rows its document held after this change, so a document within the cap refuses nothing,
    // and the count (which grows with the workspace) is not needed.
    if (!this.services.cluster.redisConfigured && docRows <= cap) return { refused: [], cap, plan };
    const room = Math.max(0, cap - ((await countWorkspaceRows(tx, workspaceId)) - created.size));
    return { refused: [...created].slice(room), cap, plan };
  }

  /**
   * A sync client that deleted rows without taking them out of the link
   * cells naming them (code that knows only the layout) gets the links
   * dropped by a follow-up change once its own is committed, attributed to
   * the same principal (the system when none), so each linking row has its
   * `row.updated` naming the link column. Detached, as `afterRefusals`.
   */
  private dropDanglingLinks(documentName: string, repairs: Array<{ rowIds: string[]; principal: Author | null }>) {
    for (const repair of repairs) {
      setImmediate(() => {
        this.engine
          .transact(documentName, serverOrigin(repair.principal ?? SYSTEM_PRINCIPAL, 'system'), (doc) => dropLinksTo(doc, repair.rowIds))
          .catch((error) => this.services.log.error({ err: error, documentName }, 'could not drop links to deleted rows'));
      });
    }
  }

  /** Refused rows not yet removed from the document, as `workspaceId\0rowId`. */
  private readonly refusedRows = new Set<string>();

  /**
   * Once refusals are committed: the client is told on its connection, and
   * the server removes the rows from the document (a change every client
   * receives). Detached, as a change made from inside the commit queue
   * would wait behind itself.
   */
  private afterRefusals(documentName: string, ledger: RefusalLedger) {
    for (const key of ledger.forgotten) this.refusedRows.delete(key);
    for (const refusal of ledger.refusals) {
      for (const id of refusal.rowIds) this.refusedRows.add(refusedKey(refusal.workspaceId, id));
      const message = `This workspace holds at most ${refusal.cap} rows on its plan; rows created past it were removed.`;
      sendToConnection(refusal.origin, JSON.stringify({ type: ROWS_REFUSED_MESSAGE, reason: 'over_limit', limit: 'rows', cap: refusal.cap, rowIds: refusal.rowIds, message }));
      this.services.log.info({ workspaceId: refusal.workspaceId, refused: refusal.rowIds.length, cap: refusal.cap }, 'refused rows a sync client created over the plan cap');
      setImmediate(() => {
        this.engine
          .transact(documentName, serverOrigin(SYSTEM_PRINCIPAL, 'system'), (doc) => {
            for (const id of refusal.rowIds) if (getRow(doc, id)) deleteRow(doc, id, null);
          })
          .catch((error) => this.services.log.error({ err: error, documentName }, 'could not remove refused rows from the document'));
      });
    }
  }
}

const CONTEXT_TTL_MS = 2_000;

function refusedKey(workspaceId: string, rowId: string) {
  return `${workspaceId}\u0000${rowId}`;
}

/** Row caps hold sync clients' changes (and those changes derived again from the log); REST and MCP check before they write. */
function capsSyncWrites(origin: unknown): boolean {
  return isConnectionOrigin(origin) || isReplay(origin);
}

function isReplay(origin: unknown): boolean {
  return isServerOrigin(origin) && origin.context.via === 'replay';
}

/** A table change's run records as rows of `run_changes`; rows the cap refused are not the run's. */
function tableRunWrites(run: string, documentName: string, derived: TableDerived, refused: ReadonlySet<string>): RunChangeWrite[] {
  return derived.runRecords
    .filter((record) => !('rowId' in record) || !refused.has(record.rowId))
    .map((record) => ({ runId: run, document: documentName, surfaceId: record.kind === 'row.moved' ? record.toSurfaceId : record.surfaceId, kind: record.kind, change: record }));
}

function surfaceIdsOf(derived: Derived): string[] {
  if (derived.kind !== 'tables') return [derived.surfaceId];
  const ids: string[] = [];
  for (const change of derived.changes) {
    if ('surfaceId' in change && change.surfaceId) ids.push(change.surfaceId);
    if ('toSurfaceId' in change) ids.push(change.toSurfaceId);
  }
  for (const row of derived.rows.values()) if (row) ids.push(row.surfaceId);
  return ids;
}

/**
 * The row projection's writes for a batch of changes: each row's final
 * state, its creator if the batch created it, and its last writer; rows
 * deleted last are deleted. One upsert and one delete for the whole batch.
 */
class RowWrites {
  private readonly rows = new Map<string, RowWrite | null>();

  put(row: Omit<RowWrite, 'createdBy' | 'updatedBy'>, by: RowWrite['createdBy'], created: boolean) {
    const earlier = this.rows.get(row.id);
    // Created earlier in this batch: still new to the projection, now also edited.
    if (earlier && !created) this.rows.set(row.id, { ...row, createdBy: earlier.createdBy, updatedBy: by });
    else this.rows.set(row.id, { ...row, createdBy: by, updatedBy: created ? null : by });
  }

  delete(id: string) {
    this.rows.set(id, null);
  }

  /**
   * Writes what was collected (and `runChanges`, what runs changed in the batch, and `events`, its events) and starts afresh.
   * `alone` (no transaction): all of it in one statement, or nothing written and null.
   */
  async write(tx: Executor, workspaceId: string, at: Date, runChanges: readonly RunChangeWrite[] = [], events?: { drafts: EventDraft[]; now: Date }, append: AppendHead | null = null, alone = false) {
    const upserts: RowWrite[] = [];
    const deleted: string[] = [];
    for (const [id, row] of this.rows) {
      if (row) upserts.push(row);
      else deleted.push(id);
    }
    if (alone) {
      if (deleted.length > 0) return null;
      const written = await upsertRows(tx, upserts, at, runChanges, events ?? { drafts: [], now: at }, append, true);
      if (written) this.rows.clear();
      return written;
    }
    this.rows.clear();
    // A commit's append goes before its first write: ahead of the deletes, or in the upsert.
    const appendedFirst = append && deleted.length > 0 ? await append.alone() : null;
    await deleteRowProjections(tx, workspaceId, deleted);
    const written = await upsertRows(tx, upserts, at, runChanges, events, appendedFirst ? null : append);
    return { ...written, appended: appendedFirst ?? written.appended };
  }
}

function rowsOf(derived: TableDerived, stored: Map<string, RowMeta>): Map<string, RowMeta> {
  const rows = new Map<string, RowMeta>();
  for (const id of derived.rows.keys()) {
    const meta = stored.get(id);
    if (meta) rows.set(id, meta);
  }
  return rows;
}
