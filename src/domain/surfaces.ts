import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { cachedLiveSurfaces } from './live-surfaces';
import type { ResolvedWorkspace } from './resolved-workspace';
import { newId } from '../lib/ids';
import type { Surface, SurfaceKind } from '../persistence/schema';
import {
  countLiveSurfacesOfKind,
  findSurface,
  insertSurface,
  listSurfaces,
  liveSurfaceSlugTaken,
  lockWorkspace,
  markSurfaceDeleted,
  nextSurfacePosition,
  renameSurface,
} from '../persistence/workspaces';
import type { EventDraft } from '../model/event-record';
import type { Tx } from '../persistence/database';
import type { Services } from './services';
import { transactWithEvents, workspaceEvent } from './transact';
import type { WorkspaceContent } from './workspace-content';

/** Kinds whose content lives in a document that deleting the surface would lose. */
const DATA_KINDS: ReadonlySet<SurfaceKind> = new Set(['table', 'doc']);

export type NewSurface = { kind: SurfaceKind; slug: string; name: string };

/** Live surfaces in position order. */
export async function liveSurfacesOf(services: Services, workspaceId: string): Promise<Surface[]> {
  return listSurfaces(services.db, workspaceId);
}

/** A live surface of the workspace by slug (or id), else 404. */
export async function findLiveSurface(services: Services, workspaceId: string, slugOrId: string): Promise<Surface> {
  const surface = await findSurface(services.db, workspaceId, slugOrId);
  if (!surface) throw errors.notFound('Surface');
  return surface;
}

/** Adds a surface after the last one; 409 when a live surface already has the slug. Records `surface.created`. */
export async function addSurface(services: Services, actor: Actor, resolved: ResolvedWorkspace, input: NewSurface): Promise<Surface> {
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspace(tx, resolved.workspace.id);
    if (await liveSurfaceSlugTaken(tx, resolved.workspace.id, input.slug)) {
      throw errors.conflict(`A surface with the slug "${input.slug}" already exists in this workspace.`);
    }
    return insertSurfaceWithEvent(services, tx, events, actor, resolved, input);
  });
}

/**
 * The first surface of a kind, created on a workspace's first row or doc
 * write when it has none (a doc-only workspace gets its first sheet this
 * way). Under the workspace lock, so concurrent first writes create one.
 */
export async function ensureSurfaceOfKind(services: Services, actor: Actor, resolved: ResolvedWorkspace, kind: 'table' | 'doc'): Promise<Surface> {
  const existing = (await cachedLiveSurfaces(services, resolved.workspace.id)).find((s) => s.kind === kind);
  if (existing) return existing;
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspace(tx, resolved.workspace.id);
    const all = await listSurfaces(tx, resolved.workspace.id);
    const raced = all.find((s) => s.kind === kind);
    if (raced) return raced;
    const slug = uniqueSlug(kind, new Set(all.map((s) => s.slug)));
    return insertSurfaceWithEvent(services, tx, events, actor, resolved, { kind, slug, name: kind === 'table' ? 'Table' : 'Doc' });
  });
}

async function insertSurfaceWithEvent(services: Services, tx: Tx, events: EventDraft[], actor: Actor, resolved: ResolvedWorkspace, input: NewSurface): Promise<Surface> {
  const { workspace, orgSlug } = resolved;
  const surface: Surface = {
    ...input,
    id: newId('sf'),
    workspaceId: workspace.id,
    position: await nextSurfacePosition(tx, workspace.id),
    createdAt: services.clock.now(),
    deletedAt: null,
  };
  await insertSurface(tx, surface);
  events.push(
    workspaceEvent('surface.created', { workspace, orgSlug, surface }, actor, {
      id: surface.id,
      slug: surface.slug,
      kind: surface.kind,
      name: surface.name,
      position: surface.position,
    }),
  );
  return surface;
}

function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Renames a surface and records `surface.updated` with `{ changes: { name: { from, to } } }`. */
export async function renameSurfaceOf(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  surface: Surface,
  name: string,
): Promise<Surface> {
  if (surface.name === name) return surface;
  const { workspace, orgSlug } = resolved;
  return transactWithEvents(services, async (tx, events) => {
    const renamed = await renameSurface(tx, surface.id, name);
    events.push(workspaceEvent('surface.updated', { workspace, orgSlug, surface: renamed }, actor, { changes: { name: { from: surface.name, to: name } } }));
    return renamed;
  });
}

/**
 * Soft-deletes a surface (its document stays, as rows and doc bodies do on
 * archive). The last table or doc surface that holds data is kept unless
 * `force` says the caller means it: losing it would hide the workspace's
 * rows or body. Records `surface.deleted`.
 */
export async function deleteSurface(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  surface: Surface,
  options: { force: boolean; content: WorkspaceContent },
): Promise<void> {
  const { workspace, orgSlug } = resolved;
  // Asked before the transaction: the content hook may read documents through its own connection.
  const guarded = !options.force && DATA_KINDS.has(surface.kind) && (await options.content.surfaceHoldsData(workspace, surface));
  await transactWithEvents(services, async (tx, events) => {
    await lockWorkspace(tx, workspace.id);
    // Counted under the lock, so two concurrent deletes cannot both remove "not the last" one.
    if (guarded && (await countLiveSurfacesOfKind(tx, workspace.id, surface.kind)) <= 1) {
      throw errors.conflict(`"${surface.slug}" is the last ${surface.kind} surface and holds data; repeat with ?force=1 to delete it anyway.`);
    }
    if (!(await markSurfaceDeleted(tx, surface.id, services.clock.now()))) return; // a concurrent delete won
    events.push(
      workspaceEvent('surface.deleted', { workspace, orgSlug, surface }, actor, { id: surface.id, slug: surface.slug, kind: surface.kind, forced: options.force }),
    );
  });
}
