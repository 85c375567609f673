import type * as Y from 'yjs';
import { errors, type ErrorDetail } from '../errors';
import type { Actor } from '../policy/actor';
import type { Workspace } from '../persistence/schema';
import { tablesDocumentName } from '../model/document-names';
import { ensureSheet, readColumns, type ColumnDef } from '../model/table/document';
import { checkRowQuery } from '../model/table/query';
import { createView, deleteView, getView, listViews, updateView, type ViewDef, type ViewFields, type ViewPatch } from '../model/table/views';
import { FILTER_OPS, RowFilter, SortKey } from '../model/schemas/tables';
import type { z } from 'zod';

type RowFilterInput = z.output<typeof RowFilter>;
import { serverOrigin } from '../sync/origins';
import { cachedLiveSurfaces } from './live-surfaces';
import type { Services } from './services';
import { pickTableSurface, tableError, type SurfaceSelector } from './tables';

/**
 * Saved views of a sheet over REST and MCP (docs/TABLES.md "Saved views"). They live
 * in the workspace's table document (src/model/table/views.ts), so every
 * write is one attributed Y transaction there, like a row's, and sync
 * clients see it at once. A write is checked against the sheet's columns
 * inside that transaction, before anything is written.
 */

export type { ViewDef };
export type NewViewInput = Partial<ViewFields> & { name: string };

/**
 * The views of the sheet the selector names, or of every table surface of
 * the workspace when it names none (each view carries its `surfaceId`), in
 * sheet order and then each sheet's view order.
 */
export async function listSheetViews(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<ViewDef[]> {
  const named = isNamed(selector) ? await pickTableSurface(services, workspace, selector) : null;
  const sheetOrder = await liveSheetOrder(services, workspace.id);
  const views = await services.sync.read(tablesDocumentName(workspace.id), (doc) => listViews(doc, named?.id));
  return views
    .filter((view) => sheetOrder.has(view.surfaceId))
    .sort((a, b) => sheetOrder.get(a.surfaceId)! - sheetOrder.get(b.surfaceId)!)
    .map(wellFormed);
}

/**
 * One view of the workspace, as `GET /rows?view=` applies it; 404 when the
 * workspace has no such view (a view id of another workspace is in another
 * document, so it is not found either) or its sheet is gone.
 */
export async function readView(services: Services, workspace: Workspace, viewId: string): Promise<ViewDef> {
  const sheetOrder = await liveSheetOrder(services, workspace.id);
  const view = await services.sync.read(tablesDocumentName(workspace.id), (doc) => getView(doc, viewId));
  if (!view || !sheetOrder.has(view.surfaceId)) throw errors.notFound('View');
  return wellFormed(view);
}

/** A new view of the named sheet (the primary table surface by default), after the sheet's other views unless `position` is given. */
export async function createSheetView(services: Services, actor: Actor, workspace: Workspace, selector: SurfaceSelector, input: NewViewInput): Promise<ViewDef> {
  const surface = await pickTableSurface(services, workspace, selector);
  if (!surface) throw errors.notFound('Table surface');
  const view = await services.sync
    .transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
      const kind = input.kind ?? 'grid';
      refuseIssues(viewIssues(readColumns(doc, surface.id), input, { kind, groupBy: input.groupBy ?? null }));
      ensureSheet(doc, surface.id, null);
      return createView(doc, surface.id, input, null);
    })
    .catch(tableError);
  return wellFormed(view);
}

/**
 * Sets the fields given and keeps the others. The fields given are checked
 * against the sheet's columns; whether a board has its status column is
 * checked on the view as it would be, when the patch sets `kind` or
 * `groupBy`. With a named sheet the view must be on it (404 otherwise).
 */
export async function updateSheetView(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  viewId: string,
  selector: SurfaceSelector,
  patch: ViewPatch,
): Promise<ViewDef> {
  const found = await viewForWrite(services, workspace, selector);
  const view = await services.sync.transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
    const current = found(doc, viewId);
    const touchesBoard = patch.kind !== undefined || patch.groupBy !== undefined;
    const after = { kind: patch.kind ?? current.kind, groupBy: patch.groupBy !== undefined ? patch.groupBy : current.groupBy };
    refuseIssues(viewIssues(readColumns(doc, current.surfaceId), patch, touchesBoard ? after : null));
    return updateView(doc, viewId, patch, null)!;
  });
  return wellFormed(view);
}

