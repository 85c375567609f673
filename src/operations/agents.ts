import { z } from 'zod';
import { agentDetail, agentsOverview } from '../domain/agents';
import { requireCaller, requireHumanSession } from '../access/callers';
import type { AgentRecord } from '../persistence/agents';
import { IsoDateTime, Principal, Role, toIso } from '../model/schemas/common';
import { ApiKey } from '../model/schemas/keys';
import { presentKey, presentPrincipal } from './keys';
import { defineOperation } from './operation';

const AgentSummary = z
  .object({
    agent: Principal,
    owner: Principal.describe('The user the agent acts for; it inherits access through them'),
    modelHint: z.string().nullable(),
    activeKeys: z.number().int().describe('Non-revoked keys; an agent with none does not count against the plan'),
    lastUsedAt: IsoDateTime.nullable(),
    createdAt: IsoDateTime,
  })
  .meta({ id: 'AgentSummary' });

const AgentDetail = AgentSummary.extend({
  keys: z.array(ApiKey).describe('The agent\'s keys you may see: your own, or all of them for the organisation owner'),
  memberships: z
    .array(
      z.object({
        workspace: z.object({ id: z.string(), slug: z.string(), name: z.string(), archivedAt: IsoDateTime.nullable() }),
        role: Role,
        viaUserId: z.string().nullable().describe('The owner through whom the agent was enrolled'),
      }),
    )
    .describe('Workspaces the agent is enrolled in, limited to those you reach as a member or through org visibility'),
}).meta({ id: 'AgentDetail' });

const AgentParams = z.object({ id: z.string().min(1).max(100) });

function presentAgent(agent: AgentRecord): z.infer<typeof AgentSummary> {
  return {
    agent: presentPrincipal('agent', agent.id, agent.name, agent.avatarUrl),
    owner: presentPrincipal('user', agent.ownerUserId, agent.ownerName, agent.ownerAvatarUrl),
    modelHint: agent.modelHint,
    activeKeys: agent.activeKeys,
    lastUsedAt: toIso(agent.lastUsedAt),
    createdAt: toIso(agent.createdAt)!,
  };
}

export const agentOperations = {
  overview: defineOperation(
    {
      response: z.object({ agents: z.array(AgentSummary) }),
      rest: {
        method: 'GET',
        path: '/api/agents/overview',
        summary: 'Every agent of your organisation',
        description: 'With owner, live key count and last use. Human sessions only.',
        tags: ['agents'],
      },
    },
    async (services, actor) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      const agents = await agentsOverview(services, caller);
      return { agents: agents.map(presentAgent) };
    },
  ),
  detail: defineOperation(
    {
      params: AgentParams, response: AgentDetail,
      rest: {
        method: 'GET',
        path: '/api/agents/:id',
        summary: 'One agent with its keys and workspace memberships',
        description: 'Agents of other organisations are 404. Human sessions only.',
        tags: ['agents'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      const detail = await agentDetail(services, caller, params.id);
      return {
        ...presentAgent(detail.agent),
        keys: detail.keys.map(presentKey),
        memberships: detail.memberships.map((m) => ({ ...m, workspace: { ...m.workspace, archivedAt: toIso(m.workspace.archivedAt) } })),
      };
    },
  ),
};
