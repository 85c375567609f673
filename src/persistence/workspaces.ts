import { sql } from 'kysely';
import type { Executor } from './database';
import type { PrincipalKind, Role, SurfaceKind, Visibility } from './schema';

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
  surface: { id: string; workspaceId: string; slug: string; kind: SurfaceKind; name: string; position: number; createdAt: Date },
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
