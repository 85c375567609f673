import { sql } from 'kysely';
import type { Executor } from './database';
import type { Principal } from '../policy/actor';
import type { PrincipalKind, Role, Surface, SurfaceKind, Visibility, Workspace } from './schema';

export async function insertWorkspace(
  db: Executor,
  workspace: {
    id: string;
    orgId: string;
    slug: string;
    name: string;
    mode: 'table' | 'doc';
    visibility: Visibility;
    createdById: string;
    createdByType: PrincipalKind;
    createdAt: Date;
  },
) {
  await db.insertInto('workspaces').values({ ...workspace, updatedAt: workspace.createdAt }).execute();
}

export async function liveSlugTaken(db: Executor, orgId: string, slug: string): Promise<boolean> {
  const row = await db
    .selectFrom('workspaces')
    .select('id')
    .where('orgId', '=', orgId)
    .where('slug', '=', slug)
    .where('archivedAt', 'is', null)
    .executeTakeFirst();
  return Boolean(row);
}

export async function countLiveWorkspaces(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('orgId', '=', orgId)
    .where('archivedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertSurface(
  db: Executor,
  surface: { id: string; workspaceId: string; slug: string; kind: SurfaceKind; name: string; position: number; createdAt: Date; parentId?: string | null },
) {
  await db.insertInto('surfaces').values(surface).execute();
}

export async function listSurfaces(db: Executor, workspaceId: string) {
  return db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('deletedAt', 'is', null)
    .orderBy('position')
    .execute();
}

export async function upsertMembership(
  db: Executor,
  membership: { workspaceId: string; principalId: string; principalType: PrincipalKind; role: Role; viaUserId?: string | null; joinedAt?: Date },
) {
  await db
    .insertInto('memberships')
    .values({ ...membership, viaUserId: membership.viaUserId ?? null })
    .onConflict((oc) => oc.columns(['workspaceId', 'principalId']).doUpdateSet({ role: membership.role }))
    .execute();
}

export async function lockOrgForCapCheck(db: Executor, orgId: string) {
  // Serialises concurrent creates in one org so a cap cannot be overshot by a race.
  await sql`select id from orgs where id = ${orgId} for update`.execute(db);
}

// Reading workspaces for their records

/**
 * Workspaces a caller may reach without knowing a URL: those where the
 * principal or the human behind it holds a membership, plus org-visibility
 * workspaces of that human's organisations. The policy then decides which of
 * these the caller really reaches (and with what role); a key scoped to one
 * workspace reaches only that one.
 */
export async function listReachableWorkspaces(
  db: Executor,
  reach: { principalIds: string[]; userId: string; onlyWorkspaceId: string | null; archived: boolean },
): Promise<Workspace[]> {
  let query = db
    .selectFrom('workspaces')
    .selectAll()
    .where('archivedAt', reach.archived ? 'is not' : 'is', null);
  if (reach.onlyWorkspaceId) {
    query = query.where('id', '=', reach.onlyWorkspaceId);
  } else {
    query = query.where((eb) =>
      eb.or([
        eb('id', 'in', eb.selectFrom('memberships').select('workspaceId').where('principalId', 'in', reach.principalIds)),
        eb.and([
          eb('visibility', '=', 'org'),
          eb('orgId', 'in', eb.selectFrom('orgMembers').select('orgId').where('userId', '=', reach.userId)),
        ]),
      ]),
    );
  }
  return query.orderBy('createdAt', 'desc').orderBy('id').execute();
}

export async function findWorkspaceById(db: Executor, id: string): Promise<Workspace | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findWorkspacesByIds(db: Executor, ids: string[]): Promise<Workspace[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('workspaces').selectAll().where('id', 'in', ids).execute();
}

export async function findLiveSurfaceById(db: Executor, workspaceId: string, surfaceId: string) {
  return db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('id', '=', surfaceId)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
}

/** The public shape of principals (users and agents) by id, for `createdBy` and similar fields. */
export async function findPrincipals(db: Executor, ids: string[]): Promise<Map<string, Principal>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('principals').select(['id', 'kind', 'name', 'avatarUrl']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, { principalType: r.kind, id: r.id, name: r.name, avatarUrl: r.avatarUrl }]));
}

/** When one principal pinned each of the given workspaces (absent: not pinned, or no membership row). */
export async function findPins(db: Executor, principalId: string, workspaceIds: string[]): Promise<Map<string, Date>> {
  if (workspaceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('memberships')
    .select(['workspaceId', 'pinnedAt'])
    .where('principalId', '=', principalId)
    .where('workspaceId', 'in', workspaceIds)
    .where('pinnedAt', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [r.workspaceId, r.pinnedAt!]));
}

/** Live surfaces of several workspaces, each list in position order. */
export async function listSurfacesOf(db: Executor, workspaceIds: string[]): Promise<Map<string, Surface[]>> {
  const bySpace = new Map<string, Surface[]>(workspaceIds.map((id) => [id, []]));
  if (workspaceIds.length === 0) return bySpace;
  const rows = await db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', 'in', workspaceIds)
    .where('deletedAt', 'is', null)
    .orderBy('position')
    .orderBy('createdAt')
    .execute();
  for (const row of rows) bySpace.get(row.workspaceId)!.push(row);
  return bySpace;
}

