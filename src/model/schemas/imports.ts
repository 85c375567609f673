import { z } from 'zod';
import { IsoDateTime } from './common';
import { Surface } from './workspaces';

/** Imports and exports of docs and workspaces (docs/IMPORT-EXPORT.md). */

export const DocImportResult = z
  .object({
    surface: Surface.describe('The doc surface the file went into'),
    warnings: z.array(z.string()).describe('What the doc could not hold from the file (underline, colours, media, what the sanitiser removed, ...); empty when nothing was lost'),
  })
  .meta({ id: 'DocImportResult' });

export const JobStatus = z.enum(['running', 'done', 'failed']);

export const Job = z
  .object({
    id: z.string(),
    kind: z.literal('workspace_import'),
    status: JobStatus,
    progress: z.object({ done: z.number().int(), total: z.number().int() }).describe('Entries of the archive handled so far, of all'),
    workspace: z
      .object({ id: z.string(), slug: z.string(), name: z.string() })
      .optional()
      .describe('The workspace the import made, once it exists (and kept when it is done)'),
    errors: z.array(z.object({ path: z.string().describe('The entry of the archive, or "" for the archive as a whole'), message: z.string() })),
    createdAt: IsoDateTime,
    finishedAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'Job' });

export const JobAnswer = z.object({ job: Job }).meta({ id: 'JobAnswer' });

export type JobRecord = z.infer<typeof Job>;
export type DocImportRecord = z.infer<typeof DocImportResult>;
