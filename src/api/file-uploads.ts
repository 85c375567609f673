import type { Readable } from 'node:stream';
import { z } from 'zod';
import { proxyUpload, receiveDirectUpload } from '../domain/file-uploads';
import { FILE_LIMITS } from '../domain/files';
import { errors } from '../errors';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';
import { fileResponses, presentFile } from '../operations/file-schemas';

/**
 * The upload routes that are not operations (the direct-upload handshake and
 * its completion are, in src/operations/file-uploads.ts): the proxy upload
 * is multipart/form-data (at most 25 MB), and the local store's one-shot
 * upload URL takes the raw bytes as the body, streamed to the store.
 */

const OneShotParams = z.object({ uploadId: z.string().min(1).max(100) });
const OneShotQuery = z.strictObject({ token: z.string().min(1).max(200) });

export async function fileUploadRoutes(app: App, services: Services) {
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
