import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { readJob } from '../domain/jobs';
import { JobAnswer } from '../model/schemas/imports';
import { defineOperation } from './operation';

/** Background jobs (a workspace import): read by whoever started one (docs/IMPORT-EXPORT.md). */
export const jobOperations = {
  detail: defineOperation(
    {
      params: z.object({ id: z.string().min(1).max(100) }),
      response: JobAnswer,
      rest: {
        method: 'GET',
        path: '/api/jobs/:id',
        summary: 'A background job',
        description:
          '`status` is `running`, `done` or `failed`; `progress` counts the entries handled of all; `workspace` is the workspace the import made, once it exists; ' +
          '`errors` lists each entry that could not go in by its path (`""` for the archive as a whole). Only the principal that started the job reads it (404 for anyone else). ' +
          'A job whose server stopped reads as failed.',
        tags: ['workspaces'],
      },
    },
    async (services, actor, { params }) => ({ job: await readJob(services, requireCaller(actor), params.id) }),
  ),
};
