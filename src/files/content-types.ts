import type mime from 'mime-types';
import { whenNeeded } from '../lib/when-needed';

/**
 * What a file really is. The declared type (the multipart part's type, or
 * `contentType` of a direct upload) is checked against the bytes:
 *
 * - The bytes are sniffed by their signature (`file-type`: images, audio,
 *   video, archives, PDF, office formats and ~170 more; SVG by its root
 *   element).
 * - No declared type, or `application/octet-stream`: the sniffed type is
 *   used, else the type of the name's extension, else octet-stream.
 * - A declared type the signature contradicts is refused: a "PNG" whose
 *   bytes are a PDF, a "text/plain" whose bytes are an executable. So is
 *   a declared type that always has a signature (a PNG, a PDF, a ZIP) when
 *   the bytes have none, and a declared text type whose head holds NUL
 *   bytes.
 * - Compatible labels are not contradictions: aliases (`image/jpg`), the
 *   zip-based formats (docx, xlsx, odt, epub, jar) against `application/zip`,
 *   the OLE formats (doc, xls, ppt, msg) against each other, audio and video
 *   containers against each other (an m4a is an mp4), XML dialects.
 */

/** file-type is loaded on first use: importing its ~175 detectors slows every process start otherwise. */
let detector: Promise<typeof import('file-type')> | null = null;
const fileType = () => (detector ??= import('file-type'));

/** Types of file names' extensions: mime-db's table, parsed when first asked. */
const mimeTypes = () => whenNeeded<typeof mime>('mime-types');

/** Bytes of the head that are sniffed (file-type reads at most a few KB for most formats; office formats need more). */
const SNIFF_BYTES = 256 * 1024;

const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown', 'application/x-unknown']);

const ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/apng': 'image/png',
  'image/x-png': 'image/png',
  'image/heif': 'image/heic',
  'image/x-ms-bmp': 'image/bmp',
  'image/x-icon': 'image/vnd.microsoft.icon',
  'application/x-zip-compressed': 'application/zip',
  'application/x-zip': 'application/zip',
  'application/x-gzip': 'application/gzip',
  'application/x-pdf': 'application/pdf',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/x-flac': 'audio/flac',
  'text/xml': 'application/xml',
};

const ZIP_BASED = /^application\/(zip|epub\+zip|java-archive|vnd\.openxmlformats-officedocument\..+|vnd\.oasis\.opendocument\..+|vnd\.android\.package-archive|x-xpinstall|vnd\.ms-.+\.macroenabled\..+)$/;
const OLE_BASED = /^application\/(x-cfb|msword|vnd\.ms-excel|vnd\.ms-powerpoint|vnd\.ms-outlook|x-msi|vnd\.visio)$/;
const MEDIA = /^(audio|video)\//;

export class ContentMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContentMismatchError';
  }
}

/** `Text/Plain; charset=utf-8` → `text/plain`; invalid values → ''. */
export function baseType(value: string | undefined | null): string {
  const base = (value ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(base) ? base : '';
}

function canonical(type: string): string {
  return ALIASES[type] ?? type;
}

export function looksLikeSvg(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4096)).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  return /^(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head);
}

/** Text the preview route serves and the zip compresses: text/*, JSON, XML, YAML, scripts and their kin. */
export function isTextLike(type: string): boolean {
  const t = canonical(baseType(type));
  if (t.startsWith('text/')) return true;
  if (/\+(json|xml|yaml)$/.test(t)) return true;
  return /^application\/(json|ld\+json|xml|yaml|x-yaml|toml|javascript|x-javascript|ecmascript|typescript|x-typescript|x-sh|x-shellscript|x-python|x-python-code|x-ruby|x-perl|x-php|php|sql|x-sql|graphql|x-tex|x-latex|x-httpd-php|x-ndjson|csv|x-csv|rtf|x-subrip)$/.test(t);
}

/** The category a new version must share with the current one: the top-level type, with text-like application types counted as text. */
export function mimeCategory(type: string): string {
  const t = baseType(type);
  if (isTextLike(t)) return 'text';
  return t.split('/')[0] || 'application';
}

