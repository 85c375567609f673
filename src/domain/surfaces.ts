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
  lockWorkspace,
  markSurfaceDeleted,
  nextSurfacePosition,
  renameSurface,
  surfaceHoldingSlug,
} from '../persistence/workspaces';
import { firstFreeSlug, slugFromName, slugsHeld } from '../model/surface-slugs';
import type { EventDraft } from '../model/event-record';
import type { Tx } from '../persistence/database';
import type { Services } from './services';
import { transactWithEvents, workspaceEvent } from './transact';
import type { WorkspaceContent } from './workspace-content';

/** Kinds whose content lives in a document that deleting the surface would lose. */
const DATA_KINDS: ReadonlySet<SurfaceKind> = new Set(['table', 'doc']);

/** A new surface; without a slug, one is made from the name. `parentId` nests it under another surface. */
export type NewSurface = { kind: SurfaceKind; slug?: string; name: string; parentId?: string | null };

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

/**
 * Adds a surface after the last one. A slug given is refused with 409 when a
 * live surface holds it (as its address, or as one it had before a rename);
 * without one, the first free slug made from the name is used. Records
 * `surface.created`.
 */
export async function addSurface(services: Services, actor: Actor, resolved: ResolvedWorkspace, input: NewSurface): Promise<Surface> {
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspace(tx, resolved.workspace.id);
    let slug = input.slug;
    if (slug === undefined) slug = firstFreeSlug(slugFromName(input.name, input.kind), slugsHeld(await listSurfaces(tx, resolved.workspace.id)));
    else await refuseHeldSlug(tx, resolved.workspace.id, slug);
    return insertSurfaceWithEvent(services, tx, events, actor, resolved, { ...input, slug });
  });
}

/** 409 when a live surface other than `exceptSurfaceId` holds `slug`, saying whose address it is or was. */
async function refuseHeldSlug(tx: Tx, workspaceId: string, slug: string, exceptSurfaceId?: string): Promise<void> {
  const holder = await surfaceHoldingSlug(tx, workspaceId, slug, exceptSurfaceId);
  if (!holder) return;
  throw errors.conflict(
    holder.slug === slug
      ? `A surface with the slug "${slug}" already exists in this workspace.`
      : `"${slug}" was the address of "${holder.name}" (now "${holder.slug}") before a rename; old links to it still lead there, so it stays reserved.`,
  );
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
    const slug = firstFreeSlug(kind, slugsHeld(all));
    return insertSurfaceWithEvent(services, tx, events, actor, resolved, { kind, slug, name: kind === 'table' ? 'Table' : 'Doc' });
  });
}

async function insertSurfaceWithEvent(services: Services, tx: Tx, events: EventDraft[], actor: Actor, resolved: ResolvedWorkspace, input: NewSurface & { slug: string }): Promise<Surface> {
  const { workspace, orgSlug } = resolved;
  const fields = {
    ...input,
    parentId: input.parentId ?? null,
    id: newId('sf'),
    workspaceId: workspace.id,
    position: await nextSurfacePosition(tx, workspace.id),
    createdAt: services.clock.now(),
  };
  await insertSurface(tx, fields);
  const surface: Surface = { ...fields, deletedAt: null, formerSlugs: [] };
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

/**
 * Renames a surface, and its address follows: the slug becomes the first
 * free one made from the new name (or `slug`, when the caller names one; 409
 * when another surface holds it), and the old slug joins the ones that still
 * lead here. A surface may take back a slug it had. Records `surface.updated`
 * with `{ changes: { name?: { from, to }, slug?: { from, to } } }`.
 */
export async function renameSurfaceOf(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  surface: Surface,
  patch: { name?: string; slug?: string },
): Promise<Surface> {
  const { workspace, orgSlug } = resolved;
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspace(tx, workspace.id);
    const name = patch.name ?? surface.name;
    let slug = patch.slug;
    if (slug !== undefined) await refuseHeldSlug(tx, workspace.id, slug, surface.id);
    else if (name === surface.name) slug = surface.slug;
    else {
      // Its own slugs are free to it: "Tasks" to "tasks" keeps the address, and a name it had before takes that address back.
      const others = (await listSurfaces(tx, workspace.id)).filter((other) => other.id !== surface.id);
      slug = firstFreeSlug(slugFromName(name, surface.kind), slugsHeld(others));
    }
    if (name === surface.name && slug === surface.slug) return surface;
    const renamed = await renameSurface(tx, surface.id, name, slug);
    const changes = {
      ...(name !== surface.name ? { name: { from: surface.name, to: name } } : {}),
      ...(slug !== surface.slug ? { slug: { from: surface.slug, to: slug } } : {}),
    };
    events.push(workspaceEvent('surface.updated', { workspace, orgSlug, surface: renamed }, actor, { changes }));
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
