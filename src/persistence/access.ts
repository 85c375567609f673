import type { Actor } from '../policy/actor';
import type { AgentReach } from '../policy/comments';
import type { CallerFacts, UserFacts } from '../policy/index';
import type { Executor } from './database';
import type { PlanName, Role, Workspace } from './schema';

/** Loads what the policy needs to know about a caller on each given workspace. */
export async function loadCallerFacts(db: Executor, actor: Actor | null, workspaces: Workspace[]): Promise<Map<string, CallerFacts>> {
  const facts = new Map<string, CallerFacts>();
  if (workspaces.length === 0) return facts;
  if (!actor) {
    for (const w of workspaces) facts.set(w.id, { kind: 'anonymous' });
    return facts;
  }
  const workspaceIds = workspaces.map((w) => w.id);
  const orgVisibleIds = [...new Set(workspaces.filter((w) => w.visibility === 'org').map((w) => w.orgId))];
  const principalIds = [actor.principal.id, actor.userId];
  const [memberships, orgRoles] = await Promise.all([
    db
      .selectFrom('memberships')
      .select(['workspaceId', 'principalId', 'role'])
      .where('workspaceId', 'in', workspaceIds)
      .where('principalId', 'in', principalIds)
      .execute(),
    // The org role matters only where org visibility makes members virtual editors.
    orgVisibleIds.length === 0
      ? Promise.resolve([])
      : db.selectFrom('orgMembers').select(['orgId', 'role']).where('userId', '=', actor.userId).where('orgId', 'in', orgVisibleIds).execute(),
  ]);
  const membershipRole = (workspaceId: string, principalId: string): Role | null =>
    memberships.find((m) => m.workspaceId === workspaceId && m.principalId === principalId)?.role ?? null;
  const orgRole = (orgId: string): Role | null => orgRoles.find((o) => o.orgId === orgId)?.role ?? null;

  for (const w of workspaces) {
    const user: UserFacts = { membershipRole: membershipRole(w.id, actor.userId), orgRole: orgRole(w.orgId) };
    if (actor.principal.principalType === 'user') {
      facts.set(w.id, actor.oauth ? { kind: 'user', ...user, scopes: actor.oauth.scopes } : { kind: 'user', ...user });
    } else {
      facts.set(w.id, {
        kind: 'agent',
        keyRole: actor.key?.role ?? 'viewer',
        keyScopeWorkspaceId: actor.key?.scopeWorkspaceId ?? null,
        suggestOnly: actor.key?.suggestOnly ?? false,
        membershipRole: membershipRole(w.id, actor.principal.id),
        owner: user,
      });
    }
  }
  return facts;
}

/** A workspace with what every request about it needs from its organisation. */
export type WorkspaceWithOrg = Workspace & { orgSlug: string; orgPlan: PlanName };

/** Live workspaces first, then archived ones newest first; `idOrSlug` may be an id. */
export async function findWorkspacesBySlug(
  db: Executor,
  idOrSlug: string,
  options: { orgSlug?: string; onlyWorkspaceId?: string | null },
): Promise<WorkspaceWithOrg[]> {
  let query = db
    .selectFrom('workspaces')
    .innerJoin('orgs', 'orgs.id', 'workspaces.orgId')
    .selectAll('workspaces')
    .select(['orgs.slug as orgSlug', 'orgs.plan as orgPlan'])
    .where((eb) => eb.or([eb('workspaces.slug', '=', idOrSlug), eb('workspaces.id', '=', idOrSlug)]));
  if (options.orgSlug) query = query.where('orgs.slug', '=', options.orgSlug);
  if (options.onlyWorkspaceId) query = query.where('workspaces.id', '=', options.onlyWorkspaceId);
  const rows = await query.execute();
  return rows.sort((a, b) => {
    if (!a.archivedAt !== !b.archivedAt) return a.archivedAt ? 1 : -1;
    return (b.archivedAt?.getTime() ?? 0) - (a.archivedAt?.getTime() ?? 0);
  });
}

/** Workspaces (by slug or id, in any organisation) where the user holds a membership row. */
export async function findWorkspacesWithMembership(db: Executor, userId: string, idOrSlug: string): Promise<WorkspaceWithOrg[]> {
  const rows = await db
    .selectFrom('workspaces')
    .innerJoin('orgs', 'orgs.id', 'workspaces.orgId')
    .innerJoin('memberships', 'memberships.workspaceId', 'workspaces.id')
    .selectAll('workspaces')
    .select(['orgs.slug as orgSlug', 'orgs.plan as orgPlan'])
    .where('memberships.principalId', '=', userId)
    .where((eb) => eb.or([eb('workspaces.slug', '=', idOrSlug), eb('workspaces.id', '=', idOrSlug)]))
    .execute();
  return rows;
}

export async function findOrgRefs(db: Executor, orgIds: string[]): Promise<Map<string, { slug: string; name: string; plan: PlanName }>> {
  if (orgIds.length === 0) return new Map();
  const rows = await db.selectFrom('orgs').select(['id', 'slug', 'name', 'plan']).where('id', 'in', orgIds).execute();
  return new Map(rows.map((r) => [r.id, { slug: r.slug, name: r.name, plan: r.plan }]));
}

/** An agent's live keys and standing in one workspace, for deciding what it may be shown there. */
export async function loadAgentReach(db: Executor, agentId: string, workspace: Workspace): Promise<AgentReach | null> {
  const agent = await db.selectFrom('agents').select('ownerUserId').where('id', '=', agentId).executeTakeFirst();
  if (!agent) return null;
  const [keys, memberships, orgRole] = await Promise.all([
    db.selectFrom('apiKeys').select(['role', 'scopeWorkspaceId']).where('agentId', '=', agentId).where('revokedAt', 'is', null).execute(),
    db
      .selectFrom('memberships')
      .select(['principalId', 'role'])
      .where('workspaceId', '=', workspace.id)
      .where('principalId', 'in', [agentId, agent.ownerUserId])
      .execute(),
    db.selectFrom('orgMembers').select('role').where('orgId', '=', workspace.orgId).where('userId', '=', agent.ownerUserId).executeTakeFirst(),
  ]);
  const roleOf = (principalId: string): Role | null => memberships.find((m) => m.principalId === principalId)?.role ?? null;
  return {
    keys,
    membershipRole: roleOf(agentId),
    owner: { membershipRole: roleOf(agent.ownerUserId), orgRole: orgRole?.role ?? null },
  };
}
