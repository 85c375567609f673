import type { Readable } from 'node:stream';
import { z } from 'zod';
import { completeDirectUpload, proxyUpload, receiveDirectUpload, startDirectUpload } from '../domain/file-uploads';
import { FILE_LIMITS } from '../domain/files';
import { errors } from '../errors';
import { requireActor } from '../http/authenticate';
import { zodIssuesError } from '../http/error-handler';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../services';
import { ClientPayload, DirectUploadTicket, fileResponses, presentFile, UploadParams } from './file-schemas';
import { ErrorBody, errorResponses } from '../model/schemas/common';

/**
 * Uploads into files surfaces (SPEC "Files"; API-DECISIONS "Files"):
 *
 * - Direct: `POST /files { clientPayload }` reserves the storage and
 *   answers `{ uploadId, uploadUrl, method: "PUT", headers, expiresAt }`;
 *   the client PUTs the bytes to `uploadUrl` (with progress, from a
 *   browser) and then calls `POST /files/uploads/{uploadId}/complete`. On
 *   the local store `uploadUrl` is this server's one-shot URL, and the PUT
 *   completes the upload by itself (its answer is the File).
 * - Proxy: `POST /files/proxy-upload`, multipart, at most 25 MB.
 */

const HandshakeBody = z.strictObject({
  clientPayload: z
    .union([z.string().max(10_000).describe('JSON text of a FileClientPayload'), ClientPayload])
    .describe('`{ surfaceSlug, parentFolderId, name, size, contentType }`, as JSON text (what storage client libraries send) or as an object'),
});

const OneShotParams = z.object({ uploadId: z.string().min(1).max(100) });
const OneShotQuery = z.strictObject({ token: z.string().min(1).max(200) });

function parseClientPayload(value: string | z.infer<typeof ClientPayload>): z.infer<typeof ClientPayload> {
  let candidate: unknown = value;
  if (typeof value === 'string') {
    try {
      candidate = JSON.parse(value);
    } catch {
      throw errors.badRequest('`clientPayload` is not valid JSON.', [{ path: ['clientPayload'], code: 'invalid_json', message: 'expected JSON text' }]);
    }
  }
  const parsed = ClientPayload.safeParse(candidate);
  if (!parsed.success) throw zodIssuesError(parsed.error.issues, ['clientPayload']);
  return parsed.data;
}

export async function fileUploadRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/files')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Start a direct upload',
          description:
            'Checks the target, the name and the size, and reserves the size against the organisation’s storage quota (413 `storage_quota` with `details { current, cap }` when it does not fit). PUT exactly `size` bytes to `uploadUrl` with `headers` within an hour, then call `complete` (on the local store the PUT completes by itself and answers the File). Zero bytes is 422.',
          tags: ['files'],
          params: WorkspaceParams,
          body: HandshakeBody,
          response: { 200: DirectUploadTicket, ...errorResponses, 413: ErrorBody },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        const payload = parseClientPayload(request.body.clientPayload);
        if (payload.size > FILE_LIMITS.directUploadBytes) {
          throw errors.payloadTooLarge(`A direct upload holds at most ${FILE_LIMITS.directUploadBytes / 1024 ** 3} GiB.`);
        }
        const ticket = await startDirectUpload(services, actor, { workspace, orgSlug }, {
          ...payload,
          parentFolderId: payload.parentFolderId ?? null,
          contentType: payload.contentType ?? '',
        });
        return { ...ticket, expiresAt: ticket.expiresAt.toISOString() };
      },
    );
  }

  for (const url of workspacePaths('/files/uploads/:uploadId/complete')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Complete a direct upload',
          description:
            'Checks that the object at `uploadUrl` has the declared size (400 otherwise: PUT again), checks and processes the bytes like a proxy upload (422 when they contradict the declared type; the upload is then dropped) and creates the file (`file.uploaded`). Completing again answers the same file. Only whoever started the upload can complete it.',
          tags: ['files'],
          params: UploadParams,
          response: fileResponses,
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
        return presentFile(services, await completeDirectUpload(services, actor, { workspace, orgSlug }, request.params.uploadId));
      },
    );
  }

  await app.register(async (scope: App) => {
    await registerMultipart(scope, FILE_LIMITS.proxyUploadBytes);
    for (const url of workspacePaths('/files/proxy-upload')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload a file through the server',
            description:
              'multipart/form-data: `surface_slug`, `parent_folder_id` (empty for the root) and `file`, at most 25 MB (413 `payload_too_large` beyond, nothing stored). The declared type must agree with the bytes (422, detail code `content_type_mismatch`); raster images are rotated upright and stored without EXIF, with `exif` and a 256-px webp thumbnail (an image that cannot be decoded is stored as it is, without either); SVG is sanitised; zero-byte files and names with `/`, `\\` or `..` are 422. Over the storage quota: 413 `storage_quota`.',
            tags: ['files'],
            consumes: ['multipart/form-data'],
            params: WorkspaceParams,
            response: fileResponses,
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(request.params), 'write_files');
          const { file, fields } = await readMultipart(request, {
            fileField: 'file',
            fields: ['surface_slug', 'parent_folder_id'] as const,
            maxFileBytes: FILE_LIMITS.proxyUploadBytes,
            tooLarge: 'Uploads through the server are limited to 25 MB; use a direct upload (POST /files) for larger files.',
          });
          if (!fields.surface_slug) {
            throw errors.badRequest('The field `surface_slug` is required.', [{ path: ['surface_slug'], code: 'invalid_type', message: 'required' }]);
          }
          const parent = fields.parent_folder_id;
          return presentFile(
            services,
            await proxyUpload(services, actor, { workspace, orgSlug }, { surfaceSlug: fields.surface_slug, parentFolderId: !parent || parent === 'null' ? null : parent, file }),
          );
        },
      );
    }
  });

  // The local store's one-shot upload URL: the raw body, whatever its type, streamed to the store.
  await app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.put(
      '/api/file-uploads/:uploadId',
      {
        schema: {
          summary: 'Receive the bytes of a direct upload (local store)',
          description:
            'The `uploadUrl` of a direct upload when blobs are stored on the local disk: the body is the file, exactly the declared size (413 if longer, 400 if shorter). It completes the upload and answers the File. The token in the URL is the credential; it works once and for an hour.',
          tags: ['files'],
          params: OneShotParams,
          querystring: OneShotQuery,
          response: fileResponses,
        },
        config: { auth: 'none', metered: false },
      },
      async (request) => {
        const view = await receiveDirectUpload(services, request.params.uploadId, request.query.token, request.raw as Readable);
        return presentFile(services, view);
      },
    );
  });
}
