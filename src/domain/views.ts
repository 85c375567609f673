import type * as Y from 'yjs';
import { errors, type ErrorDetail } from '../errors';
import type { Actor } from '../policy/actor';
import type { Workspace } from '../persistence/schema';
import { tablesDocumentName } from '../model/document-names';
import { ensureSheet, readColumns, type ColumnDef } from '../model/table/document';
import { checkRowQuery } from '../model/table/query';
import {
  createView,
  deleteView,
  getView,
  FORM_COLUMN_TYPES,
  KIND_FIELDS,
  listViews,
  previewView,
  updateView,
  type FormSettings,
  type ViewDef,
  type ViewFields,
  type ViewPatch,
} from '../model/table/views';
import { FILTER_OPS, RowFilter, SortKey } from '../model/schemas/tables';
import type { z } from 'zod';

type RowFilterInput = z.output<typeof RowFilter>;
import { callerOrigin } from '../sync/origins';
import { cachedLiveSurfaces } from './live-surfaces';
import type { Services } from './services';
import { pickTableSurface, tableError, type SurfaceSelector } from './tables';
import { formTokensFor, formUrl } from './form-links';

/**
 * Saved views of a sheet over REST and MCP (docs/TABLES.md "Saved views"). They live
 * in the workspace's table document (src/model/table/views.ts), so every
 * write is one attributed Y transaction there, like a row's, and sync
 * clients see it at once. A write is checked against the sheet's columns
 * inside that transaction, before anything is written.
 */

export type { ViewDef };

/** A form as a write gives it: every part optional; a write merges it into the stored form (one level deep). */
export type FormInput = Partial<FormSettings>;
export type ViewInput = Omit<ViewPatch, 'form'> & { form?: FormInput };
export type NewViewInput = ViewInput & { name: string };

/** A view as the API answers it: the fields of its kind, and a form's public link while it is open. */
export type PresentedView = ViewDef & { publicUrl?: string | null };

/**
 * The views of the sheet the selector names, or of every table surface of
 * the workspace when it names none (each view carries its `surfaceId`), in
 * sheet order and then each sheet's view order.
 */
export async function listSheetViews(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<ViewDef[]> {
  const named = isNamed(selector) ? await pickTableSurface(services, workspace, selector) : null;
  const sheetOrder = await liveSheetOrder(services, workspace.id);
  const views = await services.sync.read(tablesDocumentName(workspace.id), (doc) => listViews(doc, named?.id));
  return withPublicUrls(
    services,
    workspace,
    views
      .filter((view) => sheetOrder.has(view.surfaceId))
      .sort((a, b) => sheetOrder.get(a.surfaceId)! - sheetOrder.get(b.surfaceId)!)
      .map(wellFormed),
  );
}

/**
 * One view of the workspace, as `GET /rows?view=` applies it; 404 when the
 * workspace has no such view (a view id of another workspace is in another
 * document, so it is not found either) or its sheet is gone.
 */
export async function readView(services: Services, workspace: Workspace, viewId: string): Promise<PresentedView> {
  const sheetOrder = await liveSheetOrder(services, workspace.id);
  const view = await services.sync.read(tablesDocumentName(workspace.id), (doc) => getView(doc, viewId));
  if (!view || !sheetOrder.has(view.surfaceId)) throw errors.notFound('View');
  return (await withPublicUrls(services, workspace, [wellFormed(view)]))[0]!;
}

/** A new view of the named sheet (the primary table surface by default), after the sheet's other views unless `position` is given. */
export async function createSheetView(services: Services, actor: Actor, workspace: Workspace, selector: SurfaceSelector, input: NewViewInput): Promise<PresentedView> {
  const surface = await pickTableSurface(services, workspace, selector);
  if (!surface) throw errors.notFound('Table surface');
  const view = await services.sync
    .transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
      const fields = { ...input, form: input.form === undefined ? undefined : storedForm({}, input.form) };
      const columns = readColumns(doc, surface.id);
      refuseIssues([...viewIssues(columns, input), ...kindIssues(columns, input, previewView(doc, surface.id, null, { kind: 'grid', ...fields }))]);
      ensureSheet(doc, surface.id, null);
      return createView(doc, surface.id, fields, null);
    })
    .catch(tableError);
  return (await withPublicUrls(services, workspace, [wellFormed(view)]))[0]!;
}

