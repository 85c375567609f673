import { PassThrough, type Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors';
import type { App } from './types';

/**
 * Multipart bodies, for the upload routes only: `registerMultipart` is
 * called inside a route module's own scope, so no other route accepts
 * multipart by accident. `readMultipart` reads one file field and named
 * text fields, in any order, and refuses everything else with a 400 that
 * names the field; a file over the limit is 413 before anything is stored.
 * `openMultipartFile` hands over the file as a stream instead, for a route
 * that reads it as it arrives.
 */

/** Multipart overhead allowed on top of the file itself before a request is refused unread. */
const MULTIPART_SLACK = 64 * 1024;

export async function registerMultipart(scope: App, maxFileBytes: number) {
  // `files: 2` so a second file part reaches readMultipart and gets a clear 400 rather than a silent drop.
  // preservePath: a name like `../x` reaches the name check (and is refused) instead of being silently cut to `x`.
  await scope.register(multipart, { limits: { fileSize: maxFileBytes, files: 2, fields: 20, fieldSize: 64 * 1024 }, throwFileSizeLimit: true, preservePath: true });
}

export type MultipartFile = { bytes: Buffer; filename: string; mimetype: string };

/** The checks before any part is read: a declared length far over the limit is 413 unread, a body that is not multipart 400. */
function checkMultipartRequest(request: FastifyRequest, options: { maxFileBytes: number; tooLarge: string }, expected: string) {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxFileBytes + MULTIPART_SLACK) throw errors.payloadTooLarge(options.tooLarge);
  if (!request.isMultipart()) throw errors.badRequest(`Expected ${expected}.`);
}

/**
 * The file of a multipart body as a stream, for a route that reads it as it
 * arrives rather than held whole (the CSV import). The file must be the
 * first part. Past `maxFileBytes` the stream fails with a 413; once the
 * reader stops (done early, or failed), the rest of the body is read and
 * dropped unparsed, as are any parts after the file, so the request ends
 * and the answer reaches the client.
 */
export async function openMultipartFile(request: FastifyRequest, options: { fileField: string; maxFileBytes: number; tooLarge: string }): Promise<Readable> {
  const expected = `a multipart/form-data body with a \`${options.fileField}\` file`;
  checkMultipartRequest(request, options, expected);
  const parts = request.parts();
  const first = await parts.next();
  // Whatever follows the file is read and dropped: the file's reader is already at work by then.
  const dropRest = async () => {
    for await (const part of parts) if (part.type === 'file') part.file.resume();
  };
  if (first.done) {
    throw errors.badRequest(`Expected ${expected}.`, [{ path: [options.fileField], code: 'invalid_type', message: `a file field named "${options.fileField}" is required` }]);
  }
  const part = first.value;
  if (part.type !== 'file' || part.fieldname !== options.fileField) {
    if (part.type === 'file') part.file.resume();
    void dropRest().catch(() => {});
    const problem = part.type === 'file' ? `the file field must be named "${options.fileField}"` : `no fields: the \`${options.fileField}\` file is the only part`;
    throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: part.type === 'file' ? 'unexpected_file' : 'unrecognized_keys', message: problem }]);
  }
  void dropRest().catch(() => {});
  const file = new PassThrough();
  const drain = () => {
    part.file.unpipe(file);
    part.file.resume();
  };
  part.file.on('limit', () => {
    drain();
    file.destroy(errors.payloadTooLarge(options.tooLarge));
  });
  part.file.on('error', (error) => file.destroy(error));
  file.on('close', () => {
    if (!part.file.readableEnded) drain();
  });
  return part.file.pipe(file);
}

export async function readMultipart<F extends string>(
  request: FastifyRequest,
  options: { fileField: string; fields: readonly F[]; maxFileBytes: number; tooLarge: string },
): Promise<{ file: MultipartFile; fields: Partial<Record<F, string>> }> {
  const expected = `a multipart/form-data body with a \`${options.fileField}\` file${options.fields.length ? ` and the fields ${options.fields.map((f) => `\`${f}\``).join(', ')}` : ''}`;
  checkMultipartRequest(request, options, expected);
  let file: MultipartFile | undefined;
  const fields: Partial<Record<F, string>> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== options.fileField || file) {
        part.file.resume();
        const problem = file ? 'only one file may be sent' : `the file field must be named "${options.fileField}"`;
        throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: 'unexpected_file', message: problem }]);
      }
      const bytes = await part.toBuffer(); // over the limit: 413 (FST_REQ_FILE_TOO_LARGE), nothing stored
      // toBuffer can miss a truncation that lands on the last chunk; busboy's flag does not.
      if (part.file.truncated) throw errors.payloadTooLarge(options.tooLarge);
      file = { bytes, filename: part.filename ?? '', mimetype: part.mimetype };
    } else {
      if (!(options.fields as readonly string[]).includes(part.fieldname) || part.fieldname in fields) {
        const problem = part.fieldname in fields ? 'sent twice' : 'unknown field';
        throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: 'unrecognized_keys', message: problem }]);
      }
      fields[part.fieldname as F] = String(part.value);
    }
  }
  if (!file) {
    throw errors.badRequest(`Expected ${expected}.`, [{ path: [options.fileField], code: 'invalid_type', message: `a file field named "${options.fileField}" is required` }]);
  }
  return { file, fields };
}
