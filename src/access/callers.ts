import { hash } from 'node:crypto';
import { errors } from '../errors';
import { hashToken } from '../lib/secrets';
import { findLiveKey, findLiveSession } from '../persistence/credentials';
import { touchKeyLastUsed } from '../persistence/keys';
import { findLiveAccessToken, touchGrantLastUsed } from '../persistence/oauth';
import { readCacheOf } from '../persistence/read-cache';
import { API_KEY_PREFIX, OAUTH_ACCESS_TOKEN_PREFIX } from '../policy/credentials';
import { OAUTH_SCOPES, parseScopes, type OAuthScope } from '../model/permissions';
import type { Services } from '../domain/services';
import type { Actor } from '../policy/actor';

/**
 * Turns a presented credential into the caller (`Actor`): an API key, an
 * OAuth access token or a session token. Shared by every entry point that
 * authenticates (HTTP requests, sync connections, their re-checks), so a
 * revoked credential is dead everywhere at once.
 */

export { API_KEY_PREFIX, OAUTH_ACCESS_TOKEN_PREFIX, SESSION_COOKIE } from '../policy/credentials';
export { parseScopes } from '../model/permissions';

/** A bearer credential: an API key or an OAuth access token. Null when it does not resolve. */
export async function actorFromBearer(services: Services, token: string): Promise<Actor | null> {
  let actor: Actor | null = null;
  if (token.startsWith(API_KEY_PREFIX)) actor = await cachedCaller(services, 'key', token, () => actorFromKey(services, token));
  else if (token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX)) actor = await cachedCaller(services, 'oauth', token, () => actorFromAccessToken(services, token));
  if (actor?.key) {
    const { id: keyId } = actor.key;
    const agentId = actor.principal.id;
    const at = services.clock.now();
    noteUse(services, `key:${keyId}`, () => touchKeyLastUsed(services.db, { keyId, agentId, at }));
  }
  if (actor?.oauth) {
    const { grantId } = actor.oauth;
    const at = services.clock.now();
    noteUse(services, `grant:${grantId}`, () => touchGrantLastUsed(services.db, grantId, at));
  }
  return actor;
}

/**
 * The caller a credential resolves to, through the request-context cache
 * (src/persistence/read-cache.ts): read at most once a second, and again at
 * once after any write through this process that could change the answer
 * (revoking a key, signing out). A credential that does not resolve is
 * cached too, so a wrong one costs no lookup. The token is kept only as a
 * digest.
 */
function cachedCaller(services: Services, kind: string, token: string, load: () => Promise<Actor | null>): Promise<Actor | null> {
  // One-shot: a hash object a request costs more than the digest.
  const digest = hash('sha256', token, 'base64url');
  return readCacheOf(services.database, services.clock).get(`caller\u0000${kind}\u0000${digest}`, load);
}

async function actorFromKey(services: Services, token: string): Promise<Actor | null> {
  const key = await findLiveKey(services.db, hashToken(token));
  if (!key) return null;
  return {
    principal: { principalType: 'agent', id: key.agentId, name: key.agentName, avatarUrl: key.agentAvatarUrl },
    via: 'key',
    userId: key.ownerUserId,
    orgId: key.orgId,
    key: { id: key.keyId, role: key.role, scopeWorkspaceId: key.scopeWorkspaceId, suggestOnly: key.suggestOnly },
  };
}

/** An OAuth token acts as its user, capped by the scopes the user granted. */
async function actorFromAccessToken(services: Services, token: string): Promise<Actor | null> {
  const found = await findLiveAccessToken(services.db, hashToken(token), services.clock.now());
  if (!found) return null;
  return {
    principal: { principalType: 'user', id: found.userId, name: found.name, avatarUrl: found.avatarUrl },
    via: 'oauth',
    userId: found.userId,
    orgId: found.orgId,
    oauth: { tokenId: found.tokenId, grantId: found.grantId, clientId: found.clientId, clientName: found.clientName, scopes: parseScopes(found.scopes) },
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

const USE_RESOLUTION_MS = 60_000;
/**
 * How long the stamp waits. It is a write and, on PGlite, a flush to disk in
 * the one session every statement queues for: stamped at once, a sync
 * client's first connect after a restart had its document's load wait
 * behind it (docs/PERFORMANCE.md, issue 38, "The first client's read as
 * bytes"). The time stamped is the use's, not the write's.
 */
const USE_STAMP_DELAY_MS = 1_000;
const lastTouch = new Map<string, number>();

/** `lastUsedAt` to the minute, without a write on every request, and after the request's own statements. */
function noteUse(services: Services, key: string, touch: () => Promise<unknown>) {
  const now = services.clock.now().getTime();
  if (now - (lastTouch.get(key) ?? 0) < USE_RESOLUTION_MS) return;
  if (lastTouch.size > 50_000) lastTouch.clear();
  lastTouch.set(key, now);
  setTimeout(() => void touch().catch((error) => services.log.warn({ err: error }, 'could not record credential use')), USE_STAMP_DELAY_MS).unref();
}

/** For operations, which REST and MCP share: writes need a caller. */
export function requireCaller(actor: Actor | null): Actor {
  if (!actor) throw errors.unauthorized();
  return actor;
}

/**
 * Key and agent administration is for people in a browser session: a key (or
 * a third-party OAuth token) that could list its sibling keys would turn one
 * leaked credential into a map of the others.
 */
export function requireHumanSession(actor: Actor) {
  if (actor.via !== 'session') throw errors.forbidden('This action is for people signed in with a session, not API keys or tokens.');
}
