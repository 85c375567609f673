import * as Y from 'yjs';
import { errors } from '../errors';
import { DOC_BODY_FIELD } from '../model/doc/body';
import { HTML_FIELD } from '../model/html';
import { foldText, presentText, type FoldedText, type TextRecord } from '../model/runs/text';
import type { ChangeRecord, RunRecord } from '../model/schemas/runs';
import { cellsOf, changedCells, foldTableRecords, type FoldedTable, type TableRunRecord } from '../model/table/runs';
import { findRun, listChangesOfRuns, listReverts, listRunChanges, listRuns, type StoredRunChange } from '../persistence/runs';
import type { RunRow, Surface } from '../persistence/schema';
import { findPrincipals } from '../persistence/workspaces';
import type { Actor } from '../policy/actor';
import type { WorkspaceAction } from '../policy/index';
import type { RunSurfaceKind } from '../policy/runs';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { cachedLiveSurfaces } from './live-surfaces';
import { AUTOMATIC_RUN_IDLE_MS, idleEnd, runErrors, statusOf } from './run-registry';

/**
 * Runs (docs/RUNS.md): a unit of one principal's work in one workspace.
 * Which run a write joins is ./run-registry.ts; what a run changed is
 * recorded by the observer as its updates are derived
 * (src/events/run-changes.ts); this module lists runs and reads what they
 * changed. Reverting is ./run-revert.ts.
 */

/** Actions whose writes join a run: everything that changes what a run records. */
export const RUN_WRITES: ReadonlySet<WorkspaceAction> = new Set(['write_rows', 'edit_columns', 'edit_doc', 'write_files', 'comment', 'suggest', 'write_versions', 'decide_suggestions']);

/**
 * Called by access once it knows the workspace and that the request
 * writes: decides the run of the request's writes, in the scope the
 * request's actor carries (src/lib/run-scope.ts). An actor outside a
 * request (jobs, tests calling the domain) joins nothing.
 */
export async function joinRunOfRequest(services: Services, actor: Actor | null, resolved: Pick<ResolvedWorkspace, 'workspace'>, action: WorkspaceAction): Promise<void> {
  const scope = actor?.request?.run;
  if (!scope || !actor || !RUN_WRITES.has(action)) return;
  if (scope.joined && scope.joined.principalId === actor.principal.id) return;
  scope.joined = await services.runs.join(actor, resolved.workspace.id, scope.requested);
}

// ------------------------------------------------------------------ reading

/** A run of the workspace (404 `run_not_found` otherwise). */
export async function findWorkspaceRun(services: Services, workspaceId: string, id: string): Promise<RunRow> {
  const run = await findRun(services.db, id);
  if (!run || run.workspaceId !== workspaceId) throw runErrors.notFound();
  return run;
}

export async function listWorkspaceRuns(
  services: Services,
  workspaceId: string,
  query: { principal?: string; status?: 'open' | 'ended'; limit: number; after?: string },
  surfaces: readonly Surface[],
): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  const rows = await listRuns(services.db, workspaceId, {
    principalId: query.principal,
    status: query.status,
    limit: query.limit + 1,
    after,
    idleBefore: new Date(services.clock.now().getTime() - AUTOMATIC_RUN_IDLE_MS),
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    runs: await presentRuns(services, page, surfaces),
    nextCursor: rows.length > query.limit && last ? Buffer.from(JSON.stringify([last.startedAt.toISOString(), last.id])).toString('base64url') : null,
  };
}

function decodeCursor(cursor: string): { startedAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const startedAt = new Date(at);
    if (typeof id === 'string' && !Number.isNaN(startedAt.getTime())) return { startedAt, id };
  } catch {
    // answered below
  }
  throw errors.badRequest('Invalid cursor: pass the nextCursor of the previous page.', [{ path: ['after'], code: 'invalid_cursor', message: 'not a cursor of this list' }]);
}

/** One run as the API shows it, with the summary of what it changed. */
export async function presentRun(services: Services, run: RunRow): Promise<{ run: RunRecord }> {
  const [presented] = await presentRuns(services, [run], await cachedLiveSurfaces(services, run.workspaceId));
  return { run: presented! };
}

/**
 * Runs as the API shows them, each with the summary of what it changed.
 * `folded`: the records of runs the caller has read already, not read again.
 */
export async function presentRuns(services: Services, rows: readonly RunRow[], surfaces: readonly Surface[], folded: ReadonlyMap<string, FoldedRun> = new Map()): Promise<RunRecord[]> {
  const ids = rows.map((row) => row.id);
  const [changes, reverts, principals] = await Promise.all([
    listChangesOfRuns(services.db, ids.filter((id) => !folded.has(id))),
    listReverts(services.db, ids),
    findPrincipals(services.db, rows.map((row) => row.principalId)),
  ]);
  const now = services.clock.now();
  return rows.map((row) => {
    const status = statusOf(row, now);
    return {
      id: row.id,
      name: row.name,
      principal: principals.get(row.principalId) ?? { principalType: row.principalType, id: row.principalId, name: 'Unknown', avatarUrl: null },
      automatic: row.automatic,
      status,
      startedAt: row.startedAt.toISOString(),
      endedAt: row.endedAt ? row.endedAt.toISOString() : status === 'ended' ? idleEnd(row).toISOString() : null,
      lastWriteAt: row.lastWriteAt ? row.lastWriteAt.toISOString() : null,
      reverts: row.reverts,
      revertedBy: reverts.find((revert) => revert.reverts === row.id)?.id ?? null,
      summary: summarize(folded.get(row.id) ?? foldRun(changes.get(row.id) ?? []), surfaces),
    };
  });
}

