import { z } from 'zod';
import { COLUMN_TYPES } from '../table/document';
import { ROLLUP_FUNCTIONS } from '../table/formulas/rollups';
import { RESULT_TYPES } from '../table/formulas/values';

export const RowData = z.record(z.string().min(1).max(64), z.unknown()).describe('Cells keyed by column key');

export const Row = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    surfaceId: z.string(),
    position: z.number().int().describe('Index within its sheet, contiguous from 0'),
    data: z.record(z.string(), z.unknown()),
    createdByPrincipalId: z.string().nullable(),
    updatedByPrincipalId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Row' });

const ColumnOption = z.looseObject({ value: z.string().min(1), label: z.string().min(1), color: z.string().optional() });

const columnFields = {
  key: z.string().min(1).max(64),
  label: z.string().min(1).max(200),
  type: z.enum(COLUMN_TYPES),
  width: z.number().int().positive().optional(),
  hidden: z.boolean().optional(),
  description: z.string().max(280).optional(),
  options: z.array(ColumnOption).optional(),
  targetSurface: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('For a `link` column (required there): the slug of the table surface of this workspace whose rows its cells name; a cell is an array of row ids'),
  link: z.string().min(1).max(64).optional().describe('For a `lookup` or `rollup` column (required there): the key of a link column of the same sheet'),
  field: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'For a `lookup` or `rollup` column (required there): the key of a column of the link’s target surface; a lookup cell reads as the array of the linked rows’ values of it, a rollup cell as `fn` of them (read-only)',
    ),
  formula: z
    .string()
    .max(4000)
    .optional()
    .describe('For a `formula` column (required there): an expression over the row’s cells in the Airtable-style language of docs/FORMULAS.md, e.g. `{points} * {weight}`; its cells are computed on read (read-only)'),
  fn: z
    .enum(ROLLUP_FUNCTIONS)
    .optional()
    .describe('For a `rollup` column (required there): how the linked rows’ values of `field` make one value (docs/FORMULAS.md "Rollups")'),
  resultType: z
    .enum(RESULT_TYPES)
    .optional()
    .describe('For `formula` and `rollup` columns, set by the server on read: the type of their values, which filters, sorts and CSV treat like a column of that type (ignored on write)'),
};

/** Additional properties on a column are accepted and kept (SPEC). */
export const ColumnInput = z.looseObject({ ...columnFields, id: z.string().optional(), position: z.number().int().min(0) });
export const NewColumnInput = z.looseObject({ ...columnFields, id: z.string().optional(), position: z.number().int().min(0).optional() });
export const Column = z
  .looseObject({
    ...columnFields,
    // As stored: a sync client may have written any function name (the cells then read #ERROR!).
    fn: z.string().optional().describe(columnFields.fn.description!),
    id: z.string(),
    position: z.number().int().min(0),
  })
  .meta({ id: 'ColumnDef' });

export const FormulaCheckBody = z.strictObject({
  surface: z.string().min(1).max(100).optional().describe('Table surface slug; the primary table surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
  formula: z.string().max(10_000).describe('The formula to try (docs/FORMULAS.md)'),
  column: z.string().min(1).max(64).optional().describe('The key of the column whose formula it would be, if it is an existing one: a formula that would make it depend on itself is refused'),
});

export const FormulaCheck = z
  .union([
    z.object({ ok: z.literal(true), resultType: z.enum(RESULT_TYPES).describe('The type of its values') }),
    z.object({
      ok: z.literal(false),
      error: z.object({ message: z.string(), position: z.number().int().min(0).describe('0-based offset in the formula of the fault') }),
    }),
  ])
  .meta({ id: 'FormulaCheck' });

export const SurfaceQuery = {
  surface: z.string().min(1).max(100).optional().describe('Table surface slug; the primary table surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
};

// ---------------------------------------------------------------------------
// Row queries (docs/TABLES.md): filters, sorts, fields and saved views.

import { FILTER_OPS, type FilterOp as FilterOpName } from '../table/query';
export { FILTER_OPS };

const ColumnKey = z.string().min(1).max(64);
const FilterValue = z
  .union([z.string().max(10_000), z.number(), z.boolean(), z.null(), z.array(z.union([z.string().max(10_000), z.number()])).max(1_000)])
  .describe('A string (as in the query string), or a typed value: a number, a boolean, or an array for `in` and `between`');

/**
 * Any operator name passes the schema, so that the row query's own check
 * (src/model/table/query.ts) names an unknown one with its column, in the
 * same words for the JSON body as for the query string; OpenAPI still lists
 * the operators. Typed as those: every filter a request brings is checked
 * (checkRowQuery, compileRowQuery) before it is used or stored.
 */
const FilterOp = z.string().min(1).max(32).meta({ enum: [...FILTER_OPS] }) as unknown as z.ZodType<FilterOpName, string>;
export const FilterCondition = z
  .strictObject({ column: ColumnKey, op: FilterOp, value: FilterValue.optional() })
  .meta({ id: 'FilterCondition' });
const NestedGroup = z
  .union([z.strictObject({ and: z.array(FilterCondition).max(100) }), z.strictObject({ or: z.array(FilterCondition).max(100) })])
  .describe('A group of conditions one level deep');
export const RowFilter = z
  .strictObject({
    and: z.array(z.union([FilterCondition, NestedGroup])).max(100).optional(),
    or: z.array(z.union([FilterCondition, NestedGroup])).max(100).optional(),
  })
  .describe('Every condition of `and` and at least one of `or` must hold (either may be left out)')
  .meta({ id: 'RowFilter' });
export const SortKey = z.strictObject({ column: ColumnKey, direction: z.enum(['asc', 'desc']).default('asc') }).meta({ id: 'SortKey' });
export const RowSort = z.array(SortKey).max(10);

export const VIEW_KINDS = ['grid', 'board'] as const;
export const ROW_HEIGHTS = ['short', 'medium', 'tall', 'extra'] as const;
export const View = z
  .object({
    id: z.string(),
    surfaceId: z.string(),
    name: z.string(),
    kind: z.enum(VIEW_KINDS),
    filter: RowFilter.nullable(),
    sort: RowSort,
    hiddenColumns: z.array(z.string()),
    columnOrder: z.array(z.string()),
    groupBy: z.string().nullable().describe('For a board: the key of the single-select (status) column whose options are its lanes'),
    rowHeight: z.enum(ROW_HEIGHTS),
    position: z.number().describe('Order among the sheet’s views'),
  })
  .meta({ id: 'View' });
