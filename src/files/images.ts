import sharp, { type Metadata } from 'sharp';
import { sanitizeSvg } from './sanitize';

/**
 * Turns an uploaded image into the bytes we serve. Nothing is stored as the
 * client sent it:
 *
 * - Raster images are decoded and re-encoded by sharp, which drops every
 *   metadata block (EXIF with its GPS position and camera serial, XMP, IPTC,
 *   comments, ICC profiles: pixels are converted to sRGB first). `.rotate()`
 *   applies the EXIF orientation before it is dropped, so photos stay
 *   upright. The format is kept (JPEG, PNG, WebP, GIF, AVIF) so a PNG with
 *   transparency or a crisp screenshot does not become a lossy WebP; TIFF,
 *   which browsers do not show, becomes PNG. Animated GIF and WebP keep
 *   every frame (they carry no orientation to apply).
 * - SVG is sanitised as markup (./sanitize.ts) and stays SVG.
 * - Anything else, or bytes that do not decode as the image they claim to
 *   be, is refused: `UnsupportedImageError` (415).
 */

export class UnsupportedImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedImageError';
  }
}

export type ProcessedImage = {
  bytes: Buffer;
  contentType: string;
  extension: string;
  width?: number;
  height?: number;
};

/** Decompression bombs: a 10 MB file can declare billions of pixels. 100 megapixels covers any photo. */
const MAX_PIXELS = 100_000_000;

type Output = { format: 'jpeg' | 'png' | 'webp' | 'gif' | 'avif'; contentType: string; extension: string; options: Record<string, unknown> };

const OUTPUTS: Record<string, Output> = {
  jpeg: { format: 'jpeg', contentType: 'image/jpeg', extension: 'jpg', options: { quality: 90 } },
  png: { format: 'png', contentType: 'image/png', extension: 'png', options: {} },
  webp: { format: 'webp', contentType: 'image/webp', extension: 'webp', options: { quality: 90 } },
  gif: { format: 'gif', contentType: 'image/gif', extension: 'gif', options: {} },
  heif: { format: 'avif', contentType: 'image/avif', extension: 'avif', options: { quality: 60 } },
  tiff: { format: 'png', contentType: 'image/png', extension: 'png', options: {} },
};

/** Declared types we accept: any image/*; the bytes decide what it really is. */
export function isImageType(mimetype: string): boolean {
  return /^image\/[a-z0-9.+-]+$/i.test(mimetype.trim());
}

function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4096).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  return /^(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head);
}

export async function processImage(bytes: Buffer, declaredType: string): Promise<ProcessedImage> {
  if (!isImageType(declaredType)) throw new UnsupportedImageError(`Only images can be uploaded here (got ${declaredType || 'no type'}).`);
  if (declaredType.toLowerCase() === 'image/svg+xml' || looksLikeSvg(bytes)) return processSvg(bytes);
  return processRaster(bytes);
}

async function processRaster(bytes: Buffer): Promise<ProcessedImage> {
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata();
  } catch {
    throw new UnsupportedImageError('The file is not an image we can read (JPEG, PNG, WebP, GIF, AVIF, TIFF or SVG).');
  }
  const output = metadata.format ? OUTPUTS[metadata.format] : undefined;
  if (!output) throw new UnsupportedImageError(`Images of type ${metadata.format ?? 'unknown'} are not accepted.`);
  const animated = (metadata.pages ?? 1) > 1 && (output.format === 'gif' || output.format === 'webp');
  try {
    let pipeline = sharp(bytes, { limitInputPixels: MAX_PIXELS, animated });
    if (!animated) pipeline = pipeline.rotate();
    const { data, info } = await pipeline.toFormat(output.format, output.options).toBuffer({ resolveWithObject: true });
    const height = animated ? (info.pageHeight ?? info.height) : info.height;
    return { bytes: data, contentType: output.contentType, extension: output.extension, width: info.width, height };
  } catch {
    throw new UnsupportedImageError('The image could not be decoded.');
  }
}

async function processSvg(bytes: Buffer): Promise<ProcessedImage> {
  const clean = sanitizeSvg(bytes.toString('utf8'));
  if (!clean) throw new UnsupportedImageError('The file is not an SVG image.');
  const out = Buffer.from(clean, 'utf8');
  const size = await sharp(out)
    .metadata()
    .then((m) => ({ width: m.width, height: m.height }))
    .catch(() => ({ width: undefined, height: undefined }));
  return { bytes: out, contentType: 'image/svg+xml', extension: 'svg', ...size };
}
