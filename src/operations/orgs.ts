import { z } from 'zod';
import { requireElevation } from '../domain/elevation';
import { acceptOrgInvite, findInviteForToken, inviteToOrg, resendOrgInvite, revokeOrgInvite } from '../domain/invites';
import { removeOrgMember, resolveOrg } from '../domain/members';
import { requireCaller } from '../access/callers';
import { HOUR } from '../limits/rules';
import { listOpenOrgInvites } from '../persistence/invites';
import { listOrgMembers } from '../persistence/members';
import { Ok, OverLimitBody } from '../model/schemas/common';
import { Invite, InviteRequest, InviteToken, OrgMember, presentInvite, presentOrgMember, presentPublicInvite, PublicInvite } from './member-schemas';
import { defineOperation, type RestFacts } from './operation';
import { AcceptedOrgInvite } from '../model/schemas/members';

const OrgParams = z.object({ slug: z.string().min(1).max(100).describe('Organisation slug') });
const OrgMemberParams = OrgParams.extend({ userId: z.string().min(1).max(100) });
const OrgInviteParams = OrgParams.extend({ id: z.string().min(1).max(100).describe('Invite id') });

const OrgMemberList = z.object({ members: z.array(OrgMember) }).meta({ id: 'OrgMemberList' });
const OrgInviteList = z.object({ invites: z.array(Invite) }).meta({ id: 'OrgInviteList' });

const OrgMemberRemoved = z
  .object({
    ok: z.literal(true),
    removedFromWorkspaceIds: z.array(z.string()).describe("The org's workspaces whose membership rows the user lost"),
    cascadedAgentIds: z.array(z.string()).describe("The user's agents dropped from those workspaces (auto-enrolled through the user)"),
    revokedKeyIds: z.array(z.string()).describe("The user's live API keys in this organisation, now revoked"),
    transferredWorkspaceIds: z.array(z.string()).describe('Workspaces the user owned alone; you are now their owner'),
  })
  .meta({ id: 'OrgMemberRemoved' });


/** Creating and re-sending share one budget: both send mail. */
const inviteLimit: RestFacts['resolvedLimit'] = {
  limit: { endpoint: 'org_invites', limit: 20, windowMs: HOUR },
  bucket: async (services, actor, params) => (await resolveOrg(services, requireCaller(actor), (params as z.infer<typeof OrgParams>).slug, 'invite_members')).org.id,
};

