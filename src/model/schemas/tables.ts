import { z } from 'zod';
import { COLUMN_TYPES } from '../table/document';

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
};

/** Additional properties on a column are accepted and kept (SPEC). */
export const ColumnInput = z.looseObject({ ...columnFields, id: z.string().optional(), position: z.number().int().min(0) });
export const NewColumnInput = z.looseObject({ ...columnFields, id: z.string().optional(), position: z.number().int().min(0).optional() });
export const Column = z.looseObject({ ...columnFields, id: z.string(), position: z.number().int().min(0) }).meta({ id: 'ColumnDef' });

export const SurfaceQuery = {
  surface: z.string().min(1).max(100).optional().describe('Table surface slug; the primary table surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
};
