import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { replaceVersion } from '../domain/file-uploads';
import { FILE_LIMITS, openFileBytes, previewFile, zipFiles, type FileBytes } from '../domain/files';
import { contentDisposition } from '../files/names';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';
import { FileParams, fileResponses, presentFile } from '../operations/file-schemas';
import { ErrorBody, errorResponses, flagOn, QueryFlag } from '../model/schemas/common';

const Id = z.string().min(1).max(100);

const ZipBody = z.strictObject({
  fileIds: z.array(Id).min(1).max(FILE_LIMITS.zipFiles).describe('At most 50 live files of the surface, 500 MB in total before compression'),
  surfaceSlug: Id,
});

const ContentQuery = z.strictObject({ inline: QueryFlag.optional().describe('`1`: display (`Content-Disposition: inline`) rather than download') });
const ThumbQuery = z.strictObject({ v: z.string().max(64).optional().describe('Cache key; the thumbUrl carries it') });
const BytesResponses = { 200: z.string().describe('The bytes'), 304: z.null().describe('Not modified'), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

/**
 * Served bytes never run in our origin: `nosniff`, and a CSP sandbox that
 * stops scripts in HTML or SVG opened directly (PDF viewers need no CSP of
 * ours and would break under `sandbox`).
 */
export const SANDBOX_CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox";

export function sendBytes(request: FastifyRequest, reply: FastifyReply, bytes: FileBytes, options: { disposition: 'inline' | 'attachment' | null; cache: string; etag: string }) {
  reply.header('etag', `"${options.etag}"`);
  reply.header('cache-control', options.cache);
  reply.header('x-content-type-options', 'nosniff');
  if (bytes.contentType !== 'application/pdf') reply.header('content-security-policy', SANDBOX_CSP);
  if (request.headers['if-none-match'] === `"${options.etag}"`) {
    bytes.body.destroy();
    return reply.status(304).send();
  }
  reply.header('content-type', bytes.contentType);
  reply.header('content-length', String(bytes.size));
  if (options.disposition) reply.header('content-disposition', contentDisposition(options.disposition, bytes.file.name));
  return reply.send(bytes.body as never); // a stream: the response schema describes the rest
}

/**
 * The files routes that are not operations (src/operations/files.ts has the
 * JSON ones): the bytes of a file, its thumbnail, preview and a zip are
 * streamed with their own headers (ETag, 304, CSP, Content-Disposition), and
 * a new version is a multipart upload.
 */
export async function fileRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/files/zip')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Download files as a zip',
          description:
            '`application/zip`, streamed while it is built, with `Content-Disposition: attachment; filename=<surface>.zip`. At most 50 live files of one surface and 500 MB before compression (422 beyond); an unknown or archived id is 404 (`details.missing`). Duplicate names become `name (2).ext`.',
          tags: ['files'],
          params: WorkspaceParams,
          body: ZipBody,
          response: { 200: z.string().describe('application/zip'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, requireActor(request), addressOf(request.params), 'read_files');
        const zip = await zipFiles(services, { workspace, orgSlug }, request.body);
        zip.stream.on('error', (error) => request.log.warn({ err: error }, 'zip stream failed'));
        reply.header('content-type', 'application/zip');
        reply.header('content-disposition', contentDisposition('attachment', zip.filename));
        reply.header('cache-control', 'no-store');
        return reply.send(zip.stream as never);
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/content')) {
    app.get(
      url,
      {
        schema: {
          summary: 'The bytes of a file',
          description: 'With the stored content type, `ETag` (the sha256), `nosniff` and a sandboxing CSP. A download (`attachment`) unless `inline=1`.',
          tags: ['files'],
          params: FileParams,
          querystring: ContentQuery,
          response: BytesResponses,
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await openFileBytes(services, { workspace, orgSlug }, request.params.fileId, 'content');
        const disposition = flagOn(request.query.inline) ? 'inline' : 'attachment';
        return sendBytes(request, reply, bytes, { disposition, cache: 'private, no-cache', etag: bytes.file.sha256 });
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/thumb')) {
    app.get(
      url,
      {
        schema: {
          summary: 'The 256-px webp thumbnail of a raster image',
          description: '404 for files without one. Not counted against the monthly API calls (a file grid loads many).',
          tags: ['files'],
          params: FileParams,
          querystring: ThumbQuery,
          response: BytesResponses,
        },
        config: { auth: 'optional', metered: false },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await openFileBytes(services, { workspace, orgSlug }, request.params.fileId, 'thumbnail');
        return sendBytes(request, reply, bytes, { disposition: null, cache: 'private, max-age=31536000, immutable', etag: `thumb-${bytes.file.sha256}` });
      },
    );
  }

  for (const url of workspacePaths('/files/:fileId/preview')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Preview a text-like file',
          description: 'The raw bytes of a text-like file (text/*, JSON, YAML, XML, scripts) of at most 256 KB, as `text/plain; charset=utf-8` whatever its type, so nothing renders. Other types or larger files: 400.',
          tags: ['files'],
          params: FileParams,
          response: BytesResponses,
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_files');
        const bytes = await previewFile(services, { workspace, orgSlug }, request.params.fileId);
        return sendBytes(request, reply, { ...bytes, contentType: 'text/plain; charset=utf-8' }, { disposition: 'inline', cache: 'private, no-cache', etag: bytes.file.sha256 });
      },
    );
  }

  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/files/:fileId/versions')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload a new version of a file',
            description:
              'multipart/form-data, one field `file` (25 MB; 413 `payload_too_large` beyond). Same id, name, folder, comments and share links; new `blobKey`, `sha256`, `version`. The MIME category (image, text, video, audio, other application types) must match the current version, else 400. Processed like a proxy upload. `file.version_replaced` carries the previous and new `sha256`.',
            tags: ['files'],
            consumes: ['multipart/form-data'],
            params: FileParams,
            response: fileResponses,
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
          const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: FILE_LIMITS.proxyUploadBytes, tooLarge: 'Uploads through the server are limited to 25 MB; use a direct upload (POST /files).' });
          return presentFile(services, await replaceVersion(services, actor, { workspace, orgSlug }, request.params.fileId, file));
        },
      );
    }
  });
}
