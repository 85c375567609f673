import { z } from 'zod';
import { importDocFile } from '../domain/doc-io';
import { FILE_LIMITS } from '../domain/files';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { authorize } from '../policy/index';
import { ErrorBody, errorResponses } from '../model/schemas/common';
import { DocImportResult } from '../model/schemas/imports';
import { DocImportQuery } from '../operations/doc-io';
import { presentSurface } from '../operations/workspace-schemas';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';

/**
 * `POST /doc/import`, a Word, HTML or Markdown file into a doc. Not an
 * operation because its body is multipart/form-data (a file); agents use
 * the `import_doc` tool, which takes the bytes as base64
 * (src/operations/doc-io.ts). Held in memory up to the upload limit of
 * every multipart route (25 MB).
 */
export async function docImportRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/doc/import')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Import a Word, HTML or Markdown file into a doc',
            description:
              'multipart/form-data with one field `file`: a Word file (.docx), an HTML page (.html, sanitised as html surfaces are) or Markdown (.md), at most 25 MB (413). ' +
              '`mode=replace` (default) writes it over the doc surface named by `surface` (or the primary one) as one change by you, with a named version "Imported <file>"; ' +
              '`mode=new` makes a new doc surface named after the file. Images in the file become doc images (counted against the storage quota). ' +
              'Answers the surface and `warnings`: what the doc could not hold. 415 for another type, 422 for a file that is not what its type says (nothing written). docs/IMPORT-EXPORT.md.',
            tags: ['doc'],
            consumes: ['multipart/form-data'],
            params: WorkspaceParams,
            querystring: DocImportQuery,
            response: { 200: DocImportResult, ...errorResponses, 413: ErrorBody, 415: ErrorBody, 429: ErrorBody },
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'edit_doc');
          const query = request.query as z.output<typeof DocImportQuery>;
          if (query.mode === 'new') authorize(resolved.caller, resolved.workspace, 'manage_surfaces');
          const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: FILE_LIMITS.proxyUploadBytes, tooLarge: 'A doc import is at most 25 MB.' });
          const { surface, warnings } = await importDocFile(services, actor, resolved, {
            surface: query.surface,
            surfaceId: query.surfaceId,
            mode: query.mode ?? 'replace',
            file: { bytes: file.bytes, filename: file.filename, contentType: file.mimetype },
          });
          return { surface: presentSurface(surface), warnings };
        },
      );
    }
  });
}
