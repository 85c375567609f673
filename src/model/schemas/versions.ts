import { z } from 'zod';
import { Principal } from './common';
import { Column, RowData } from './tables';

/** Version history answers (docs/VERSIONS.md), as the API describes them and the web app's history panel reads them. */

export const Changes = z.object({
  unit: z.enum(['rows', 'blocks', 'lines']).describe('rows for a sheet, top-level blocks for a doc, lines for an html page'),
  added: z.number().int(),
  removed: z.number().int(),
  changed: z.number().int(),
  columnsChanged: z.boolean().optional().describe('Sheets: whether any column was added, removed or changed'),
});

export const Version = z
  .object({
    id: z.string(),
    surfaceId: z.string(),
    kind: z.enum(['auto', 'named']).describe('`auto`: a point of an editing session; `named`: named by someone, kept whatever the plan'),
    name: z.string().nullable(),
    createdAt: z.string().describe('auto: when the last edit it holds was made; named: when it was named'),
    createdBy: Principal.describe('auto: whose edit ends it; named: who named it'),
    editors: z.array(z.object({ principal: Principal, edits: z.number().int().describe('logged updates, e.g. one per REST write or per typing burst message') })).describe(
      'Who changed the surface since the previous version',
    ),
    changes: Changes.describe('What changed since the previous version'),
    restoredFrom: z
      .object({
        versionId: z.string(),
        name: z.string().nullable(),
        createdAt: z.string().describe('When the restored version was made (auto) or named'),
      })
      .nullable()
      .describe('Set when a restore made this version: the version it brought back, as it was then (retention may remove that version later); null otherwise'),
    etag: z.string().describe('Version token of this state: a base for writes (If-Match)'),
  })
  .meta({ id: 'Version' });

export const ListResponse = z.object({
  versions: z.array(Version).describe('Newest first'),
  nextCursor: z.string().nullable(),
  history: z.object({
    since: z.string().nullable().describe('History starts here (what the log held when version history began); null: from the start'),
    retentionDays: z.number().int().nullable().describe("How long automatic versions are kept on the organisation's plan; null: for ever"),
  }),
});

export const VersionRow = z.object({ id: z.string(), workspaceId: z.string(), surfaceId: z.string(), position: z.number().int(), data: RowData }).meta({ id: 'VersionRow' });

export const ShowResponse = z.union([
  z.object({ version: Version, surfaceId: z.string(), content: z.unknown().describe('ProseMirror JSON') }),
  z.object({ version: Version, surfaceId: z.string(), markdown: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), text: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), html: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), columns: z.array(Column), rows: z.array(VersionRow), nextCursor: z.string().nullable() }),
]);

export const BlockSide = z.object({ markdown: z.string(), node: z.unknown() });

export const SequenceOp = z.enum(['added', 'removed', 'changed']);

export const Cells = z.record(z.string(), z.object({ before: z.unknown().optional(), after: z.unknown().optional() }));

export const DiffBody = z.union([
  z.object({
    kind: z.literal('doc'),
    blocks: z.array(z.object({ op: SequenceOp, from: z.number().int().optional(), to: z.number().int().optional(), before: BlockSide.optional(), after: BlockSide.optional() })),
  }),
  z.object({
    kind: z.literal('html'),
    lines: z.array(z.object({ op: SequenceOp, from: z.number().int().optional(), to: z.number().int().optional(), before: z.string().optional(), after: z.string().optional() })),
  }),
  z.object({
    kind: z.literal('sheet'),
    columns: z.object({ added: z.array(Column), removed: z.array(Column), changed: z.array(z.object({ id: z.string(), before: Column, after: Column })) }),
    rows: z.object({
      added: z.array(z.object({ id: z.string(), position: z.number().int(), data: RowData })),
      removed: z.array(z.object({ id: z.string(), position: z.number().int(), data: RowData })),
      changed: z.array(z.object({ id: z.string(), position: z.number().int(), cells: Cells })),
    }),
    reordered: z.boolean(),
  }),
]);

export const DiffResponse = z.object({
  from: Version,
  to: z.union([Version, z.object({ current: z.literal(true), etag: z.string() })]),
  changes: Changes,
  diff: DiffBody,
});

export const RestoreResponse = z.object({
  restored: Version,
  undo: Version.describe('The state just before the restore; restoring it undoes this one'),
});

export type Version = z.infer<typeof Version>;
export type VersionList = z.infer<typeof ListResponse>;
export type ShownVersion = z.infer<typeof ShowResponse>;
export type VersionDiff = z.infer<typeof DiffResponse>;
export type RestoredVersion = z.infer<typeof RestoreResponse>;
