import type { FastifyRequest } from 'fastify';
import { errors } from '../errors';
import { hashToken } from '../lib/secrets';
import { findLiveKey, findLiveSession } from '../persistence/credentials';
import { touchKeyLastUsed } from '../persistence/keys';
import type { Services } from '../services';
import type { Actor } from './actor';
import { cachedCaller } from './context-cache';

export const SESSION_COOKIE = 'svc-session';
export const API_KEY_PREFIX = 'svc_live_';

/**
 * Resolves the caller from `Authorization: Bearer` (API key; OAuth tokens
 * join later) or the `svc-session` cookie. A presented bearer credential that
 * does not resolve is a 401 even on public routes: an agent with a revoked key
 * must learn it, not silently read as anonymous. A stale browser cookie on a
 * public route just reads as anonymous.
 */
export async function resolveActor(services: Services, request: FastifyRequest): Promise<{ actor: Actor | null; invalid: boolean }> {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) return { actor: null, invalid: true };
    const actor = await actorFromBearer(services, match[1]!);
    return { actor, invalid: actor === null };
  }
  const cookie = request.cookies?.[SESSION_COOKIE];
  if (cookie) {
    const actor = await actorFromSessionToken(services, cookie);
    return { actor, invalid: actor === null };
  }
  return { actor: null, invalid: false };
}

export async function actorFromBearer(services: Services, token: string): Promise<Actor | null> {
  if (!token.startsWith(API_KEY_PREFIX)) return null;
  const actor = await cachedCaller(services, 'key', token, () => actorFromKey(services, token));
  if (actor?.key) noteKeyUse(services, actor.key.id, actor.principal.id);
  return actor;
}

async function actorFromKey(services: Services, token: string): Promise<Actor | null> {
  const key = await findLiveKey(services.db, hashToken(token));
  if (!key) return null;
  return {
    principal: { principalType: 'agent', id: key.agentId, name: key.agentName, avatarUrl: key.agentAvatarUrl },
    via: 'key',
    userId: key.ownerUserId,
    orgId: key.orgId,
    key: { id: key.keyId, role: key.role, scopeWorkspaceId: key.scopeWorkspaceId },
  };
}

export function actorFromSessionToken(services: Services, token: string): Promise<Actor | null> {
  return cachedCaller(services, 'session', token, () => actorFromSession(services, token));
}

async function actorFromSession(services: Services, token: string): Promise<Actor | null> {
  const session = await findLiveSession(services.db, hashToken(token), services.clock.now());
  if (!session) return null;
  return {
    principal: { principalType: 'user', id: session.userId, name: session.name, avatarUrl: session.avatarUrl },
    via: 'session',
    userId: session.userId,
    orgId: session.orgId,
    sessionId: session.sessionId,
    sessionCreatedAt: session.sessionCreatedAt,
  };
}

const KEY_USE_RESOLUTION_MS = 60_000;
const lastKeyTouch = new Map<string, number>();

/** `lastUsedAt` to the minute, without a write on every request. */
function noteKeyUse(services: Services, keyId: string, agentId: string) {
  const now = services.clock.now();
  if (now.getTime() - (lastKeyTouch.get(keyId) ?? 0) < KEY_USE_RESOLUTION_MS) return;
  if (lastKeyTouch.size > 50_000) lastKeyTouch.clear();
  lastKeyTouch.set(keyId, now.getTime());
  touchKeyLastUsed(services.db, { keyId, agentId, at: now }).catch((error) => services.log.warn({ err: error }, 'could not record key use'));
}

/** For handlers on `auth: 'required'` routes: the caller, guaranteed present. */
export function requireActor(request: FastifyRequest): Actor {
  if (!request.actor) throw errors.unauthorized();
  return request.actor;
}
