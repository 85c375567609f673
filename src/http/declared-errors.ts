import { z } from 'zod';
import { ErrorBody, OverLimitBody, RateLimitedBody } from '../model/schemas/common';

type ResponseEntry = unknown;
type RouteLike = {
  method: string | string[];
  url: string;
  schema?: { params?: unknown; querystring?: unknown; body?: unknown; response?: Record<string, ResponseEntry>; hide?: boolean };
  config?: { auth?: 'required' | 'optional' | 'none'; metered?: boolean; capExempt?: boolean };
};

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HTML_PAGE = z.string().describe('HTML page');

/** A response entry that names its media types (`{ description, content }`), as HTML pages declare theirs. */
function contentOf(entry: ResponseEntry): Record<string, { schema: unknown }> | undefined {
  const content = entry && typeof entry === 'object' && 'content' in entry ? (entry as { content?: unknown }).content : undefined;
  return content && typeof content === 'object' ? (content as Record<string, { schema: unknown }>) : undefined;
}

/**
 * The statuses the platform answers on a route whatever its handler does,
 * added to its OpenAPI responses where the route does not declare them
 * (issue 22 item 5), so a client generated from /openapi.json knows every
 * status it can get:
 *
 * - 400 a URL, JSON body or parameter of the wrong shape; 422 a value that breaks a constraint
 * - 401 credentials that match nothing (routes that read them)
 * - 402 the monthly API-call cap (metered writes: docs/LIMITS.md)
 * - 404 a path naming nothing (routes with path parameters)
 * - 413 / 415 a body too large or of a type the route does not read
 * - 429 the failed-auth throttle of the caller's address (every route) and burst limits
 * - 500 our own failure; 503 a document over the load budget (`document_too_large`, docs/SYNC.md)
 *
 * Routes whose errors are HTML pages (they declare an error status as
 * `text/html`) answer the JSON error to a client that asks for JSON
 * (src/http/html-page.ts), and may answer the platform's JSON errors to
 * anyone (a URL that is not valid UTF-8 is refused before any route runs),
 * so their error statuses name both media types.
 */
export function declarePlatformErrors(app: { addHook(name: 'onRoute', hook: (route: RouteLike) => void): unknown }) {
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (!schema || schema.hide) return;
    const methods = [route.method].flat();
    const declared = { ...(schema.response ?? {}) };
    const htmlErrors = Object.entries(declared).some(([status, entry]) => Number(status) >= 400 && contentOf(entry)?.['text/html']);
    // Routes with their own error envelope (JSON-RPC, OAuth) declare it for 400; their other errors use it too.
    const own = declared[400];
    const error = own !== undefined && !contentOf(own) ? own : ErrorBody;
    const platform: Record<number, unknown> = { 400: error, 429: RateLimitedBody, 500: error, 503: error };
    if (schema.params || schema.querystring || schema.body) platform[422] = error;
    if (route.config?.auth !== 'none') platform[401] = error;
    if (route.url.includes(':')) platform[404] = error;
    if (methods.some((method) => BODY_METHODS.has(method))) {
      platform[413] = error;
      platform[415] = error;
      if (route.config?.metered !== false && route.config?.capExempt !== true) platform[402] = OverLimitBody;
    }
    // The route's own error pages, as JSON to a client that asks for it.
    if (htmlErrors) for (const status of Object.keys(declared)) if (Number(status) >= 400 && !(status in platform)) platform[Number(status)] = error;
    for (const [status, json] of Object.entries(platform)) {
      const entry = declared[status];
      const content = contentOf(entry);
      if (entry === undefined) {
        declared[status] = htmlErrors && Number(status) < 500 ? { description: 'An error page, or the error as JSON', content: { 'text/html': { schema: HTML_PAGE }, 'application/json': { schema: json } } } : json;
      } else if (content && !content['application/json']) {
        declared[status] = { ...(entry as object), content: { ...content, 'application/json': { schema: json } } };
      }
    }
    // The response map may be shared by several routes: each gets its own copy.
    route.schema = { ...schema, response: declared };
  });
}
