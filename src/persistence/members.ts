import { sql } from 'kysely';
import type { Executor, Tx } from './database';
import type { PrincipalKind, Role, Workspace } from './schema';

/** Workspace memberships, organisation members and the humans count. */

export type MemberRow = {
  principalId: string;
  principalType: PrincipalKind;
  role: Role;
  viaUserId: string | null;
  joinedAt: Date;
  name: string;
  avatarUrl: string | null;
  /** Users only. */
  email: string | null;
};

export type PrincipalRow = { id: string; name: string; avatarUrl: string | null };

function membersQuery(db: Executor, workspaceId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('principals', 'principals.id', 'memberships.principalId')
    .leftJoin('users', 'users.id', 'memberships.principalId')
    .select([
      'memberships.principalId',
      'memberships.principalType',
      'memberships.role',
      'memberships.viaUserId',
      'memberships.joinedAt',
      'principals.name',
      'principals.avatarUrl',
      'users.email',
    ])
    .where('memberships.workspaceId', '=', workspaceId);
}

export async function listWorkspaceMembers(db: Executor, workspaceId: string): Promise<MemberRow[]> {
  return membersQuery(db, workspaceId).orderBy('memberships.joinedAt').orderBy('memberships.principalId').execute();
}

export async function findWorkspaceMember(db: Executor, workspaceId: string, principalId: string): Promise<MemberRow | null> {
  return (await membersQuery(db, workspaceId).where('memberships.principalId', '=', principalId).executeTakeFirst()) ?? null;
}

/**
 * Agents owned by the given users that reach the workspace through their
 * owner: they hold a live unscoped key (whatever org the agent lives in) and
 * have no membership row of their own here (those are listed as members).
 */
export async function listInheritingAgents(
  db: Executor,
  workspaceId: string,
  ownerUserIds: string[],
): Promise<Array<PrincipalRow & { ownerUserId: string }>> {
  if (ownerUserIds.length === 0) return [];
  return db
    .selectFrom('agents')
    .innerJoin('principals', 'principals.id', 'agents.id')
    .select(['agents.id', 'agents.ownerUserId', 'principals.name', 'principals.avatarUrl'])
    .where('agents.ownerUserId', 'in', ownerUserIds)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('apiKeys')
          .select('apiKeys.id')
          .whereRef('apiKeys.agentId', '=', 'agents.id')
          .where('apiKeys.revokedAt', 'is', null)
          .where('apiKeys.scopeWorkspaceId', 'is', null),
      ),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('memberships')
            .select('memberships.principalId')
            .whereRef('memberships.principalId', '=', 'agents.id')
            .where('memberships.workspaceId', '=', workspaceId),
        ),
      ),
    )
    .orderBy('agents.createdAt')
    .orderBy('agents.id')
    .execute();
}

/** Serialises membership changes on one workspace, so two owners cannot demote each other at once and leave none. */
export async function lockWorkspaceMemberships(tx: Tx, workspaceId: string) {
  await sql`select id from workspaces where id = ${workspaceId} for no key update`.execute(tx);
}

