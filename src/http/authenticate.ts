import type { FastifyRequest } from 'fastify';
import type { Actor } from '../policy/actor';
import { actorFromBearer, actorFromSessionToken, requireCaller, SESSION_COOKIE } from '../access/callers';
import { errors } from '../errors';
import type { Services } from '../domain/services';
import { mayUseSessionCookie } from '../access/cookie-origins';

export { API_KEY_PREFIX, SESSION_COOKIE } from '../access/callers';

/** The bearer token of `Authorization: Bearer <token>`; `invalid` when the header is present but not of that form. */
export function bearerTokenOf(request: FastifyRequest): { token: string | null; invalid: boolean } {
  const header = request.headers.authorization;
  if (!header) return { token: null, invalid: false };
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? { token: match[1]!, invalid: false } : { token: null, invalid: true };
}

/**
 * Reads the caller's credential from the request: `Authorization: Bearer`
 * (API key or OAuth access token) or the `svc-session` cookie (only from
 * this app's own pages: `mayUseSessionCookie`), and resolves
 * it through `src/access/callers.ts`. A presented bearer credential that does
 * not resolve is a 401 even on public routes: an agent with a revoked key
 * must learn it, not silently read as anonymous. A stale browser cookie on a
 * public route just reads as anonymous.
 */
export async function resolveActor(services: Services, request: FastifyRequest): Promise<{ actor: Actor | null; invalid: boolean }> {
  const bearer = bearerTokenOf(request);
  if (bearer.invalid) return { actor: null, invalid: true };
  if (bearer.token) {
    const actor = await actorFromBearer(services, bearer.token);
    return { actor, invalid: actor === null };
  }
  const cookie = request.cookies?.[SESSION_COOKIE];
  // Another site's page (a sibling subdomain included) reads as anonymous, never as the person.
  if (cookie && mayUseSessionCookie(services.config, request.headers)) {
    const actor = await actorFromSessionToken(services, cookie);
    return { actor, invalid: actor === null };
  }
  return { actor: null, invalid: false };
}

/** For handlers on `auth: 'required'` routes: the caller, guaranteed present. */
export function requireActor(request: FastifyRequest): Actor {
  return requireCaller(request.actor);
}