/** Organisation members and organisation invites. */
export const orgOperations = {
  members: defineOperation(
    {
      params: OrgParams, response: OrgMemberList,
      rest: {
        method: 'GET',
        path: '/api/orgs/:slug/members',
        summary: 'Humans in the organisation',
        description: 'Organisation members only (404 for anyone else). Oldest first.',
        tags: ['orgs'],
      },
    },
    async (services, actor, { params }) => {
      const { org } = await resolveOrg(services, requireCaller(actor), params.slug, 'read_org');
      return { members: (await listOrgMembers(services.db, org.id)).map(presentOrgMember) };
    },
  ),
  removeMember: defineOperation(
    {
      params: OrgMemberParams, response: OrgMemberRemoved,
      rest: {
        method: 'DELETE',
        path: '/api/orgs/:slug/members/:userId',
        summary: 'Remove a member from the organisation',
        description:
          "Owner, with a session elevated for `org_members` (401 `elevation_required` otherwise; API keys get 403). In one transaction: the org membership, the user's membership rows in the org's workspaces, their agents' auto-enrolled memberships there and their live keys in the org go. Workspaces the user owned alone pass to you (`transferredWorkspaceIds`). Removing the only org owner is 409; removing yourself while you own workspaces alone is 409.",
        tags: ['orgs'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { org } = await resolveOrg(services, caller, params.slug, 'remove_members');
      await requireElevation(services, caller, 'org_members');
      return { ok: true as const, ...(await removeOrgMember(services, caller, org, params.userId)) };
    },
  ),
  invites: defineOperation(
    {
      params: OrgParams, response: OrgInviteList,
      rest: {
        method: 'GET',
        path: '/api/orgs/:slug/invites',
        summary: 'Open organisation invites',
        description: 'Owner or editor. Invites neither accepted nor revoked, newest first; expired ones are listed (see `expiresAt`) so they can be re-sent.',
        tags: ['orgs'],
      },
    },
    async (services, actor, { params }) => {
      const { org } = await resolveOrg(services, requireCaller(actor), params.slug, 'invite_members');
      return { invites: (await listOpenOrgInvites(services.db, org.id)).map(presentInvite) };
    },
  ),
  invite: defineOperation(
    {
      params: OrgParams, body: InviteRequest, response: Invite,
      rest: {
        method: 'POST',
        path: '/api/orgs/:slug/invites',
        summary: 'Invite someone to the organisation by e-mail',
        description:
          "Owner or editor; the role is at most your own (403). Mails a single-use link (`{PUBLIC_URL}/org-invites/{token}`) valid for 7 days. Inviting an address with an open invite refreshes it (the old link stops working); an existing member is 409; 402 at the plan's humans cap. 20 per hour per organisation, shared with resends.",
        tags: ['orgs'],
        responses: { 402: OverLimitBody },
        resolvedLimit: inviteLimit,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const target = await resolveOrg(services, caller, params.slug, 'invite_members');
      return presentInvite(await inviteToOrg(services, caller, target, body));
    },
  ),
  revokeInvite: defineOperation(
    {
      params: OrgInviteParams, response: Ok,
      rest: {
        method: 'DELETE',
        path: '/api/orgs/:slug/invites/:id',
        summary: 'Revoke an organisation invite',
        description: 'Owner or editor. The link stops working at once. Repeating it is harmless; an accepted invite is 409 (remove the member instead).',
        tags: ['orgs'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const target = await resolveOrg(services, caller, params.slug, 'invite_members');
      await revokeOrgInvite(services, caller, target, params.id);
      return { ok: true as const };
    },
  ),
  resendInvite: defineOperation(
    {
      params: OrgInviteParams, response: Invite,
      rest: {
        method: 'POST',
        path: '/api/orgs/:slug/invites/:id/resend',
        summary: 'Send an organisation invite again',
        description:
          'Owner or editor. Tokens are stored only hashed, so a new link is minted: the previous link stops working, the 7-day expiry restarts and `lastSentAt` moves. A revoked invite is 404, an accepted one 409. Counts toward the 20 invites per hour per organisation.',
        tags: ['orgs'],
        resolvedLimit: inviteLimit,
      },
    },
    async (services, actor, { params }) => {
      const target = await resolveOrg(services, requireCaller(actor), params.slug, 'invite_members');
      return presentInvite(await resendOrgInvite(services, target, params.id));
    },
  ),
  lookInvite: defineOperation(
    {
      params: InviteToken, response: PublicInvite,
      rest: {
        method: 'GET',
        path: '/api/org-invites/:token',
        summary: 'Look at an organisation invite',
        description: "Public: the link is the credential. Shows the organisation's name and slug, the role, the invited address and the inviter's name. A used, revoked, expired or unknown token is 404.",
        tags: ['orgs'],
        config: { auth: 'none' },
      },
    },
    async (services, _actor, { params }) => presentPublicInvite(await findInviteForToken(services, 'org', params.token)),
  ),
  acceptInvite: defineOperation(
    {
      params: InviteToken, response: AcceptedOrgInvite,
      rest: {
        method: 'POST',
        path: '/api/org-invites/:token',
        summary: 'Accept an organisation invite',
        description:
          'Needs a signed-in session (API keys get 403) whose e-mail is the invited one (403 otherwise; the invite stays open). Joins the organisation with the invited role (an existing member keeps their role) and uses the token up. A used, revoked, expired or unknown token is 404; 402 at the humans cap.',
        tags: ['orgs'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { params }) => {
      const { invite, member } = await acceptOrgInvite(services, requireCaller(actor), params.token);
      return { invite: presentInvite(invite), member: presentOrgMember(member) };
    },
  ),
};
