import { z } from 'zod';
import { Email, IsoDateTime, Principal, Role } from './common';

/** Member and invite records shared by the workspace, invite and organisation routes; the presenters are in src/api/member-schemas.ts, the web app reads these types. */

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

export type Member = z.infer<typeof Member>;
export type OrgMember = z.infer<typeof OrgMember>;
export type Invite = z.infer<typeof Invite>;
export type PublicInvite = z.infer<typeof PublicInvite>;

export const MemberList = z.object({ members: z.array(Member) }).meta({ id: 'MemberList' });
export type MemberList = z.infer<typeof MemberList>;

export const AcceptedWorkspaceInvite = z.object({ invite: Invite, member: Member }).meta({ id: 'AcceptedWorkspaceInvite' });
export type AcceptedWorkspaceInvite = z.infer<typeof AcceptedWorkspaceInvite>;

export const AcceptedOrgInvite = z.object({ invite: Invite, member: OrgMember }).meta({ id: 'AcceptedOrgInvite' });
export type AcceptedOrgInvite = z.infer<typeof AcceptedOrgInvite>;
