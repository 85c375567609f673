import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { repositoryRoot } from '../lib/repository-root';
import { addCorsHeaders } from './cors';
import { handleNotFound } from './error-handler';
import type { Config } from '../config';
import { SIGNED_IN_COOKIE } from '../model/session-hint';
import type { App } from './types';

/** Where `npm run build:web` puts the web app (built at install, start or test setup; never committed). */
export const WEB_DIST_DIR = path.join(repositoryRoot(import.meta.dirname), 'web/dist');

/**
 * Paths that belong to the API and its protocols: an unknown one answers the
 * JSON 404, never the app's HTML, so a client that mistypes an endpoint gets
 * an error it can read.
 */
const RESERVED_PREFIXES = ['/api/', '/api', '/openapi.json', '/share/', '/forms/', '/oauth/', '/.well-known/'];

/** Fingerprinted by the bundler: the name changes when the content does, so browsers may keep them forever. */
const IMMUTABLE_PREFIX = '/assets/';

/**
 * The app's HTML may load only our own scripts; images may come from
 * anywhere (docs embed images by URL); sockets go to our own origin.
 */
export function contentSecurityPolicy(uploadOrigins: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: http: https:",
    ['connect-src', "'self'", 'ws:', 'wss:', ...uploadOrigins].join(' '),
    "frame-src 'self' blob: data:",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Where a browser PUTs a direct upload when blobs live in S3 (the presigned
 * URL's origin): the app's page must be allowed to connect there. The local
 * store's upload URL is this server, which the app calls on its own origin.
 */
export function directUploadOrigins(s3: Config['s3']): string[] {
  if (!s3) return [];
  if (s3.endpoint) {
    const endpoint = new URL(s3.endpoint);
    return [s3.forcePathStyle ? endpoint.origin : `${endpoint.protocol}//${s3.bucket}.${endpoint.host}`];
  }
  return [`https://${s3.bucket}.s3.${s3.region}.amazonaws.com`, `https://s3.${s3.region}.amazonaws.com`];
}

export function isReservedPath(urlPath: string): boolean {
  return RESERVED_PREFIXES.some((prefix) => urlPath === prefix || urlPath.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
}

/**
 * Serves the built web app on the API's port: files from web/dist, and the
 * app's HTML for any other GET that is not an API path (the client-side
 * router reads `/{orgSlug}/{workspaceSlug}` and friends). Registered last,
 * as one wildcard route, so every API route and every other plugin's route
 * (`/share/*`, `/oauth/*`, `/.well-known/*`) is matched before it.
 */
export async function registerWebApp(
  app: App,
  options: {
    config: Config;
    distDir?: string;
    uploadOrigins?: readonly string[];
    /** Whether the request carries a live session, and for how long to say so (the signed-in hint). */
    session?: { isLive(request: FastifyRequest): Promise<boolean>; maxAgeSeconds: number };
  },
) {
  const distDir = options.distDir ?? WEB_DIST_DIR;
  const csp = contentSecurityPolicy(options.uploadOrigins);
  await app.register(fastifyStatic, { root: distDir, serve: false });
  app.get(
    '/*',
    // No CORS: the same files for every origin, without the `Vary: Origin` that breaks the service worker's precache (src/http/cors.ts).
    { schema: { hide: true }, config: { auth: 'none', metered: false, cors: false } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const urlPath = decodeURIComponentSafe(request.url.split('?')[0]!);
      if (urlPath === null || isReservedPath(urlPath)) {
        addCorsHeaders(options.config, request, reply);
        return handleNotFound(request, reply);
      }
      if (!existsSync(path.join(distDir, 'index.html'))) return notBuilt(reply);
      const lastSegment = urlPath.slice(urlPath.lastIndexOf('/') + 1);
      if (urlPath.startsWith(IMMUTABLE_PREFIX)) {
        return reply.sendFile(urlPath.slice(1), { maxAge: '365d', immutable: true });
      }
      if (lastSegment.includes('.')) {
        // sw.js, icons, the manifest: revalidated on every load so a new build is picked up.
        return reply.sendFile(urlPath.slice(1), { maxAge: 0, cacheControl: true });
      }
      if (options.session) await tellSignedIn(request, reply, options.config, options.session);
      return sendAppShell(reply, csp);
    },
  );
}

/**
 * Sets the signed-in hint (src/model/session-hint.ts) for a live session and
 * clears it otherwise, on every load of the app's page: the app then asks
 * `/api/me` only when it will be answered.
 */
async function tellSignedIn(request: FastifyRequest, reply: FastifyReply, config: Config, session: { isLive(request: FastifyRequest): Promise<boolean>; maxAgeSeconds: number }) {
  if (await session.isLive(request)) {
    reply.setCookie(SIGNED_IN_COOKIE, '1', { path: '/', httpOnly: false, sameSite: 'lax', secure: config.cookieSecure, maxAge: session.maxAgeSeconds });
  } else if (request.cookies?.[SIGNED_IN_COOKIE] !== undefined) {
    reply.clearCookie(SIGNED_IN_COOKIE, { path: '/' });
  }
}

function sendAppShell(reply: FastifyReply, csp: string) {
  reply.header('content-security-policy', csp);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
  return reply.sendFile('index.html', { maxAge: 0, cacheControl: false }).header('cache-control', 'no-cache');
}

function notBuilt(reply: FastifyReply) {
  return reply
    .status(503)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send('<!doctype html><title>Trellis</title><p>The web app is not built yet. Run <code>npm run build:web</code> (or restart with <code>npm start</code>, which builds it).</p>');
}

function decodeURIComponentSafe(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
