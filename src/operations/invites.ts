import { z } from 'zod';
import { acceptWorkspaceInvite, findInviteForToken, inviteToWorkspace } from '../domain/invites';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { HOUR } from '../limits/rules';
import { OverLimitBody } from '../model/schemas/common';
import { Invite, InviteRequest, InviteToken, Member, presentInvite, presentMember, presentPublicInvite, PublicInvite } from './member-schemas';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { AcceptedWorkspaceInvite } from '../model/schemas/members';


/** Share a workspace by e-mail, and the invite link's two endpoints. */
export const inviteOperations = {
  share: defineOperation(
    {
      params: WorkspaceParams, body: InviteRequest, response: Invite,
      rest: {
        method: 'POST',
        workspacePath: '/share',
        summary: 'Invite someone to the workspace by e-mail',
        description:
          'Editor (the `share` right). Mails a single-use link (`{PUBLIC_URL}/invites/{token}`) valid for 7 days; the role is at most your own (403). Inviting an address that has an open invite refreshes it (role, new link, new expiry; the old link stops working). An address that is already a member is 409: change roles with PATCH /members/{id}. 402 when the organisation is at its plan\'s humans cap and the address is not counted yet. 20 per hour per workspace.',
        tags: ['members'],
        responses: { 402: OverLimitBody },
        resolvedLimit: {
          limit: { endpoint: 'workspace_share_invites', limit: 20, windowMs: HOUR },
          bucket: async (services, actor, params) => (await resolveWorkspace(services, actor, addressOf(params as z.infer<typeof WorkspaceParams>), 'share')).workspace.id,
        },
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const target = await resolveWorkspace(services, caller, addressOf(params), 'share');
      return presentInvite(await inviteToWorkspace(services, caller, target, body));
    },
  ),
  look: defineOperation(
    {
      params: InviteToken, response: PublicInvite,
      rest: {
        method: 'GET',
        path: '/api/invites/:token',
        summary: 'Look at a workspace invite',
        description:
          'Public: the link is the credential. Shows the workspace name and slug, the role, the invited address and the inviter\'s name. A used, revoked, expired or unknown token is 404.',
        tags: ['members'],
        config: { auth: 'none' },
      },
    },
    async (services, _actor, { params }) => presentPublicInvite(await findInviteForToken(services, 'workspace', params.token)),
  ),
  accept: defineOperation(
    {
      params: InviteToken, response: AcceptedWorkspaceInvite,
      rest: {
        method: 'POST',
        path: '/api/invites/:token',
        summary: 'Accept a workspace invite',
        description:
          'Needs a signed-in session (API keys get 403) whose e-mail is the invited one (403 otherwise; the invite stays open). Makes the user a member with the invited role (an existing member keeps their role) and uses the token up. A used, revoked, expired or unknown token is 404; an archived workspace is 409; 402 at the humans cap.',
        tags: ['members'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { params }) => {
      const { invite, member } = await acceptWorkspaceInvite(services, requireCaller(actor), params.token);
      return { invite: presentInvite(invite), member: presentMember(member) };
    },
  ),
};
