import type * as Y from 'yjs';
import { ApiError, errors, OverLimitError } from '../errors';
import type { Actor } from '../policy/actor';
import type { Author } from '../model/schemas/common';
import { capsFor } from '../limits/plans';
import { listSubjectEvents } from '../persistence/events';
import { findProjectedRowIds, findRowMeta, type RowMeta } from '../persistence/table-rows';
import { findRowsInWindow } from '../persistence/row-indexes';
import { listWindow, windowBounds, windowIssues, type DateWindow } from '../model/table/windows';
import type { Surface, Workspace } from '../persistence/schema';
import { cachedLiveSurfaces, selectedSurface } from './live-surfaces';
import { liveFilesNamedIn, showAttachmentCells } from './attachment-cells';
import { surfaceBySlug } from '../model/surface-slugs';
import type { Services } from './services';
import type { CommitReceipt } from '../sync/document-sync';
import { tablesDocumentName } from '../model/document-names';
import { callerOrigin, type ChangeCaller } from '../sync/origins';
import { beginLookup, endLookup, hasPassed, unpassedRows } from '../sync/table-passed';
import { rowDataAt } from '../sync/version-index';
import { compileRowQuery, withoutMissingColumns, type CompiledRowQuery, type RowFilter, type SortKey } from '../model/table/query';
import type { ViewDef } from '../model/table/views';
import {
  addColumn,
  countRows,
  createTableId,
  deleteRow,
  ensureSheet,
  getRow,
  insertRow,
  linkColumnIssues,
  listRows,
  listSheetIds,
  moveRows,
  normalizeAttachmentCells,
  normalizeLinkCells,
  readColumns,
  replaceColumns,
  columnsAfterReplacement,
  computedColumnIssues,
  isComputedColumn,
  tryFormula,
  type FormulaTry,
  type SheetContext,
  openReading,
  rowAsRead,
  rowsAsRead,
  seedColumnsFor,
  sheetColumns,
  setRowPosition,
  sheetOfExistingRow,
  sheetOfRow,
  TableDocumentError,
  updateRows,
  validateCellValues,
  type CellValidationOptions,
  type ColumnDef,
  type ColumnFields,
  type NewColumn,
  type ReadOptions,
  type ReadRowData,
  type ReplacementColumn,
  type RowData,
  type TableIssue,
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
  /**
   * As readers see it: link cells hold only rows the caller may see, lookup
   * cells are computed (docs/TABLES.md "Linked rows"), attachment cells hold
   * the files' records (attachment-cells.ts).
   */
  data: Record<string, unknown>;
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

export async function tableSurfaces(services: Services, workspaceId: string): Promise<Surface[]> {
  return (await cachedLiveSurfaces(services, workspaceId)).filter((s) => s.kind === 'table');
}

/** The named table surface, or the primary (first) one; 404 when a named one does not exist. */
export async function pickTableSurface(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<Surface | null> {
  const surfaces = await tableSurfaces(services, workspace.id);
  if (selector.surfaceId !== undefined || selector.surface !== undefined) {
    const found = selectedSurface(surfaces, selector);
    if (!found) throw errors.notFound('Table surface');
    return found;
  }
  return surfaces[0] ?? null;
}

/** The sheet a request names (`surface` or `surfaceId`), or null when it names none; 404 when it names an unknown one. */
export async function namedTableSurface(services: Services, workspace: Workspace, selector: SurfaceSelector): Promise<Surface | null> {
  return selector.surface !== undefined || selector.surfaceId !== undefined ? pickTableSurface(services, workspace, selector) : null;
}

/** A doc-only workspace gets its first sheet on its first row or column write (`surface.created`). */
export async function tableSurfaceForWrite(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector): Promise<Surface> {
  return (await pickTableSurface(services, resolved.workspace, selector)) ?? ensureSurfaceOfKind(services, actor, resolved, 'table');
}

/** Rows as the API shows them; attribution from the commit's receipt when the caller has one, else from the projection. */
type ReadRow = Omit<TableRow, 'data'> & { data: ReadRowData };

export async function present(services: Services, workspaceId: string, rows: ReadRow[], stored?: ReadonlyMap<string, RowMeta>, attachmentKeys?: AttachmentKeys): Promise<RowRecord[]> {
  const missing = rows.filter((r) => !stored?.has(r.id)).map((r) => r.id);
  const meta = missing.length === 0 ? stored! : new Map([...(await findRowMeta(services.db, workspaceId, missing)), ...(stored ?? [])]);
  const now = services.clock.now().toISOString();
  const shown = await showAttachmentCells(services, workspaceId, rows, attachmentKeys ?? (await attachmentKeysOf(services, workspaceId, rows)));
  return shown.map((row) => {
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

/** The attachment columns of the sheets these rows are on, by sheet. */
async function attachmentKeysOf(services: Services, workspaceId: string, rows: ReadonlyArray<{ surfaceId: string }>): Promise<AttachmentKeys> {
  return services.sync.read(tablesDocumentName(workspaceId), (doc) => attachmentKeysIn(doc, rows.map((row) => row.surfaceId)));
}

/** Which columns of a sheet hold attachments, for `present`. */
type AttachmentKeys = (surfaceId: string) => readonly string[];

/**
 * The attachment columns of these sheets as `doc` holds them: a write takes
 * them inside its change, so its answer waits for its own commit only, not
 * for the read of a document the next batch is already changing.
 */
export function attachmentKeysIn(doc: Y.Doc, sheetIds: Iterable<string>, known?: { sheetId: string; columns: readonly ColumnDef[] }): AttachmentKeys {
  const keysOf = (columns: readonly ColumnDef[]) => columns.flatMap((column) => (column.type === 'attachment' ? [column.key] : []));
  const keys = new Map([...new Set(sheetIds)].map((id) => [id, keysOf(id === known?.sheetId ? known.columns : sheetColumns(doc, id))]));
  return (surfaceId) => keys.get(surfaceId) ?? [];
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
  // As applied: a server change is judged before it is made, so one still being committed adds no row to look up,
  // and a write checking here does not wait for the commit of the one before it (its batch would be the next but one).
  const unknown = await services.sync.readApplied(document, (doc) => unpassedRows(doc).size > 0);
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
export function passedRow(doc: Y.Doc, rowId: string): TableRow | null {
  return hasPassed(doc, rowId) ? getRow(doc, rowId) : null;
}

/**
 * The row as the caller sees it: a link never shows a row the caller
 * cannot read. With no per-sheet permissions, every sheet of a workspace
 * the caller reads is readable, and a link can only name rows of its own
 * workspace's document, so what is left out is rows the row cap has not let
 * through (and links to rows that are gone).
 */
export function seenAs(services: Services, doc: Y.Doc, row: TableRow): ReadRow {
  return rowAsRead(doc, row, readOptions(services, doc));
}

/**
 * How REST and MCP read computed cells: without the rows the row cap holds
 * back, at the service clock's now, in the workspace's time zone (which the
 * table document holds: src/model/table/settings.ts).
 */
export function readOptions(services: Pick<Services, 'clock'>, doc: Y.Doc): ReadOptions {
  return { hidden: unpassedRows(doc), now: services.clock.now().getTime() };
}

/** How link cells are checked on a write: ids of rows that passed the cap, on the link's target surface. */
export function linkChecks(doc: Y.Doc, surfaces: readonly Surface[]): NonNullable<CellValidationOptions['links']> {
  return {
    // A link made before its target was renamed names a former slug, which still leads there.
    targetSheetOf: (column) => (typeof column.targetSurface === 'string' ? surfaceBySlug(surfaces, column.targetSurface)?.id ?? null : null),
    sheetOfRow: (rowId) => (hasPassed(doc, rowId) ? sheetOfRow(doc, rowId) : null),
  };
}

/** Normalizes the link cells of `data` (one id → an array of one) and checks every cell; 422 with details. */
export function checkValues(
  columns: readonly ColumnDef[],
  data: Record<string, unknown>,
  path: string[],
  links?: CellValidationOptions['links'],
  files?: CellValidationOptions['files'],
): Record<string, unknown> {
  const normalized = normalizeAttachmentCells(columns, normalizeLinkCells(columns, data));
  const issues = validateCellValues(columns, normalized, { basePath: path, links, files });
  if (issues.length > 0) throw errors.validation(`Invalid cell values: ${issues.map((i) => i.message).join('; ')}`, issues);
  return normalized;
}

/** A listing of rows (`GET /rows`, `POST /rows/query`, CSV export): the query in its JSON form. */
export type RowListing = SurfaceSelector & {
  limit: number;
  /** A window of days (`YYYY-MM-DD`, both included) over a calendar or timeline view. */
  from?: string;
  to?: string;
  after?: string;
  view?: string;
  filter?: RowFilter;
  sort?: SortKey[];
  fields?: string[];
};

/**
 * The window of days a listing asks for (`from` and `to`), or null when it
 * asks for none and its view is not a calendar or timeline. A calendar or
 * timeline view is read a window at a time (400 without one), and only such
 * a view places rows on days (400 for a window without one).
 */
export function listingWindow(view: ViewDef | null, from: string | undefined, to: string | undefined): DateWindow | null {
  const dated = view?.kind === 'calendar' || view?.kind === 'timeline';
  if (!dated) {
    if (from === undefined && to === undefined) return null;
    throw errors.badRequest('A window of days (`from`, `to`) reads a calendar or timeline view: name one in `view`.', [
      { path: ['view'], code: 'window_needs_dated_view', message: view ? `"${view.name}" is a ${view.kind} view` : 'no view named' },
    ]);
  }
  const issues = windowIssues(from, to);
  if (issues.length > 0) throw errors.badRequest(`A ${view.kind} view is read a window of days at a time: ${issues.map((issue) => issue.message).join(' ')}`, issues);
  if (!view.dateColumn) {
    throw errors.badRequest(`The ${view.kind} view "${view.name}" has no date column any more; choose one (PATCH the view's \`dateColumn\`).`, [
      { path: ['view'], code: 'no_date_column', message: 'the view places rows by no date column' },
    ]);
  }
  return { from: from!, to: to! };
}

/**
 * `view` is the saved view `listing.view` names, read by the caller
 * (`readView` in views.ts); `window`, for a calendar or timeline view, the
 * days to list (`listingWindow`): the rows whose date or range overlaps
 * them, found through the row projection's date index, in date order.
 */
export async function listWorkspaceRows(
  services: Services,
  workspace: Workspace,
  listing: Omit<RowListing, 'view'>,
  view: ViewDef | null = null,
  window: DateWindow | null = null,
): Promise<{ rows: RowRecord[]; nextCursor: string | null; etag: string }> {
  const selected = listing.surface !== undefined || listing.surfaceId !== undefined;
  const surface = selected ? await pickTableSurface(services, workspace, listing) : null;
  if (view && surface && surface.id !== view.surfaceId) {
    throw errors.badRequest('The view belongs to another sheet than the one named; name one of them.', [
      { path: ['view'], code: 'conflicting_surface', message: 'the view and the sheet disagree' },
    ]);
  }
  const surfaceId = view?.surfaceId ?? surface?.id;
  const sheetOrder = (await tableSurfaces(services, workspace.id)).map((s) => s.id);
  const etag = await readVersionTag(services, tablesDocumentName(workspace.id));
  await lookUpPassedRows(services, workspace.id);
  const candidates = window && view ? await windowCandidates(services, workspace, view, window) : null;
  const page = await services.sync
    .read(tablesDocumentName(workspace.id), (doc) => {
      const columns = listingColumns(doc, surfaceId, sheetOrder);
      const query = compileListing(columns, view, listing);
      const options = readOptions(services, doc);
      // One reading for the filter, the sort and the page: every computed cell at the same moment (computed.ts).
      const reading = openReading(doc, options);
      const page =
        candidates && window && view
          ? listWindow(doc, {
              surfaceId: view.surfaceId,
              dateColumn: view.dateColumn!,
              endDateColumn: view.endDateColumn ?? null,
              window,
              candidates,
              query,
              hidden: options.hidden,
              after: listing.after ?? null,
              limit: listing.limit,
              listingKey: view.id,
            })
          : listRows(doc, { hidden: options.hidden, surfaceId, query, after: listing.after ?? null, limit: listing.limit, sheetOrder, reading });
      // Links show only rows the caller may see, and lookups, formulas and rollups are computed from what it sees.
      return { rows: rowsAsRead(doc, page.rows, reading), nextCursor: page.nextCursor, fields: pickedFields(columns, listing.fields) };
    })
    .catch(tableError);
  const rows = await present(services, workspace.id, page.rows);
  return { rows: page.fields ? rows.map((row) => ({ ...row, data: pick(row.data, page.fields!) })) : rows, nextCursor: page.nextCursor, etag };
}

/**
 * The rows that may lie in the window, from the date index beside the row
 * projection: rows whose start date is in it, or, with an end column, whose
 * start is early enough to reach it. The changes already applied to the
 * table are committed first, so the index holds what the document holds
 * (a date a sync client just moved is found at its new place).
 */
async function windowCandidates(services: Services, workspace: Workspace, view: ViewDef, window: DateWindow): Promise<string[]> {
  await services.sync.changesCommitted(tablesDocumentName(workspace.id));
  const bounds = windowBounds(window);
  return findRowsInWindow(services.db, workspace.id, { startKey: view.dateColumn!, from: new Date(bounds.from), to: new Date(bounds.until), reach: Boolean(view.endDateColumn) });
}

/** The columns a listing's query is checked against: its sheet's, or every sheet's (the first sheet naming a key gives its type). */
function listingColumns(doc: Y.Doc, surfaceId: string | undefined, sheetOrder: readonly string[]): ColumnDef[] {
  if (surfaceId !== undefined) return readColumns(doc, surfaceId);
  const live = listSheetIds(doc);
  return [...sheetOrder.filter((id) => live.includes(id)), ...live.filter((id) => !sheetOrder.includes(id))].flatMap((id) => readColumns(doc, id));
}

/**
 * The view's filter and the request's both hold; the request's sort, when it
 * has one, replaces the view's. A view's conditions on columns deleted since
 * it was saved no longer apply (the web app shows the same rows).
 */
function compileListing(columns: ColumnDef[], view: ViewDef | null, listing: Omit<RowListing, 'view'>): CompiledRowQuery {
  const own = compileRowQuery(columns, { filter: listing.filter, sort: listing.sort });
  if (!view) return own;
  const saved = compileRowQuery(columns, { filter: withoutMissingColumns(view.filter, columns), sort: view.sort });
  const sort = own.sort.length ? own.sort : saved.sort;
  return {
    matches: (cell) => saved.matches(cell) && own.matches(cell),
    matchesValues: (values) => saved.matchesValues(values) && own.matchesValues(values),
    compare: own.sort.length ? own.compare : saved.compare,
    filterKey: saved.filterKey || own.filterKey ? `${saved.filterKey}.${own.filterKey}` : '',
    sort,
  };
}

function pickedFields(columns: ColumnDef[], fields: string[] | undefined): string[] | null {
  if (fields === undefined) return null;
  const keys = new Set(columns.map((column) => column.key));
  const unknown = fields.map((key, i) => ({ key, i })).filter(({ key }) => !keys.has(key));
  if (unknown.length) {
    throw new TableDocumentError(
      'invalid_query',
      `fields: no column ${unknown.map(({ key }) => JSON.stringify(key)).join(', ')}.`,
      unknown.map(({ key, i }) => ({ path: ['fields', String(i)], code: 'unknown_column', message: `There is no column "${key}".` })),
    );
  }
  return fields;
}

function pick<T>(data: Record<string, T>, fields: readonly string[]): Record<string, T> {
  const picked: Record<string, T> = {};
  for (const key of fields) if (Object.hasOwn(data, key)) picked[key] = data[key]!;
  return picked;
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
  const seen = await services.sync.read(tablesDocumentName(workspace.id), (doc) => seenAs(services, doc, row));
  return { row: (await present(services, workspace.id, [seen]))[0]!, etag };
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

/** Rows that count toward the cap: every row but those still being judged. */
export function passedRowCount(doc: Y.Doc): number {
  return countRows(doc) - unpassedRows(doc).size;
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
  actor: ChangeCaller,
  resolved: Pick<ResolvedWorkspace, 'workspace' | 'orgPlan'>,
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
      .transactWithReceipt(document, callerOrigin(actor), (doc) => {
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
  const surfaces = await tableSurfaces(services, workspace.id);
  const files = await liveFilesNamedIn(services, workspace.id, [input.data]);
  const id = createTableId();
  const { result: row, receipt } = await transactWithinRowCap(
    services,
    actor,
    resolved,
    () => 1,
    (doc) => {
      const columns = sheetColumns(doc, surface.id);
      const data = checkValues(columns, input.data, ['data'], linkChecks(doc, surfaces), files);
      ensureSheet(doc, surface.id, null);
      // The columns seeded here are text columns: the attachment columns are those read before.
      seedColumnsFor(doc, surface.id, Object.keys(data), null, columns);
      return { row: seenAs(services, doc, insertRow(doc, { id, surfaceId: surface.id, data: data as RowData }, null)), attachments: attachmentKeysIn(doc, [surface.id], { sheetId: surface.id, columns }) };
    },
  );
  return (await present(services, workspace.id, [row.row], receipt.rows, row.attachments))[0]!;
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
  const surfaces = await tableSurfaces(services, workspace.id);
  const files = await liveFilesNamedIn(services, workspace.id, input.data ? [input.data] : []);
  await lookUpPassedRows(services, workspace.id);
  const { result: row, receipt } = await services.sync
    .transactWithReceipt(document, callerOrigin(actor), (doc) => {
      // The row's sheet, not its cells: they are read once, for the answer, after the change (and the observer reads
      // them for the projection); only a merge against a base needs them before.
      const currentSheet = hasPassed(doc, rowId) ? sheetOfExistingRow(doc, rowId) : null;
      if (currentSheet === null) throw errors.notFound('Row');
      const sheetId = target?.id ?? currentSheet;
      // A row that did not exist at the base (made in between) has nothing to merge against.
      const data = input.data && baseData ? mergeCells(baseData, input.data, getRow(doc, rowId)!.data) : { data: input.data, conflicts: [] };
      conflicts = data.conflicts;
      let columns: readonly ColumnDef[] | undefined;
      if (data.data) {
        columns = sheetColumns(doc, sheetId);
        const cells = checkValues(columns, data.data, ['data'], linkChecks(doc, surfaces), files);
        seedColumnsFor(doc, sheetId, Object.keys(cells), null, columns);
        updateRows(doc, [{ id: rowId, data: cells as RowData }], null);
      }
      if (target && target.id !== currentSheet) {
        ensureSheet(doc, target.id, null);
        moveRows(doc, [rowId], target.id, null, { position: input.position });
        moved = true;
      } else if (input.position !== undefined) {
        setRowPosition(doc, rowId, input.position, null);
      }
      const seen = seenAs(services, doc, getRow(doc, rowId)!);
      return { seen, attachments: attachmentKeysIn(doc, [seen.surfaceId], columns && { sheetId, columns }) };
    })
    .catch(tableError);
  if (baseSeq === null) return { row: (await present(services, workspace.id, [row.seen], receipt.rows, row.attachments))[0]!, moved };
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
  const surfaces = await tableSurfaces(services, workspace.id);
  const files = await liveFilesNamedIn(services, workspace.id, updates.map((u) => u.data));
  await lookUpPassedRows(services, workspace.id);
  const { result: rows, receipt } = await services.sync
    .transactWithReceipt(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
      const onSheet = (id: string) => {
        const row = passedRow(doc, id);
        return row !== null && (!sheet || row.surfaceId === sheet.id);
      };
      // Everything is checked before the first write: one bad entry writes nothing.
      const missing = updates.flatMap((u, i) => (onSheet(u.id) ? [] : [{ path: ['updates', String(i), 'id'], code: 'row_not_found', message: `No row ${u.id}.` }]));
      if (missing.length > 0) throw new ApiError(404, 'not_found', 'A row in the batch does not exist; nothing was written.', missing);
      const links = linkChecks(doc, surfaces);
      const checked = updates.map((u, i) => ({ id: u.id, data: checkValues(readColumns(doc, getRow(doc, u.id)!.surfaceId), u.data, ['updates', String(i), 'data'], links, files) }));
      for (const u of checked) seedColumnsFor(doc, getRow(doc, u.id)!.surfaceId, Object.keys(u.data), null);
      updateRows(doc, checked as Array<{ id: string; data: RowData }>, null);
      const seen = updates.map((u) => seenAs(services, doc, getRow(doc, u.id)!));
      return { seen, attachments: attachmentKeysIn(doc, seen.map((row) => row.surfaceId)) };
    })
    .catch(tableError);
  return present(services, workspace.id, rows.seen, receipt.rows, rows.attachments);
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
    .transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
      ensureSheet(doc, target!.id, null);
      // A row the cap has not let through does not exist here yet.
      const missing = input.rowIds.flatMap((id, i) => (hasPassed(doc, id) ? [] : [{ path: ['rowIds', String(i)], code: 'row_not_found', message: `No row ${id}.` }]));
      if (missing.length > 0) throw new TableDocumentError('row_not_found', 'A row to move does not exist.', missing);
      return moveRows(doc, input.rowIds, target!.id, null);
    })
    .catch(tableError);
}

/** Deletes the row and, in the same transaction (so attributed to the caller), takes it out of every link cell that held it. */
export async function deleteWorkspaceRow(services: Services, actor: Actor, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<void> {
  const sheet = await namedTableSurface(services, workspace, selector);
  await lookUpPassedRows(services, workspace.id);
  const deleted = await services.sync.transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
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
  const surfaces = await tableSurfaces(services, workspace.id);
  return services.sync
    .transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
      // Link and lookup columns that are new or point elsewhere are checked, each against the list as it will be;
      // one left as it was is not (its target may have gone since, which must not block renaming another column).
      const stored = readColumns(doc, surface.id);
      const storedAs = (column: ReplacementColumn) => stored.find((candidate) => (column.id !== undefined ? candidate.id === column.id : candidate.key === column.key));
      const pointsAs = (column: ColumnFields) => JSON.stringify([column.type, column.targetSurface, column.link, column.field, column.fn, column.formula]);
      const unchanged = (column: ReplacementColumn, before = storedAs(column)) => before !== undefined && pointsAs(before) === pointsAs(column);
      const checked = columns.flatMap((column, index) =>
        (column.type === 'link' || column.type === 'lookup') && !unchanged(column) ? [{ index, path: ['columns', String(index)] }] : [],
      );
      checkLinkColumns(doc, surfaces, surface.id, columns, checked);
      // Formulas, rollups and lookups as the replacement leaves them (references follow renamed keys), the new or changed ones checked.
      const options = { sheetOfSlug: (slug: string) => surfaceBySlug(surfaces, slug)?.id ?? null };
      const after = columnsAfterReplacement(doc, surface.id, columns, options);
      checkComputedColumns(
        doc,
        surfaces,
        surface.id,
        after,
        after.flatMap((column, index) => (isComputedColumn(column) && !unchanged(column, storedAs(columns[index]!)) ? [{ index, path: ['columns', String(index)] }] : [])),
      );
      return replaceColumns(doc, surface.id, columns, null, options);
    })
    .catch(tableError);
}

/**
 * 422 when a formula does not parse or names a column the sheet does not
 * have, a rollup does not name a link column, a target field and a
 * function, or a column would depend on itself (docs/FORMULAS.md "Refused formulas").
 */
function checkComputedColumns(doc: Y.Doc, surfaces: readonly Surface[], surfaceId: string, columns: readonly ColumnFields[], checked: Array<{ index: number; path: string[] }>) {
  if (checked.length === 0) return;
  const issues = computedColumnIssues(surfaceId, columns, checked, sheetContext(doc, surfaces, surfaceId, columns));
  if (issues.length > 0) throw errors.validation(`Invalid ${issues.some((i) => i.path[0] === 'formula') ? 'formula' : 'rollup or lookup'} column: ${issues.map((i) => i.message).join('; ')}`, issues);
}

/** 422 when a link column names no table surface of the workspace, or a lookup no link column of the sheet and field of its target. */
function checkLinkColumns(doc: Y.Doc, surfaces: readonly Surface[], surfaceId: string, columns: readonly ColumnFields[], checked: Array<{ index: number; path: string[] }>) {
  if (checked.length === 0) return;
  const issues: TableIssue[] = linkColumnIssues(columns, checked, {
    tableSurfaceId: (slug) => surfaceBySlug(surfaces, slug)?.id ?? null,
    // The sheet being changed reads as it will be (a lookup may look up a column added beside it on a link to its own sheet).
    columnsOf: (id) => (id === surfaceId ? columns : readColumns(doc, id)),
  });
  if (issues.length > 0) throw errors.validation(`Invalid link or lookup column: ${issues.map((i) => i.message).join('; ')}`, issues);
}

/** The workspace's sheets as the computed-column checks see them; `surfaceId`'s columns as they will be. */
function sheetContext(doc: Y.Doc, surfaces: readonly Surface[], surfaceId: string, columns: readonly ColumnFields[]): SheetContext {
  return {
    tableSurfaceId: (slug) => surfaceBySlug(surfaces, slug)?.id ?? null,
    columnsOf: (id) => (id === surfaceId ? columns : readColumns(doc, id)),
    sheetIds: () => surfaces.map((surface) => surface.id),
    sheetName: (id) => surfaces.find((surface) => surface.id === id)?.slug ?? id,
  };
}

/**
 * Tries a formula on a sheet (the named one, else the primary) without
 * saving anything: as the formula of `column` when given, else of a new
 * column (docs/FORMULAS.md "Trying a formula").
 */
export async function tryWorkspaceFormula(services: Services, workspace: Workspace, selector: SurfaceSelector, formula: string, column?: string): Promise<FormulaTry> {
  const surface = await pickTableSurface(services, workspace, selector);
  const surfaces = await tableSurfaces(services, workspace.id);
  return services.sync.read(tablesDocumentName(workspace.id), (doc) => {
    const columns = surface ? readColumns(doc, surface.id) : [];
    const surfaceId = surface?.id ?? '';
    return tryFormula(surfaceId, columns, formula, sheetContext(doc, surfaces, surfaceId, columns), column);
  });
}

export async function postColumn(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: SurfaceSelector, column: NewColumn) {
  const { workspace } = resolved;
  const surface = await tableSurfaceForWrite(services, actor, resolved, selector);
  const { position: _ignored, ...rest } = column;
  const surfaces = await tableSurfaces(services, workspace.id);
  return services.sync
    .transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
      const existing = readColumns(doc, surface.id);
      if (rest.type === 'link' || rest.type === 'lookup') checkLinkColumns(doc, surfaces, surface.id, [...existing, rest], [{ index: existing.length, path: ['column'] }]);
      if (isComputedColumn(rest)) checkComputedColumns(doc, surfaces, surface.id, [...existing, rest], [{ index: existing.length, path: ['column'] }]);
      ensureSheet(doc, surface.id, null);
      const added = addColumn(doc, surface.id, rest, null);
      return { column: added, columns: readColumns(doc, surface.id) };
    })
    .catch(tableError);
}
