import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { DOC_EXPORT_FORMATS, exportDocFile, importDocFile } from '../domain/doc-io';
import { FILE_LIMITS } from '../domain/files';
import { errors } from '../errors';
import { DocImportResult } from '../model/schemas/imports';
import { authorize } from '../policy/index';
import { DocSurfaceQuery } from './doc';
import { defineOperation } from './operation';
import { ADDRESS, READ, WRITE } from './tool-text';
import { presentSurface } from './workspace-schemas';
import { addressOf, WorkspaceParams } from './workspace-routes';

/**
 * Docs as files for agents (docs/IMPORT-EXPORT.md): MCP tools only. Over
 * REST the same import is the multipart `POST /doc/import`
 * (src/api/doc-import.ts) and the export is `GET /doc?format=docx|pdf|html`.
 */

export const DocImportQuery = z.strictObject({
  ...DocSurfaceQuery,
  mode: z.enum(['replace', 'new']).optional().describe('`replace` (default): the file replaces the doc surface\'s body; `new`: a new doc surface named after the file'),
});

/** base64 of at most the upload limit (25 MB): four characters per three bytes. */
const MAX_BASE64 = Math.ceil(FILE_LIMITS.proxyUploadBytes / 3) * 4;

const ImportDocBody = z.strictObject({
  name: z.string().min(1).max(255).describe('The file\'s name; its extension says the format: .docx, .html or .md'),
  contentBase64: z.string().min(1).max(MAX_BASE64).describe('The file\'s bytes, base64 (at most 25 MB of bytes)'),
});

const ExportDocQuery = z.strictObject({
  ...DocSurfaceQuery,
  format: z.enum(DOC_EXPORT_FORMATS).describe('`docx` (Word), `pdf` or `html` (a standalone page)'),
});

const ExportDocResult = z
  .object({
    name: z.string().describe('A file name for it'),
    contentType: z.string(),
    size: z.number().int(),
    contentBase64: z.string().optional().describe('The bytes, base64, for `docx` and `pdf`'),
    text: z.string().optional().describe('The page itself, for `html`'),
  })
  .meta({ id: 'ExportedDoc' });

/** Exports for a tool are answered whole; past this the tool refuses rather than flood a model's context. */
const MAX_TOOL_EXPORT_BYTES = 20 * 1024 * 1024;

export const docIoOperations = {
  importDoc: defineOperation(
    {
      params: WorkspaceParams, query: DocImportQuery, body: ImportDocBody, response: DocImportResult,
      mcp: {
        name: 'import_doc',
        title: 'Import a file into a doc',
        description:
          `Reads a Word file (.docx), an HTML page (.html, sanitised) or Markdown (.md) given as base64 with its \`name\`, and writes it into a doc: \`mode: "replace"\` (default) over the doc surface \`surface\` (or the first one), as one change with a version named after the file; \`mode: "new"\` as a new doc surface. ` +
          `Images in the file are stored with the doc. Answers the surface and \`warnings\`, what the doc could not hold (tell the person). ${ADDRESS}`,
        annotations: { ...WRITE, destructiveHint: true },
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      if (query.mode === 'new') authorize(resolved.caller, resolved.workspace, 'manage_surfaces');
      const bytes = Buffer.from(body.contentBase64, 'base64');
      if (bytes.length > FILE_LIMITS.proxyUploadBytes) throw errors.payloadTooLarge('A doc import is at most 25 MB.');
      const { surface, warnings } = await importDocFile(
        services,
        caller,
        resolved,
        { surface: query.surface, surfaceId: query.surfaceId, mode: query.mode ?? 'replace', file: { bytes, filename: body.name } },
        'mcp',
      );
      return { surface: presentSurface(surface), warnings };
    },
  ),
  exportDoc: defineOperation(
    {
      params: WorkspaceParams, query: ExportDocQuery, response: ExportDocResult,
      mcp: {
        name: 'export_doc',
        title: 'Export a doc as a file',
        description: `A doc surface as a Word file (\`docx\`) or a PDF (\`pdf\`), answered as base64, or as an HTML page (\`html\`), answered as text. For reading a doc use get_doc with \`format: "markdown"\`. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const file = await exportDocFile(services, workspace, { surface: query.surface, surfaceId: query.surfaceId }, query.format);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of file.stream as AsyncIterable<Buffer | string>) {
        const bytes = Buffer.from(chunk);
        size += bytes.length;
        if (size > MAX_TOOL_EXPORT_BYTES) {
          (file.stream as unknown as { destroy(): void }).destroy();
          throw errors.payloadTooLarge('This export is larger than 20 MB; download it over REST (GET /doc?format=...).');
        }
        chunks.push(bytes);
      }
      const bytes = Buffer.concat(chunks);
      const answer = { name: file.filename, contentType: file.contentType, size };
      return query.format === 'html' ? { ...answer, text: bytes.toString('utf8') } : { ...answer, contentBase64: bytes.toString('base64') };
    },
  ),
};
