import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ApiError } from '../errors';
import { handleError, toApiError } from './error-handler';
import { negotiate } from './negotiate';

/**
 * Headers for the few pages the server renders itself (local checkout,
 * portal, tracker): no scripts at all, forms post only back here, never
 * framed, never cached, and the token in the URL never leaves as a referrer.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** An OpenAPI response that is a page. */
export const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: z.string().describe('HTML page') } } });

/** Sends a page from `renderPage` with those headers (or a route's own). */
export function sendPage(reply: FastifyReply, status: number, html: string, headers: Readonly<Record<string, string>> = PAGE_HEADERS) {
  return reply.code(status).headers(headers).send(html);
}

/**
 * Whether the client of a page route wants the page: a browser (which asks
 * for `text/html` first), or a client that names no type, as before. A
 * client that asks for `application/json` is an API client.
 */
export function wantsPage(request: FastifyRequest): boolean {
  return negotiate(request.headers.accept, ['text/html', 'application/json'] as const) === 'text/html';
}

/**
 * An error of a route that renders pages, in the form the client asked for
 * (issue 33 item 7): the page `render` makes for a browser, the documented
 * JSON error for an API client, as /openapi.json declares both
 * (src/http/declared-errors.ts). Our own failures (5xx) are JSON for
 * everyone, as declared.
 */
export function sendPageError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  render: (error: ApiError) => string,
  headers: Readonly<Record<string, string>> = PAGE_HEADERS,
) {
  const apiError = toApiError(error);
  if (apiError.statusCode >= 500 || !wantsPage(request)) return handleError(error, request, reply);
  if (apiError.headers) reply.headers(apiError.headers);
  return sendPage(reply, apiError.statusCode, render(apiError), headers);
}
