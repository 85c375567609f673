import { z } from 'zod';
import { createSheetView, deleteSheetView, listSheetViews, updateSheetView } from '../domain/views';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { Ok } from '../model/schemas/common';
import { FormSettings, ROW_HEIGHTS, RowFilter, RowSort, SurfaceQuery, View, VIEW_KINDS } from '../model/schemas/tables';
import { defineOperation } from './operation';
import { ADDRESS, DESTRUCTIVE, READ, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const ViewParams = WorkspaceParams.extend({ id: z.string().min(1).max(100).describe('View id') });
const SheetQuery = z.strictObject(SurfaceQuery);

const ColumnKeys = z.array(z.string().min(1).max(64)).max(500);
const viewFields = {
  name: z.string().trim().min(1).max(200),
  kind: z
    .enum(VIEW_KINDS)
    .describe(
      '`board` groups rows into lanes by the status column `groupBy`; `calendar` and `timeline` place rows by `dateColumn` (to `endDateColumn`); `gallery` shows cards with a cover; `form` collects new rows from a public link',
    ),
  filter: RowFilter.nullable().describe('The `/rows/query` filter form; null for none'),
  sort: RowSort.describe('Sort keys, first first'),
  hiddenColumns: ColumnKeys.describe('Column keys the view hides'),
  columnOrder: ColumnKeys.describe('Column keys in the order the view shows them; columns left out follow in sheet order'),
  groupBy: z.string().min(1).max(64).nullable().describe('A column key; a board needs a status (single-select) column'),
  rowHeight: z.enum(ROW_HEIGHTS),
  position: z.number().min(-1e9).max(1e9).describe('Order among the sheet’s views (default: after the last)'),
  dateColumn: z.string().min(1).max(64).nullable().describe('Calendar and timeline (required there): a date column, each row’s date or start'),
  endDateColumn: z.string().min(1).max(64).nullable().describe('Calendar and timeline: a date column each row ends on; null for rows of one date'),
  coverColumn: z.string().min(1).max(64).nullable().describe('Gallery: an attachment or url column whose first image is each card’s cover; null for none'),
  cardFields: ColumnKeys.describe('Gallery: the column keys shown on each card, in order'),
  form: FormSettings.describe('Form: its title, description, questions `{ column, label?, help?, required }`, texts, and `open`'),
};

const NewViewBody = z.strictObject({ ...partial(viewFields), name: viewFields.name });
const ViewPatchBody = z.strictObject(partial(viewFields));
const ViewReply = z.object({ view: View });

function partial<T extends Record<string, z.ZodType>>(fields: T) {
  return Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, schema.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };
}

const VIEW_SHAPE =
  'A view is `{ name, kind: "grid"|"board"|"calendar"|"timeline"|"gallery"|"form", filter, sort, hiddenColumns, columnOrder, groupBy, rowHeight, position }`, ' +
  'and by kind `dateColumn` and `endDateColumn` (calendar, timeline: date columns; a timeline\'s `groupBy` makes lanes by a status or person column), ' +
  '`coverColumn` and `cardFields` (gallery), `form` (`{ title, description, fields: [{ column, label?, help?, required }], submitLabel?, successMessage?, open }`; ' +
  'reads add `publicUrl` while it is open). `filter` and `sort` take the form of `/rows/query`. ';

/** Saved views of a table surface (docs/TABLES.md "Saved views"): REST routes and MCP tools, in this order in tools/list. */
export const viewOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: SheetQuery, response: z.object({ views: z.array(View) }),
      rest: {
        method: 'GET',
        workspacePath: '/views',
        summary: 'List saved views',
        description: 'The views of one sheet (`surface` or `surfaceId`), or of every table surface when none is named, in sheet then view order.',
        tags: ['views'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'list_views',
        title: 'List saved views',
        description: `Saved views of a table surface (\`surface\` slug or \`surfaceId\`), or of all of them: each with its filter, sort, hidden and ordered columns and kind (grid, board, calendar, timeline, gallery or form; an open form with its \`publicUrl\`, where anyone may answer it without an account). ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return { views: await listSheetViews(services, workspace, query) };
    },
  ),
  create: defineOperation(
    {
      params: WorkspaceParams, query: SheetQuery, body: NewViewBody, response: ViewReply,
      rest: {
        method: 'POST',
        workspacePath: '/views',
        summary: 'Save a view',
        description:
          `Editor. A new view of the sheet (\`surface\` or \`surfaceId\`; the primary table surface by default). ${VIEW_SHAPE}` +
          'Column keys the sheet does not have, and a board whose `groupBy` is not a status column, are 422 naming the field. Answers 200 with the view.',
        tags: ['views'],
      },
      mcp: {
        name: 'create_view',
        title: 'Save a view',
        description: `Saves a view of a table surface (the primary one unless \`surface\` is given) that everyone on it sees and the web app offers. ${VIEW_SHAPE}${ADDRESS}`,
        annotations: WRITE,
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_views');
      return { view: await createSheetView(services, caller, workspace, query, body) };
    },
  ),
  update: defineOperation(
    {
      params: ViewParams, query: SheetQuery, body: ViewPatchBody, response: ViewReply,
      rest: {
        method: 'PATCH',
        workspacePath: '/views/:id',
        summary: 'Change a saved view',
        description:
          'Editor. Sets the fields given and keeps the others; two people changing different fields both keep theirs. With `surface` or `surfaceId`, the view must be on that sheet (404 otherwise).',
        tags: ['views'],
      },
      mcp: {
        name: 'update_view',
        title: 'Change a saved view',
        description: `Sets the given fields of view \`id\` (from list_views) and keeps the others. ${VIEW_SHAPE}${ADDRESS}`,
        annotations: { ...WRITE, idempotentHint: true },
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_views');
      return { view: await updateSheetView(services, caller, workspace, params.id, query, body) };
    },
  ),
  remove: defineOperation(
    {
      params: ViewParams, query: SheetQuery, response: Ok,
      rest: {
        method: 'DELETE',
        workspacePath: '/views/:id',
        summary: 'Delete a saved view',
        description: 'Editor. The rows it showed are untouched. With `surface` or `surfaceId`, the view must be on that sheet (404 otherwise).',
        tags: ['views'],
      },
      mcp: {
        name: 'delete_view',
        title: 'Delete a saved view',
        description: `Deletes view \`id\` for everyone (its rows are untouched). ${ADDRESS}`,
        annotations: DESTRUCTIVE,
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'write_views');
      await deleteSheetView(services, caller, workspace, params.id, query);
      return { ok: true as const };
    },
  ),
};
