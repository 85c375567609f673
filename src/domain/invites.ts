import { errors } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { Actor } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { newId } from '../lib/ids';
import { escapeHtml } from '../lib/html';
import { hashToken, randomToken } from '../lib/secrets';
import { addOrgMember, findUserByEmail, findUserById } from '../persistence/accounts';
import type { Tx } from '../persistence/database';
import {
  consumeInvite,
  findInviteById,
  findOpenInviteByToken,
  replaceInviteToken,
  revokeInvite,
  upsertOpenInvite,
  type InviteKind,
  type InviteRow,
} from '../persistence/invites';
import { findOrgMember, findWorkspaceMember, insertMembership, type OrgMemberRow } from '../persistence/members';
import type { Role } from '../persistence/schema';
import { lockOrgForCapCheck } from '../persistence/workspaces';
import type { Services } from './services';
import { normaliseEmail } from './accounts';
import { assertHumanSeat, assertMayGrant, loadMember, type Member, type ResolvedOrg } from './members';
import { transactWithEvents, workspaceEvent } from './transact';

/**
 * Invites by e-mail, to a workspace (`POST /share`) or to an organisation.
 * The mailed token (32 random bytes, base64url) is stored only hashed,
 * works once and expires after 7 days. Inviting an address that already
 * has an open invite refreshes that invite: new role, new token (the old
 * link stops working), new expiry. Only the invited address may accept.
 */

export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export type InviteInput = { email: string; role: Role };

export async function inviteToWorkspace(services: Services, actor: Actor, target: ResolvedWorkspace, input: InviteInput): Promise<InviteRow> {
  assertMayGrant(target.access.role, input.role);
  const email = normaliseEmail(input.email);
  const workspace = target.workspace;
  const user = await findUserByEmail(services.db, email);
  if (user && (await findWorkspaceMember(services.db, workspace.id, user.id))) {
    // Not a silent role change: sharing is an editor's right, changing roles an owner's.
    throw errors.conflict(`${email} is already a member of this workspace; change their role with PATCH /members/${user.id}.`, { memberId: user.id });
  }
  await assertHumanSeat(services, services.db, workspace.orgId, user?.id ?? null);
  return createAndMail(services, actor, {
    kind: 'workspace',
    orgId: workspace.orgId,
    workspaceId: workspace.id,
    email,
    role: input.role,
    event: (data) => workspaceEvent('member.invited', target, actor, data),
  });
}

export async function inviteToOrg(services: Services, actor: Actor, target: ResolvedOrg, input: InviteInput): Promise<InviteRow> {
  assertMayGrant(target.role, input.role);
  const email = normaliseEmail(input.email);
  const user = await findUserByEmail(services.db, email);
  if (user && (await findOrgMember(services.db, target.org.id, user.id))) {
    throw errors.conflict(`${email} is already a member of this organisation.`, { memberId: user.id });
  }
  await assertHumanSeat(services, services.db, target.org.id, user?.id ?? null);
  return createAndMail(services, actor, {
    kind: 'org',
    orgId: target.org.id,
    workspaceId: null,
    email,
    role: input.role,
    event: (data) => ({ event: 'org.member_invited', orgId: target.org.id, workspace: null, principal: actor.principal, data }),
  });
}

async function createAndMail(
  services: Services,
  actor: Actor,
  draft: {
    kind: InviteKind;
    orgId: string;
    workspaceId: string | null;
    email: string;
    role: Role;
    event: (data: Record<string, unknown>) => EventDraft;
  },
): Promise<InviteRow> {
  const token = randomToken();
  const now = services.clock.now();
  const invite = await transactWithEvents(services, async (tx, events) => {
    const id = await upsertOpenInvite(tx, {
      id: newId('inv'),
      kind: draft.kind,
      orgId: draft.orgId,
      workspaceId: draft.workspaceId,
      email: draft.email,
      role: draft.role,
      tokenHash: hashToken(token),
      invitedById: actor.principal.id,
      now,
      expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
    });
    events.push({ ...draft.event({ inviteId: id, email: draft.email, role: draft.role }), subjectId: id });
    return (await findInviteById(tx, id))!;
  });
  // After commit: a mail for an invite that was rolled back would carry a dead link.
  await mailInvite(services, invite, token);
  return invite;
}

/** What the holder of a token may see before signing in: the target's name and slug, the role and who invited. */
export async function findInviteForToken(services: Services, kind: InviteKind, token: string): Promise<InviteRow> {
  const invite = await findOpenInviteByToken(services.db, kind, hashToken(token), services.clock.now());
  if (!invite) throw notFoundInvite();
  return invite;
}

/** A used, revoked, expired or made-up token all read the same, so a token's history is not revealed. */
function notFoundInvite() {
  return errors.notFound('Invite (it may have been used, revoked or expired)');
}

type Accepted<M> = { invite: InviteRow; member: M };

/**
 * Accepts with the signed-in user's session. The user's e-mail must be the
 * invited one (403 otherwise, and the invite stays open): a forwarded link
 * does not let someone else in. The humans cap is checked under the org
 * lock. A user who already belongs keeps their role; role changes go
 * through PATCH /members, which carries them to agents.
 */
