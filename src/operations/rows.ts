import { z } from 'zod';
import {
  bulkUpdateRows,
  createRow,
  deleteWorkspaceRow,
  getWorkspaceRow,
  listingWindow,
  listWorkspaceRows,
  moveRowsToSurface,
  rowHistory,
  updateRow,
  type RowListing,
  type SurfaceSelector,
} from '../domain/tables';
import { filterFromQueryString, sortFromQueryString } from '../model/table/query';
import { readView } from '../domain/views';
import { ApiError, errors, type ErrorDetail } from '../errors';
import { requireCaller } from '../access/callers';
import { Accepted, defineOperation, type RestRequest } from './operation';
import { ModeQuery, withModeFromQuery } from './write-mode';
import { SuggestionCreated, WriteMode } from '../model/schemas/suggestions';
import { suggestRowCreate, suggestRowDelete, suggestRowUpdate } from '../domain/row-suggestions';
import { ADDRESS, DESTRUCTIVE, READ, WRITE } from './tool-text';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { rowsCsv, type CsvForm } from '../domain/table-csv';
import { Event } from '../model/schemas/events';
import { BaseVersion, Ok, OverLimitBody, PreconditionFailed } from '../model/schemas/common';
import { FILTER_OPS, Row, RowData, RowFilter, RowSort, SurfaceQuery } from '../model/schemas/tables';
import { AttributionFlag, attributionWanted, CellAttribution } from '../model/schemas/attribution';
import { readRowAttribution } from '../domain/attribution';

export const RowParams = WorkspaceParams.extend({ id: z.string().min(1).max(100) });

const QueryStringFilter = z
  .record(
    z.string().min(1).max(64),
    // Any operator name is taken here, so that an unknown one is the 400 naming it (docs/TABLES.md), not a schema error.
    z.record(z.string().min(1).max(32), z.union([z.string().max(10_000), z.array(z.string().max(10_000)).max(1_000)])),
  )
  .describe(
    'Conditions, all of which must hold: `filter[<columnKey>][<op>]=<value>` (ops eq, neq, contains, starts, empty, lt, lte, gt, gte, between, in; docs/TABLES.md). ' +
      '`between` takes `a,b`; `in` a comma list or a JSON array; `empty` true or false.',
  );

// The shape only: whether it is a calendar day, and a window at all, is the listing's 400 (src/model/table/windows.ts).
const WindowDay = z.string().max(10);

export type ListRowsQuery = z.output<typeof ListRowsQuery>;
export const ListRowsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().max(2000).optional().describe('The nextCursor of the previous page'),
  sort: z
    .string()
    .regex(/^-?[^\s,]{1,64}(,-?[^\s,]{1,64}){0,9}$/)
    .optional()
    .describe('Column keys to order by, comma-separated, `-` before a key for descending (`-due,title`); ties by sheet and position'),
  filter: QueryStringFilter.optional(),
  fields: z.string().max(4000).optional().describe('Column keys to return in `data`, comma-separated (all when omitted)'),
  view: z.string().min(1).max(100).optional().describe('A saved view id: its sheet, filter and sort apply (a `filter` or `sort` given here narrows or replaces them)'),
  from: WindowDay.optional().describe('With `to`, for a calendar or timeline `view` (required there): the first day of the window, YYYY-MM-DD'),
  to: WindowDay.optional().describe('The last day of the window (included), YYYY-MM-DD: the rows whose date or range overlaps it, in date order'),
  ...SurfaceQuery,
});

/** How a CSV export is written (docs/TABLES.md "Export"): the defaults are the round-trip form an import reads back. */
const CsvFormQuery = {
  headers: z
    .enum(['keys', 'labels'])
    .optional()
    .describe('CSV only. `keys` (default): a header of `id` and the column keys, the form an import reads back; `labels`: the column labels and no `id` column, the file people open (the web app\'s export)'),
  neutralize: z
    .enum(['formulas'])
    .optional()
    .describe("CSV only. `formulas`: a field a spreadsheet would run (beginning with `=`, `+`, `-`, `@`, a tab or a carriage return, unless it is a plain number like `-5`) gets a leading `'`"),
};

/** Over REST the listing may also be CSV (an MCP tool answers JSON only). */
export const ListRowsRestQuery = ListRowsQuery.extend({
  format: z.enum(['json', 'csv']).optional().describe('`csv` streams RFC 4180 CSV instead (as does `Accept: text/csv`)'),
  ...CsvFormQuery,
  bom: z.enum(['true', 'false']).optional().describe('CSV only. `true`: the file starts with a UTF-8 byte order mark, so spreadsheets read non-ASCII text right'),
});

