import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { corsHeadersOf } from './cors';
import { leaveRequest } from '../lib/request-context';

/** Keep-alive comment interval of every Server-Sent Events stream. */
export const SSE_PING_MS = 15_000;

/**
 * Takes the response over from Fastify and starts a `text/event-stream`
 * (with the CORS headers the hook chose, which Fastify no longer sends), answering the raw
 * response to write frames to.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
    ...corsHeadersOf(reply),
  });
  raw.write(': connected\n\n');
  // A stream lives as long as its client: it does not keep the embedded database's request-id store (and its promise hooks) on.
  leaveRequest(raw);
  return raw;
}

/** The id a reconnecting client resumes after: the `Last-Event-ID` header, else the query fallback. */
export function lastEventIdOf(request: FastifyRequest, fallback: string | undefined, pattern: RegExp): string | null {
  const header = request.headers['last-event-id'];
  if (typeof header === 'string' && pattern.test(header)) return header;
  return fallback ?? null;
}
