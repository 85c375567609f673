import { z } from 'zod';
import { getColumns, postColumn, putColumns } from '../domain/tables';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import type { NewColumn, ReplacementColumn } from '../model/table/document';
import { Column, ColumnInput, NewColumnInput, SurfaceQuery } from '../model/schemas/tables';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';

const Columns = z.object({ columns: z.array(Column) });

const LINK_COLUMNS =
  'A `link` column names the table surface its cells link to in `targetSurface` (a slug of this workspace); a `lookup` column names a link column of the same sheet in `link` and a column of that link\'s target in `field` (422 otherwise; docs/TABLES.md "Linked rows").';

/** The columns of a table surface: read, replace all, add one. */
export const columnOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(SurfaceQuery), response: Columns,
      rest: {
        method: 'GET',
        workspacePath: '/columns',
        summary: 'Columns of a table surface, in display order',
        description: 'The primary table surface unless `surface`/`surfaceId` is given; empty on a doc-only workspace.',
        tags: ['columns'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return { columns: await getColumns(services, workspace, query) };
    },
  ),
  replace: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(SurfaceQuery), body: z.strictObject({ columns: z.array(ColumnInput).max(200) }), response: Columns,
      rest: {
        method: 'PUT',
        workspacePath: '/columns',
        summary: 'Replace every column (idempotent)',
        description:
          'Columns match stored ones by `id` when given, else by `key`; a known id with a new key is a rename that moves the cells (and comment anchors). Positions must be contiguous from 0 (400). ' +
          LINK_COLUMNS,
        tags: ['columns'],
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_columns');
      return { columns: await putColumns(services, caller, resolved, query, body.columns as ReplacementColumn[]) };
    },
  ),
  add: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(SurfaceQuery), body: z.strictObject({ column: NewColumnInput }), response: z.object({ column: Column, columns: z.array(Column) }),
      rest: {
        method: 'POST',
        workspacePath: '/columns',
        summary: 'Add one column',
        description: `Any \`position\` is ignored: the column goes after the last one. 409 when the key exists. ${LINK_COLUMNS}`,
        tags: ['columns'],
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_columns');
      return postColumn(services, caller, resolved, query, body.column as NewColumn);
    },
  ),
};
