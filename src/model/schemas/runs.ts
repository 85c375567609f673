import { z } from 'zod';
import { Principal } from './common';
import { Column, RowData } from './tables';

/** Runs (docs/RUNS.md), as the API describes them and the web app's Activity panel reads them. */

export const RunSummary = z
  .object({
    rowsCreated: z.number().int(),
    rowsUpdated: z.number().int().describe('Rows it changed cells of or moved, and that exist before and after it'),
    rowsDeleted: z.number().int(),
    cellsChanged: z.number().int().describe('Cells of rows that existed before the run whose value it changed'),
    columnsChanged: z.number().int().describe('Columns it added, changed or removed'),
    docsChanged: z.number().int().describe('Doc and html surfaces whose text it changed'),
    surfaces: z.array(z.string()).describe('Slugs of the surfaces it changed'),
  })
  .meta({ id: 'RunSummary' });

export const Run = z
  .object({
    id: z.string(),
    name: z.string(),
    principal: Principal,
    automatic: z.boolean().describe('Opened for an API key or OAuth app that named no run; ends after 15 minutes without writes'),
    status: z.enum(['open', 'ended']),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    lastWriteAt: z.string().nullable().describe('When a change of the run was last recorded'),
    reverts: z.string().nullable().describe('A revert: the id of the run it undid'),
    revertedBy: z.string().nullable().describe('The run of the newest revert of this run, if any'),
    summary: RunSummary,
  })
  .meta({ id: 'Run' });
export type RunRecord = z.infer<typeof Run>;

export const CellChange = z.object({ before: z.unknown().describe('null: no value'), after: z.unknown().describe('null: no value') });

const on = { surface: z.string().describe('Surface slug (its id when the surface is gone)'), surfaceId: z.string() };

export const Change = z
  .discriminatedUnion('kind', [
    z.object({ ...on, kind: z.literal('row.created'), rowId: z.string(), data: RowData.describe('The cells it left') }),
    z.object({ ...on, kind: z.literal('row.updated'), rowId: z.string(), cells: z.record(z.string(), CellChange).describe('Per column key: before its first change, after its last') }),
    z.object({ ...on, kind: z.literal('row.deleted'), rowId: z.string(), data: RowData.describe('The cells it had before the run') }),
    z.object({
      ...on,
      kind: z.literal('row.moved'),
      rowId: z.string(),
      fromSurface: z.string().describe('Where it was before the run (the same sheet for a reorder)'),
      position: z.number().int().nullable().describe('Its position where the run left it'),
    }),
    z.object({ ...on, kind: z.literal('column.created'), column: Column }),
    z.object({ ...on, kind: z.literal('column.updated'), before: Column, column: Column }),
    z.object({ ...on, kind: z.literal('column.deleted'), column: Column }),
    z.object({ ...on, kind: z.literal('doc.changed'), inserted: z.array(z.string()).describe('Text it inserted, in document order'), deleted: z.array(z.string()).describe('Text it deleted, in document order') }),
    z.object({ ...on, kind: z.literal('html.changed'), inserted: z.array(z.string()), deleted: z.array(z.string()) }),
    z.object({ ...on, kind: z.literal('file.created'), fileId: z.string(), name: z.string() }),
    z.object({ ...on, kind: z.literal('file.deleted'), fileId: z.string(), name: z.string() }),
    z.object({ ...on, kind: z.literal('comment.created'), commentId: z.string(), body: z.string() }),
  ])
  .meta({ id: 'RunChange' });
export type ChangeRecord = z.infer<typeof Change>;

export const RunResponse = z.object({ run: Run });

export const ListResponse = z.object({ runs: z.array(Run).describe('Newest first'), nextCursor: z.string().nullable() });
export type RunList = z.infer<typeof ListResponse>;

export const ChangesResponse = z.object({ run: Run, changes: z.array(Change).describe('Per surface, in the order the run first changed each') });
export type RunChanges = z.infer<typeof ChangesResponse>;

export const Conflict = z
  .object({
    surface: z.string(),
    rowId: z.string().optional(),
    column: z.string().optional(),
    before: z.unknown().describe('Before the run'),
    run: z.unknown().describe('What the run left'),
    now: z.unknown().describe('What is there now (kept)'),
  })
  .meta({ id: 'RunConflict' });

export const RevertResponse = z.object({
  reverted: z.object({
    rowsRemoved: z.number().int().describe('Rows the run created, removed'),
    rowsRestored: z.number().int().describe('Rows the run deleted, back with their cells'),
    rowsMoved: z.number().int().describe('Rows the run moved, back where they were'),
    cellsRestored: z.number().int(),
    columnsRestored: z.number().int(),
    docsChanged: z.number().int().describe('Doc and html surfaces changed by the revert'),
    filesRestored: z.number().int().describe('Files the run added (to the trash) or deleted (back from it)'),
    commentsRemoved: z.number().int(),
  }),
  conflicts: z.array(Conflict).describe('Places someone else changed after the run: their work stays'),
  revertRun: z.string().nullable().describe('The run the revert made (revert it to apply the run again); null for a dry run'),
});
export type RevertResult = z.infer<typeof RevertResponse>;