// ------------------------------------------------------------------ folding

export type FoldedFile = { seq: number; kind: 'file.created' | 'file.deleted'; surfaceId: string; fileId: string; name: string };
export type FoldedComment = { seq: number; surfaceId: string | null; commentId: string; body: string };

/** A run's records, folded per document: its net effect, which is what it shows and what a revert undoes. */
export type FoldedRun = {
  table: { document: string; folded: FoldedTable } | null;
  texts: Array<{ document: string; surfaceId: string; kind: 'doc' | 'html'; folded: FoldedText }>;
  files: FoldedFile[];
  comments: FoldedComment[];
  /** Surface ids in the order the run first changed each. */
  order: string[];
};

export function foldRun(changes: readonly StoredRunChange[]): FoldedRun {
  const tableRecords: TableRunRecord[] = [];
  let tableDocument: string | null = null;
  const textRecords = new Map<string, { surfaceId: string; kind: 'doc' | 'html'; records: TextRecord[] }>();
  const files: FoldedFile[] = [];
  const comments: FoldedComment[] = [];
  const order: string[] = [];
  for (const change of changes) {
    if (change.surfaceId && !order.includes(change.surfaceId)) order.push(change.surfaceId);
    if (change.kind === 'doc.text' || change.kind === 'html.text') {
      const text = textRecords.get(change.document) ?? { surfaceId: change.surfaceId!, kind: change.kind === 'doc.text' ? 'doc' : 'html', records: [] };
      text.records.push(change.change as TextRecord);
      textRecords.set(change.document, text);
    } else if (change.kind === 'file.created' || change.kind === 'file.deleted') {
      files.push({ seq: change.seq, ...(change.change as Omit<FoldedFile, 'seq'>) });
    } else if (change.kind === 'comment.created') {
      comments.push({ seq: change.seq, ...(change.change as Omit<FoldedComment, 'seq'>) });
    } else {
      tableDocument = change.document;
      tableRecords.push(change.change as TableRunRecord);
    }
  }
  return {
    table: tableDocument ? { document: tableDocument, folded: foldTableRecords(tableRecords) } : null,
    texts: [...textRecords].map(([document, text]) => ({ document, surfaceId: text.surfaceId, kind: text.kind, folded: foldText(text.records) })),
    files: foldFiles(files),
    comments,
    order,
  };
}

/** A file the run added and deleted again is no change of it; one it deleted and added back neither. */
function foldFiles(files: FoldedFile[]): FoldedFile[] {
  const last = new Map<string, FoldedFile>();
  const first = new Map<string, FoldedFile>();
  for (const file of files) {
    if (!first.has(file.fileId)) first.set(file.fileId, file);
    last.set(file.fileId, file);
  }
  return [...first.values()].filter((file) => file.kind === last.get(file.fileId)!.kind);
}

function textChanged(folded: FoldedText): boolean {
  return !folded.inserted.empty || folded.deleted.length > 0 || folded.attributes.length > 0;
}

function summarize(run: FoldedRun, surfaces: readonly Surface[]): RunRecord['summary'] {
  const summary = { rowsCreated: 0, rowsUpdated: 0, rowsDeleted: 0, cellsChanged: 0, columnsChanged: 0, docsChanged: 0, surfaces: [] as string[] };
  const touched = new Set<string>();
  for (const row of run.table?.folded.rows.values() ?? []) {
    if (!row.existedBefore && row.existsAfter) summary.rowsCreated++;
    else if (row.existedBefore && !row.existsAfter) summary.rowsDeleted++;
    else if (row.existedBefore) {
      const cells = changedCells(row).size;
      if (cells === 0 && !row.moved) continue;
      summary.rowsUpdated++;
      summary.cellsChanged += cells;
    } else continue;
    touched.add((row.after.surfaceId ?? row.before.surfaceId)!);
  }
  for (const column of run.table?.folded.columns.values() ?? []) {
    summary.columnsChanged++;
    touched.add(column.surfaceId);
  }
  for (const text of run.texts) {
    if (!textChanged(text.folded)) continue;
    summary.docsChanged++;
    touched.add(text.surfaceId);
  }
  for (const file of run.files) touched.add(file.surfaceId);
  for (const comment of run.comments) if (comment.surfaceId) touched.add(comment.surfaceId);
  summary.surfaces = run.order.filter((id) => touched.has(id)).map((id) => slugOf(surfaces, id));
  return summary;
}