export async function deleteSheetView(services: Services, actor: Actor, workspace: Workspace, viewId: string, selector: SurfaceSelector): Promise<void> {
  const found = await viewForWrite(services, workspace, selector);
  await services.sync.transact(tablesDocumentName(workspace.id), serverOrigin(actor.principal), (doc) => {
    found(doc, viewId);
    deleteView(doc, viewId, null);
  });
}

/** A finder, run inside the write's transaction, for a view that exists, whose sheet is live, and that is on the named sheet if any. */
async function viewForWrite(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<(doc: Y.Doc, viewId: string) => ViewDef> {
  const named = isNamed(selector) ? await pickTableSurface(services, workspace, selector) : null;
  const sheetOrder = await liveSheetOrder(services, workspace.id);
  return (doc, viewId) => {
    const view = getView(doc, viewId);
    if (!view || !sheetOrder.has(view.surfaceId) || (named && view.surfaceId !== named.id)) throw errors.notFound('View');
    return view;
  };
}

function isNamed(selector: SurfaceSelector): boolean {
  return selector.surface !== undefined || selector.surfaceId !== undefined;
}

/** Live table surfaces by id, to their place in the workspace's surface order. A deleted surface's views stay in the document but are not shown. */
async function liveSheetOrder(services: Services, workspaceId: string): Promise<Map<string, number>> {
  const surfaces = (await cachedLiveSurfaces(services, workspaceId)).filter((s) => s.kind === 'table');
  return new Map(surfaces.map((s, index) => [s.id, index]));
}

/**
 * What a view's fields would break on this sheet: column keys it does not
 * have (422 naming the key), a filter or sort a row query would refuse, and
 * a board without a status column to group by. `board` is the kind and groupBy to check together, or null to leave
 * that pair alone.
 */
function viewIssues(columns: ColumnDef[], fields: ViewPatch, board: { kind: ViewFields['kind']; groupBy: string | null } | null): ErrorDetail[] {
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const issues: ErrorDetail[] = [];
  const unknown = (path: string[], key: string) => issues.push({ path, code: 'unknown_column', message: `This sheet has no column "${key}".` });
  for (const field of ['hiddenColumns', 'columnOrder'] as const) {
    fields[field]?.forEach((key, index) => {
      if (!byKey.has(key)) unknown([field, String(index)], key);
    });
  }
  if (typeof fields.groupBy === 'string' && !byKey.has(fields.groupBy)) unknown(['groupBy'], fields.groupBy);
  // The same check as a row query's: unknown columns, operators the column's type does not take, values that do not parse.
  issues.push(...checkRowQuery(columns, { filter: fields.filter, sort: fields.sort }));
  if (board?.kind === 'board') {
    const column = board.groupBy === null ? undefined : byKey.get(board.groupBy);
    if (board.groupBy === null) {
      issues.push({ path: ['groupBy'], code: 'required', message: 'A board groups its cards by a status column: name its key in `groupBy`.' });
    } else if (column && column.type !== 'status') {
      issues.push({ path: ['groupBy'], code: 'not_status_column', message: `A board groups by a status (single-select) column; "${board.groupBy}" is a ${column.type} column.` });
    } else if (!column && fields.groupBy === undefined) {
      unknown(['groupBy'], board.groupBy);
    }
  }
  return issues;
}

/** 422, or 400 for an operator that does not exist (an unknown enum value, which the schema leaves to the query check to name). */
function refuseIssues(issues: ErrorDetail[]): void {
  if (issues.length === 0) return;
  const message = `Invalid view: ${issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`;
  throw issues.some((issue) => issue.code === 'unknown_operator') ? errors.badRequest(message, issues) : errors.validation(message, issues);
}

/**
 * A view as the API answers it. A sync peer may store a filter or sort of
 * any shape; the model reads it as given, and what the API schema would
 * not accept reads as no filter and without those sort keys, as the
 * model's forgiving reads do for other fields.
 */
function wellFormed(view: ViewDef): ViewDef {
  const filter = view.filter === null ? null : RowFilter.safeParse(view.filter);
  return {
    ...view,
    filter: filter?.success && namesKnownOperators(filter.data) ? (filter.data as ViewDef['filter']) : null,
    sort: view.sort.filter((key) => SortKey.safeParse(key).success).slice(0, 10),
  };
}

/** The schema takes any operator name (a request's unknown one is refused by the query check, naming it); a view answered holds only the documented ones. */
function namesKnownOperators(filter: RowFilterInput): boolean {
  return [...(filter.and ?? []), ...(filter.or ?? [])].every((item) => ('column' in item ? FILTER_OPS.includes(item.op) : namesKnownOperators(item)));
}