/** The JSON form of a row query (`POST /rows/query`): the same listing as `GET /rows`, for filters too long for a URL. */
export const RowQueryBody = z.strictObject({
  ...SurfaceQuery,
  view: z.string().min(1).max(100).optional(),
  filter: RowFilter.optional(),
  sort: RowSort.optional(),
  limit: z.number().int().min(1).max(1000).default(100),
  after: z.string().max(2000).optional(),
  fields: z.array(z.string().min(1).max(64)).max(500).optional(),
  from: WindowDay.optional().describe('With `to`, for a calendar or timeline `view`: the window of days, YYYY-MM-DD, both included'),
  to: WindowDay.optional(),
});

export const CreateRowBody = z.strictObject({ data: RowData, ...SurfaceQuery, mode: WriteMode });
export const PatchRowBody = z.strictObject({
  data: RowData.optional(),
  ...SurfaceQuery,
  position: z.number().int().min(0).optional(),
  baseVersion: BaseVersion.optional(),
  mode: WriteMode,
});

const SUGGEST_ROW =
  'With `mode: "suggest"` (or `?mode=suggest`) nothing is applied: the change is held beside the rows as a suggestion, shown in the grid, ' +
  'and the answer is 202 `{ suggestion }`; an editor accepts or rejects it (docs/SUGGESTIONS.md). A suggest-only key must send its writes this way.';
const SUGGEST_ROW_TOOL = 'With `mode: "suggest"` the change is only proposed, for an editor to accept or reject (answers `{ suggestion }`).';

/** REST: the sheet selector and the write mode may come in the query. */
function withSheetAndModeFromQuery(request: RestRequest): RestRequest {
  return withModeFromQuery(withSheetFromQuery(request));
}

const CellConflict = z
  .object({
    column: z.string(),
    base: z.unknown().optional().describe('The value in the base version (absent: no value)'),
    yours: z.unknown().describe('Your value, not written'),
    theirs: z.unknown().optional().describe('The value someone else wrote since, kept (absent: they removed it)'),
  })
  .meta({ id: 'CellConflict' });

const PatchRowResponse = Row.extend({
  conflicts: z.array(CellConflict).optional().describe('Only for a write with a base: cells both you and someone else changed since the base'),
});
export const BulkUpdateBody = z.strictObject({ updates: z.array(z.strictObject({ id: z.string().min(1).max(100), data: RowData })).min(1).max(500) });
export const MoveRowsBody = z.strictObject({
  rowIds: z.array(z.string().min(1).max(100)).min(1).max(500),
  ...SurfaceQuery,
  surface: SurfaceQuery.surface.describe('The sheet to move to (or `surfaceId`; either may be in the query instead)'),
});
/** Every row route takes the sheet selector in the query too. */
export const SheetQuery = z.strictObject(SurfaceQuery);
/** …and a write the mode. */
const SheetModeQuery = z.strictObject({ ...SurfaceQuery, ...ModeQuery });
const GetRowQuery = SheetQuery.extend({
  attribution: AttributionFlag.optional().describe('`1`: add `attribution`, who last set each cell'),
});

/**
 * The sheet a request names, in the query or the body (clients use either);
 * naming two different ones is 400.
 */
function sheetOf(query: SurfaceSelector, body: SurfaceSelector): SurfaceSelector {
  const named = (s: SurfaceSelector) => s.surface !== undefined || s.surfaceId !== undefined;
  if (named(query) && named(body) && (query.surface !== body.surface || query.surfaceId !== body.surfaceId)) {
    throw errors.badRequest('The query and the body name different sheets; name it once.', [
      { path: ['surface'], code: 'conflicting_surface', message: 'query and body disagree' },
    ]);
  }
  const chosen = named(body) ? body : query;
  return { surface: chosen.surface, surfaceId: chosen.surfaceId };
}

/**
 * Routes whose body names the sheet also take it in the query; their
 * operation (and its MCP tool) sees one selector, in the body.
 */
function withSheetFromQuery(request: RestRequest): RestRequest {
  const query = request.query as SurfaceSelector;
  const body = request.body as SurfaceSelector;
  return { ...request, body: { ...body, ...sheetOf(query, body) } };
}

