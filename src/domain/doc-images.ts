import { errors, ApiError } from '../errors';
import { processImage, UnsupportedImageError } from '../files/images';
import { randomToken } from '../lib/secrets';
import type { Services } from '../services';

/**
 * Images embedded in doc bodies: processed (./files/images.ts), stored in the
 * blob store under an unguessable key and served at `/api/blobs/{key}` to
 * anyone holding the URL, as the `src` of an image node must load in any
 * viewer of the doc (public and unlisted ones included).
 */

export const DOC_IMAGE_MAX_BYTES = 10 * 1024 * 1024;

export type UploadedImage = { url: string; key: string; contentType: string; size: number; width?: number; height?: number };

export function blobUrl(services: Services, key: string): string {
  return `${services.config.publicUrl}/api/blobs/${key}`;
}

export async function storeDocImage(services: Services, upload: { bytes: Buffer; mimetype: string }): Promise<UploadedImage> {
  return storeImage(services, upload, { maxBytes: DOC_IMAGE_MAX_BYTES, keyPrefix: 'img' });
}

/**
 * Any image upload (doc images, support screenshots): processed, checked
 * against `maxBytes` after processing (413), stored under an unguessable key.
 * Unsupported or undecodable bytes are 415.
 */
export async function storeImage(
  services: Services,
  upload: { bytes: Buffer; mimetype: string },
  options: { maxBytes: number; keyPrefix: string },
): Promise<UploadedImage> {
  let image;
  try {
    image = await processImage(upload.bytes, upload.mimetype);
  } catch (error) {
    if (error instanceof UnsupportedImageError) throw new ApiError(415, 'unsupported_media_type', error.message);
    throw error;
  }
  if (image.bytes.byteLength > options.maxBytes) {
    throw errors.payloadTooLarge(`The processed image is larger than ${Math.round(options.maxBytes / 1024 / 1024)} MB.`);
  }
  const key = `${options.keyPrefix}_${randomToken(18)}.${image.extension}`;
  const { size } = await services.blobs.put(key, image.bytes, image.contentType);
  return { url: blobUrl(services, key), key, contentType: image.contentType, size, width: image.width, height: image.height };
}
