import type { IncomingMessage } from 'node:http';
import multipart, { type MultipartFile as FilePart } from '@fastify/multipart';
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

export async function registerMultipart(scope: App, maxFileBytes: number, counts: { files: number; fields: number } = { files: 1, fields: 20 }) {
  // One file more than allowed, so an extra file part reaches the reader and gets a clear 400 rather than a silent drop.
  // preservePath: a name like `../x` reaches the name check (and is refused) instead of being silently cut to `x`.
  await scope.register(multipart, {
    limits: { fileSize: maxFileBytes, files: counts.files + 1, fields: counts.fields, fieldSize: 64 * 1024 },
    throwFileSizeLimit: true,
    preservePath: true,
  });
}

export type MultipartFile = { bytes: Buffer; filename: string; mimetype: string };

type ReadOptions<F extends string> = { fileField: string; fields: readonly F[]; maxFileBytes: number; tooLarge: string };

/**
 * The file and fields of a multipart body. A body past the limit is refused
 * as soon as the limit is passed, whether it declared its length or not
 * (chunked): the file at `maxFileBytes`, the whole body at that plus the
 * multipart overhead, so neither a large file nor a large field, preamble or
 * epilogue is read to its end first (issue 33 item 8).
 */
export async function readMultipart<F extends string>(
  request: FastifyRequest,
  options: ReadOptions<F>,
): Promise<{ file: MultipartFile; fields: Partial<Record<F, string>> }> {
  const bodyLimit = options.maxFileBytes + MULTIPART_SLACK;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > bodyLimit) throw errors.payloadTooLarge(options.tooLarge);
  if (!request.isMultipart()) throw errors.badRequest(`Expected ${expectedBody(options)}.`);
  // Reading starts here, synchronously (the parser is piped to the request), so the count below sees every byte.
  const reading = readParts(request, options);
  const counting = refuseBeyond(request.raw, bodyLimit, options.tooLarge);
  try {
    return await Promise.race([reading, counting.refused]);
  } finally {
    counting.stop();
  }
}

/**
 * Every part of a multipart body, for a form whose fields the route does
 * not know in advance: text fields by name (a name sent again gathers its
 * values in an array), files by field name, at most `maxFiles` files of
 * `maxFileBytes` each and `maxBodyBytes` in all (413 past either).
 */
export async function readMultipartForm(
  request: FastifyRequest,
  options: { maxFiles: number; maxFileBytes: number; maxBodyBytes: number; tooLarge: string },
): Promise<{ fields: Record<string, string | string[]>; files: Record<string, MultipartFile[]> }> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBodyBytes) throw errors.payloadTooLarge(options.tooLarge);
  if (!request.isMultipart()) throw errors.badRequest('Expected a multipart/form-data body.');
  const reading = (async () => {
    const fields: Record<string, string | string[]> = {};
    const files: Record<string, MultipartFile[]> = {};
    let fileCount = 0;
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (++fileCount > options.maxFiles) {
          part.file.resume();
          throw errors.badRequest(`At most ${options.maxFiles} files may be sent at once.`, [{ path: [part.fieldname], code: 'too_many_files', message: `at most ${options.maxFiles} files` }]);
        }
        const file = { bytes: await readFile(part.file, options.tooLarge), filename: part.filename ?? '', mimetype: part.mimetype };
        (files[part.fieldname] ??= []).push(file);
      } else {
        const value = String(part.value);
        const existing = fields[part.fieldname];
        fields[part.fieldname] = existing === undefined ? value : [...[existing].flat(), value];
      }
    }
    return { fields, files };
  })();
  const counting = refuseBeyond(request.raw, options.maxBodyBytes, options.tooLarge);
  try {
    return await Promise.race([reading, counting.refused]);
  } finally {
    counting.stop();
  }
}

function expectedBody(options: ReadOptions<string>) {
  return `a multipart/form-data body with a \`${options.fileField}\` file${options.fields.length ? ` and the fields ${options.fields.map((f) => `\`${f}\``).join(', ')}` : ''}`;
}

async function readParts<F extends string>(request: FastifyRequest, options: ReadOptions<F>): Promise<{ file: MultipartFile; fields: Partial<Record<F, string>> }> {
  const expected = expectedBody(options);
  let file: MultipartFile | undefined;
  const fields: Partial<Record<F, string>> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== options.fileField || file) {
        part.file.resume();
        const problem = file ? 'only one file may be sent' : `the file field must be named "${options.fileField}"`;
        throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: 'unexpected_file', message: problem }]);
      }
      file = { bytes: await readFile(part.file, options.tooLarge), filename: part.filename ?? '', mimetype: part.mimetype };
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

/**
 * The file's bytes, failing the moment the parser cuts the file at the
 * limit: the parser would otherwise go on reading (and dropping) the rest
 * of the file, however long, before the file's stream ends.
 */
async function readFile(file: FilePart['file'], tooLarge: string): Promise<Buffer> {
  const overLimit = () => file.destroy(errors.payloadTooLarge(tooLarge));
  if (file.truncated) overLimit();
  else file.once('limit', overLimit);
  const chunks: Buffer[] = [];
  for await (const chunk of file) chunks.push(chunk as Buffer);
  if (file.truncated) throw errors.payloadTooLarge(tooLarge);
  return Buffer.concat(chunks);
}

/** Counts the bytes of the body as they arrive; `refused` rejects with a 413 once more than `limit` have. */
function refuseBeyond(body: IncomingMessage, limit: number, tooLarge: string): { refused: Promise<never>; stop(): void } {
  let seen = 0;
  let count: (chunk: Buffer) => void = () => {};
  const refused = new Promise<never>((_, reject) => {
    count = (chunk) => {
      seen += chunk.length;
      if (seen > limit) reject(errors.payloadTooLarge(tooLarge));
    };
  });
  body.on('data', count);
  return { refused, stop: () => body.off('data', count) };
}