/** The parts of a query string that have a JSON form in a listing. */
type QueryStringParts = { filter?: Record<string, Record<string, string | string[]>>; sort?: string; fields?: string } & CsvFormParts;
type CsvFormParts = { format?: string; headers?: 'keys' | 'labels'; neutralize?: 'formulas'; bom?: 'true' | 'false' };

/** The CSV form a query asks for. */
function csvFormOf(query: CsvFormParts): CsvForm {
  return { headers: query.headers, neutralize: query.neutralize, bom: query.bom === 'true' };
}

/**
 * `GET /rows`'s query string (or a tool's arguments in that form) as a
 * listing in the JSON form: `filter[col][op]`, `sort=-a,b`, `fields=a,b`;
 * the other parameters pass through as they are.
 */
function listingFromQueryString<Q extends QueryStringParts>(query: Q): Omit<Q, keyof QueryStringParts> & Pick<RowListing, 'filter' | 'sort' | 'fields'> {
  const { filter: raw, sort, fields, format: _format, headers: _headers, neutralize: _neutralize, bom: _bom, ...rest } = query;
  const listing: Omit<Q, keyof QueryStringParts> & Pick<RowListing, 'filter' | 'sort' | 'fields'> = rest;
  if (raw) {
    const { filter, issues } = filterFromQueryString(raw);
    if (issues.length) throw errors.badRequest(issues.map((issue) => issue.message).join(' '), issues);
    listing.filter = filter;
  }
  if (sort) listing.sort = sortFromQueryString(sort);
  if (fields !== undefined) listing.fields = fields.split(',').filter((key) => key !== '');
  return listing;
}

/** An issue with the n-th condition of `filter.and` is reported as `filter[column][op]`, the part of the URL the caller wrote. */
function inQueryStringTerms(error: unknown, listing: Pick<RowListing, 'filter'>): unknown {
  if (!(error instanceof ApiError) || !listing.filter?.and) return error;
  const conditions = listing.filter.and as Array<{ column: string; op: string }>;
  for (const detail of (Array.isArray(error.details) ? error.details : []) as ErrorDetail[]) {
    const [root, group, index, ...rest] = detail.path ?? [];
    const condition = root === 'filter' && group === 'and' ? conditions[Number(index)] : undefined;
    if (condition) detail.path = ['filter', condition.column, condition.op, ...rest.filter((part) => part !== 'column' && part !== 'op')];
  }
  return error;
}

/** How link and lookup cells read (docs/TABLES.md "Linked rows"), for the descriptions of the row routes and tools. */
const LINK_CELLS = 'A `link` cell is the array of ids of the linked rows that exist and you may read; a `lookup` cell is the array of those rows\' values of its `field`.';
const LINK_WRITES = 'A `link` cell takes a row id or an array of them, of rows on the column\'s `targetSurface`; `lookup` cells are read-only (422).';

const RowList = z.object({ rows: z.array(Row), nextCursor: z.string().nullable() });

const ExportCsvQuery = z.strictObject({
  ...SurfaceQuery,
  sort: ListRowsQuery.shape.sort,
  filter: ListRowsQuery.shape.filter,
  view: ListRowsQuery.shape.view,
  fields: ListRowsQuery.shape.fields,
  ...CsvFormQuery,
  limit: z.number().int().min(1).max(5000).default(1000).describe('Rows at most (the header is extra); `truncated` says whether there were more'),
});

