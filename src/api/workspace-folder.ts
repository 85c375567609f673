import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
import { streamInConversionSlot } from '../domain/doc-io';
import { readJob } from '../domain/jobs';
import { exportWorkspaceFolder } from '../domain/workspace-folder';
import { startWorkspaceImport } from '../domain/workspace-import';
import { zodIssuesError } from '../errors';
import { contentDisposition } from '../files/names';
import { requireActor } from '../http/authenticate';
import { readMultipartToFile, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { randomToken } from '../lib/secrets';
import { ErrorBody, errorResponses, Slug } from '../model/schemas/common';
import { JobAnswer } from '../model/schemas/imports';
import { can } from '../policy/index';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';

/**
 * A workspace moved as a folder (docs/IMPORT-EXPORT.md). Not operations:
 * the export is a streamed zip, the import a multipart upload streamed to
 * disk and answered 202 before its work is done (its job is read with
 * `GET /api/jobs/{id}`, src/operations/jobs.ts).
 */

/** The largest archive an import takes. */
export const WORKSPACE_ARCHIVE_BYTES = 512 * 1024 * 1024;

const ImportFields = z.object({ name: z.string().trim().min(1).max(200).optional(), slug: Slug });

export async function workspaceFolderRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/export.zip')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Download the workspace as a folder (zip)',
          description:
            'Streamed `application/zip`: a Markdown file per doc, an .html file per html page, their images in a folder named like the page, a CSV per table surface ' +
            '(`id` and the column keys, as `GET /rows.csv`) with its columns in `<name>.columns.json`, a folder per files surface (members only), pages nested as the workspace nests them, ' +
            'and `trellis-workspace.json` saying what each path is. Links between pages become relative paths. `POST /api/workspaces/import` reads it back. docs/IMPORT-EXPORT.md.',
          tags: ['workspaces'],
          params: WorkspaceParams,
          response: { 200: { description: 'The zip', content: { 'application/zip': { schema: z.string() } } }, ...errorResponses, 429: ErrorBody },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const withFiles = can(resolved.access, 'read_files', resolved.workspace);
        const { filename, stream } = await streamInConversionSlot(services, resolved.workspace.orgId, () => exportWorkspaceFolder(services, resolved, { withFiles }));
        return reply.type('application/zip').header('content-disposition', contentDisposition('attachment', filename)).send(stream as never); // a stream: the schema documents the zip
      },
    );
  }

  await app.register(async (scope: App) => {
    await registerMultipart(scope, WORKSPACE_ARCHIVE_BYTES);
    scope.post(
      '/api/workspaces/import',
      {
        schema: {
          summary: 'Import a workspace from a folder (zip)',
          description:
            'multipart/form-data: `file`, a zip this server exported (`GET /export.zip`) or a Notion "Markdown & CSV" export, at most 512 MB (413); `slug` of the new workspace; `name` (default: the name the folder gives itself). ' +
            'Answers 202 `{ job }` at once; `GET /api/jobs/{id}` follows it. The archive is checked whole first: a zip bomb, a path leaving the folder or a damaged archive fails the job with nothing made. ' +
            'Then a new workspace gets a surface per page and table (titles, nesting, links between pages rewritten to the new surfaces, typed columns, images stored with their pages, other files in a files surface); ' +
            'an entry that cannot go in is reported in `errors` by its path and the rest goes in. At most two imports run at once per organisation (429). docs/IMPORT-EXPORT.md.',
          tags: ['workspaces'],
          consumes: ['multipart/form-data'],
          response: { 202: JobAnswer, ...errorResponses, 413: ErrorBody, 429: ErrorBody },
        },
      },
      async (request, reply) => {
        const actor = requireActor(request);
        const dir = path.join(services.config.dataDir, 'tmp');
        await mkdir(dir, { recursive: true });
        const target = path.join(dir, `import-${randomToken(12)}.zip`);
        const { file, fields } = await readMultipartToFile(request, {
          fileField: 'file',
          fields: ['name', 'slug'],
          maxFileBytes: WORKSPACE_ARCHIVE_BYTES,
          tooLarge: 'A workspace archive is at most 512 MB.',
          target,
        });
        const parsed = ImportFields.safeParse(fields);
        if (!parsed.success) {
          await rm(target, { force: true });
          throw zodIssuesError(parsed.error.issues);
        }
        const jobId = await startWorkspaceImport(services, actor, workspaceResolver(services), {
          archivePath: target,
          archiveName: file.filename,
          slug: parsed.data.slug,
          name: parsed.data.name,
        }).catch(async (error: unknown) => {
          await rm(target, { force: true });
          throw error;
        });
        return reply.code(202).send({ job: await readJob(services, actor, jobId) });
      },
    );
  });
}
