import type * as Y from 'yjs';
import { ApiError, errors, OverLimitError } from '../errors';
import type { Actor } from '../policy/actor';
import { capsFor } from '../limits/plans';
import { listSubjectEvents } from '../persistence/events';
import { findProjectedRowIds, findRowMeta, type RowMeta } from '../persistence/table-rows';
import type { Surface, Workspace } from '../persistence/schema';
import { cachedLiveSurfaces } from './live-surfaces';
import type { Services } from './services';
import type { CommitReceipt } from '../sync/document-sync';
import { tablesDocumentName } from '../model/document-names';
import { serverOrigin } from '../sync/origins';
import { beginLookup, endLookup, hasPassed, unpassedRows } from '../sync/table-passed';
import { rowDataAt } from '../sync/version-index';
import {
  addColumn,
  countRows,
  createTableId,
  deleteRow,
  ensureSheet,
  getRow,
  insertRow,
  listRows,
  moveRows,
  readColumns,
  replaceColumns,
  seedColumnsFor,
  setRowPosition,
  TableDocumentError,
  updateRows,
  validateCellValues,
  type ColumnDef,
  type NewColumn,
  type ReplacementColumn,
  type RowData,
  type TableRow,
} from '../model/table/document';
import type { ResolvedWorkspace } from './resolved-workspace';
import { ensureSurfaceOfKind } from './surfaces';
import { upgradeUrl } from './workspaces';
import { baseOfWrite, preconditionFailed, readVersionTag, type WriteBase } from './version-tags';

/**
 * Rows and columns over REST and MCP: every write is one Y transaction on
 * the workspace's table document, attributed to the caller, durable (with
 * its events) before it returns.
 */

export type SurfaceSelector = { surface?: string; surfaceId?: string };

export type RowRecord = {
  id: string;
  workspaceId: string;
  surfaceId: string;
  position: number;
  data: RowData;
  createdByPrincipalId: string | null;
  updatedByPrincipalId: string | null;
  createdAt: string;
  updatedAt: string;
};

/** Maps the table module's refusals (thrown before anything is written) to API errors. */
export function tableError(error: unknown): never {
  if (error instanceof TableDocumentError) {
    switch (error.code) {
      case 'row_not_found':
        throw new ApiError(404, 'not_found', error.message, error.details);
      case 'sheet_not_found':
        throw new ApiError(404, 'not_found', error.message, error.details);
      case 'row_exists':
      case 'column_exists':
        throw errors.conflict(error.message, error.details);
      default:
        throw errors.badRequest(error.message, error.details);
    }
  }
  throw error;
}

async function tableSurfaces(services: Services, workspaceId: string): Promise<Surface[]> {
  return (await cachedLiveSurfaces(services, workspaceId)).filter((s) => s.kind === 'table');
}

