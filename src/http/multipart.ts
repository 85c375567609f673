import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
  return readBody(request, options, async (part) => ({ bytes: await readFile(part.file, options.tooLarge), filename: part.filename ?? '', mimetype: part.mimetype }));
}

/**
 * A multipart body whose file is written to `target` as it arrives instead
 * of being held in memory (a workspace archive, hundreds of megabytes),
 * and its named text fields. The same refusals as `readMultipart`; the
 * file at `target` is removed when the body is refused.
 */
export async function readMultipartToFile<F extends string>(
  request: FastifyRequest,
  options: ReadOptions<F> & { target: string },
): Promise<{ file: { filename: string; mimetype: string; size: number }; fields: Partial<Record<F, string>> }> {
  try {
    return await readBody(request, options, async (part) => {
      watchLimit(part.file, options.tooLarge);
      await pipeline(part.file, createWriteStream(options.target));
      if (part.file.truncated) throw errors.payloadTooLarge(options.tooLarge);
      return { filename: part.filename ?? '', mimetype: part.mimetype, size: (await stat(options.target)).size };
    });
  } catch (error) {
    await rm(options.target, { force: true });
    throw error;
  }
}

async function readBody<F extends string, T>(
  request: FastifyRequest,
  options: ReadOptions<F>,
  takeFile: (part: FilePart) => Promise<T>,
): Promise<{ file: T; fields: Partial<Record<F, string>> }> {
  const bodyLimit = checkMultipartRequest(request, options, expectedBody(options));
  // Reading starts here, synchronously (the parser is piped to the request), so the count below sees every byte.
  const reading = readParts(request, options, takeFile);
  const counting = refuseBeyond(request.raw, bodyLimit, options.tooLarge);
  try {
    return await Promise.race([reading, counting.refused]);
  } finally {
    counting.stop();
  }
}

/** The checks before any part is read: a declared length over the limit is 413 unread, a body that is not multipart 400. Answers the whole body's limit. */
function checkMultipartRequest(request: FastifyRequest, options: { maxFileBytes: number; tooLarge: string }, expected: string): number {
  const bodyLimit = options.maxFileBytes + MULTIPART_SLACK;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > bodyLimit) throw errors.payloadTooLarge(options.tooLarge);
  if (!request.isMultipart()) throw errors.badRequest(`Expected ${expected}.`);
  return bodyLimit;
}

/**
 * The file of a multipart body as a stream, for a route that reads it as it
 * arrives rather than held whole (the CSV import). The file must be the
 * first part. Past `maxFileBytes` of file, or past the whole body's limit,
 * the stream fails with a 413 at once (issue 33 item 8). Once the reader
 * stops (done early, or failed), the rest of the file is read and dropped
 * unparsed, as are any parts after it, so the request ends and the answer
 * reaches the client; an answer sent while the body still arrives stops
 * the reading (src/http/early-answer.ts).
 */
export async function openMultipartFile(request: FastifyRequest, options: { fileField: string; maxFileBytes: number; tooLarge: string }): Promise<Readable> {
  const expected = `a multipart/form-data body with a \`${options.fileField}\` file`;
  const bodyLimit = checkMultipartRequest(request, options, expected);
  const parts = request.parts();
  const counting = refuseBeyond(request.raw, bodyLimit, options.tooLarge);
  const first = await Promise.race([parts.next(), counting.refused]).catch((error: unknown) => {
    counting.stop();
    throw error;
  });
  // Whatever follows the file is read and dropped: the file's reader is already at work by then.
  const dropRest = async () => {
    for await (const part of parts) if (part.type === 'file') part.file.resume();
  };
  if (first.done) {
    counting.stop();
    throw errors.badRequest(`Expected ${expected}.`, [{ path: [options.fileField], code: 'invalid_type', message: `a file field named "${options.fileField}" is required` }]);
  }
  const part = first.value;
  if (part.type !== 'file' || part.fieldname !== options.fileField) {
    counting.stop();
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
  const overLimit = (error: unknown) => {
    drain();
    file.destroy(error as Error);
  };
  counting.refused.catch(overLimit);
  if (part.file.truncated) overLimit(errors.payloadTooLarge(options.tooLarge));
  else part.file.once('limit', () => overLimit(errors.payloadTooLarge(options.tooLarge)));
  part.file.on('error', (error) => file.destroy(error));
  file.on('close', () => {
    counting.stop();
    if (!part.file.readableEnded) drain();
  });
  return part.file.pipe(file);
}

function expectedBody(options: ReadOptions<string>) {
  return `a multipart/form-data body with a \`${options.fileField}\` file${options.fields.length ? ` and the fields ${options.fields.map((f) => `\`${f}\``).join(', ')}` : ''}`;
}

async function readParts<F extends string, T>(
  request: FastifyRequest,
  options: ReadOptions<F>,
  takeFile: (part: FilePart) => Promise<T>,
): Promise<{ file: T; fields: Partial<Record<F, string>> }> {
  const expected = expectedBody(options);
  let file: T | undefined;
  let seen = false;
  const fields: Partial<Record<F, string>> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== options.fileField || seen) {
        part.file.resume();
        const problem = seen ? 'only one file may be sent' : `the file field must be named "${options.fileField}"`;
        throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: 'unexpected_file', message: problem }]);
      }
      seen = true;
      file = await takeFile(part);
    } else {
      if (!(options.fields as readonly string[]).includes(part.fieldname) || part.fieldname in fields) {
        const problem = part.fieldname in fields ? 'sent twice' : 'unknown field';
        throw errors.badRequest(`Expected ${expected}.`, [{ path: [part.fieldname], code: 'unrecognized_keys', message: problem }]);
      }
      fields[part.fieldname as F] = String(part.value);
    }
  }
  if (!seen) {
    throw errors.badRequest(`Expected ${expected}.`, [{ path: [options.fileField], code: 'invalid_type', message: `a file field named "${options.fileField}" is required` }]);
  }
  return { file: file as T, fields };
}

/** Fails the file's stream the moment the parser cuts it at the limit: the parser would otherwise read (and drop) the rest of the file, however long, before it ends. */
function watchLimit(file: FilePart['file'], tooLarge: string) {
  const overLimit = () => file.destroy(errors.payloadTooLarge(tooLarge));
  if (file.truncated) overLimit();
  else file.once('limit', overLimit);
}

/** The file's bytes, failing the moment it passes the limit. */
async function readFile(file: FilePart['file'], tooLarge: string): Promise<Buffer> {
  watchLimit(file, tooLarge);
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