/**
 * Sets the fields given and keeps the others (a `form` is merged into the
 * stored one, one level deep). The fields given are checked against the
 * sheet's columns; what a kind needs (a board's status column, a calendar's
 * date column, ...) is checked on the view as it would be, when the patch
 * sets `kind` or a field of that kind. With a named sheet the view must be
 * on it (404 otherwise).
 */
export async function updateSheetView(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  viewId: string,
  selector: SurfaceSelector,
  patch: ViewInput,
): Promise<PresentedView> {
  const found = await viewForWrite(services, workspace, selector);
  const view = await services.sync.transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
    const current = found(doc, viewId);
    const fields: ViewPatch = { ...patch, form: patch.form === undefined ? undefined : storedForm(storedFormOf(doc, viewId), patch.form) };
    const columns = readColumns(doc, current.surfaceId);
    refuseIssues([...viewIssues(columns, patch), ...kindIssues(columns, patch, previewView(doc, current.surfaceId, viewId, fields))]);
    return updateView(doc, viewId, fields, null)!;
  });
  return (await withPublicUrls(services, workspace, [wellFormed(view)]))[0]!;
}

/** The form as stored in the view's map (before the read's defaults), for a patch to merge into. */
function storedFormOf(doc: Y.Doc, viewId: string): FormInput {
  const view = getView(doc, viewId);
  if (!view) return {};
  // Read as a form whatever its kind now, so a form turned into a grid and back keeps its questions.
  const stored = previewView(doc, view.surfaceId, viewId, { kind: 'form' })?.form;
  return stored ?? {};
}

/** A form as it is stored: the stored one with the given parts written over it. */
function storedForm(stored: FormInput, given: FormInput): FormSettings {
  const merged = { ...stored, ...given };
  return { ...merged, title: merged.title ?? '', description: merged.description ?? '', fields: merged.fields ?? [], open: merged.open ?? false };
}

