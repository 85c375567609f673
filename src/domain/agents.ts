import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { loadCallerFacts } from '../persistence/access';
import { findAgentInOrg, listAgentMemberships, listOrgAgents, type AgentRecord } from '../persistence/agents';
import type { KeyRecord } from '../persistence/keys';
import type { Role, Workspace } from '../persistence/schema';
import { authorizeOrg, workspaceAccess } from '../policy/index';
import { loadOrgCaller } from './org-caller';
import type { Services } from './services';
import { listVisibleKeys } from './keys';

export type AgentDetail = {
  agent: AgentRecord;
  keys: KeyRecord[];
  memberships: Array<{ workspace: Pick<Workspace, 'id' | 'slug' | 'name' | 'archivedAt'>; role: Role; viaUserId: string | null }>;
};

async function callerOrgId(services: Services, actor: Actor): Promise<string> {
  if (!actor.orgId) throw errors.notFound('Organisation');
  authorizeOrg(await loadOrgCaller(services, actor, actor.orgId), 'read_org');
  return actor.orgId;
}

/** Every agent of the caller's organisation, whoever owns it. */
export async function agentsOverview(services: Services, actor: Actor): Promise<AgentRecord[]> {
  return listOrgAgents(services.db, await callerOrgId(services, actor));
}

/**
 * One agent of the caller's organisation (another org's is 404), with the
 * keys the caller may see and its memberships in workspaces the caller
 * reaches as a member or through org visibility: an agent's enrolment must
 * not reveal a private workspace, nor the address of an unlisted one.
 */
export async function agentDetail(services: Services, actor: Actor, agentId: string): Promise<AgentDetail> {
  const orgId = await callerOrgId(services, actor);
  const agent = await findAgentInOrg(services.db, orgId, agentId);
  if (!agent) throw errors.notFound('Agent');

  const [keys, memberships] = await Promise.all([listVisibleKeys(services, actor, { agentId }), listAgentMemberships(services.db, agentId)]);
  const facts = await loadCallerFacts(services.db, actor, memberships.map((m) => m.workspace));
  const visible = memberships.filter((m) => {
    const basis = workspaceAccess(facts.get(m.workspace.id)!, m.workspace).basis;
    return basis !== 'none' && basis !== 'public';
  });
  return {
    agent,
    keys,
    memberships: visible.map(({ workspace, role, viaUserId }) => ({
      workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name, archivedAt: workspace.archivedAt },
      role,
      viaUserId,
    })),
  };
}
