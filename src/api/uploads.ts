import multipart from '@fastify/multipart';
import { z } from 'zod';
import { DOC_IMAGE_MAX_BYTES, storeDocImage } from '../domain/doc-images';
import { errors } from '../errors';
import { isValidBlobKey } from '../files/blob-store';
import { requireActor } from '../http/authenticate';
import { readUploadedFile } from '../http/file-upload';
import type { App } from '../http/types';
import { resolveWorkspace } from '../http/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../http/workspace-routes';
import type { Services } from '../services';
import { ErrorBody, errorResponses } from './schemas';

const UploadedImage = z
  .object({
    url: z.string().describe('Absolute URL of the stored image, for the `src` of an image node'),
    contentType: z.string(),
    size: z.number().int().describe('Bytes stored (after re-encoding or sanitising)'),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
  })
  .meta({ id: 'UploadedImage' });

const BlobParams = z.object({ key: z.string().min(1).max(512) });

// Immutable: a key is never reused for other bytes.
const BLOB_CACHE = 'public, max-age=31536000, immutable';
// An SVG opened directly must not run anything, whatever the sanitiser missed.
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/**
 * Doc image uploads and the blobs they are served from. Multipart is
 * registered only in this plugin's scope: no other route accepts
 * multipart bodies by accident.
 */
export async function uploadRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await scope.register(multipart, { limits: { fileSize: DOC_IMAGE_MAX_BYTES, files: 1, fields: 10 }, throwFileSizeLimit: true });

    for (const url of workspacePaths('/upload')) {
      scope.post(
        url,
        {
          schema: {
            summary: 'Upload an image for the doc',
            description:
              'multipart/form-data with one field `file`: an image (image/*, SVG included), at most 10 MB (413 `payload_too_large` beyond). ' +
              'Raster images are re-encoded without their metadata (EXIF is dropped after the orientation is applied); SVG is sanitised. ' +
              'Other types, or bytes that are not the image they claim to be, give 415 `unsupported_media_type`. Editor.',
            tags: ['doc'],
            consumes: ['multipart/form-data'],
            params: WorkspaceParams,
            response: { 200: UploadedImage, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
          },
        },
        async (request) => {
          const actor = requireActor(request);
          await resolveWorkspace(services, actor, addressOf(request.params), 'edit_doc');
          const { bytes, mimetype } = await readUploadedFile(request, { maxBytes: DOC_IMAGE_MAX_BYTES, limitText: 'Images are limited to 10 MB.' });
          const stored = await storeDocImage(services, { bytes, mimetype });
          return { url: stored.url, contentType: stored.contentType, size: stored.size, width: stored.width, height: stored.height };
        },
      );
    }
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
