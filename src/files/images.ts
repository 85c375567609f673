import type { Metadata } from 'sharp';
import { looksLikeSvg } from './content-types';
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

/** A raster image of a files surface, after processing (see `processFileImage`). */
export type FileImage = {
  bytes: Buffer;
  contentType: string;
  /** Displayed size (after the orientation was applied) and the orientation the upload carried (1 to 8; 1 when none). */
  exif: { width: number; height: number; orientation: number };
  /** 256-px webp (the longer side; smaller images keep their size). */
  thumbnail: Buffer;
};

/** Decompression bombs: a 10 MB file can declare billions of pixels. 100 megapixels covers any photo. */
const MAX_PIXELS = 100_000_000;

type Output = { format: 'jpeg' | 'png' | 'webp' | 'gif' | 'avif'; contentType: string; extension: string; options: Record<string, unknown> };

type OutputFormat = Output['format'] | 'tiff';
type AnyOutput = Omit<Output, 'format'> & { format: OutputFormat };

const OUTPUTS: Record<string, AnyOutput> = {
  jpeg: { format: 'jpeg', contentType: 'image/jpeg', extension: 'jpg', options: { quality: 90 } },
  png: { format: 'png', contentType: 'image/png', extension: 'png', options: {} },
  webp: { format: 'webp', contentType: 'image/webp', extension: 'webp', options: { quality: 90 } },
  gif: { format: 'gif', contentType: 'image/gif', extension: 'gif', options: {} },
  heif: { format: 'avif', contentType: 'image/avif', extension: 'avif', options: { quality: 60 } },
  tiff: { format: 'png', contentType: 'image/png', extension: 'png', options: {} },
};

/** Files keep their format: a TIFF in a drive stays a TIFF (doc images become PNG, which browsers show). */
const FILE_OUTPUTS: Record<string, AnyOutput> = {
  ...OUTPUTS,
  jpeg: { ...OUTPUTS.jpeg!, options: { quality: 95 } },
  tiff: { format: 'tiff', contentType: 'image/tiff', extension: 'tiff', options: {} },
};

const THUMBNAIL_PX = 256;

/** Declared types we accept: any image/*; the bytes decide what it really is. */
export function isImageType(mimetype: string): boolean {
  return /^image\/[a-z0-9.+-]+$/i.test(mimetype.trim());
}

/** sharp (libvips, ~30 MB resident) is loaded by the first image, not at start. */
let sharpModule: Promise<typeof import('sharp')> | null = null;
export async function loadSharp(): Promise<typeof import('sharp')['default']> {
  sharpModule ??= import('sharp');
  return (await sharpModule).default;
}

export async function processImage(bytes: Buffer, declaredType: string): Promise<ProcessedImage> {
  if (!isImageType(declaredType)) throw new UnsupportedImageError(`Only images can be uploaded here (got ${declaredType || 'no type'}).`);
  if (declaredType.toLowerCase() === 'image/svg+xml' || looksLikeSvg(bytes)) return processSvg(bytes);
  return processRaster(bytes);
}

async function processRaster(bytes: Buffer, outputs: Record<string, AnyOutput> = OUTPUTS): Promise<ProcessedImage & { orientation: number }> {
  const sharp = await loadSharp();
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata();
  } catch {
    throw new UnsupportedImageError('The file is not an image we can read (JPEG, PNG, WebP, GIF, AVIF, TIFF or SVG).');
  }
  const output = metadata.format ? outputs[metadata.format] : undefined;
  if (!output) throw new UnsupportedImageError(`Images of type ${metadata.format ?? 'unknown'} are not accepted.`);
  const animated = (metadata.pages ?? 1) > 1 && (output.format === 'gif' || output.format === 'webp');
  try {
    let pipeline = sharp(bytes, { limitInputPixels: MAX_PIXELS, animated });
    if (!animated) pipeline = pipeline.rotate();
    const { data, info } = await pipeline.toFormat(output.format, output.options).toBuffer({ resolveWithObject: true });
    const height = animated ? (info.pageHeight ?? info.height) : info.height;
    return { bytes: data, contentType: output.contentType, extension: output.extension, width: info.width, height, orientation: metadata.orientation ?? 1 };
  } catch {
    throw new UnsupportedImageError('The image could not be decoded.');
  }
}

/**
 * A raster image uploaded to a files surface: re-encoded in its own format
 * without metadata (orientation applied first), with its size, the
 * orientation it carried and a 256-px webp thumbnail. Null when sharp
 * cannot decode it (a truncated file, a HEVC-coded HEIC): the caller stores
 * such a file as it is, without a thumbnail.
 */
export async function processFileImage(bytes: Buffer): Promise<FileImage | null> {
  const sharp = await loadSharp();
  try {
    const image = await processRaster(bytes, FILE_OUTPUTS);
    const thumbnail = await sharp(image.bytes, { limitInputPixels: MAX_PIXELS })
      .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    return { bytes: image.bytes, contentType: image.contentType, exif: { width: image.width!, height: image.height!, orientation: image.orientation }, thumbnail };
  } catch {
    // Whatever sharp cannot read (at decode or at the thumbnail) is kept as plain bytes.
    return null;
  }
}

/**
 * An avatar: any image (SVG is rendered), upright, cropped to a centred
 * square of 512 px and stored as webp, so no metadata and no markup survive.
 */
export async function processAvatar(bytes: Buffer): Promise<{ bytes: Buffer; contentType: string; width: number; height: number }> {
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: MAX_PIXELS })
      .rotate()
      .resize(512, 512, { fit: 'cover', position: 'centre', withoutEnlargement: false })
      .webp({ quality: 85 })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, contentType: 'image/webp', width: info.width, height: info.height };
  } catch {
    throw new UnsupportedImageError('The file is not an image we can read (JPEG, PNG, WebP, GIF, AVIF, TIFF or SVG).');
  }
}

async function processSvg(bytes: Buffer): Promise<ProcessedImage> {
  const clean = sanitizeSvg(bytes.toString('utf8'));
  if (!clean) throw new UnsupportedImageError('The file is not an SVG image.');
  const out = Buffer.from(clean, 'utf8');
  const sharp = await loadSharp();
  const size = await sharp(out)
    .metadata()
    .then((m) => ({ width: m.width, height: m.height }))
    .catch(() => ({ width: undefined, height: undefined }));
  return { bytes: out, contentType: 'image/svg+xml', extension: 'svg', ...size };
}
