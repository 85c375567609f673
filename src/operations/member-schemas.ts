import { z } from 'zod';
import type { Member as MemberView } from '../domain/members';
import type { InviteRow } from '../persistence/invites';
import type { OrgMemberRow } from '../persistence/members';
import { Email, IsoDateTime, Principal, Role, toIso } from '../model/schemas/common';

/** Member and invite records shared by the workspace, invite and organisation routes. */

export const Member = z
  .object({
    id: z.string().describe('The principal id (user or agent); address the member with it'),
    principalType: z.enum(['user', 'agent']),
    principal: Principal,
    role: Role,
    email: z.string().optional().describe('Users only; left out for callers who read the workspace only because it is public or unlisted'),
    joinedAt: IsoDateTime,
    inheritedAgents: z
      .array(Principal)
      .optional()
      .describe(
        "Users only: this user's agents that reach the workspace through them (a live unscoped key, in any organisation) without a membership row of their own. Auto-enrolled agents are members themselves and carry `viaUserId`.",
      ),
    viaUserId: z.string().optional().describe('Auto-enrolled agents only: the user through whom the agent was enrolled; role changes and removal of that user carry over'),
  })
  .meta({ id: 'Member' });

export const OrgMember = z
  .object({
    id: z.string().describe('The user id'),
    name: z.string(),
    email: z.string(),
    role: Role,
    joinedAt: IsoDateTime,
    avatarUrl: z.string().nullable(),
  })
  .meta({ id: 'OrgMember' });

export const Invite = z
  .object({
    id: z.string(),
    email: z.string(),
    role: Role,
    workspace: z
      .object({ id: z.string(), slug: z.string(), name: z.string(), org: z.object({ slug: z.string() }) })
      .optional()
      .describe('Workspace (share) invites'),
    org: z.object({ id: z.string(), slug: z.string(), name: z.string() }).optional().describe('Organisation invites'),
    invitedBy: Principal,
    createdAt: IsoDateTime,
    lastSentAt: IsoDateTime.describe('When the invite mail was last sent (creation, a repeated invite or a resend)'),
    expiresAt: IsoDateTime,
    acceptedAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'Invite', description: 'An invite by e-mail. The token is only in the mailed link, never in a response.' });

export const PublicInvite = z
  .object({
    email: z.string().describe('The invited address: sign in with it to accept'),
    role: Role,
    workspace: z.object({ slug: z.string(), name: z.string() }).optional(),
    org: z.object({ slug: z.string(), name: z.string() }).optional(),
    invitedBy: z.object({ name: z.string() }),
    expiresAt: IsoDateTime,
  })
  .meta({ id: 'PublicInvite', description: 'What the holder of an invite link sees before signing in.' });

export const InviteRequest = z.strictObject({
  email: Email,
  role: Role.describe('At most your own role'),
});

export const InviteToken = z.object({ token: z.string().min(1).max(200).describe('The token from the invite link') });

export function presentMember(member: MemberView, options: { withEmail: boolean } = { withEmail: true }): z.infer<typeof Member> {
  const principal = { principalType: member.principalType, id: member.principalId, name: member.name, avatarUrl: member.avatarUrl };
  return {
    id: member.principalId,
    principalType: member.principalType,
    principal,
    role: member.role,
    ...(member.email && options.withEmail ? { email: member.email } : {}),
    joinedAt: toIso(member.joinedAt)!,
    ...(member.inheritedAgents
      ? { inheritedAgents: member.inheritedAgents.map((a) => ({ principalType: 'agent' as const, id: a.id, name: a.name, avatarUrl: a.avatarUrl })) }
      : {}),
    ...(member.viaUserId ? { viaUserId: member.viaUserId } : {}),
  };
}

export function presentOrgMember(member: OrgMemberRow): z.infer<typeof OrgMember> {
  return { id: member.userId, name: member.name, email: member.email, role: member.role, joinedAt: toIso(member.joinedAt)!, avatarUrl: member.avatarUrl };
}

export function presentInvite(invite: InviteRow): z.infer<typeof Invite> {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    ...(invite.kind === 'workspace'
      ? { workspace: { id: invite.workspaceId!, slug: invite.workspaceSlug!, name: invite.workspaceName!, org: { slug: invite.orgSlug } } }
      : { org: { id: invite.orgId, slug: invite.orgSlug, name: invite.orgName } }),
    invitedBy: { principalType: invite.inviterType, id: invite.inviterId, name: invite.inviterName, avatarUrl: invite.inviterAvatarUrl },
    createdAt: toIso(invite.createdAt)!,
    lastSentAt: toIso(invite.lastSentAt)!,
    expiresAt: toIso(invite.expiresAt)!,
    acceptedAt: toIso(invite.acceptedAt),
  };
}

/** Only names and slugs: the link holder learns nothing else about the tenant. */
export function presentPublicInvite(invite: InviteRow): z.infer<typeof PublicInvite> {
  return {
    email: invite.email,
    role: invite.role,
    ...(invite.kind === 'workspace'
      ? { workspace: { slug: invite.workspaceSlug!, name: invite.workspaceName! } }
      : { org: { slug: invite.orgSlug, name: invite.orgName } }),
    invitedBy: { name: invite.inviterName },
    expiresAt: toIso(invite.expiresAt)!,
  };
}
