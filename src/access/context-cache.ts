import { findWorkspacesBySlug, loadCallerFacts, type WorkspaceWithOrg } from '../persistence/access';
import { readCacheOf, type ReadCache } from '../persistence/read-cache';
import type { Workspace } from '../persistence/schema';
import type { CallerFacts } from '../policy/index';
import type { Services } from '../domain/services';
import { actorKey, type Actor } from '../policy/actor';

/**
 * The request context every workspace request needs (the caller behind a
 * credential, the workspace a slug names, the caller's standing there, the
 * workspace's surfaces), read through a short-lived cache instead of four
 * database round trips per request. Writes through this process that could
 * change an answer retire it at once; other instances' writes and expiry
 * show within a second (src/persistence/read-cache.ts, docs/PERFORMANCE.md).
 *
 * The caller behind a credential is cached where it is resolved
 * (src/access/callers.ts), in the same cache.
 */

function cacheOf(services: Services): ReadCache {
  return readCacheOf(services.database, services.clock);
}

/** `findWorkspacesBySlug`, cached. */
export function cachedWorkspaces(services: Services, idOrSlug: string, options: { orgSlug?: string; onlyWorkspaceId?: string | null }): Promise<WorkspaceWithOrg[]> {
  const key = `workspaces\u0000${idOrSlug}\u0000${options.orgSlug ?? ''}\u0000${options.onlyWorkspaceId ?? ''}`;
  return cacheOf(services).get(key, () => findWorkspacesBySlug(services.db, idOrSlug, options));
}

/**
 * `loadCallerFacts`, cached per credential and set of workspaces: the facts
 * carry what the credential restricts (a key's role, scope and
 * suggest-only, a token's scopes), so two keys of one agent, or a person and
 * their OAuth token, never share an entry.
 */
export function cachedCallerFacts(services: Services, actor: Actor | null, workspaces: Workspace[]): Promise<Map<string, CallerFacts>> {
  if (!actor || workspaces.length === 0) return loadCallerFacts(services.db, actor, workspaces);
  const key = [
    'facts',
    actor.principal.principalType,
    actor.principal.id,
    actor.userId,
    actorKey(actor),
    actor.key?.role ?? '',
    actor.key?.scopeWorkspaceId ?? '',
    actor.key?.suggestOnly ? 'suggest-only' : '',
    actor.oauth?.scopes.join(' ') ?? '',
    ...workspaces.map((w) => `${w.id}/${w.orgId}/${w.visibility}`),
  ].join('\u0000');
  return cacheOf(services).get(key, () => loadCallerFacts(services.db, actor, workspaces));
}

export { cachedLiveSurfaces } from '../domain/live-surfaces';
