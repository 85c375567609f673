import { z } from 'zod';
import { getColumns, postColumn, putColumns } from '../domain/tables';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { Services } from '../services';
import type { NewColumn, ReplacementColumn } from '../model/table/document';
import { errorResponses } from '../model/schemas/common';
import { Column, ColumnInput, NewColumnInput, SurfaceQuery } from '../model/schemas/tables';

const Columns = z.object({ columns: z.array(Column) });

export async function columnRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/columns')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Columns of a table surface, in display order',
          description: 'The primary table surface unless `surface`/`surfaceId` is given; empty on a doc-only workspace.',
          tags: ['columns'],
          params: WorkspaceParams,
          querystring: z.strictObject(SurfaceQuery),
          response: { 200: Columns, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        return { columns: await getColumns(services, workspace, request.query) };
      },
    );

    app.put(
      url,
      {
        schema: {
          summary: 'Replace every column (idempotent)',
          description:
            'Columns match stored ones by `id` when given, else by `key`; a known id with a new key is a rename that moves the cells (and comment anchors). Positions must be contiguous from 0 (400).',
          tags: ['columns'],
          params: WorkspaceParams,
          querystring: z.strictObject(SurfaceQuery),
          body: z.strictObject({ columns: z.array(ColumnInput).max(200) }),
          response: { 200: Columns, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'edit_columns');
        return { columns: await putColumns(services, actor, resolved, request.query, request.body.columns as ReplacementColumn[]) };
      },
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Add one column',
          description: 'Any `position` is ignored: the column goes after the last one. 409 when the key exists.',
          tags: ['columns'],
          params: WorkspaceParams,
          querystring: z.strictObject(SurfaceQuery),
          body: z.strictObject({ column: NewColumnInput }),
          response: { 200: z.object({ column: Column, columns: z.array(Column) }), ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'edit_columns');
        return postColumn(services, actor, resolved, request.query, request.body.column as NewColumn);
      },
    );
  }
}
