import { z } from 'zod';
import { AVATAR_MAX_BYTES, DOC_IMAGE_MAX_BYTES, storeDocImage, uploadAvatar } from '../domain/doc-images';
import { errors } from '../errors';
import { isValidBlobKey } from '../files/blob-store';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { Services } from '../domain/services';
import { ErrorBody, errorResponses } from '../model/schemas/common';
import { UploadedImage } from '../model/schemas/files';


const BlobParams = z.object({ key: z.string().min(1).max(512) });

// Immutable: a key is never reused for other bytes.
const BLOB_CACHE = 'public, max-age=31536000, immutable';
// An SVG opened directly must not run anything, whatever the sanitiser missed.
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/**
 * Doc image and avatar uploads, and the blobs they are served from (file
 * uploads into files surfaces are ./file-uploads.ts). None is an operation:
 * the uploads are multipart/form-data and a blob is streamed bytes.
 * Multipart is registered only in this plugin's scope: no other route
 * accepts multipart bodies by accident.
 */
export async function docImageRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await registerMultipart(scope, DOC_IMAGE_MAX_BYTES);

    for (const url of workspacePaths('/upload')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload an image for the doc',
            description:
              'multipart/form-data with one field `file`: an image (image/*, SVG included), at most 10 MB (413 `payload_too_large` beyond). ' +
              'Raster images are re-encoded without their metadata (EXIF is dropped after the orientation is applied); SVG is sanitised. ' +
              'Other types, or bytes that are not the image they claim to be, give 415 `unsupported_media_type`. Counts against the storage quota (413 `storage_quota`). Editor.',
            tags: ['doc'],
            consumes: ['multipart/form-data'],
            params: WorkspaceParams,
            response: { 200: UploadedImage, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
          },
        },
        async (request) => {
          const actor = requireActor(request);
          const { workspace } = await resolveWorkspace(services, actor, addressOf(request.params), 'edit_doc');
          const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: DOC_IMAGE_MAX_BYTES, tooLarge: 'Images are limited to 10 MB.' });
          const stored = await storeDocImage(services, workspace.orgId, { bytes: file.bytes, mimetype: file.mimetype });
          return { url: stored.url, contentType: stored.contentType, size: stored.size, width: stored.width, height: stored.height };
        },
      );
    }

    scope.post(
      '/api/me/avatar',
      {
        schema: {
          summary: 'Upload an avatar',
          description:
            'multipart/form-data with one field `file`: any image up to 10 MB. Stored as a 512-px square webp (no metadata), set as the profile’s `avatarUrl` and answered with its blob URL; the previous uploaded avatar is deleted. Counts against the organisation’s storage quota. People signed in with a session only.',
          tags: ['me'],
          consumes: ['multipart/form-data'],
          response: { 200: UploadedImage, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        if (actor.via !== 'session') throw errors.forbidden('This action is for people signed in with a session, not API keys.');
        const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: AVATAR_MAX_BYTES, tooLarge: 'Avatars are limited to 10 MB.' });
        const stored = await uploadAvatar(services, actor, file.bytes);
        return { url: stored.url, contentType: stored.contentType, size: stored.size, width: stored.width, height: stored.height };
      },
    );
  });

  app.get(
    '/api/blobs/:key',
    {
      schema: {
        summary: 'An uploaded blob',
        description:
          'The bytes behind an upload URL, with their content type. Public to whoever holds the (unguessable) URL, like the image in a shared doc. ' +
          'Served with `x-content-type-options: nosniff`; SVG also with a CSP that forbids scripts.',
        tags: ['doc'],
        params: BlobParams,
        response: { 404: ErrorBody },
      },
      config: { auth: 'none', metered: false },
    },
    async (request, reply) => {
      const { key } = request.params;
      const blob = isValidBlobKey(key) ? await services.blobs.get(key) : null;
      if (!blob) throw errors.notFound('Blob');
      reply.header('content-type', blob.contentType);
      reply.header('content-length', String(blob.size));
      reply.header('x-content-type-options', 'nosniff');
      reply.header('cache-control', BLOB_CACHE);
      reply.header('content-disposition', 'inline');
      if (blob.contentType === 'image/svg+xml') reply.header('content-security-policy', SVG_CSP);
      return reply.send(blob.body as never); // a stream: the response schema describes errors only
    },
  );
}
