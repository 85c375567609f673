import type * as Y from 'yjs';
import type { Principal } from '../http/actor';
import { capsFor } from '../limits/plans';
import type { Tx } from '../persistence/database';
import {
  countWorkspaceRows,
  newestRowIds,
  deleteRowProjections,
  findWorkspaceEventContext,
  replaceRowProjections,
  upsertRows,
  type RowProjection,
} from '../persistence/table-rows';
import type { Services } from '../services';
import { parseDocumentName } from '../sync/document-names';
import type { ObservedChange, SyncEngine, TransactionObserver } from '../sync/engine';
import { isServerOrigin, principalOfOrigin, serverOrigin, SYSTEM_PRINCIPAL } from '../sync/origins';
import { deleteRow, diffTableTransaction, getRow, listRows, type TableChange, type TableRow } from '../sync/table-document';
import { DocChanges, type DocDerived } from './doc-changes';
import { recordEvents, publishEvents } from './emit';
import type { EventDraft, EventRecord } from './types';

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
  changes: TableChange[];
  /** Row state right after the transaction (later transactions may change the doc before we persist). */
  rows: Map<string, TableRow | null>;
};

type Derived = TableDerived | DocDerived;

type WorkspaceEventContext = NonNullable<Awaited<ReturnType<typeof findWorkspaceEventContext>>>;

// Seven parameters an event; Postgres allows 65,535 a statement.
const EVENTS_PER_INSERT = 1_000;


export class DocumentObserver implements TransactionObserver<Derived> {
  constructor(
    private readonly services: Services,
    private readonly engine: SyncEngine,
  ) {
    this.docs = new DocChanges(services);
  }

  private readonly docs: DocChanges;

  async flush() {
    await this.docs.flushBursts();
  }

  derive(documentName: string, doc: Y.Doc, transaction: Y.Transaction): Derived | null {
    const parsed = parseDocumentName(documentName);
    if (!parsed) return null;
    if (parsed.kind !== 'tables') return this.docs.derive(documentName, parsed, doc, transaction);
    const changes = diffTableTransaction(transaction);
    if (changes.length === 0) return null;
    const rows = new Map<string, TableRow | null>();
    for (const change of changes) {
      if ('rowId' in change) rows.set(change.rowId, change.kind === 'row.deleted' ? null : getRow(doc, change.rowId));
    }
    return { kind: 'tables', workspaceId: parsed.workspaceId, changes, rows };
  }