export async function countWorkspaceOwners(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .where('principalType', '=', 'user')
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertMembership(
  db: Executor,
  membership: { workspaceId: string; principalId: string; principalType: PrincipalKind; role: Role; joinedAt: Date },
) {
  await db
    .insertInto('memberships')
    .values({ ...membership, viaUserId: null })
    .onConflict((oc) => oc.columns(['workspaceId', 'principalId']).doNothing())
    .execute();
}

export async function setMembershipRole(db: Executor, workspaceId: string, principalId: string, role: Role) {
  await db.updateTable('memberships').set({ role }).where('workspaceId', '=', workspaceId).where('principalId', '=', principalId).execute();
}

/** Sets the role of every agent auto-enrolled on the workspace through `userId`; returns their ids. */
export async function setAutoEnrolledAgentRoles(db: Executor, workspaceId: string, userId: string, role: Role): Promise<string[]> {
  const rows = await db
    .updateTable('memberships')
    .set({ role })
    .where('workspaceId', '=', workspaceId)
    .where('viaUserId', '=', userId)
    .where('principalType', '=', 'agent')
    .returning('principalId')
    .execute();
  return rows.map((r) => r.principalId).sort();
}

export async function deleteMembership(db: Executor, workspaceId: string, principalId: string) {
  await db.deleteFrom('memberships').where('workspaceId', '=', workspaceId).where('principalId', '=', principalId).execute();
}

/** Drops every agent auto-enrolled on the workspace through `userId`; returns their ids. */
export async function deleteAutoEnrolledAgents(db: Executor, workspaceId: string, userId: string): Promise<string[]> {
  const rows = await db
    .deleteFrom('memberships')
    .where('workspaceId', '=', workspaceId)
    .where('viaUserId', '=', userId)
    .where('principalType', '=', 'agent')
    .returning('principalId')
    .execute();
  return rows.map((r) => r.principalId).sort();
}

// Organisation members

export type OrgMemberRow = { userId: string; role: Role; joinedAt: Date; name: string; email: string; avatarUrl: string | null };

function orgMembersQuery(db: Executor, orgId: string) {
  return db
    .selectFrom('orgMembers')
    .innerJoin('users', 'users.id', 'orgMembers.userId')
    .innerJoin('principals', 'principals.id', 'orgMembers.userId')
    .select(['orgMembers.userId', 'orgMembers.role', 'orgMembers.joinedAt', 'principals.name', 'principals.avatarUrl', 'users.email'])
    .where('orgMembers.orgId', '=', orgId);
}

export async function listOrgMembers(db: Executor, orgId: string): Promise<OrgMemberRow[]> {
  return orgMembersQuery(db, orgId).orderBy('orgMembers.joinedAt').orderBy('orgMembers.userId').execute();
}

export async function findOrgMember(db: Executor, orgId: string, userId: string): Promise<OrgMemberRow | null> {
  return (await orgMembersQuery(db, orgId).where('orgMembers.userId', '=', userId).executeTakeFirst()) ?? null;
}

/** Serialises member removals in one organisation (the sole-owner check). */
export async function lockOrgMembers(tx: Tx, orgId: string) {
  await sql`select id from orgs where id = ${orgId} for no key update`.execute(tx);
}

export async function countOrgOwners(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('orgMembers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('orgId', '=', orgId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteOrgMember(db: Executor, orgId: string, userId: string) {
  await db.deleteFrom('orgMembers').where('orgId', '=', orgId).where('userId', '=', userId).execute();
}

/** After leaving `orgId`, a user whose primary org it was moves to their oldest remaining org (or none). */
export async function repointPrimaryOrg(db: Executor, userId: string, leftOrgId: string) {
  await db
    .updateTable('users')
    .set((eb) => ({
      primaryOrgId: eb.selectFrom('orgMembers').select('orgMembers.orgId').where('orgMembers.userId', '=', userId).orderBy('orgMembers.joinedAt').limit(1),
    }))
    .where('id', '=', userId)
    .where('primaryOrgId', '=', leftOrgId)
    .execute();
}

/** Workspaces of the org (archived included) where the user holds a membership row, with that row's role. */
export async function listUserMembershipsInOrg(db: Executor, orgId: string, userId: string): Promise<Array<{ workspace: Workspace; role: Role }>> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspaceId')
    .selectAll('workspaces')
    .select('memberships.role as membershipRole')
    .where('workspaces.orgId', '=', orgId)
    .where('memberships.principalId', '=', userId)
    .orderBy('workspaces.id')
    .execute();
  return rows.map(({ membershipRole, ...workspace }) => ({ workspace, role: membershipRole }));
}

/** Workspaces of the org where the user is the only owner. */
export async function listSoleOwnedWorkspaces(db: Executor, orgId: string, userId: string): Promise<Workspace[]> {
  return db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspaceId')
    .selectAll('workspaces')
    .where('workspaces.orgId', '=', orgId)
    .where('memberships.principalId', '=', userId)
    .where('memberships.role', '=', 'owner')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('memberships as other')
            .select('other.principalId')
            .whereRef('other.workspaceId', '=', 'memberships.workspaceId')
            .where('other.principalType', '=', 'user')
            .where('other.role', '=', 'owner')
            .where('other.principalId', '!=', userId),
        ),
      ),
    )
    .orderBy('workspaces.slug')
    .execute();
}

/** Revokes the user's live keys in the org; returns their ids. */
export async function revokeUserKeysInOrg(db: Executor, orgId: string, userId: string, at: Date): Promise<string[]> {
  const rows = await db
    .updateTable('apiKeys')
    .set({ revokedAt: at })
    .where('orgId', '=', orgId)
    .where('ownerUserId', '=', userId)
    .where('revokedAt', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id).sort();
}

// Humans (plan cap)

/**
 * Users counted as the org's humans: org members plus user members of its
 * live workspaces (and of `asIfLive`, an archived one about to come back).
 */
function humansQuery(db: Executor, orgId: string, asIfLive?: string) {
  return db
    .selectFrom('orgMembers')
    .select('orgMembers.userId as id')
    .where('orgMembers.orgId', '=', orgId)
    .union(
      db
        .selectFrom('memberships')
        .innerJoin('workspaces', 'workspaces.id', 'memberships.workspaceId')
        .select('memberships.principalId as id')
        .where('workspaces.orgId', '=', orgId)
        .where((eb) => (asIfLive ? eb.or([eb('workspaces.archivedAt', 'is', null), eb('workspaces.id', '=', asIfLive)]) : eb('workspaces.archivedAt', 'is', null)))
        .where('memberships.principalType', '=', 'user'),
    );
}

/** The humans count, or what it would be with the archived workspace `asIfLive` live again. */
export async function countHumans(db: Executor, orgId: string, asIfLive?: string): Promise<number> {
  const row = await db
    .selectFrom(humansQuery(db, orgId, asIfLive).as('humans'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function isCountedHuman(db: Executor, orgId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom(humansQuery(db, orgId).as('humans'))
    .select('humans.id')
    .where('humans.id', '=', userId)
    .executeTakeFirst();
  return Boolean(row);
}
