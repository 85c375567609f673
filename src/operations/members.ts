import { z } from 'zod';
import { changeMemberRole, listMembers, removeMember } from '../domain/members';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { Role } from '../model/schemas/common';
import { Member, presentMember } from './member-schemas';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { MemberList } from '../model/schemas/members';

const MemberParams = WorkspaceParams.extend({
  memberId: z.string().min(1).max(100).describe("The member's principal id (user or agent)"),
});


const RoleChange = z.strictObject({ role: Role });

const CascadedAgentIds = z
  .array(z.string())
  .describe("Agents auto-enrolled on this workspace through the user, changed in the same transaction (empty for an agent target)");

const RoleChanged = z.object({ member: Member, cascadedAgentIds: CascadedAgentIds }).meta({ id: 'MemberRoleChanged' });
const MemberRemoved = z.object({ ok: z.literal(true), cascadedAgentIds: CascadedAgentIds }).meta({ id: 'MemberRemoved' });

/** Workspace members: humans and agents holding a membership row. */
export const memberOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, response: MemberList,
      rest: {
        method: 'GET',
        workspacePath: '/members',
        summary: 'Members of a workspace',
        description:
          'Humans and agents with a membership row, oldest first. Users carry `inheritedAgents`; auto-enrolled agents carry `viaUserId`. Virtual members (org visibility) have no row and are not listed. E-mails are shown only to callers who reach the workspace as members (or through org visibility), not to public readers.',
        tags: ['members'],
      },
    },
    async (services, actor, { params }) => {
      const target = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const members = await listMembers(services, target.workspace.id);
      // Addresses are personal data: reading a public workspace does not reveal who its members are by e-mail.
      const withEmail = target.access.basis !== 'public';
      return { members: members.map((member) => presentMember(member, { withEmail })) };
    },
  ),
  changeRole: defineOperation(
    {
      params: MemberParams, body: RoleChange, response: RoleChanged,
      rest: {
        method: 'PATCH',
        workspacePath: '/members/:memberId',
        summary: "Change a member's role",
        description:
          "Owner. For a user, the role is applied in the same transaction to every agent auto-enrolled on this workspace through that user (capped at editor: keys are never owners); their ids are in `cascadedAgentIds`. You cannot grant a role above your own (403). An agent cannot be made owner (422). Demoting the only owner is 409.",
        tags: ['members'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const target = await resolveWorkspace(services, caller, addressOf(params), 'manage_members');
      const { member, cascadedAgentIds } = await changeMemberRole(services, caller, target, params.memberId, body.role);
      return { member: presentMember(member), cascadedAgentIds };
    },
  ),
  remove: defineOperation(
    {
      params: MemberParams, response: MemberRemoved,
      rest: {
        method: 'DELETE',
        workspacePath: '/members/:memberId',
        summary: 'Remove a member',
        description:
          "Owner. Removing a user also drops, in the same transaction, the agents auto-enrolled on this workspace through that user (`cascadedAgentIds`). Removing the only owner is 409. An agent with an unscoped key still reaches the workspace through its owner while the owner is a member: revoke the key to cut it off.",
        tags: ['members'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const target = await resolveWorkspace(services, caller, addressOf(params), 'manage_members');
      const { cascadedAgentIds } = await removeMember(services, caller, target, params.memberId);
      return { ok: true as const, cascadedAgentIds };
    },
  ),
};