  /**
   * Consecutive changes of one document (group commit): one context lookup,
   * one audit-log insert per 1,000 events. Events of a sync client's change
   * are keyed by its update's sequence number, so deriving it again (after a
   * crash) records them once.
   */
  async persist(tx: Tx, documentName: string, changes: ObservedChange<Derived>[]): Promise<{ publish(): void; deferred: number[] }> {
    const none = { publish: () => {}, deferred: [] };
    if (changes.length === 0) return none;
    const context = await this.contextFor(tx, changes[0]!.derived.workspaceId, changes.map((c) => c.derived));
    if (!context) return none;
    const drafts: EventDraft[] = [];
    const deferred: number[] = [];
    // Typing replayed after a crash: one doc.updated per person and surface, as the live bursts would have made.
    const replayedTyping = new Map<string, EventDraft>();
    for (const { derived, origin, seqs } of changes) {
      const principal = principalOfOrigin(origin);
      const made =
        derived.kind === 'tables'
          ? await this.persistTables(tx, context, derived, principal)
          : await this.docs.persist(tx, context, derived, principal, { documentName, seqs, deferred });
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
    const records: EventRecord[] = [];
    for (let from = 0; from < drafts.length; from += EVENTS_PER_INSERT) {
      records.push(...(await recordEvents(this.services, tx, drafts.slice(from, from + EVENTS_PER_INSERT))));
    }
    return { publish: () => publishEvents(this.services, records), deferred };
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
  private async contextFor(tx: Tx, workspaceId: string, derived: Derived[]): Promise<WorkspaceEventContext | null> {
    const cached = this.contexts.get(workspaceId);
    const surfaceIds = derived.flatMap(surfaceIdsOf);
    if (cached && Date.now() - cached.at < CONTEXT_TTL_MS && surfaceIds.every((id) => cached.context.surfaces.has(id))) return cached.context;
    const context = await findWorkspaceEventContext(tx, workspaceId);
    if (this.contexts.size > 10_000) this.contexts.clear();
    if (context) this.contexts.set(workspaceId, { at: Date.now(), context });
    return context ?? null;
  }

  /** Row and column events of one table transaction, and the row projection. */
  private async persistTables(tx: Tx, context: WorkspaceEventContext, derived: TableDerived, principal: Principal | null): Promise<EventDraft[]> {
    const now = this.services.clock.now();
    const workspace = { id: context.id, slug: context.slug, org: { slug: context.orgSlug } };
    const surfaceRef = (surfaceId: string | null) => {
      const surface = surfaceId ? context.surfaces.get(surfaceId) : undefined;
      return surface ? { surface: { id: surface.id, slug: surface.slug } } : {};
    };
    const drafts: EventDraft[] = [];
    const upserts: RowProjection[] = [];
    const created = new Set<string>();
    const deleted: string[] = [];

    for (const change of derived.changes) {
      if (change.kind === 'columns.updated') {
        drafts.push({ event: 'columns.updated', orgId: context.orgId, workspace, ...surfaceRef(change.surfaceId), principal, data: { surfaceId: change.surfaceId } });
        continue;
      }
      const row = derived.rows.get(change.rowId) ?? null;
      if (change.kind === 'row.deleted' || !row) {
        deleted.push(change.rowId);
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
      upserts.push({ id: row.id, workspaceId: context.id, surfaceId: row.surfaceId, position: row.position, data: row.data });
      const data: Record<string, unknown> = { id: row.id, data: row.data, position: row.position, surfaceId: row.surfaceId };
      if (change.kind === 'row.updated') data.changedKeys = change.changedKeys;
      if (change.kind === 'row.moved_surface') data.fromSurfaceId = change.fromSurfaceId;
      drafts.push({ event: change.kind, orgId: context.orgId, workspace, ...surfaceRef(row.surfaceId), principal, subjectId: row.id, data });
    }

    const by = principal ? { id: principal.id, type: principal.principalType } : null;
    await upsertRows(tx, dedupeById(upserts), by, now, created);
    await deleteRowProjections(tx, deleted);
    return drafts;
  }

  /**
   * A CRDT cannot refuse a client's update, so the row cap is enforced after
   * the fact: rows a sync client created beyond the plan's cap are removed
   * again by the server (and their removal is an event the client sees).
   */
  async afterClientChange(documentName: string, derived: Derived): Promise<void> {
    if (derived.kind !== 'tables' || !derived.changes.some((c) => c.kind === 'row.created')) return;
    // One at a time per workspace, so two follow-ups never both trim for the same excess.
    const previous = this.capChecks.get(derived.workspaceId) ?? Promise.resolve();
    const next = previous.then(() => this.trimRowsOverCap(documentName, derived.workspaceId));
    this.capChecks.set(derived.workspaceId, next.catch(() => {}));
    await next;
  }

  private readonly capChecks = new Map<string, Promise<void>>();

  /** The rows over the cap are the newest ones: whichever change comes last pays, whatever order follow-ups run in. */
  private async trimRowsOverCap(documentName: string, workspaceId: string) {
    const context = await findWorkspaceEventContext(this.services.db, workspaceId);
    if (!context) return;
    const cap = capsFor(context.plan).rowsPerWorkspace;
    const excess = (await countWorkspaceRows(this.services.db, workspaceId)) - cap;
    if (excess <= 0) return;
    const overflow = await newestRowIds(this.services.db, workspaceId, excess);
    this.services.log.info({ workspaceId, removed: overflow.length, cap }, 'removed rows created over the plan cap');
    await this.engine.transact(documentName, serverOrigin(SYSTEM_PRINCIPAL, 'system'), (doc) => {
      for (const id of overflow) deleteRow(doc, id, null);
    });
  }
}

const CONTEXT_TTL_MS = 2_000;

function isReplay(origin: unknown): boolean {
  return isServerOrigin(origin) && origin.context.via === 'replay';
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

function dedupeById(rows: RowProjection[]): RowProjection[] {
  return [...new Map(rows.map((r) => [r.id, r])).values()];
}
