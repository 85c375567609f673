import { z } from 'zod';
import { getColumns, postColumn, putColumns, tryWorkspaceFormula } from '../domain/tables';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import type { NewColumn, ReplacementColumn } from '../model/table/document';
import { Column, ColumnInput, FormulaCheck, FormulaCheckBody, NewColumnInput, SurfaceQuery } from '../model/schemas/tables';
import { defineOperation } from './operation';
import { ADDRESS, READ, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const Columns = z.object({ columns: z.array(Column) });

const LINK_COLUMNS =
  'A `link` column names the table surface its cells link to in `targetSurface` (a slug of this workspace); a `lookup` column names a link column of the same sheet in `link` and a column of that link\'s target in `field` (422 otherwise; docs/TABLES.md "Linked rows").';

/** Formula and rollup columns (docs/FORMULAS.md), for the descriptions of the column routes and tools. */
export const COMPUTED_COLUMNS =
  'A `formula` column computes each cell from the row\'s other cells: `formula` is an Airtable-style expression such as `IF({due} < TODAY(), "late", "")` or `{points} * {weight}` (references `{column key}`, operators `+ - * / % & = != < <= > >=`, functions IF, SWITCH, SUM, ROUND, DATEADD, DATETIME_DIFF, DATETIME_FORMAT, TODAY …). ' +
  'A `rollup` column computes one value from the rows a link column links to: `link` (a link column of the sheet), `field` (a column of its target) and `fn` (sum, avg, min, max, count, counta, concat, and, or, earliest, latest). ' +
  'Reads add `resultType` (number, text, date or checkbox), the type filters and sorts treat the cells as. A formula that does not parse or names an unknown column, a rollup without a link, and columns that would depend on themselves are 422 (a formula at path `["formula"]`, with `column` and `position`); renaming a key through PUT carries the formulas along. Their cells are read-only; a failed cell reads `{ "error": "#DIV/0!" | "#VALUE!" | "#REF!" | "#CYCLE!" | "#ERROR!", "message" }`.';

/** The columns of a table surface: read, replace all, add one. */
export const columnOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(SurfaceQuery), response: Columns,
      rest: {
        method: 'GET',
        workspacePath: '/columns',
        summary: 'Columns of a table surface, in display order',
        description: 'The primary table surface unless `surface`/`surfaceId` is given; empty on a doc-only workspace. Formula and rollup columns carry `resultType`.',
        tags: ['columns'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'list_columns',
        title: 'List the columns of a table',
        description: `The columns of a table surface (the primary one unless \`surface\` is given), in display order: key, label, type and what each type adds (options, targetSurface, link, field, formula, fn, resultType). ${ADDRESS}`,
        annotations: READ,
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
          'Columns match stored ones by `id` when given, else by `key`; a known id with a new key is a rename that moves the cells (and comment anchors) and that the formulas, rollups and lookups reading it follow. Positions must be contiguous from 0 (400). ' +
          `${LINK_COLUMNS} ${COMPUTED_COLUMNS}`,
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
        description: `Any \`position\` is ignored: the column goes after the last one. 409 when the key exists. ${LINK_COLUMNS} ${COMPUTED_COLUMNS}`,
        tags: ['columns'],
      },
      mcp: {
        name: 'add_column',
        title: 'Add a column',
        description: `Adds a column after the last one of a table surface (the primary one unless \`surface\` is given): \`column\` is \`{ key, label, type, ... }\` with type text, longtext, number, status, select, person, date, url, checkbox, link, lookup, formula or rollup. Try a formula with check_formula first. ${COMPUTED_COLUMNS} ${ADDRESS}`,
        annotations: WRITE,
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_columns');
      return postColumn(services, caller, resolved, query, body.column as NewColumn);
    },
  ),
  checkFormula: defineOperation(
    {
      params: WorkspaceParams, body: FormulaCheckBody, response: FormulaCheck,
      rest: {
        method: 'POST',
        workspacePath: '/formula/check',
        summary: 'Try a formula',
        description:
          'Checks a formula against a sheet\'s columns (`surface` or `surfaceId`, else the primary table surface) without saving anything: `{ ok: true, resultType }`, or `{ ok: false, error: { message, position } }` with the 0-based offset at fault. ' +
          'With `column` (the key of a column of the sheet), it is tried as that column\'s formula, so a formula that would make it depend on itself is refused. docs/FORMULAS.md.',
        tags: ['columns'],
        // A read: never refused by the monthly cap nor counted as a write.
        config: { auth: 'optional', capExempt: true, writeLimited: false },
      },
      mcp: {
        name: 'check_formula',
        title: 'Try a formula',
        description: `Checks a formula for a table surface (the primary one unless \`surface\` is given) before a formula column is made with it: answers \`{ ok: true, resultType }\` or \`{ ok: false, error: { message, position } }\`. Give \`column\` to try it as the formula of that existing column. ${COMPUTED_COLUMNS} ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, body }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { formula, column, ...selector } = body;
      return tryWorkspaceFormula(services, workspace, selector, formula, column);
    },
  ),
};
