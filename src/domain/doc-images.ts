import { ApiError, errors } from '../errors';
import type { Actor } from '../policy/actor';
import { processAvatar, processImage, UnsupportedImageError } from '../files/images';
import { randomToken } from '../lib/secrets';
import { updatePrincipalProfile } from '../persistence/accounts';
import type { StoredBlobKind } from '../persistence/schema';
import type { Services } from './services';
import { deleteBlobsQuietly, freeStoredBlobs, storeCountedBlob } from './storage';

/**
 * Images served to anyone holding their URL, at `/api/blobs/{key}`: images
 * embedded in doc bodies (the `src` of an image node must load in any
 * viewer of the doc, public and unlisted ones included) and avatars.
 * Processed first (./files/images.ts), stored under an unguessable key, and
 * counted against the organisation's storage quota (./storage.ts).
 */

export const DOC_IMAGE_MAX_BYTES = 10 * 1024 * 1024;
export const AVATAR_MAX_BYTES = 10 * 1024 * 1024;

export type UploadedImage = { url: string; key: string; contentType: string; size: number; width?: number; height?: number };

export function blobUrl(services: Services, key: string): string {
  return `${services.config.publicUrl}/api/blobs/${key}`;
}

function unsupported(error: unknown): never {
  if (error instanceof UnsupportedImageError) throw new ApiError(415, 'unsupported_media_type', error.message);
  throw error;
}

/** A doc image of the workspace's organisation. */
export async function storeDocImage(services: Services, orgId: string, upload: { bytes: Buffer; mimetype: string }): Promise<UploadedImage> {
  return storeImage(services, orgId, upload, { maxBytes: DOC_IMAGE_MAX_BYTES, keyPrefix: 'img', kind: 'doc_image' });
}

/**
 * Any image upload of an organisation (doc images, support screenshots):
 * processed, checked against `maxBytes` after processing (413), stored
 * under an unguessable key and counted against the org's storage quota.
 * Unsupported or undecodable bytes are 415.
 */
export async function storeImage(
  services: Services,
  orgId: string,
  upload: { bytes: Buffer; mimetype: string },
  options: { maxBytes: number; keyPrefix: string; kind: StoredBlobKind },
): Promise<UploadedImage> {
  const image = await processImage(upload.bytes, upload.mimetype).catch(unsupported);
  if (image.bytes.byteLength > options.maxBytes) {
    throw errors.payloadTooLarge(`The processed image is larger than ${Math.round(options.maxBytes / 1024 / 1024)} MB.`);
  }
  const key = `${options.keyPrefix}_${randomToken(18)}.${image.extension}`;
  const { size } = await storeCountedBlob(services, { orgId, key, bytes: image.bytes, contentType: image.contentType, kind: options.kind });
  return { url: blobUrl(services, key), key, contentType: image.contentType, size, width: image.width, height: image.height };
}

/** Avatar keys name their user, so replacing an avatar deletes only that user's own previous upload. */
const avatarPrefix = (userId: string) => `avatar_${userId.replace(/[^A-Za-z0-9_-]/g, '')}_`;

/**
 * A person's avatar: a 512-px square webp, counted against the caller's
 * organisation, set as the profile's `avatarUrl` in the same transaction.
 * The previous uploaded avatar is deleted and stops counting.
 */
export async function uploadAvatar(services: Services, actor: Actor, bytes: Buffer): Promise<UploadedImage> {
  if (!actor.orgId) throw errors.notFound('Organisation');
  const image = await processAvatar(bytes).catch(unsupported);
  const prefix = avatarPrefix(actor.userId);
  const key = `${prefix}${randomToken(12)}.webp`;
  const url = blobUrl(services, key);
  const previous = /\/api\/blobs\/([A-Za-z0-9_.-]+)$/.exec(actor.principal.avatarUrl ?? '')?.[1];
  const replaced = previous?.startsWith(prefix) ? [previous] : [];
  const { size } = await storeCountedBlob(services, { orgId: actor.orgId, key, bytes: image.bytes, contentType: image.contentType, kind: 'avatar' }, async (tx) => {
    await updatePrincipalProfile(tx, actor.userId, { avatarUrl: url });
    await freeStoredBlobs(tx, replaced);
  });
  await deleteBlobsQuietly(services, replaced);
  return { url, key, contentType: image.contentType, size, width: image.width, height: image.height };
}