export async function acceptWorkspaceInvite(services: Services, actor: Actor, token: string): Promise<Accepted<Member>> {
  const invite = await acceptInvite(services, actor, 'workspace', token, async (tx, open, userId, now) => {
    if (open.workspaceArchivedAt) throw errors.conflict('This workspace is archived; ask for it to be unarchived before accepting.');
    const workspaceId = open.workspaceId!;
    if (await findWorkspaceMember(tx, workspaceId, userId)) return [];
    await insertMembership(tx, { workspaceId, principalId: userId, principalType: 'user', role: open.role, joinedAt: now });
    return [
      {
        event: 'member.added',
        orgId: open.orgId,
        workspace: { id: workspaceId, slug: open.workspaceSlug!, org: { slug: open.orgSlug } },
        principal: actor.principal,
        subjectId: userId,
        data: { memberId: userId, principalType: 'user', role: open.role, inviteId: open.id },
      },
    ];
  });
  return { invite, member: await loadMember(services.db, invite.workspaceId!, actor.userId) };
}

export async function acceptOrgInvite(services: Services, actor: Actor, token: string): Promise<Accepted<OrgMemberRow>> {
  const invite = await acceptInvite(services, actor, 'org', token, async (tx, open, userId) => {
    if (await findOrgMember(tx, open.orgId, userId)) return [];
    await addOrgMember(tx, { orgId: open.orgId, userId, role: open.role });
    return [
      {
        event: 'org.member_added',
        orgId: open.orgId,
        workspace: null,
        principal: actor.principal,
        subjectId: userId,
        data: { memberId: userId, role: open.role, inviteId: open.id },
      },
    ];
  });
  return { invite, member: (await findOrgMember(services.db, invite.orgId, actor.userId))! };
}

async function acceptInvite(
  services: Services,
  actor: Actor,
  kind: InviteKind,
  token: string,
  join: (tx: Tx, invite: InviteRow, userId: string, now: Date) => Promise<EventDraft[]>,
): Promise<InviteRow> {
  if (actor.via !== 'session') throw errors.forbidden('Invites are accepted by a person signed in with a session, not by an API key or token.');
  const user = await findUserById(services.db, actor.userId);
  if (!user) throw errors.unauthorized();
  const now = services.clock.now();
  return transactWithEvents(services, async (tx, events) => {
    const open = await findOpenInviteByToken(tx, kind, hashToken(token), now);
    if (!open) throw notFoundInvite();
    if (open.email !== normaliseEmail(user.email)) {
      throw errors.forbidden('This invite was sent to another e-mail address: sign in with the invited address to accept it.');
    }
    await lockOrgForCapCheck(tx, open.orgId);
    await assertHumanSeat(services, tx, open.orgId, user.id);
    if (!(await consumeInvite(tx, open.id, user.id, now))) throw notFoundInvite();
    events.push(...(await join(tx, open, user.id, now)));
    return (await findInviteById(tx, open.id))!;
  });
}

// Managing org invites

async function findOrgInvite(services: Services, target: ResolvedOrg, id: string): Promise<InviteRow> {
  const invite = await findInviteById(services.db, id);
  if (!invite || invite.kind !== 'org' || invite.orgId !== target.org.id) throw errors.notFound('Invite');
  return invite;
}

/** Idempotent on a revoked invite; an accepted one cannot be revoked (remove the member instead). */
export async function revokeOrgInvite(services: Services, actor: Actor, target: ResolvedOrg, id: string): Promise<void> {
  const invite = await findOrgInvite(services, target, id);
  if (invite.acceptedAt) throw errors.conflict('This invite was already accepted; remove the member instead.');
  if (invite.revokedAt) return;
  await transactWithEvents(services, async (tx, events) => {
    await revokeInvite(tx, id, services.clock.now());
    events.push({ event: 'org.invite_revoked', orgId: target.org.id, workspace: null, principal: actor.principal, subjectId: id, data: { inviteId: id, email: invite.email } });
  });
}

/**
 * Mails the invite again. Only the token's hash is stored, so the old link
 * cannot be re-sent: a new token replaces it (the old link stops working)
 * and the 7-day expiry restarts, which also revives an expired invite.
 */
export async function resendOrgInvite(services: Services, target: ResolvedOrg, id: string): Promise<InviteRow> {
  const invite = await findOrgInvite(services, target, id);
  if (invite.revokedAt) throw errors.notFound('Invite');
  if (invite.acceptedAt) throw errors.conflict('This invite was already accepted.');
  const token = randomToken();
  const now = services.clock.now();
  if (!(await replaceInviteToken(services.db, id, hashToken(token), now, new Date(now.getTime() + INVITE_TTL_MS)))) {
    throw errors.conflict('This invite was accepted or revoked meanwhile.');
  }
  const refreshed = (await findInviteById(services.db, id))!;
  await mailInvite(services, refreshed, token);
  return refreshed;
}

// Mail

const LINK_PATHS: Record<InviteKind, string> = { workspace: 'invites', org: 'org-invites' };

async function mailInvite(services: Services, invite: InviteRow, token: string) {
  const link = `${services.config.publicUrl}/${LINK_PATHS[invite.kind]}/${token}`;
  const target = invite.kind === 'workspace' ? `the workspace "${invite.workspaceName}"` : `the organisation "${invite.orgName}"`;
  const lead = `${invite.inviterName} invited you to ${target} on Trellis as ${invite.role}.`;
  const terms = `The link works once and expires in 7 days. Sign in with this address (${invite.email}) to accept.`;
  await services.mailer.send({
    to: invite.email,
    // Names are user-chosen: keep line breaks out of the header.
    subject: `${invite.inviterName} invited you to ${invite.kind === 'workspace' ? invite.workspaceName : invite.orgName} on Trellis`.replace(/\s+/g, ' '),
    text: `${lead}\n\nAccept the invite:\n\n${link}\n\n${terms}`,
    html: `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(link)}">Accept the invite</a></p><p>${escapeHtml(terms)}</p>`,
  });
}
