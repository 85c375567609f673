import { z } from 'zod';
import { FILE_LIMITS } from '../domain/files';
import { uploadToCell } from '../domain/row-attachments';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { ErrorBody, errorResponses } from '../model/schemas/common';
import { Row, SurfaceQuery } from '../model/schemas/tables';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';

/**
 * `POST /rows/{id}/attachments/{columnKey}`: a file uploaded into a row's
 * attachment cell in one step. Not an operation because its body is
 * multipart/form-data (a file), which operations (JSON bodies, also MCP
 * tools) do not take; an agent uploads with the files routes and writes
 * `[{ fileId }]` into the cell with `update_row`.
 */

const CellParams = WorkspaceParams.extend({
  id: z.string().min(1).max(100).describe('Row id'),
  columnKey: z.string().min(1).max(64).describe('The key of an attachment column of the row’s sheet'),
});

export async function rowAttachmentRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/rows/:id/attachments/:columnKey')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload a file into a row’s attachment cell',
            description:
              'multipart/form-data with a `file` field, at most 25 MB (413 `payload_too_large`; over the storage quota 413 `storage_quota`, nothing stored). The file is stored in the workspace’s files surface (one named "Files" is made when there is none), ' +
              'checked and processed as a proxy upload (the declared type must agree with the bytes, images get a thumbnail), and added to the end of the cell in the same request; the answer is the row. ' +
              'With `surface` or `surfaceId` the row must be on that sheet (404 otherwise); a column that is not an attachment column of the row’s sheet, or a cell already holding 100 files, is 422 at `columnKey`. Needs `write_rows` and `write_files` (editors). docs/TABLES.md "Attachments".',
            tags: ['rows'],
            consumes: ['multipart/form-data'],
            params: CellParams,
            querystring: z.strictObject(SurfaceQuery),
            response: { 200: Row, ...errorResponses, 413: ErrorBody },
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const address = addressOf(request.params);
          const resolved = await resolveWorkspace(services, actor, address, 'write_rows');
          // The file joins the workspace's file store: whoever may not add files there may not attach one.
          await resolveWorkspace(services, actor, address, 'write_files');
          const { file } = await readMultipart(request, {
            fileField: 'file',
            fields: [],
            maxFileBytes: FILE_LIMITS.proxyUploadBytes,
            tooLarge: 'An upload through the server is at most 25 MB.',
          });
          const { id, columnKey } = request.params;
          return uploadToCell(services, actor, resolved, { rowId: id, columnKey, ...request.query }, file);
        },
      );
    }
  });
}
