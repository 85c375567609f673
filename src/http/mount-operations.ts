import { Readable } from 'node:stream';
import { z } from 'zod';
import { errorResponses } from '../model/schemas/common';
import { contentDisposition } from '../files/names';
import { Accepted, type FileBody, type FileForms, type Operation, type RestFacts, type RestRequest, type StreamedBody, type StreamedForm } from '../operations/operation';
import { workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../domain/services';
import { httpExchange } from './exchange';
import { negotiate } from './negotiate';
import { resolvedRateLimit } from './resolved-rate-limit';
import type { App } from './types';
import type { FastifyReply } from 'fastify';

/**
 * Registers every operation that has REST facts as a Fastify route: its
 * schemas validate the request and describe it in OpenAPI (200 is the
 * operation's response; the common error responses and the route's own
 * extra statuses are added), its config feeds the platform hooks (auth,
 * limits, metering), and the handler is the operation's `run`.
 */
export function mountOperations(app: App, services: Services, operations: Iterable<Operation>) {
  for (const operation of operations) {
    const rest = operation.rest;
    if (!rest) continue;
    const urls = rest.urls ?? (rest.workspacePath !== undefined ? workspacePaths(rest.workspacePath) : [rest.path!]).map((url) => ({ url, params: operation.params }));
    const querystring = rest.querystring ?? operation.query;
    const body = rest.body ?? operation.body;
    // One object per URL: the onRoute hook that drops `orgSlug` on the bare path edits the schema in place.
    const schema = (params: unknown, ok: unknown = withFileTypes(ok200(rest, operation.response), rest.files, operation.response)) => ({
      summary: rest.summary,
      ...(rest.description !== undefined ? { description: rest.description } : {}),
      tags: rest.tags,
      ...(rest.deprecated ? { deprecated: true } : {}),
      ...(params ? { params } : {}),
      ...(querystring ? { querystring } : {}),
      ...(body ? { body } : {}),
      response: { [rest.created ? 201 : 200]: ok, ...(operation.accepted ? { 202: operation.accepted } : {}), ...errorResponses, ...rest.responses },
    });
    const resolved = rest.resolvedLimit && resolvedRateLimit(rest.resolvedLimit.limit, (request) => rest.resolvedLimit!.bucket(services, request.actor, request.params));
    const config = resolved ? { ...rest.config, rateLimits: [...(rest.config?.rateLimits ?? []), resolved.rule] } : rest.config;
    for (const { url, params } of urls) {
      app.route({
        method: rest.method,
        url,
        schema: schema(params),
        ...(config ? { config } : {}),
        ...(resolved ? { onRequest: resolved.onRequest } : {}),
        handler: async (request, reply) => {
          let validated: RestRequest = { params: request.params, query: request.query, body: request.body };
          const query = request.query as { format?: string };
          const files = rest.files;
          if (files && query.format && query.format in files.types) return sendFile(reply, await files.run(services, request.actor, validated, query.format));
          const stream = rest.stream;
          if (stream && (query.format === stream.format || (!query.format && negotiate(request.headers.accept, ['application/json', stream.type]) === stream.type))) {
            return sendStreamed(reply, stream, await stream.run(services, request.actor, validated));
          }
          const wanted = rest.raw && !query.format ? negotiate(request.headers.accept) : 'application/json';
          if (wanted !== 'application/json') validated = { ...validated, query: { ...query, format: wanted === 'text/markdown' ? 'markdown' : 'text' } };
          const result = await operation.run(services, request.actor, (rest.input ? rest.input(validated) : validated) as never, httpExchange(request, reply));
          if (result instanceof Accepted) return reply.code(202).send(result.body);
          if (rest.created) reply.code(201);
          const raw = wanted === 'application/json' ? undefined : ((result as { markdown?: unknown }).markdown ?? (result as { text?: unknown }).text);
          // A surface without a raw form (a table's version) answers JSON whatever Accept says.
          return typeof raw === 'string' ? reply.type(`${wanted}; charset=utf-8`).send(raw) : result;
        },
      });
    }
    const stream = rest.stream;
    if (stream?.workspacePath === undefined) continue;
    for (const url of workspacePaths(stream.workspacePath)) {
      app.route({
        method: rest.method,
        url,
        schema: {
          ...schema(operation.params, { description: stream.description, content: { [stream.type]: { schema: z.string() } } }),
          ...(stream.querystring ? { querystring: stream.querystring } : {}),
          summary: `${rest.summary} (${stream.format.toUpperCase()})`,
        },
        ...(config ? { config } : {}),
        ...(resolved ? { onRequest: resolved.onRequest } : {}),
        handler: async (request, reply) =>
          sendStreamed(reply, stream, await stream.run(services, request.actor, { params: request.params, query: request.query, body: request.body })),
      });
    }
  }
}

/** The 200 as OpenAPI shows it: JSON, or JSON and the raw or streamed types a route may send instead. */
function ok200(rest: RestFacts, json: z.ZodType) {
  if (rest.raw) return rawOrJson(rest.raw, json);
  if (rest.stream) return { description: `JSON by default. ${rest.stream.description}`, content: { 'application/json': { schema: json }, [rest.stream.type]: { schema: z.string() } } };
  return json;
}

/** The 200 of a route whose answer may be a file: the JSON and each file type. */
function withFileTypes(ok: unknown, files: FileForms | undefined, json: z.ZodType) {
  if (!files) return ok;
  const base = ok === json ? { description: 'JSON by default.', content: { 'application/json': { schema: json } } } : (ok as { description: string; content: Record<string, unknown> });
  const content = { ...base.content };
  for (const type of Object.values(files.types)) content[type.split(';')[0]!] = { schema: z.string() };
  return { description: `${base.description} ${files.description}`, content };
}

/** A file answer: an attachment named for the client, streamed as the socket takes it. */
function sendFile(reply: FastifyReply, file: FileBody) {
  reply.type(file.contentType);
  reply.header('content-disposition', contentDisposition('attachment', file.filename));
  return reply.send(file.stream);
}

/**
 * Sends the chunks as they are pulled: the stream asks for the next chunk
 * only when the socket has taken the last, so a slow client holds the
 * producer back rather than the process buffering the whole answer.
 */
function sendStreamed(reply: FastifyReply, form: StreamedForm, body: StreamedBody) {
  reply.type(`${form.type}; charset=utf-8`);
  if (body.filename) reply.header('content-disposition', contentDisposition('attachment', body.filename));
  return reply.send(Readable.from(body.chunks, { objectMode: false }));
}

/** The 200 of a route that may send a doc body raw: JSON by default, Markdown or text by `Accept`. */
function rawOrJson(raw: NonNullable<RestFacts['raw']>, json: z.ZodType) {
  const content: Record<string, { schema: z.ZodType }> = { 'application/json': { schema: json } };
  for (const [type, schema] of Object.entries(raw.types)) content[type] = { schema };
  return { description: raw.description, content };
}