export function slugOf(surfaces: readonly Surface[], id: string): string {
  return surfaces.find((surface) => surface.id === id)?.slug ?? id;
}

/**
 * The run, and what it changed, per surface in the order it first changed
 * each: rows and their cells, columns, doc and html text (read against the
 * document for its order), files and comments. `reads`: what the caller may
 * read of them (files and comments need their own read actions). The run's
 * summary is folded from the same record, read once.
 */
export async function runChanges(
  services: Services,
  run: RunRow,
  surfaces: readonly Surface[],
  reads: { files: boolean; comments: boolean },
): Promise<{ run: RunRecord; changes: ChangeRecord[] }> {
  await services.sync.settleWorkspace(run.workspaceId);
  const folded = foldRun(await listRunChanges(services.db, run.id));
  const bySurface = new Map<string, ChangeRecord[]>();
  const add = (surfaceId: string, change: Unplaced) => {
    const list = bySurface.get(surfaceId) ?? [];
    list.push({ surface: slugOf(surfaces, surfaceId), surfaceId, ...change } as ChangeRecord);
    bySurface.set(surfaceId, list);
  };
  for (const column of folded.table?.folded.columns.values() ?? []) {
    if (!column.before) add(column.surfaceId, { kind: 'column.created', column: column.after! });
    else if (!column.after) add(column.surfaceId, { kind: 'column.deleted', column: column.before });
    else add(column.surfaceId, { kind: 'column.updated', before: column.before, column: column.after });
  }
  for (const row of folded.table?.folded.rows.values() ?? []) {
    if (!row.existedBefore) {
      if (row.existsAfter) add(row.after.surfaceId!, { kind: 'row.created', rowId: row.rowId, data: cellsOf(row.after.cells) });
      continue;
    }
    if (!row.existsAfter) {
      add(row.before.surfaceId!, { kind: 'row.deleted', rowId: row.rowId, data: cellsOf(row.before.cells) });
      continue;
    }
    const cells = changedCells(row);
    const surfaceId = row.after.surfaceId!;
    if (cells.size > 0) {
      const shown = Object.fromEntries([...cells].map(([key, cell]) => [key, { before: cell.before ?? null, after: cell.after ?? null }]));
      add(surfaceId, { kind: 'row.updated', rowId: row.rowId, cells: shown });
    }
    if (row.moved) add(surfaceId, { kind: 'row.moved', rowId: row.rowId, fromSurface: slugOf(surfaces, row.before.surfaceId!), position: row.after.position });
  }
  for (const text of folded.texts) {
    if (!textChanged(text.folded)) continue;
    const shown = await services.sync.read(text.document, (doc) => presentText(text.folded, textRoot(doc, text.kind)));
    if (shown.inserted.length > 0 || shown.deleted.length > 0 || text.folded.attributes.length > 0) add(text.surfaceId, { kind: text.kind === 'doc' ? 'doc.changed' : 'html.changed', ...shown });
  }
  if (reads.files) for (const file of folded.files) add(file.surfaceId, { kind: file.kind, fileId: file.fileId, name: file.name });
  if (reads.comments) for (const comment of folded.comments) add(comment.surfaceId ?? '', { kind: 'comment.created', commentId: comment.commentId, body: comment.body });
  const [presented] = await presentRuns(services, [run], surfaces, new Map([[run.id, folded]]));
  return { run: presented!, changes: [...folded.order, ''].flatMap((id) => bySurface.get(id) ?? []) };
}

/** A change before it is placed on its surface. */
type Unplaced = ChangeRecord extends infer C ? (C extends unknown ? Omit<C, 'surface' | 'surfaceId'> : never) : never;

/** The text root of a doc or html document (null when nothing was ever written to it). */
export function textRoot(doc: Y.Doc, kind: 'doc' | 'html'): Y.AbstractType<any> | null {
  return doc.share.get(kind === 'doc' ? DOC_BODY_FIELD : HTML_FIELD) ?? null;
}

/** The surfaces a folded run touched, with the Y document of each. */
export function touchedSurfaces(run: FoldedRun): Array<{ surfaceId: string; kind: RunSurfaceKind }> {
  const touched = new Map<string, RunSurfaceKind>();
  for (const row of run.table?.folded.rows.values() ?? []) {
    for (const id of [row.before.surfaceId, row.after.surfaceId]) if (id) touched.set(id, 'table');
  }
  for (const column of run.table?.folded.columns.values() ?? []) touched.set(column.surfaceId, 'table');
  for (const text of run.texts) if (textChanged(text.folded)) touched.set(text.surfaceId, text.kind);
  for (const file of run.files) touched.set(file.surfaceId, 'files');
  for (const comment of run.comments) if (comment.surfaceId && !touched.has(comment.surfaceId)) touched.set(comment.surfaceId, 'comments');
  return [...touched].map(([surfaceId, kind]) => ({ surfaceId, kind }));
}