function compatible(declared: string, sniffed: string): boolean {
  const a = canonical(declared);
  const b = canonical(sniffed);
  if (a === b) return true;
  if (b === 'application/zip' && ZIP_BASED.test(a)) return true;
  if (a === 'application/zip' && ZIP_BASED.test(b)) return true;
  if (ZIP_BASED.test(a) && ZIP_BASED.test(b)) return true;
  if (OLE_BASED.test(a) && OLE_BASED.test(b)) return true;
  if (MEDIA.test(a) && MEDIA.test(b)) return true;
  if (b === 'application/xml' && (a.endsWith('+xml') || a === 'application/xml')) return true;
  return false;
}

/**
 * Valid UTF-8 without control characters other than whitespace: text, even
 * when a weak signature matches it (a line of `G`s starts like an MPEG
 * transport stream). A cut multi-byte sequence at the end of a sample is
 * not held against it.
 */
function looksLikeText(sample: Uint8Array, complete: boolean): boolean {
  let bytes = sample;
  if (!complete) {
    let cut = bytes.byteLength;
    while (cut > 0 && bytes.byteLength - cut < 3 && (bytes[cut - 1]! & 0xc0) === 0x80) cut--;
    if (cut > 0 && bytes[cut - 1]! >= 0xc0) bytes = bytes.subarray(0, cut - 1);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
}

function hasNulBytes(head: Uint8Array): boolean {
  // UTF-16 text carries NULs legitimately; its byte-order mark says so.
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return false;
  return head.subarray(0, 8192).includes(0);
}

/**
 * The content type to store for these bytes, or `ContentMismatchError`
 * when the declared type is contradicted. `head` is the start of the file
 * (the whole file when it is small).
 */
export async function resolveContentType(head: Uint8Array, declaredType: string | undefined, name: string): Promise<string> {
  const declared = baseType(declaredType);
  const sample = head.subarray(0, SNIFF_BYTES);
  const { fileTypeFromBuffer, supportedMimeTypes } = await fileType();
  const signature = (await fileTypeFromBuffer(sample))?.mime;
  const svg = looksLikeSvg(sample);
  const sniffed = svg ? 'image/svg+xml' : signature;
  if (GENERIC.has(declared)) return sniffed ?? typeOfName(name);
  if (declared === 'image/svg+xml') {
    if (svg) return declared;
    throw new ContentMismatchError('The file is declared as an SVG image but its bytes have no <svg> root.');
  }
  if (sniffed) {
    if (svg && (isTextLike(declared) || declared === 'application/xml')) return declared;
    // Served as text with nosniff, text that happens to match a signature harms no one.
    if (isTextLike(declared) && looksLikeText(sample, sample.byteLength === head.byteLength)) return declared;
    if (compatible(declared, sniffed)) return declared;
    throw new ContentMismatchError(`The file is declared as ${declared} but its bytes are ${sniffed}.`);
  }
  if (supportedMimeTypes.has(canonical(declared) as never) && !isTextLike(declared) && canonical(declared) !== 'application/xml') {
    throw new ContentMismatchError(`The file is declared as ${declared} but its bytes are not; a ${declared} file starts with a signature these bytes lack.`);
  }
  if (isTextLike(declared) && hasNulBytes(sample)) {
    throw new ContentMismatchError(`The file is declared as ${declared} but its bytes are binary, not text.`);
  }
  return declared;
}

/** Raster formats we decode, re-encode without metadata and thumbnail. */
export function isRasterImage(type: string): boolean {
  return /^image\/(jpeg|png|webp|gif|avif|tiff|heic|heif|bmp)$/.test(baseType(type));
}

/** The content type a file name's extension stands for; octet-stream when it names none. */
export function typeOfName(name: string): string {
  return mimeTypes().lookup(name) || 'application/octet-stream';
}

/** A name's extension for a content type, for blob keys and zip entries without one. */
export function extensionFor(type: string): string | undefined {
  return mimeTypes().extension(baseType(type)) || undefined;
}
