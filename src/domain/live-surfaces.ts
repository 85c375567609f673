import { readCacheOf } from '../persistence/read-cache';
import type { Surface } from '../persistence/schema';
import { listSurfaces } from '../persistence/workspaces';
import { surfaceBySlug } from '../model/surface-slugs';
import type { Services } from './services';

/**
 * A workspace's live surfaces in position order, through the request-context
 * cache (src/access/context-cache.ts holds the rest of it): a read the domain
 * makes itself, so it lives here, below access.
 */
/** The surface a request names by `surfaceId` (or else `surface`, its slug or one it had before a rename) among `surfaces`; undefined when it names none of them. */
export function selectedSurface(surfaces: readonly Surface[], selector: { surface?: string; surfaceId?: string }): Surface | undefined {
  return selector.surfaceId !== undefined ? surfaces.find((s) => s.id === selector.surfaceId) : surfaceBySlug(surfaces, selector.surface);
}

export function cachedLiveSurfaces(services: Pick<Services, 'database' | 'clock' | 'db'>, workspaceId: string): Promise<Surface[]> {
  return readCacheOf(services.database, services.clock).get(`surfaces\u0000${workspaceId}`, () => listSurfaces(services.db, workspaceId));
}
