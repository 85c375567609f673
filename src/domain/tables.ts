import { ApiError, errors, OverLimitError } from '../errors';
import type { Actor } from '../http/actor';
import { capsFor } from '../limits/plans';
import { listSubjectEvents } from '../persistence/events';
import { findRowMeta } from '../persistence/table-rows';
import type { Surface, Workspace } from '../persistence/schema';
import { listSurfaces } from '../persistence/workspaces';
import type { Services } from '../services';
import { tablesDocumentName } from '../sync/document-names';
import { serverOrigin } from '../sync/origins';
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
} from '../sync/table-document';
import type { ResolvedWorkspace } from '../http/workspace-access';
import { ensureSurfaceOfKind } from './surfaces';
import { upgradeUrl } from './workspaces';

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
  return (await listSurfaces(services.db, workspaceId)).filter((s) => s.kind === 'table');
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
async function tableSurfaceForWrite(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector): Promise<Surface> {
  return (await pickTableSurface(services, resolved.workspace, selector)) ?? ensureSurfaceOfKind(services, actor, resolved, 'table');
}

async function present(services: Services, workspaceId: string, rows: TableRow[]): Promise<RowRecord[]> {
  const meta = await findRowMeta(services.db, rows.map((r) => r.id));
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

function checkValues(columns: ColumnDef[], data: Record<string, unknown>, path: string[]) {
  const issues = validateCellValues(columns, data, { basePath: path });
  if (issues.length > 0) throw errors.validation(`Invalid cell values: ${issues.map((i) => i.message).join('; ')}`, issues);
}

export async function listWorkspaceRows(
  services: Services,
  workspace: Workspace,
  options: SurfaceSelector & { limit: number; after?: string; sort?: string },
): Promise<{ rows: RowRecord[]; nextCursor: string | null }> {
  const selected = options.surface !== undefined || options.surfaceId !== undefined;
  const surface = selected ? await pickTableSurface(services, workspace, options) : null;
  const sheetOrder = (await tableSurfaces(services, workspace.id)).map((s) => s.id);
  const descending = options.sort?.startsWith('-') ?? false;
  const page = await services.sync
    .read(tablesDocumentName(workspace.id), (doc) =>
      listRows(doc, {
        surfaceId: surface?.id,
        sortKey: options.sort ? options.sort.replace(/^-/, '') : undefined,
        descending,
        after: options.after ?? null,
        limit: options.limit,
        sheetOrder,
      }),
    )
    .catch(tableError);
  return { rows: await present(services, workspace.id, page.rows), nextCursor: page.nextCursor };
}

/**
 * A row must exist (404), and when the request names a sheet (`surface` or
 * `surfaceId`, in the query or the body) the row must be on it: a row
 * addressed on the wrong sheet is not found there.
 */
export async function assertRowOnSheet(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector): Promise<TableRow> {
  const named = await namedTableSurface(services, workspace, selector);
  const row = await services.sync.read(tablesDocumentName(workspace.id), (doc) => getRow(doc, rowId));
  if (!row || (named && row.surfaceId !== named.id)) throw errors.notFound('Row');
  return row;
}

export async function getWorkspaceRow(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<RowRecord> {
  const row = await assertRowOnSheet(services, workspace, rowId, selector);
  return (await present(services, workspace.id, [row]))[0]!;
}

export async function createRow(services: Services, actor: Actor, resolved: ResolvedWorkspace, input: SurfaceSelector & { data: Record<string, unknown> }): Promise<RowRecord> {
  const { workspace } = resolved;
  const surface = await tableSurfaceForWrite(services, actor, resolved, input);
  const plan = resolved.orgPlan;
  const cap = capsFor(plan).rowsPerWorkspace;
  const id = createTableId();
  const row = await services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      const current = countRows(doc);
      if (current >= cap) throw new OverLimitError('rows', current, cap, { plan, upgradeUrl: upgradeUrl(services) });
      checkValues(readColumns(doc, surface.id), input.data, ['data']);
      ensureSheet(doc, surface.id, null);
      seedColumnsFor(doc, surface.id, Object.keys(input.data), null);
      return insertRow(doc, { id, surfaceId: surface.id, data: input.data as RowData }, null);
    })
    .catch(tableError);
  return (await present(services, workspace.id, [row]))[0]!;
}

export async function updateRow(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  rowId: string,
  input: SurfaceSelector & { data?: Record<string, unknown>; position?: number },
): Promise<{ row: RowRecord; moved: boolean }> {
  const target = await namedTableSurface(services, workspace, input);
  let moved = false;
  const row = await services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      const current = getRow(doc, rowId);
      if (!current) throw errors.notFound('Row');
      const sheetId = target?.id ?? current.surfaceId;
      if (input.data) {
        checkValues(readColumns(doc, sheetId), input.data, ['data']);
        seedColumnsFor(doc, sheetId, Object.keys(input.data), null);
        updateRows(doc, [{ id: rowId, data: input.data as RowData }], null);
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
  return { row: (await present(services, workspace.id, [row]))[0]!, moved };
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
  const rows = await services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      const onSheet = (id: string) => {
        const row = getRow(doc, id);
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
  return present(services, workspace.id, rows);
}

export async function moveRowsToSurface(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  input: SurfaceSelector & { rowIds: string[] },
): Promise<{ moved: string[]; skipped: number }> {
  const target = await namedTableSurface(services, workspace, input);
  if (!target) throw errors.badRequest('Name the sheet to move to: `surface` (or `surfaceId`).', [{ path: ['surface'], code: 'required', message: 'required' }]);
  return services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      ensureSheet(doc, target!.id, null);
      return moveRows(doc, input.rowIds, target!.id, null);
    })
    .catch(tableError);
}

export async function deleteWorkspaceRow(services: Services, actor: Actor, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<void> {
  const sheet = await namedTableSurface(services, workspace, selector);
  const deleted = await services.sync.transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
    const row = getRow(doc, rowId);
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
