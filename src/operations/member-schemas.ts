import { z } from 'zod';
import type { Member as MemberView } from '../domain/members';
import type { InviteRow } from '../persistence/invites';
import type { OrgMemberRow } from '../persistence/members';
import { toIso } from '../model/schemas/common';
import { Invite, Member, OrgMember, PublicInvite } from '../model/schemas/members';

/** Member and invite records shared by the workspace, invite and organisation routes. */

export * from '../model/schemas/members';

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
