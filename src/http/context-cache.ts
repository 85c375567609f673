import { createHash } from 'node:crypto';
import { findWorkspacesBySlug, loadCallerFacts, type WorkspaceWithOrg } from '../persistence/access';
import { ReadCache } from '../persistence/read-cache';
import type { Surface, Workspace } from '../persistence/schema';
import { listSurfaces } from '../persistence/workspaces';
import type { CallerFacts } from '../policy/index';
import type { Services } from '../services';
import type { Actor } from './actor';

/**
 * The request context every workspace request needs (the caller behind a
 * credential, the workspace a slug names, the caller's standing there, the
 * workspace's surfaces), read through a short-lived cache instead of four
 * database round trips per request. Writes through this process that could
 * change an answer retire it at once; other instances' writes and expiry
 * show within a second (src/persistence/read-cache.ts, docs/PERFORMANCE.md).
 *
 * Caller resolution itself stays where it is (src/http/authenticate.ts);
 * this module only wraps its lookups.
 */

const caches = new WeakMap<object, ReadCache>();

function cacheOf(services: Services): ReadCache {
  let cache = caches.get(services.db);
  if (!cache) caches.set(services.db, (cache = new ReadCache(services.database.epochs, services.clock)));
  return cache;
}

/**
 * The caller a credential resolves to, null when it does not resolve (also
 * cached: a wrong or revoked credential costs no lookup either). The token is
 * kept only as a digest.
 */
export function cachedCaller(services: Services, kind: string, token: string, load: () => Promise<Actor | null>): Promise<Actor | null> {
  const digest = createHash('sha256').update(token).digest('base64url');
  return cacheOf(services).get(`caller\u0000${kind}\u0000${digest}`, load);
}

/** `findWorkspacesBySlug`, cached. */
export function cachedWorkspaces(services: Services, idOrSlug: string, options: { orgSlug?: string; onlyWorkspaceId?: string | null }): Promise<WorkspaceWithOrg[]> {
  const key = `workspaces\u0000${idOrSlug}\u0000${options.orgSlug ?? ''}\u0000${options.onlyWorkspaceId ?? ''}`;
  return cacheOf(services).get(key, () => findWorkspacesBySlug(services.db, idOrSlug, options));
}

/** `loadCallerFacts`, cached per caller and set of workspaces. */
export function cachedCallerFacts(services: Services, actor: Actor | null, workspaces: Workspace[]): Promise<Map<string, CallerFacts>> {
  if (!actor || workspaces.length === 0) return loadCallerFacts(services.db, actor, workspaces);
  const key = [
    'facts',
    actor.principal.principalType,
    actor.principal.id,
    actor.userId,
    actor.key?.role ?? '',
    actor.key?.scopeWorkspaceId ?? '',
    ...workspaces.map((w) => `${w.id}/${w.orgId}/${w.visibility}`),
  ].join('\u0000');
  return cacheOf(services).get(key, () => loadCallerFacts(services.db, actor, workspaces));
}

/** A workspace's live surfaces in position order, cached. */
export function cachedLiveSurfaces(services: Services, workspaceId: string): Promise<Surface[]> {
  return cacheOf(services).get(`surfaces\u0000${workspaceId}`, () => listSurfaces(services.db, workspaceId));
}
