import { z } from 'zod';
import {
  bulkUpdateRows,
  createRow,
  deleteWorkspaceRow,
  getWorkspaceRow,
  listWorkspaceRows,
  moveRowsToSurface,
  rowHistory,
  updateRow,
  type SurfaceSelector,
} from '../domain/tables';
import { errors } from '../errors';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../http/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../http/workspace-routes';
import type { Services } from '../services';
import { Event } from './event-schemas';
import { BaseVersion, errorResponses, OverLimitBody, PreconditionFailed } from './schemas';
import { Row, RowData, SurfaceQuery } from './table-schemas';

const RowParams = WorkspaceParams.extend({ id: z.string().min(1).max(100) });

const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().max(2000).optional().describe('The nextCursor of the previous page'),
  sort: z
    .string()
    .regex(/^-?[^\s]{1,64}$/)
    .optional()
    .describe('Column key to order by (ties by position); prefix with - for descending'),
  ...SurfaceQuery,
});

const CreateBody = z.strictObject({ data: RowData, ...SurfaceQuery });
const PatchBody = z.strictObject({
  data: RowData.optional(),
  ...SurfaceQuery,
  position: z.number().int().min(0).optional(),
  baseVersion: BaseVersion.optional(),
});

const CellConflict = z
  .object({
    column: z.string(),
    base: z.unknown().optional().describe('The value in the base version (absent: no value)'),
    yours: z.unknown().describe('Your value, not written'),
    theirs: z.unknown().optional().describe('The value someone else wrote since, kept (absent: they removed it)'),
  })
  .meta({ id: 'CellConflict' });

const PatchResponse = Row.extend({
  conflicts: z.array(CellConflict).optional().describe('Only for a write with a base: cells both you and someone else changed since the base'),
});
const BulkBody = z.strictObject({ updates: z.array(z.strictObject({ id: z.string().min(1).max(100), data: RowData })).min(1).max(500) });
const MoveBody = z.strictObject({
  rowIds: z.array(z.string().min(1).max(100)).min(1).max(500),
  ...SurfaceQuery,
  surface: SurfaceQuery.surface.describe('The sheet to move to (or `surfaceId`; either may be in the query instead)'),
});
/** Every row route takes the sheet selector in the query too. */
const SheetQuery = z.strictObject(SurfaceQuery);

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

const rowResponses = { 200: Row, ...errorResponses, 402: OverLimitBody };

export async function rowRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/rows')) {
    app.get(
      url,
      {
        schema: {
          summary: 'List rows',
          description:
            'Rows of one sheet (`surface` or `surfaceId`) or of every sheet, in sheet then position order unless `sort` is given. Page with `nextCursor`. ' +
            'The `ETag` header is the version token of the table as read: send it back as `If-Match` (or `baseVersion`) with a row PATCH.',
          tags: ['rows'],
          params: WorkspaceParams,
          querystring: ListQuery,
          response: { 200: z.object({ rows: z.array(Row), nextCursor: z.string().nullable() }), ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const { etag, ...page } = await listWorkspaceRows(services, workspace, request.query);
        reply.header('etag', etag);
        return page;
      },
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Create a row',
          description: 'Appends to the tail of the sheet (the primary table surface by default). Values are checked against the column types (422); unknown keys create text columns.',
          tags: ['rows'],
          params: WorkspaceParams,
          querystring: SheetQuery,
          body: CreateBody,
          response: rowResponses,
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
        return createRow(services, actor, resolved, { data: request.body.data, ...sheetOf(request.query, request.body) });
      },
    );
  }

  for (const url of workspacePaths('/rows/bulk')) {
    app.patch(
      url,
      {
        schema: {
          summary: 'Update up to 500 rows at once',
          description: 'All or nothing: an unknown id or an invalid value writes nothing. One `row.updated` per row.',
          tags: ['rows'],
          params: WorkspaceParams,
          querystring: SheetQuery,
          body: BulkBody,
          response: { 200: z.object({ rows: z.array(Row) }), ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
        return { rows: await bulkUpdateRows(services, actor, workspace, request.body.updates, request.query) };
      },
    );
  }

  for (const url of workspacePaths('/rows/move')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Move up to 500 rows to another sheet',
          description: 'One transaction: a row id outside the workspace fails the batch; rows already there are skipped; the rest land at the tail in the order given.',
          tags: ['rows'],
          params: WorkspaceParams,
          querystring: SheetQuery,
          body: MoveBody,
          response: { 200: z.object({ moved: z.array(z.string()), skipped: z.number().int() }), ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
        return moveRowsToSurface(services, actor, workspace, { rowIds: request.body.rowIds, ...sheetOf(request.query, request.body) });
      },
    );
  }

  for (const url of workspacePaths('/rows/:id')) {
    app.get(
      url,
      {
        schema: {
          summary: 'One row',
          description: 'With `surface` or `surfaceId`, the row must be on that sheet (404 otherwise). The `ETag` header is the version token of the table as read (a base for PATCH).',
          tags: ['rows'],
          params: RowParams,
          querystring: SheetQuery,
          response: { 200: Row, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const { row, etag } = await getWorkspaceRow(services, workspace, request.params.id, request.query);
        reply.header('etag', etag);
        return row;
      },
    );

    app.patch(
      url,
      {
        schema: {
          summary: 'Update a row (partial merge) or move it',
          description:
            'Naming another sheet moves the row to its tail, or to `position`; a move emits `row.moved_surface`. With a base version (`If-Match: <ETag ' +
            'of the read>` or `baseVersion`), each cell is written only if nobody else changed it since that version; cells someone else changed keep ' +
            'their value and are listed in `conflicts`, and the answer is the row as it is now with its new `ETag` (docs/VERSIONS.md).',
          tags: ['rows'],
          params: RowParams,
          querystring: SheetQuery,
          body: PatchBody,
          response: { 200: PatchResponse, ...errorResponses, 412: PreconditionFailed },
        },
      },
      async (request, reply) => {
        const actor = requireActor(request);
        const { workspace } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
        const { data, position, baseVersion } = request.body;
        const base = { ifMatch: request.headers['if-match'], baseVersion };
        const { row, etag, conflicts } = await updateRow(services, actor, workspace, request.params.id, { data, position, base, ...sheetOf(request.query, request.body) });
        if (etag) reply.header('etag', etag);
        return { ...row, ...(conflicts ? { conflicts } : {}) };
      },
    );

    app.delete(
      url,
      {
        schema: {
          summary: 'Delete a row',
          description: 'With `surface` or `surfaceId`, the row must be on that sheet (404 otherwise).',
          tags: ['rows'],
          params: RowParams,
          querystring: SheetQuery,
          response: { 200: z.object({ ok: z.literal(true) }), ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
        await deleteWorkspaceRow(services, actor, workspace, request.params.id, request.query);
        return { ok: true as const };
      },
    );
  }

  for (const url of workspacePaths('/rows/:id/history')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Events of one row, oldest first',
          tags: ['rows'],
          params: RowParams,
          querystring: SheetQuery,
          response: { 200: z.object({ events: z.array(Event) }), ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        return { events: await rowHistory(services, workspace, request.params.id, request.query) };
      },
    );
  }
}