/** The row operations: REST routes and MCP tools (in this order in tools/list). */
export const rowOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: ListRowsQuery, response: RowList,
      rest: {
        method: 'GET',
        workspacePath: '/rows',
        querystring: ListRowsRestQuery,
        summary: 'List rows',
        description:
          'Rows of one sheet (`surface` or `surfaceId`) or of every sheet, in sheet then position order unless `sort` is given. Page with `nextCursor`. ' +
          'A calendar or timeline `view` is read a window at a time: `from` and `to` (YYYY-MM-DD, both included; 400 when either is missing or they are reversed) list the rows whose date or range overlaps the window, by date. ' +
          `${LINK_CELLS} ` +
          'The `ETag` header is the version token of the table as read: send it back as `If-Match` (or `baseVersion`) with a row PATCH.',
        tags: ['rows'],
        config: { auth: 'optional' },
        stream: {
          type: 'text/csv',
          format: 'csv',
          workspacePath: '/rows.csv',
          querystring: ListRowsRestQuery.omit({ limit: true, after: true, format: true, from: true, to: true }),
          description:
            'The rows as RFC 4180 CSV (`format=csv`, `Accept: text/csv`, or `GET /rows.csv`): one sheet (the named one, else the primary), a header of `id` then the column keys in column order, ' +
            'a record per row in the listing\'s order (`filter`, `sort` and `view` apply; a view gives its sheet and its visible columns in its order), streamed a page at a time; `limit` and `after` do not apply. Arrays (multi-select, persons, links) are JSON arrays. ' +
            'The file is named after the view, else the sheet. `headers=labels`, `bom=true` and `neutralize=formulas` give the file people open in a spreadsheet (the web app\'s export); docs/TABLES.md.',
          run: async (services, actor, { params, query }) => {
            const { workspace } = await resolveWorkspace(services, actor, addressOf(params as z.output<typeof WorkspaceParams>), 'read');
            const csvQuery = query as z.infer<typeof ListRowsRestQuery>;
            const { fields, ...listing } = listingFromQueryString(csvQuery);
            const view = listing.view === undefined ? null : await readView(services, workspace, listing.view);
            const csv = await rowsCsv(services, workspace, listing, { columns: fields, view, form: csvFormOf(csvQuery) }).catch((error) => {
              throw inQueryStringTerms(error, listing);
            });
            return { chunks: csv.chunks, filename: `${csv.title}.csv` };
          },
        },
      },
      mcp: {
        name: 'list_rows',
        title: 'List rows',
        description: `Rows of one table surface (\`surface\` slug or \`surfaceId\`) or of all of them, 100 per page by default; pass \`nextCursor\` back as \`after\` for the next page. \`sort\` names column keys, comma-separated (\`-key\` for descending); \`filter\` maps a column key to \`{ <op>: value }\` (ops ${FILTER_OPS.join(', ')}; all must hold; \`in\` a comma list, \`between\` \`a,b\`); \`fields\` a comma list of column keys; \`view\` a saved view id; for a calendar or timeline view, \`from\` and \`to\` (YYYY-MM-DD, required there) list the rows whose dates overlap those days ("what is due this week"). For or-groups use query_rows. ${LINK_CELLS} ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }, http) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const listing = listingFromQueryString(query);
      const view = listing.view === undefined ? null : await readView(services, workspace, listing.view);
      const window = listingWindow(view, listing.from, listing.to);
      const { etag, ...page } = await listWorkspaceRows(services, workspace, listing, view, window).catch((error) => {
        throw inQueryStringTerms(error, listing);
      });
      http?.header('etag', etag);
      return page;
    },
  ),
  query: defineOperation(
    {
      params: WorkspaceParams, body: RowQueryBody, response: RowList,
      rest: {
        method: 'POST',
        workspacePath: '/rows/query',
        summary: 'Query rows (filters in a JSON body)',
        description:
          'The `GET /rows` listing with its query as JSON, for filters too long for a URL: `filter` holds `and` and `or` lists of conditions ' +
          '`{ column, op, value }` or groups of them one level deep; `sort` is a list of `{ column, direction }`. Reads only (docs/TABLES.md).',
        tags: ['rows'],
        // A read: never refused by the monthly cap nor counted as a write (it is still a metered call).
        config: { auth: 'optional', capExempt: true, writeLimited: false },
      },
      mcp: {
        name: 'query_rows',
        title: 'Query rows',
        description:
          `Rows of a table surface that match a filter: \`filter\` is \`{ and?: [...], or?: [...] }\` of conditions \`{ column, op, value }\` (ops ${FILTER_OPS.join(', ')}; ` +
          `\`in\` and \`between\` take arrays) or groups \`{ and | or: [conditions] }\`; \`sort\` is \`[{ column, direction }]\`; \`fields\` picks columns; \`view\` applies a saved view. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, body }, http) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const view = body.view === undefined ? null : await readView(services, workspace, body.view);
      const window = listingWindow(view, body.from, body.to);
      const { etag, ...page } = await listWorkspaceRows(services, workspace, body as RowListing, view, window);
      http?.header('etag', etag);
      return page;
    },
  ),
  /** CSV for agents: bounded text in the tool's answer (REST streams the whole sheet: `GET /rows.csv`, above). */
  exportCsv: defineOperation(
    {
      params: WorkspaceParams, query: ExportCsvQuery,
      response: z.object({
        csv: z.string().describe('RFC 4180 CSV: a header of `id` and the column keys, a record per row; arrays as JSON arrays'),
        rows: z.number().int(),
        truncated: z.boolean().describe('True when the sheet has more rows than `limit`: page with list_rows, or download GET /rows.csv'),
      }),
      mcp: {
        name: 'export_rows_csv',
        title: 'Export rows as CSV',
        description: `One table surface (\`surface\`, else the primary one) as CSV text, up to \`limit\` rows (1,000 by default, at most 5,000), in \`sort\` order; \`fields\` picks columns; \`headers: "labels"\` writes the column labels without the id column, \`neutralize: "formulas"\` prefixes fields a spreadsheet would run with \`'\`. For a whole large table, REST \`GET /rows.csv\` streams it. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { limit, ...rest } = query;
      const { fields, ...listing } = listingFromQueryString(rest);
      const view = listing.view === undefined ? null : await readView(services, workspace, listing.view);
      const csv = await rowsCsv(services, workspace, listing, { columns: fields, maxRows: limit, view, form: csvFormOf(rest) });
      let text = '';
      for await (const chunk of csv.chunks) text += chunk;
      return { csv: text, rows: csv.rows, truncated: csv.truncated };
    },
  ),
  create: defineOperation(
    {
      params: WorkspaceParams, body: CreateRowBody, response: Row, accepted: SuggestionCreated,
      rest: {
        method: 'POST',
        workspacePath: '/rows',
        summary: 'Create a row',
        description: `Appends to the tail of the sheet (the primary table surface by default). Values are checked against the column types (422); unknown keys create text columns. ${LINK_WRITES} ${SUGGEST_ROW}`,
        tags: ['rows'],
        querystring: SheetModeQuery,
        responses: { 402: OverLimitBody },
        input: withSheetAndModeFromQuery,
      },
      mcp: {
        name: 'create_row',
        title: 'Create a row',
        description: `Appends a row to a table surface (the primary one unless \`surface\` is given). \`data\` maps column keys to values, checked against the column types; unknown keys create text columns. ${LINK_WRITES} ${SUGGEST_ROW_TOOL} ${ADDRESS}`,
        annotations: WRITE,
        joinsRuns: true,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { mode, ...row } = body;
      if (mode === 'suggest') {
        const resolved = await resolveWorkspace(services, caller, addressOf(params), 'suggest');
        return new Accepted({ suggestion: await suggestRowCreate(services, caller, resolved, { surface: row.surface, surfaceId: row.surfaceId }, row.data) });
      }
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return createRow(services, caller, resolved, row);
    },
  ),
  update: defineOperation(
    {
      params: RowParams, body: PatchRowBody, response: PatchRowResponse, accepted: SuggestionCreated,
      rest: {
        method: 'PATCH',
        workspacePath: '/rows/:id',
        summary: 'Update a row (partial merge) or move it',
        description:
          'Naming another sheet moves the row to its tail, or to `position`; a move emits `row.moved_surface`. With a base version (`If-Match: <ETag ' +
          'of the read>` or `baseVersion`), each cell is written only if nobody else changed it since that version; cells someone else changed keep ' +
          'their value and are listed in `conflicts`, and the answer is the row as it is now with its new `ETag` (docs/VERSIONS.md). ' +
          `${SUGGEST_ROW} A suggested update names cells only (no move), and its base shows which cells changed since as conflicts.`,
        tags: ['rows'],
        querystring: SheetModeQuery,
        responses: { 412: PreconditionFailed },
        input: withSheetAndModeFromQuery,
      },
      mcp: {
        name: 'update_row',
        title: 'Update a row',
        description: `Merges \`data\` into row \`id\` (keys you leave out are kept). Naming another table \`surface\` moves the row there (to its end, or to \`position\`). ${SUGGEST_ROW_TOOL} ${ADDRESS}`,
        annotations: { ...WRITE, idempotentHint: true },
        joinsRuns: true,
      },
    },
    async (services, actor, { params, body }, http) => {
      const caller = requireCaller(actor);
      const { data, position, surface, surfaceId, baseVersion, mode } = body;
      const base = { ifMatch: http?.ifMatch, baseVersion };
      if (mode === 'suggest') {
        if (position !== undefined) throw errors.badRequest('A suggestion changes cells only: send the move as a plain write.', [{ path: ['position'], code: 'invalid_with_suggest', message: 'not with mode=suggest' }]);
        const resolved = await resolveWorkspace(services, caller, addressOf(params), 'suggest');
        return new Accepted({ suggestion: await suggestRowUpdate(services, caller, resolved, params.id, data ?? {}, base) });
      }
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      const { row, etag, conflicts } = await updateRow(services, caller, workspace, params.id, { data, position, surface, surfaceId, base });
      if (etag) http?.header('etag', etag);
      return { ...row, ...(conflicts ? { conflicts } : {}) };
    },
  ),
  bulkUpdate: defineOperation(
    {
      params: WorkspaceParams, query: SheetQuery, body: BulkUpdateBody, response: z.object({ rows: z.array(Row) }),
      rest: {
        method: 'PATCH',
        workspacePath: '/rows/bulk',
        summary: 'Update up to 500 rows at once',
        description: 'All or nothing: an unknown id or an invalid value writes nothing. One `row.updated` per row.',
        tags: ['rows'],
      },
      mcp: {
        name: 'bulk_update_rows',
        title: 'Update many rows',
        description: `Merges data into up to 500 rows at once, all or nothing: an unknown id or an invalid value changes none of them. ${ADDRESS}`,
        annotations: { ...WRITE, idempotentHint: true },
        joinsRuns: true,
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return { rows: await bulkUpdateRows(services, caller, workspace, body.updates, query) };
    },
  ),
  remove: defineOperation(
    {
      params: RowParams, query: SheetModeQuery, response: Ok, accepted: SuggestionCreated,
      rest: {
        method: 'DELETE',
        workspacePath: '/rows/:id',
        summary: 'Delete a row',
        description: `With \`surface\` or \`surfaceId\`, the row must be on that sheet (404 otherwise). Every link cell that named the row drops it in the same change (a \`row.updated\` for each linking row). ${SUGGEST_ROW}`,
        tags: ['rows'],
      },
      mcp: {
        name: 'delete_row',
        title: 'Delete a row',
        description: `Deletes row \`id\` for good, and takes it out of every link cell that named it. ${SUGGEST_ROW_TOOL} ${ADDRESS}`,
        annotations: DESTRUCTIVE,
        joinsRuns: true,
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const { mode, ...sheet } = query;
      if (mode === 'suggest') {
        const resolved = await resolveWorkspace(services, caller, addressOf(params), 'suggest');
        return new Accepted({ suggestion: await suggestRowDelete(services, caller, resolved, params.id, sheet) });
      }
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      await deleteWorkspaceRow(services, caller, workspace, params.id, sheet);
      return { ok: true as const };
    },
  ),
  move: defineOperation(
    {
      params: WorkspaceParams, body: MoveRowsBody, response: z.object({ moved: z.array(z.string()), skipped: z.number().int() }),
      rest: {
        method: 'POST',
        workspacePath: '/rows/move',
        summary: 'Move up to 500 rows to another sheet',
        description: 'One transaction: a row id outside the workspace fails the batch; rows already there are skipped; the rest land at the tail in the order given.',
        tags: ['rows'],
        querystring: SheetQuery,
        input: withSheetFromQuery,
      },
      mcp: {
        name: 'move_rows',
        title: 'Move rows to another table',
        description: `Moves up to 500 rows (in the order given) to the end of the table surface \`surface\`, in one transaction; rows already there are skipped and counted. ${ADDRESS}`,
        annotations: WRITE,
        joinsRuns: true,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return moveRowsToSurface(services, caller, workspace, { rowIds: body.rowIds, surface: body.surface, surfaceId: body.surfaceId });
    },
  ),
  get: defineOperation(
    {
      params: RowParams, query: GetRowQuery, response: Row.extend({ attribution: CellAttribution.optional() }),
      rest: {
        method: 'GET',
        workspacePath: '/rows/:id',
        summary: 'One row',
        description:
          'With `surface` or `surfaceId`, the row must be on that sheet (404 otherwise). The `ETag` header is the version token of the table as read (a base for PATCH). ' +
          "`attribution=1` adds `attribution`: per column key, who last set the cell, from the update log's own attribution (docs/ATTRIBUTION.md).",
        tags: ['rows'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params, query }, http) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { attribution, ...selector } = query;
      const { row, etag } = await getWorkspaceRow(services, workspace, params.id, selector);
      http?.header('etag', etag);
      return attributionWanted(attribution) ? { ...row, attribution: await readRowAttribution(services, workspace, params.id, selector) } : row;
    },
  ),
  history: defineOperation(
    {
      params: RowParams, query: SheetQuery, response: z.object({ events: z.array(Event) }),
      rest: {
        method: 'GET',
        workspacePath: '/rows/:id/history',
        summary: 'Events of one row, oldest first',
        tags: ['rows'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return { events: await rowHistory(services, workspace, params.id, query) };
    },
  ),
};