/** The named table surface, or the primary (first) one; 404 when a named one does not exist. */
export async function pickTableSurface(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<Surface | null> {
  const surfaces = await tableSurfaces(services, workspace.id);
  if (selector.surfaceId !== undefined || selector.surface !== undefined) {
    const found = surfaces.find((s) => (selector.surfaceId !== undefined ? s.id === selector.surfaceId : s.slug === selector.surface));
    if (!found) throw errors.notFound('Table surface');
    return found;
  }
  return surfaces[0] ?? null;
}

/** The sheet a request names (`surface` or `surfaceId`), or null when it names none; 404 when it names an unknown one. */
async function namedTableSurface(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<Surface | null> {
  return selector.surface !== undefined || selector.surfaceId !== undefined ? pickTableSurface(services, workspace, selector) : null;
}

/** A doc-only workspace gets its first sheet on its first row or column write (`surface.created`). */
export async function tableSurfaceForWrite(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector): Promise<Surface> {
  return (await pickTableSurface(services, resolved.workspace, selector)) ?? ensureSurfaceOfKind(services, actor, resolved, 'table');
}

/** Rows as the API shows them; attribution from the commit's receipt when the caller has one, else from the projection. */
async function present(services: Services, workspaceId: string, rows: TableRow[], stored?: ReadonlyMap<string, RowMeta>): Promise<RowRecord[]> {
  const missing = rows.filter((r) => !stored?.has(r.id)).map((r) => r.id);
  const meta = missing.length === 0 ? stored! : new Map([...(await findRowMeta(services.db, workspaceId, missing)), ...(stored ?? [])]);
  const now = services.clock.now().toISOString();
  return rows.map((row) => {
    const m = meta.get(row.id);
    return {
      id: row.id,
      workspaceId,
      surfaceId: row.surfaceId,
      position: row.position,
      data: row.data,
      createdByPrincipalId: m?.createdById ?? null,
      updatedByPrincipalId: m?.updatedById ?? null,
      createdAt: m?.createdAt.toISOString() ?? now,
      updatedAt: m?.updatedAt.toISOString() ?? now,
    };
  });
}

/**
 * Brings the table document's record of rows past the row cap up to date
 * with the row projection (src/sync/table-passed.ts). REST and MCP show, and
 * count toward the cap, only rows that have passed it: a sync client's new
 * row is in the live document before the commit that judges it, and a
 * refused one until its removal (docs/LIMITS.md "Rows over sync"). When the
 * document holds rows not yet known to have passed, this first waits for
 * the commits of the changes already applied, so a row being judged shows
 * once judged instead of being left out.
 */
export async function lookUpPassedRows(services: Services, workspaceId: string): Promise<void> {
  const document = tablesDocumentName(workspaceId);
  const unknown = await services.sync.read(document, (doc) => unpassedRows(doc).size > 0);
  if (!unknown) return;
  // Rows the cap is judging right now (or judges again after a restart) are judged before the lookup, not left out.
  await services.sync.changesCommitted(document);
  const { doc, lookup } = await services.sync.read(document, (doc) => ({ doc, lookup: beginLookup(doc) }));
  if (lookup.ids.length === 0) return;
  let found: string[] = [];
  try {
    found = await findProjectedRowIds(services.db, workspaceId, lookup.ids);
  } finally {
    endLookup(doc, lookup, found);
  }
}

/** The row if it exists and has passed the row cap (call `lookUpPassedRows` first). */
function passedRow(doc: Y.Doc, rowId: string): TableRow | null {
  return hasPassed(doc, rowId) ? getRow(doc, rowId) : null;
}

function checkValues(columns: ColumnDef[], data: Record<string, unknown>, path: string[]) {
  const issues = validateCellValues(columns, data, { basePath: path });
  if (issues.length > 0) throw errors.validation(`Invalid cell values: ${issues.map((i) => i.message).join('; ')}`, issues);
}

export async function listWorkspaceRows(
  services: Services,
  workspace: Workspace,
  options: SurfaceSelector & { limit: number; after?: string; sort?: string },
): Promise<{ rows: RowRecord[]; nextCursor: string | null; etag: string }> {
  const selected = options.surface !== undefined || options.surfaceId !== undefined;
  const surface = selected ? await pickTableSurface(services, workspace, options) : null;
  const sheetOrder = (await tableSurfaces(services, workspace.id)).map((s) => s.id);
  const descending = options.sort?.startsWith('-') ?? false;
  const etag = await readVersionTag(services, tablesDocumentName(workspace.id));
  await lookUpPassedRows(services, workspace.id);
  const page = await services.sync
    .read(tablesDocumentName(workspace.id), (doc) =>
      listRows(doc, {
        hidden: unpassedRows(doc),
        surfaceId: surface?.id,
        sortKey: options.sort ? options.sort.replace(/^-/, '') : undefined,
        descending,
        after: options.after ?? null,
        limit: options.limit,
        sheetOrder,
      }),
    )
    .catch(tableError);
  return { rows: await present(services, workspace.id, page.rows), nextCursor: page.nextCursor, etag };
}

/**
 * A row must exist (404), and when the request names a sheet (`surface` or
 * `surfaceId`, in the query or the body) the row must be on it: a row
 * addressed on the wrong sheet is not found there.
 */
export async function assertRowOnSheet(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector): Promise<TableRow> {
  const named = await namedTableSurface(services, workspace, selector);
  await lookUpPassedRows(services, workspace.id);
  const row = await services.sync.read(tablesDocumentName(workspace.id), (doc) => passedRow(doc, rowId));
  if (!row || (named && row.surfaceId !== named.id)) throw errors.notFound('Row');
  return row;
}

/** One row and the version token (`ETag`) of the table document it was read at. */
export async function getWorkspaceRow(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<{ row: RowRecord; etag: string }> {
  const etag = await readVersionTag(services, tablesDocumentName(workspace.id));
  const row = await assertRowOnSheet(services, workspace, rowId, selector);
  return { row: (await present(services, workspace.id, [row]))[0]!, etag };
}

/** A cell both the caller and someone else changed since the caller's base version: theirs is kept. */
export type CellConflict = { column: string; base?: unknown; yours: unknown; theirs?: unknown };

/**
 * The caller's cells merged as a diff against their base: a cell nobody
 * else changed since is written, one someone else changed (to another value)
 * is left as they made it and reported.
 */
function mergeCells(base: RowData, yours: Record<string, unknown>, theirs: RowData): { data: Record<string, unknown>; conflicts: CellConflict[] } {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null) && (a === undefined) === (b === undefined);
  const data: Record<string, unknown> = Object.create(null);
  const conflicts: CellConflict[] = [];
  for (const [column, value] of Object.entries(yours)) {
    const had = Object.hasOwn(base, column) ? base[column] : undefined;
    const has = Object.hasOwn(theirs, column) ? theirs[column] : undefined;
    if (same(has, had)) data[column] = value;
    else if (!same(has, value)) conflicts.push({ column, ...(had === undefined ? {} : { base: had }), yours: value, ...(has === undefined ? {} : { theirs: has }) });
  }
  return { data, conflicts };
}

/** How many times a write near the row cap waits for rows still being judged before it gives up on them. */
const ROW_CAP_WAITS = 10;

/**
 * Runs `change` once the workspace has room for `adding(doc)` more rows,
 * counting only rows that passed the cap (402 otherwise). Rows still being
 * judged (a sync client's, a concurrent REST write's) may all be kept, so
 * when they could fill the room the write waits for their commit and counts
 * again: the table never ends above the cap, and `current` in the 402 never
 * counts a row that is refused a moment later.
 */
export async function transactWithinRowCap<T>(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  adding: (doc: Y.Doc) => number,
  change: (doc: Y.Doc) => T,
): Promise<{ result: T; receipt: CommitReceipt }> {
  const { workspace } = resolved;
  const plan = resolved.orgPlan;
  const cap = capsFor(plan).rowsPerWorkspace;
  const document = tablesDocumentName(workspace.id);
  // Unpassed rows that outlived a wait for every commit before it: refused (their removal under way) or left by a crash, never kept by this instance.
  const settled = new Set<string>();
  for (let waits = 0; ; waits++) {
    await lookUpPassedRows(services, workspace.id);
    let waitFor = null as string[] | null;
    const attempt = await services.sync
      .transactWithReceipt(document, serverOrigin(actor.principal), (doc) => {
        const added = adding(doc);
        const unpassed = unpassedRows(doc);
        const current = countRows(doc) - unpassed.size;
        if (added > 0 && current + added > cap) throw new OverLimitError('rows', current, cap, { plan, upgradeUrl: upgradeUrl(services) });
        const judging = [...unpassed].filter((id) => !settled.has(id));
        if (added > 0 && current + judging.length + added > cap && waits < ROW_CAP_WAITS) {
          waitFor = judging;
          return { waiting: true as const };
        }
        return { waiting: false as const, value: change(doc) };
      })
      .catch(tableError);
    if (!attempt.result.waiting) return { result: attempt.result.value, receipt: attempt.receipt };
    await services.sync.changesCommitted(document);
    for (const id of waitFor ?? []) settled.add(id);
  }
}

export async function createRow(services: Services, actor: Actor, resolved: ResolvedWorkspace, input: SurfaceSelector & { data: Record<string, unknown> }): Promise<RowRecord> {
  const { workspace } = resolved;
  const surface = await tableSurfaceForWrite(services, actor, resolved, input);
  const id = createTableId();
  const { result: row, receipt } = await transactWithinRowCap(
    services,
    actor,
    resolved,
    () => 1,
    (doc) => {
      checkValues(readColumns(doc, surface.id), input.data, ['data']);
      ensureSheet(doc, surface.id, null);
      seedColumnsFor(doc, surface.id, Object.keys(input.data), null);
      return insertRow(doc, { id, surfaceId: surface.id, data: input.data as RowData }, null);
    },
  );
  return (await present(services, workspace.id, [row], receipt.rows))[0]!;
}

/**
 * A partial merge of cells, and/or a move. With a base (`If-Match` or
 * `baseVersion`: a token a read returned), cells are merged as a diff
 * against the row at that version (see `mergeCells`) and the answer carries
 * the conflicts and the row as it is now with its new token.
 */
export async function updateRow(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  rowId: string,
  input: SurfaceSelector & { data?: Record<string, unknown>; position?: number; base?: WriteBase },
): Promise<{ row: RowRecord; moved: boolean; etag?: string; conflicts?: CellConflict[] }> {
  const target = await namedTableSurface(services, workspace, input);
  const document = tablesDocumentName(workspace.id);
  const baseSeq = input.base ? await baseOfWrite(services, document, input.base) : null;
  const baseData = baseSeq === null ? undefined : await rowDataAt(services.db, document, rowId, baseSeq);
  if (baseSeq !== null && baseData === undefined) {
    throw preconditionFailed('base_unavailable', 'The base version is no longer kept (bases stay usable for an hour after the read); read the row again and redo the change on it.');
  }
  let moved = false;
  let conflicts: CellConflict[] = [];
  await lookUpPassedRows(services, workspace.id);
  const { result: row, receipt } = await services.sync
    .transactWithReceipt(document, serverOrigin(actor.principal), (doc) => {
      const current = passedRow(doc, rowId);
      if (!current) throw errors.notFound('Row');
      const sheetId = target?.id ?? current.surfaceId;
      // A row that did not exist at the base (made in between) has nothing to merge against.
      const data = input.data && baseData ? mergeCells(baseData, input.data, current.data) : { data: input.data, conflicts: [] };
      conflicts = data.conflicts;
      if (data.data) {
        checkValues(readColumns(doc, sheetId), data.data, ['data']);
        seedColumnsFor(doc, sheetId, Object.keys(data.data), null);
        updateRows(doc, [{ id: rowId, data: data.data as RowData }], null);
      }
      if (target && target.id !== current.surfaceId) {
        ensureSheet(doc, target.id, null);
        moveRows(doc, [rowId], target.id, null, { position: input.position });
        moved = true;
      } else if (input.position !== undefined) {
        setRowPosition(doc, rowId, input.position, null);
      }
      return getRow(doc, rowId)!;
    })
    .catch(tableError);
  if (baseSeq === null) return { row: (await present(services, workspace.id, [row], receipt.rows))[0]!, moved };
  const current = await getWorkspaceRow(services, workspace, rowId);
  return { row: current.row, moved, etag: current.etag, conflicts };
}

export async function bulkUpdateRows(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  updates: Array<{ id: string; data: Record<string, unknown> }>,
  selector: SurfaceSelector = {},
): Promise<RowRecord[]> {
  // A named sheet scopes the batch: a row on another sheet is not found there.
  const sheet = await namedTableSurface(services, workspace, selector);
  await lookUpPassedRows(services, workspace.id);
  const { result: rows, receipt } = await services.sync
    .transactWithReceipt(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      const onSheet = (id: string) => {
        const row = passedRow(doc, id);
        return row !== null && (!sheet || row.surfaceId === sheet.id);
      };
      // Everything is checked before the first write: one bad entry writes nothing.
      const missing = updates.flatMap((u, i) => (onSheet(u.id) ? [] : [{ path: ['updates', String(i), 'id'], code: 'row_not_found', message: `No row ${u.id}.` }]));
      if (missing.length > 0) throw new ApiError(404, 'not_found', 'A row in the batch does not exist; nothing was written.', missing);
      updates.forEach((u, i) => checkValues(readColumns(doc, getRow(doc, u.id)!.surfaceId), u.data, ['updates', String(i), 'data']));
      for (const u of updates) seedColumnsFor(doc, getRow(doc, u.id)!.surfaceId, Object.keys(u.data), null);
      updateRows(doc, updates as Array<{ id: string; data: RowData }>, null);
      return updates.map((u) => getRow(doc, u.id)!);
    })
    .catch(tableError);
  return present(services, workspace.id, rows, receipt.rows);
}

export async function moveRowsToSurface(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  input: SurfaceSelector & { rowIds: string[] },
): Promise<{ moved: string[]; skipped: number }> {
  const target = await namedTableSurface(services, workspace, input);
  if (!target) throw errors.badRequest('Name the sheet to move to: `surface` (or `surfaceId`).', [{ path: ['surface'], code: 'required', message: 'required' }]);
  await lookUpPassedRows(services, workspace.id);
  return services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      ensureSheet(doc, target!.id, null);
      // A row the cap has not let through does not exist here yet.
      const missing = input.rowIds.flatMap((id, i) => (hasPassed(doc, id) ? [] : [{ path: ['rowIds', String(i)], code: 'row_not_found', message: `No row ${id}.` }]));
      if (missing.length > 0) throw new TableDocumentError('row_not_found', 'A row to move does not exist.', missing);
      return moveRows(doc, input.rowIds, target!.id, null);
    })
    .catch(tableError);
}

