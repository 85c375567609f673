import type { FastifyRequest } from 'fastify';
import { errors } from '../errors';

/** Multipart overhead allowed on top of the file itself before the request is refused unread. */
const MULTIPART_SLACK = 64 * 1024;

/**
 * The one `file` field of a multipart upload, read whole. Needs
 * @fastify/multipart registered in the route's scope with `fileSize` set to
 * `maxBytes` and `throwFileSizeLimit`. A declared or actual size over the
 * limit is 413 (nothing is kept); a body that is not multipart, or has no
 * `file` field, is 400.
 */
export async function readUploadedFile(request: FastifyRequest, options: { maxBytes: number; limitText: string }): Promise<{ bytes: Buffer; mimetype: string; filename: string }> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBytes + MULTIPART_SLACK) throw errors.payloadTooLarge(options.limitText);
  if (!request.isMultipart()) throw errors.badRequest('Expected a multipart/form-data body with a `file` field.');
  const file = await request.file();
  if (!file || file.fieldname !== 'file') {
    throw errors.badRequest('Expected a multipart/form-data body with a `file` field.', [
      { path: ['file'], code: 'invalid_type', message: 'a file field named "file" is required' },
    ]);
  }
  const bytes = await file.toBuffer(); // over the limit: 413 (FST_REQ_FILE_TOO_LARGE), nothing stored
  // toBuffer can miss a truncation that lands on the last chunk; busboy's flag does not.
  if (file.file.truncated) throw errors.payloadTooLarge(options.limitText);
  return { bytes, mimetype: file.mimetype, filename: file.filename };
}