/** Humans and agents holding a membership row. */
export async function countMembers(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// Changing workspaces

export type WorkspaceSettings = {
  name?: string;
  mode?: 'table' | 'doc';
  visibility?: Visibility;
  commentsOnPublicShare?: boolean;
  timeZone?: string;
};

export async function updateWorkspaceSettings(db: Executor, id: string, settings: WorkspaceSettings, now: Date): Promise<Workspace> {
  return db
    .updateTable('workspaces')
    .set({ ...settings, updatedAt: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Archives a live workspace; undefined when it was already archived (a concurrent archive won). */
export async function markWorkspaceArchived(db: Executor, id: string, by: { id: string; type: PrincipalKind }, now: Date): Promise<Workspace | undefined> {
  return db
    .updateTable('workspaces')
    .set({ archivedAt: now, archivedById: by.id, archivedByType: by.type, updatedAt: now })
    .where('id', '=', id)
    .where('archivedAt', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function markWorkspaceLive(db: Executor, id: string, now: Date): Promise<Workspace> {
  return db
    .updateTable('workspaces')
    .set({ archivedAt: null, archivedById: null, archivedByType: null, updatedAt: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Sets or clears a principal's pin on its membership row and returns the
 * pin now stored. Pinning keeps an existing pin's time, so repeating it
 * changes nothing. Undefined when the principal has no membership row.
 */
export async function setPin(db: Executor, workspaceId: string, principalId: string, pinnedAt: Date | null): Promise<{ pinnedAt: Date | null } | undefined> {
  return db
    .updateTable('memberships')
    .set({ pinnedAt: pinnedAt === null ? null : sql<Date>`coalesce(pinned_at, ${pinnedAt})` })
    .where('workspaceId', '=', workspaceId)
    .where('principalId', '=', principalId)
    .returning(['pinnedAt'])
    .executeTakeFirst();
}

// Surfaces

/** A live surface by slug, id or a slug it had before a rename (its current slug wins over another's former one). */
export async function findSurface(db: Executor, workspaceId: string, slugOrId: string): Promise<Surface | undefined> {
  return db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('deletedAt', 'is', null)
    .where((eb) => eb.or([eb('slug', '=', slugOrId), eb('id', '=', slugOrId), sql<boolean>`${slugOrId}::text = any(former_slugs)`]))
    .orderBy(sql`slug = ${slugOrId}`, 'desc')
    .orderBy(sql`id = ${slugOrId}`, 'desc')
    .executeTakeFirst();
}

/**
 * The live surface that holds `slug`, as its address or as one it had before
 * a rename (which stays reserved for it), leaving out `exceptSurfaceId`.
 */
export async function surfaceHoldingSlug(db: Executor, workspaceId: string, slug: string, exceptSurfaceId?: string): Promise<Surface | undefined> {
  let query = db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('deletedAt', 'is', null)
    .where((eb) => eb.or([eb('slug', '=', slug), sql<boolean>`${slug}::text = any(former_slugs)`]));
  if (exceptSurfaceId) query = query.where('id', '!=', exceptSurfaceId);
  return query.executeTakeFirst();
}

/** The position after the last live surface (0 for the first). */
export async function nextSurfacePosition(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('surfaces')
    .select((eb) => eb.fn.max<number | null>('position').as('last'))
    .where('workspaceId', '=', workspaceId)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return row?.last == null ? 0 : Number(row.last) + 1;
}

/** How many former slugs a surface keeps (the newest): enough for any link still in use, bounded however often it is renamed. */
const FORMER_SLUGS_KEPT = 20;

/** Renames a surface; a new slug moves the old one to the front of its former slugs (and takes the new one out of them). */
export async function renameSurface(db: Executor, surfaceId: string, name: string, slug: string): Promise<Surface> {
  return db
    .updateTable('surfaces')
    .set({
      name,
      slug,
      // The right-hand `slug` is the row's value before this update.
      formerSlugs: sql<string[]>`case when slug = ${slug}::text then former_slugs
        else (array_prepend(slug, array_remove(former_slugs, ${slug}::text)))[1:${FORMER_SLUGS_KEPT}] end`,
    })
    .where('id', '=', surfaceId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** False when the surface was already deleted. */
export async function markSurfaceDeleted(db: Executor, surfaceId: string, now: Date): Promise<boolean> {
  const result = await db.updateTable('surfaces').set({ deletedAt: now }).where('id', '=', surfaceId).where('deletedAt', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countLiveSurfacesOfKind(db: Executor, workspaceId: string, kind: SurfaceKind): Promise<number> {
  const row = await db
    .selectFrom('surfaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', kind)
    .where('deletedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Serialises changes to one workspace's surface list (positions, the last-surface rule). */
export async function lockWorkspace(db: Executor, workspaceId: string) {
  await sql`select id from workspaces where id = ${workspaceId} for update`.execute(db);
}
