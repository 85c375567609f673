import { sql } from 'kysely';
import type { Executor } from './database';
import type { Role, Workspace } from './schema';

/** Agents: a `principals` row of kind `agent` plus its `agents` row (org, owner, model hint). */

export type AgentRecord = {
  id: string;
  orgId: string;
  name: string;
  avatarUrl: string | null;
  modelHint: string | null;
  ownerUserId: string;
  ownerName: string;
  ownerAvatarUrl: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Non-revoked keys the agent holds; zero means it does not count against the plan. */
  activeKeys: number;
};

function agentQuery(db: Executor) {
  return db
    .selectFrom('agents')
    .innerJoin('principals as agent', 'agent.id', 'agents.id')
    .innerJoin('principals as owner', 'owner.id', 'agents.ownerUserId')
    .select((eb) => [
      'agents.id',
      'agents.orgId',
      'agent.name',
      'agent.avatarUrl',
      'agents.modelHint',
      'agents.ownerUserId',
      'owner.name as ownerName',
      'owner.avatarUrl as ownerAvatarUrl',
      'agents.createdAt',
      // The newest use of any of its keys, or the agent's own stamp.
      sql<Date | null>`greatest(agents.last_used_at, (select max(k.last_used_at) from api_keys k where k.agent_id = agents.id))`.as('lastUsedAt'),
      eb
        .selectFrom('apiKeys')
        .select((sub) => sub.fn.countAll<number>().as('n'))
        .whereRef('apiKeys.agentId', '=', 'agents.id')
        .where('apiKeys.revokedAt', 'is', null)
        .as('activeKeys'),
    ]);
}

function normalise<T extends { activeKeys: number | null; lastUsedAt: Date | string | null }>(row: T) {
  return { ...row, activeKeys: Number(row.activeKeys ?? 0), lastUsedAt: row.lastUsedAt == null ? null : new Date(row.lastUsedAt) };
}

export async function listOrgAgents(db: Executor, orgId: string): Promise<AgentRecord[]> {
  const rows = await agentQuery(db).where('agents.orgId', '=', orgId).orderBy('agents.createdAt').orderBy('agents.id').execute();
  return rows.map(normalise);
}

export async function findAgentInOrg(db: Executor, orgId: string, agentId: string): Promise<AgentRecord | undefined> {
  const row = await agentQuery(db).where('agents.orgId', '=', orgId).where('agents.id', '=', agentId).executeTakeFirst();
  return row && normalise(row);
}

/** The owner's agent of that name in the org, oldest first if several exist (names are not unique in the schema). */
export async function findOwnedAgentByName(db: Executor, owner: { orgId: string; ownerUserId: string; name: string }) {
  return db
    .selectFrom('agents')
    .innerJoin('principals', 'principals.id', 'agents.id')
    .select(['agents.id', 'principals.name', 'principals.avatarUrl', 'agents.modelHint'])
    .where('agents.orgId', '=', owner.orgId)
    .where('agents.ownerUserId', '=', owner.ownerUserId)
    .where('principals.name', '=', owner.name)
    .orderBy('agents.createdAt')
    .orderBy('agents.id')
    .executeTakeFirst();
}

export async function insertAgent(
  db: Executor,
  agent: { id: string; orgId: string; ownerUserId: string; name: string; modelHint: string | null; createdAt: Date },
) {
  await db.insertInto('principals').values({ id: agent.id, kind: 'agent', name: agent.name, avatarUrl: null, createdAt: agent.createdAt }).execute();
  await db
    .insertInto('agents')
    .values({ id: agent.id, orgId: agent.orgId, ownerUserId: agent.ownerUserId, modelHint: agent.modelHint, createdAt: agent.createdAt })
    .execute();
}

export async function setAgentModelHint(db: Executor, agentId: string, modelHint: string) {
  await db.updateTable('agents').set({ modelHint }).where('id', '=', agentId).execute();
}

export async function findMembershipRole(db: Executor, workspaceId: string, principalId: string): Promise<Role | null> {
  const row = await db
    .selectFrom('memberships')
    .select('role')
    .where('workspaceId', '=', workspaceId)
    .where('principalId', '=', principalId)
    .executeTakeFirst();
  return row?.role ?? null;
}

/** Inserts or replaces an agent's membership, auto-enrolled through its owner (`via_user_id`). */
export async function enrollAgent(db: Executor, enrolment: { workspaceId: string; agentId: string; ownerUserId: string; role: Role; joinedAt: Date }) {
  await db
    .insertInto('memberships')
    .values({
      workspaceId: enrolment.workspaceId,
      principalId: enrolment.agentId,
      principalType: 'agent',
      role: enrolment.role,
      viaUserId: enrolment.ownerUserId,
      joinedAt: enrolment.joinedAt,
    })
    .onConflict((oc) => oc.columns(['workspaceId', 'principalId']).doUpdateSet({ role: enrolment.role, viaUserId: enrolment.ownerUserId }))
    .execute();
}

/** The agent's workspace memberships with their workspaces (live and archived). */
export async function listAgentMemberships(db: Executor, agentId: string): Promise<Array<{ workspace: Workspace; role: Role; viaUserId: string | null }>> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspaceId')
    .selectAll('workspaces')
    .select(['memberships.role as membershipRole', 'memberships.viaUserId'])
    .where('memberships.principalId', '=', agentId)
    .orderBy('memberships.joinedAt')
    .orderBy('workspaces.id')
    .execute();
  return rows.map(({ membershipRole, viaUserId, ...workspace }) => ({ workspace, role: membershipRole, viaUserId }));
}
