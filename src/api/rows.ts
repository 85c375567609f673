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
} from '../domain/tables';
import { requireCaller } from '../http/authenticate';
import { defineOperation } from '../http/operation';
import type { App } from '../http/types';
import { resolveWorkspace } from '../http/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../http/workspace-routes';
import type { Services } from '../services';
import { Event } from './event-schemas';
import { errorResponses, Ok, OverLimitBody } from './schemas';
import { Row, RowData, SurfaceQuery } from './table-schemas';

export const RowParams = WorkspaceParams.extend({ id: z.string().min(1).max(100) });

export const ListRowsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().max(2000).optional().describe('The nextCursor of the previous page'),
  sort: z
    .string()
    .regex(/^-?[^\s]{1,64}$/)
    .optional()
    .describe('Column key to order by (ties by position); prefix with - for descending'),
  ...SurfaceQuery,
});

export const CreateRowBody = z.strictObject({ data: RowData, ...SurfaceQuery });
export const PatchRowBody = z.strictObject({
  data: RowData.optional(),
  ...SurfaceQuery,
  position: z.number().int().min(0).optional(),
});
export const BulkUpdateBody = z.strictObject({ updates: z.array(z.strictObject({ id: z.string().min(1).max(100), data: RowData })).min(1).max(500) });
export const MoveRowsBody = z.strictObject({ rowIds: z.array(z.string().min(1).max(100)).min(1).max(500), surface: z.string().min(1).max(100) });

const RowList = z.object({ rows: z.array(Row), nextCursor: z.string().nullable() });

/** Each route's policy check and domain call; the MCP tools (src/mcp/tools.ts) run the same ones. */
export const rowOperations = {
  list: defineOperation(
    { params: WorkspaceParams, query: ListRowsQuery, response: RowList },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return listWorkspaceRows(services, workspace, query);
    },
  ),
  create: defineOperation(
    { params: WorkspaceParams, body: CreateRowBody, response: Row },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return createRow(services, caller, resolved, body);
    },
  ),
  bulkUpdate: defineOperation(
    { params: WorkspaceParams, body: BulkUpdateBody, response: z.object({ rows: z.array(Row) }) },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return { rows: await bulkUpdateRows(services, caller, workspace, body.updates) };
    },
  ),
  move: defineOperation(
    { params: WorkspaceParams, body: MoveRowsBody, response: z.object({ moved: z.array(z.string()), skipped: z.number().int() }) },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return moveRowsToSurface(services, caller, workspace, body);
    },
  ),
  get: defineOperation(
    { params: RowParams, response: Row },
    async (services, actor, { params }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return getWorkspaceRow(services, workspace, params.id);
    },
  ),
  update: defineOperation(
    { params: RowParams, body: PatchRowBody, response: Row },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      return (await updateRow(services, caller, workspace, params.id, body)).row;
    },
  ),
  remove: defineOperation(
    { params: RowParams, response: Ok },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_rows');
      await deleteWorkspaceRow(services, caller, workspace, params.id);
      return { ok: true as const };
    },
  ),
  history: defineOperation(
    { params: RowParams, response: z.object({ events: z.array(Event) }) },
    async (services, actor, { params }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return { events: await rowHistory(services, workspace, params.id) };
    },
  ),
};

export async function rowRoutes(app: App, services: Services) {
  const { list, create, bulkUpdate, move, get, update, remove, history } = rowOperations;
  for (const url of workspacePaths('/rows')) {
    app.get(
      url,
      {
        schema: {
          summary: 'List rows',
          description: 'Rows of one sheet (`surface` or `surfaceId`) or of every sheet, in sheet then position order unless `sort` is given. Page with `nextCursor`.',
          tags: ['rows'],
          params: list.params,
          querystring: list.query,
          response: { 200: list.response, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => list.run(services, request.actor, request),
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Create a row',
          description: 'Appends to the tail of the sheet (the primary table surface by default). Values are checked against the column types (422); unknown keys create text columns.',
          tags: ['rows'],
          params: create.params,
          body: create.body,
          response: { 200: create.response, ...errorResponses, 402: OverLimitBody },
        },
      },
      async (request) => create.run(services, request.actor, request),
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
          params: bulkUpdate.params,
          body: bulkUpdate.body,
          response: { 200: bulkUpdate.response, ...errorResponses },
        },
      },
      async (request) => bulkUpdate.run(services, request.actor, request),
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
          params: move.params,
          body: move.body,
          response: { 200: move.response, ...errorResponses },
        },
      },
      async (request) => move.run(services, request.actor, request),
    );
  }

  for (const url of workspacePaths('/rows/:id')) {
    app.get(
      url,
      { schema: { summary: 'One row', tags: ['rows'], params: get.params, response: { 200: get.response, ...errorResponses } }, config: { auth: 'optional' } },
      async (request) => get.run(services, request.actor, request),
    );

    app.patch(
      url,
      {
        schema: {
          summary: 'Update a row (partial merge) or move it',
          description: 'Naming another sheet moves the row to its tail, or to `position`; a move emits `row.moved_surface`.',
          tags: ['rows'],
          params: update.params,
          body: update.body,
          response: { 200: update.response, ...errorResponses },
        },
      },
      async (request) => update.run(services, request.actor, request),
    );

    app.delete(
      url,
      { schema: { summary: 'Delete a row', tags: ['rows'], params: remove.params, response: { 200: remove.response, ...errorResponses } } },
      async (request) => remove.run(services, request.actor, request),
    );
  }

  for (const url of workspacePaths('/rows/:id/history')) {
    app.get(
      url,
      {
        schema: { summary: 'Events of one row, oldest first', tags: ['rows'], params: history.params, response: { 200: history.response, ...errorResponses } },
        config: { auth: 'optional' },
      },
      async (request) => history.run(services, request.actor, request),
    );
  }
}
