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
 */

/** Multipart overhead allowed on top of the file itself before a request is refused unread. */
const MULTIPART_SLACK = 64 * 1024;

export async function registerMultipart(scope: App, maxFileBytes: number) {
  // `files: 2` so a second file part reaches readMultipart and gets a clear 400 rather than a silent drop.
  // preservePath: a name like `../x` reaches the name check (and is refused) instead of being silently cut to `x`.
  await scope.register(multipart, { limits: { fileSize: maxFileBytes, files: 2, fields: 20, fieldSize: 64 * 1024 }, throwFileSizeLimit: true, preservePath: true });
}

export type MultipartFile = { bytes: Buffer; filename: string; mimetype: string };

export async function readMultipart<F extends string>(
  request: FastifyRequest,
  options: { fileField: string; fields: readonly F[]; maxFileBytes: number; tooLarge: string },
): Promise<{ file: MultipartFile; fields: Partial<Record<F, string>> }> {
  const expected = `a multipart/form-data body with a \`${options.fileField}\` file${options.fields.length ? ` and the fields ${options.fields.map((f) => `\`${f}\``).join(', ')}` : ''}`;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxFileBytes + MULTIPART_SLACK) throw errors.payloadTooLarge(options.tooLarge);
  if (!request.isMultipart()) throw errors.badRequest(`Expected ${expected}.`);
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
