import { z } from 'zod';
import { CSV_IMPORTS_AT_ONCE, importRowsCsv } from '../domain/table-csv';
import { FILE_LIMITS } from '../domain/files';
import { requireActor } from '../http/authenticate';
import { openMultipartFile, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { ErrorBody, errorResponses, OverLimitBody } from '../model/schemas/common';
import { SurfaceQuery } from '../model/schemas/tables';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';

/**
 * `POST /rows/import`, a CSV upload into a sheet. Not an operation because
 * its body is multipart/form-data (a file), which operations (JSON bodies,
 * also MCP tools) do not take; an agent writes rows with `create_row` or
 * `bulk_update_rows` instead. The file is parsed as it arrives, up to the
 * upload limit of every multipart route (25 MB), and read twice (checked
 * while it arrives and kept on disk, then written: src/domain/table-csv.ts).
 */

const ImportQuery = z.strictObject({
  ...SurfaceQuery,
  partial: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true`: write the good lines, up to the row cap, and report the others; otherwise one bad line, or more rows than fit under the cap, fails the import and nothing is written'),
});

const ImportReport = z
  .object({
    imported: z.number().int().describe('Rows written'),
    refused: z
      .number()
      .int()
      .describe('Good lines read but not written because the workspace reached its plan\'s row cap. The import stops reading at the first good line past the room (an entry of `errors` names it), so the lines after it are not counted'),
    columnsCreated: z.array(z.string()).describe('Keys of the columns the import created, in header order'),
    errors: z.array(z.object({ line: z.number().int().describe('Line of the file the record starts on (the header is line 1)'), message: z.string() })),
  })
  .meta({ id: 'CsvImportReport' });

/** A bad line without `partial=true` (code `import_failed`): nothing was written, and the report says which lines; other 422s are the plain error body. */
const ImportFailed = ErrorBody.extend(ImportReport.partial().shape).describe(
  'Code `import_failed`: a bad line without `partial=true`, nothing written; `errors` lists the lines (with `imported`, `refused`, `columnsCreated`). Otherwise the input broke a constraint.',
);

export async function rowImportRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/rows/import')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Import rows from a CSV file',
            description:
              'multipart/form-data with one part, a `file` field: RFC 4180 CSV (UTF-8, a BOM is skipped) whose first record is a header. Headers map to columns by key, then by key or label ignoring case; ' +
              'an `id` header gives row ids (a taken id fails its line). Missing columns are created with a type inferred from the values (number, ISO date, checkbox, select, else text). ' +
              'Fields are read by their column\'s type; arrays are JSON arrays. The file is checked as it arrives, before anything is written; rows are then written in batches (at most 250 rows or 64 KB of fields to a transaction), each row with its `row.created` event. ' +
              'Without `partial=true`, one bad line is 422 `import_failed` and a file with more rows than the plan\'s row cap leaves room for is 402 `over_limit`, nothing written. ' +
              'With it, the good lines are written up to the cap; the import stops reading at the first good line past it (`refused`, and a line in `errors`). ' +
              `An organisation runs at most ${CSV_IMPORTS_AT_ONCE} imports at once (429, endpoint \`csv_imports\`, with Retry-After). At most 25 MB (413). docs/TABLES.md.`,
            tags: ['rows'],
            consumes: ['multipart/form-data'],
            params: WorkspaceParams,
            querystring: ImportQuery,
            response: { 200: ImportReport, ...errorResponses, 402: OverLimitBody, 413: ErrorBody, 422: ImportFailed },
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'write_rows');
          const { partial, surface, surfaceId } = request.query;
          const open = () => openMultipartFile(request, { fileField: 'file', maxFileBytes: FILE_LIMITS.proxyUploadBytes, tooLarge: 'A CSV import is at most 25 MB; split the file.' });
          return importRowsCsv(services, actor, resolved, { surface, surfaceId, partial: partial === 'true', open });
        },
      );
    }
  });
}

