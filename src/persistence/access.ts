import type { Actor } from '../auth/actor';
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

export async function findOrgRefs(db: Executor, orgIds: string[]): Promise<Map<string, { slug: string; plan: PlanName }>> {
  if (orgIds.length === 0) return new Map();
  const rows = await db.selectFrom('orgs').select(['id', 'slug', 'plan']).where('id', 'in', orgIds).execute();
  return new Map(rows.map((r) => [r.id, { slug: r.slug, plan: r.plan }]));
}
