import cors from '@fastify/cors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isCredentialedOrigin } from '../access/cookie-origins';
import type { Config } from '../config';
import type { App } from './types';

/** Headers a browser client needs to read errors, limits, pagination and versions. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-monthly-cap',
  'x-ratelimit-monthly-used',
  'x-ratelimit-monthly-reset',
  'x-ratelimit-burst-remaining',
  'x-ratelimit-burst-reset',
  'idempotent-replayed',
  'deprecation',
  'link',
  'etag',
  'trellis-run',
  'www-authenticate',
  'mcp-session-id',
  'mcp-protocol-version',
];

/**
 * CORS for the API. A trusted origin gets itself reflected with
 * `Access-Control-Allow-Credentials: true`; every other origin gets `*`
 * without credentials, so bearer-token clients (API keys, OAuth tokens, MCP,
 * OAuth discovery and the token endpoint) work from any page, while a
 * browser refuses any other site (a sibling subdomain included: SameSite
 * does not keep it out) to read an answer to a request that carried the
 * cookie, and refuses the preflight of a credentialed write.
 *
 * Routes with `config.cors === false` (the web app's static files) get no
 * CORS headers and no `Vary: Origin`: they are the same for everyone, and a
 * `Vary: Origin` keeps the service worker's precache from matching the
 * page's `crossorigin` script and style requests.
 */
export async function registerCors(app: App, config: Config) {
  // Both answers built once (every request asks), the exposed headers as the one string the header carries.
  const base = { methods: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS', exposedHeaders: EXPOSED_HEADERS.join(', ') };
  const trustedOptions = { ...base, origin: true, credentials: true };
  const anyOptions = { ...base, origin: '*', credentials: false };
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: object) => void) => {
      callback(null, isCredentialedOrigin(config, request.headers.origin) ? trustedOptions : anyOptions);
    },
  });
}

/**
 * The same headers set by hand, for an API answer from a route that has
 * `cors: false` (the web app's wildcard answering an unknown API path).
 */
export function addCorsHeaders(config: Config, request: FastifyRequest, reply: FastifyReply) {
  const origin = request.headers.origin;
  const trusted = isCredentialedOrigin(config, origin);
  reply.header('vary', 'Origin');
  reply.header('access-control-allow-origin', trusted && origin ? origin : '*');
  if (trusted) reply.header('access-control-allow-credentials', 'true');
  reply.header('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
}

/**
 * The CORS headers the hook put on a reply, for a route that takes the raw
 * response over (Server-Sent Events), where Fastify's headers are not sent.
 */
export function corsHeadersOf(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue;
    if (name.toLowerCase().startsWith('access-control-') || name.toLowerCase() === 'vary') headers[name.toLowerCase()] = String(value);
  }
  return headers;
}