export async function deleteWorkspaceRow(services: Services, actor: Actor, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<void> {
  const sheet = await namedTableSurface(services, workspace, selector);
  await lookUpPassedRows(services, workspace.id);
  const deleted = await services.sync.transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
    const row = passedRow(doc, rowId);
    return row && (!sheet || row.surfaceId === sheet.id) ? deleteRow(doc, rowId, null) : false;
  });
  if (!deleted) throw errors.notFound('Row');
}

/** A row's events, oldest first; with a named sheet, only while the row is on it. */
export async function rowHistory(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}) {
  if (selector.surface !== undefined || selector.surfaceId !== undefined) await assertRowOnSheet(services, workspace, rowId, selector);
  const events = await listSubjectEvents(services.db, workspace.id, rowId);
  if (events.length === 0) throw errors.notFound('Row');
  return events;
}

// Columns

export async function getColumns(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<ColumnDef[]> {
  const surface = await pickTableSurface(services, workspace, selector);
  if (!surface) return [];
  return services.sync.read(tablesDocumentName(workspace.id), (doc) => readColumns(doc, surface.id));
}

export async function putColumns(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector, columns: ReplacementColumn[]): Promise<ColumnDef[]> {
  const { workspace } = resolved;
  const positions = columns.map((c) => c.position).sort((a, b) => a - b);
  if (positions.some((p, i) => p !== i)) {
    throw errors.badRequest('Column positions must be contiguous from 0.', [{ path: ['columns'], code: 'non_contiguous_positions', message: `got ${positions.join(', ')}` }]);
  }
  const keys = columns.map((c) => c.key);
  if (new Set(keys).size !== keys.length) throw errors.badRequest('Column keys must be unique.', [{ path: ['columns'], code: 'duplicate_key', message: 'duplicate key' }]);
  const surface = await tableSurfaceForWrite(services, actor, resolved, selector);
  return services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => replaceColumns(doc, surface.id, columns, null))
    .catch(tableError);
}

export async function postColumn(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector, column: NewColumn) {
  const { workspace } = resolved;
  const surface = await tableSurfaceForWrite(services, actor, resolved, selector);
  const { position: _ignored, ...rest } = column;
  return services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      ensureSheet(doc, surface.id, null);
      const added = addColumn(doc, surface.id, rest, null);
      return { column: added, columns: readColumns(doc, surface.id) };
    })
    .catch(tableError);
}