export async function deleteSheetView(services: Services, actor: Actor, workspace: Workspace, viewId: string, selector: SurfaceSelector): Promise<void> {
  const found = await viewForWrite(services, workspace, selector);
  await services.sync.transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
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
 * have (422 naming the key), and a filter or sort a row query would refuse.
 */
function viewIssues(columns: ColumnDef[], fields: ViewInput): ErrorDetail[] {
  const keys = new Set(columns.map((column) => column.key));
  const issues: ErrorDetail[] = [];
  const unknown = (path: string[], key: string) => issues.push({ path, code: 'unknown_column', message: `This sheet has no column "${key}".` });
  for (const field of ['hiddenColumns', 'columnOrder', 'cardFields'] as const) {
    fields[field]?.forEach((key, index) => {
      if (!keys.has(key)) unknown([field, String(index)], key);
    });
  }
  for (const field of ['groupBy', 'dateColumn', 'endDateColumn', 'coverColumn'] as const) {
    const key = fields[field];
    if (typeof key === 'string' && !keys.has(key)) unknown([field], key);
  }
  fields.form?.fields?.forEach((question, index) => {
    if (!keys.has(question.column)) unknown(['form', 'fields', String(index), 'column'], question.column);
  });
  // The same check as a row query's: unknown columns, operators the column's type does not take, values that do not parse.
  issues.push(...checkRowQuery(columns, { filter: fields.filter, sort: fields.sort }));
  return issues;
}

/**
 * What the view's kind needs, checked on the view as the write leaves it
 * (`after`), when the write sets its kind or a field of that kind: a board
 * its status column, a calendar or timeline its date columns (and a
 * timeline's lanes a status or person column), a gallery's cover an
 * attachment or url column, a form's questions columns a person outside
 * the workspace can answer, each once. Keys that name no column are
 * reported by `viewIssues`.
 */
function kindIssues(columns: ColumnDef[], fields: ViewInput, after: ViewDef | null): ErrorDetail[] {
  if (!after) return [];
  const kind = after.kind;
  const kindFields = Object.entries(KIND_FIELDS).flatMap(([field, kinds]) => ((kinds as readonly string[]).includes(kind) ? [field] : []));
  const touched = fields.kind !== undefined || kindFields.some((field) => fields[field as keyof ViewInput] !== undefined) || ((kind === 'board' || kind === 'timeline') && fields.groupBy !== undefined);
  if (!touched) return [];
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const issues: ErrorDetail[] = [];
  const typed = (field: 'groupBy' | 'dateColumn' | 'endDateColumn' | 'coverColumn', allowed: readonly string[], code: string, what: string) => {
    const key = after[field];
    const column = typeof key === 'string' ? byKey.get(key) : undefined;
    if (column && !allowed.includes(column.type)) issues.push({ path: [field], code, message: `${what}; "${key}" is a ${column.type} column.` });
  };
  const required = (field: 'groupBy' | 'dateColumn', message: string) => {
    // A key the write names that is not a column was reported already (unknown_column).
    if ((after[field] ?? null) === null && typeof fields[field] !== 'string') issues.push({ path: [field], code: 'required', message });
  };
  switch (kind) {
    case 'board':
      required('groupBy', 'A board groups its cards by a status column: name its key in `groupBy`.');
      typed('groupBy', ['status'], 'not_status_column', 'A board groups by a status (single-select) column');
      break;
    case 'calendar':
    case 'timeline':
      required('dateColumn', `A ${kind} places each row by a date column: name its key in \`dateColumn\`.`);
      typed('dateColumn', ['date'], 'not_date_column', `A ${kind} places rows by a date column`);
      typed('endDateColumn', ['date'], 'not_date_column', `A ${kind} ends rows on a date column`);
      if (kind === 'timeline') typed('groupBy', ['status', 'person'], 'not_lane_column', 'A timeline makes lanes from a status or person column');
      break;
    case 'gallery':
      typed('coverColumn', ['attachment', 'url'], 'not_cover_column', 'A gallery takes its covers from an attachment or url column');
      break;
    case 'form': {
      const asked = new Set<string>();
      (fields.form?.fields ?? after.form?.fields ?? []).forEach((question, index) => {
        const column = byKey.get(question.column);
        if (asked.has(question.column)) {
          issues.push({ path: ['form', 'fields', String(index), 'column'], code: 'duplicate_field', message: `The form asks for "${question.column}" twice.` });
        } else if (column && !FORM_COLUMN_TYPES.has(column.type)) {
          issues.push({
            path: ['form', 'fields', String(index), 'column'],
            code: 'not_form_column',
            message: `"${question.column}" is a ${column.type} column, which a form cannot ask for (forms take ${[...FORM_COLUMN_TYPES].join(', ')} columns).`,
          });
        }
        asked.add(question.column);
      });
      break;
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

/** Each open form gets its public link (made the first time it is read open, then kept: closing and opening again keeps the address). */
async function withPublicUrls(services: Services, workspace: Workspace, views: ViewDef[]): Promise<PresentedView[]> {
  const open = views.filter((view) => view.kind === 'form' && view.form?.open);
  const tokens = open.length ? await formTokensFor(services, workspace.id, open.map((view) => view.id)) : new Map<string, string>();
  return views.map((view) => (view.kind === 'form' ? { ...view, publicUrl: tokens.has(view.id) ? formUrl(services, tokens.get(view.id)!) : null } : view));
}

/** The schema takes any operator name (a request's unknown one is refused by the query check, naming it); a view answered holds only the documented ones. */
function namesKnownOperators(filter: RowFilterInput): boolean {
  return [...(filter.and ?? []), ...(filter.or ?? [])].every((item) => ('column' in item ? FILTER_OPS.includes(item.op) : namesKnownOperators(item)));
}
