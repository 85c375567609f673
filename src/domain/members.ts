import { errors, OverLimitError } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { Actor } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { capsFor } from '../limits/plans';
import { findOrgById, findOrgBySlug, listOrgMemberships } from '../persistence/accounts';
import { findOrgRefs } from '../persistence/access';
import type { Executor } from '../persistence/database';
import {
  countHumans,
  countOrgOwners,
  countWorkspaceOwners,
  deleteAutoEnrolledAgents,
  deleteMembership,
  deleteOrgMember,
  findOrgMember,
  findWorkspaceMember,
  isCountedHuman,
  listInheritingAgents,
  listSoleOwnedWorkspaces,
  listUserMembershipsInOrg,
  listWorkspaceMembers,
  lockOrgMembers,
  lockWorkspaceMemberships,
  repointPrimaryOrg,
  revokeUserKeysInOrg,
  setAutoEnrolledAgentRoles,
  setMembershipRole,
  type MemberRow,
  type PrincipalRow,
} from '../persistence/members';
import type { Org, Role, Workspace } from '../persistence/schema';
import { upsertMembership } from '../persistence/workspaces';
import { authorizeOrg, lowerRole, roleAtLeast, type OrgAction } from '../policy/index';
import type { Services } from './services';
import { transactWithEvents, workspaceEvent } from './transact';
import type { EventName } from '../model/event-names';
import { loadOrgCaller } from './org-caller';
import { reachableWorkspaces, upgradeUrl } from './workspaces';

/**
 * Workspace members (humans and agents), organisation members and the
 * humans plan cap. Role changes and removals of a user carry over, in the
 * same transaction, to the agents auto-enrolled through that user.
 */

/** Agents act through keys, and keys are never owners: an agent's membership role stops here. */
export const AGENT_ROLE_CAP: Role = 'editor';

export type Member = MemberRow & {
  /** Users: their agents that reach this workspace through them (live unscoped key, no membership row of their own). */
  inheritedAgents?: PrincipalRow[];
};

/** "You cannot grant a role above your own": the one place routes' role caps are decided. */
export function assertMayGrant(callerRole: Role | null, role: Role) {
  if (!callerRole || !roleAtLeast(callerRole, role)) {
    throw errors.forbidden(`You cannot grant the role "${role}": it is above your own (${callerRole ?? 'none'}).`);
  }
}

export async function listMembers(services: Services, workspaceId: string): Promise<Member[]> {
  return withInheritedAgents(services.db, workspaceId, await listWorkspaceMembers(services.db, workspaceId));
}

/** One member record, with `inheritedAgents` for a user. */
export async function loadMember(db: Executor, workspaceId: string, principalId: string): Promise<Member> {
  const row = await findWorkspaceMember(db, workspaceId, principalId);
  if (!row) throw errors.notFound('Member');
  const [member] = await withInheritedAgents(db, workspaceId, [row]);
  return member!;
}

async function withInheritedAgents(db: Executor, workspaceId: string, rows: MemberRow[]): Promise<Member[]> {
  const userIds = rows.filter((m) => m.principalType === 'user').map((m) => m.principalId);
  const agents = await listInheritingAgents(db, workspaceId, userIds);
  return rows.map((m) =>
    m.principalType === 'user'
      ? { ...m, inheritedAgents: agents.filter((a) => a.ownerUserId === m.principalId).map(({ id, name, avatarUrl }) => ({ id, name, avatarUrl })) }
      : m,
  );
}

function memberEvent(event: EventName, target: ResolvedWorkspace, actor: Actor, memberId: string, data: Record<string, unknown>): EventDraft {
  return { ...workspaceEvent(event, target, actor, { memberId, ...data }), subjectId: memberId };
}

/**
 * Changes a member's role. For a user, every agent auto-enrolled on this
 * workspace through that user gets the same role (capped at editor) in the
 * same transaction, so no reader ever sees the two disagree. The last
 * owner cannot step down.
 */
export async function changeMemberRole(
  services: Services,
  actor: Actor,
  target: ResolvedWorkspace,
  memberId: string,
  role: Role,
): Promise<{ member: Member; cascadedAgentIds: string[] }> {
  assertMayGrant(target.access.role, role);
  const workspaceId = target.workspace.id;
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspaceMemberships(tx, workspaceId);
    const before = await findWorkspaceMember(tx, workspaceId, memberId);
    if (!before) throw errors.notFound('Member');
    if (before.principalType === 'agent' && !roleAtLeast(AGENT_ROLE_CAP, role)) {
      throw errors.validation(`Agents cannot be given the role "${role}": keys are never owners.`, [
        { path: ['role'], code: 'agent_role_cap', message: `at most ${AGENT_ROLE_CAP} for an agent` },
      ]);
    }
    if (before.role === 'owner' && role !== 'owner') await assertAnotherOwner(tx, workspaceId);

    await setMembershipRole(tx, workspaceId, memberId, role);
    const cascadedAgentIds =
      before.principalType === 'user' ? await setAutoEnrolledAgentRoles(tx, workspaceId, memberId, lowerRole(role, AGENT_ROLE_CAP)) : [];
    if (before.role !== role || cascadedAgentIds.length > 0) {
      events.push(memberEvent('member.role_changed', target, actor, memberId, { principalType: before.principalType, role, previousRole: before.role, cascadedAgentIds }));
    }
    return { member: await loadMember(tx, workspaceId, memberId), cascadedAgentIds };
  });
}

/** Removes a member; for a user, also the agents auto-enrolled through them, in the same transaction. */
export async function removeMember(
  services: Services,
  actor: Actor,
  target: ResolvedWorkspace,
  memberId: string,
): Promise<{ cascadedAgentIds: string[] }> {
  const workspaceId = target.workspace.id;
  return transactWithEvents(services, async (tx, events) => {
    await lockWorkspaceMemberships(tx, workspaceId);
    const before = await findWorkspaceMember(tx, workspaceId, memberId);
    if (!before) throw errors.notFound('Member');
    if (before.role === 'owner') await assertAnotherOwner(tx, workspaceId);

    await deleteMembership(tx, workspaceId, memberId);
    const cascadedAgentIds = before.principalType === 'user' ? await deleteAutoEnrolledAgents(tx, workspaceId, memberId) : [];
    events.push(memberEvent('member.removed', target, actor, memberId, { principalType: before.principalType, previousRole: before.role, cascadedAgentIds }));
    return { cascadedAgentIds };
  });
}

async function assertAnotherOwner(db: Executor, workspaceId: string) {
  if ((await countWorkspaceOwners(db, workspaceId)) <= 1) {
    throw errors.conflict('This is the only owner of the workspace: make someone else owner first.');
  }
}

// Organisations

export type ResolvedOrg = { org: Org; role: Role };

/**
 * The caller's standing in an organisation, decided by the policy's org
 * table: non-members get 404 (existence is not revealed), a role without
 * `action` gets 403. A key acts with its owner's org role capped by the
 * key's role; a key scoped to one workspace reaches no organisation.
 */
export async function resolveOrg(services: Services, actor: Actor, slug: string, action: OrgAction): Promise<ResolvedOrg> {
  const org = await findOrgBySlug(services.db, slug);
  if (!org) throw errors.notFound('Organisation');
  return { org, role: authorizeOrg(await loadOrgCaller(services, actor, org.id), action) };
}

/**
 * The organisation a request names with `orgSlug`, else the caller's own
 * (the one whose plan meters it), authorized for `action` (billing,
 * support: routes that are about an organisation but carry no slug).
 */
export async function resolveCallerOrg(services: Services, actor: Actor, orgSlug: string | undefined, action: OrgAction): Promise<Org> {
  if (orgSlug !== undefined) return (await resolveOrg(services, actor, orgSlug, action)).org;
  const own = actor.orgId ? await findOrgById(services.db, actor.orgId) : undefined;
  if (!own) throw errors.notFound('Organisation');
  return (await resolveOrg(services, actor, own.slug, action)).org;
}

/** An organisation as the caller stands to it: a member (`role`), or the home of workspaces shared with them (`role` null). */
export type CallerOrg = { id: string; slug: string; name: string; role: Role | null; primary: boolean };

/**
 * Every organisation the caller belongs to (the primary one first: it is
 * where their workspaces, keys and settings go; then by name), followed by
 * the organisations of workspaces shared with them without their belonging
 * to it, so a client can say truthfully where each workspace comes from. A
 * key's role in each is capped by the key's; a key scoped to one workspace
 * belongs to no organisation.
 */
export async function listCallerOrgs(services: Services, actor: Actor): Promise<CallerOrg[]> {
  const [memberships, reached] = await Promise.all([
    actor.key?.scopeWorkspaceId ? [] : listOrgMemberships(services.db, actor.userId),
    reachableWorkspaces(services, actor, { archived: false }),
  ]);
  const byName = (a: CallerOrg, b: CallerOrg) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });
  const own = memberships
    .map((m) => ({ id: m.id, slug: m.slug, name: m.name, role: actor.key ? lowerRole(m.role, actor.key.role) : m.role, primary: m.id === actor.orgId }))
    .sort((a, b) => Number(b.primary) - Number(a.primary) || byName(a, b));
  const ownIds = new Set(own.map((org) => org.id));
  const sharedIds = [...new Set(reached.map((r) => r.workspace.orgId))].filter((id) => !ownIds.has(id));
  const refs = await findOrgRefs(services.db, sharedIds);
  const shared = sharedIds.map((id) => ({ id, slug: refs.get(id)!.slug, name: refs.get(id)!.name, role: null, primary: false })).sort(byName);
  return [...own, ...shared];
}

export type OrgMemberRemoval = {
  removedFromWorkspaceIds: string[];
  cascadedAgentIds: string[];
  revokedKeyIds: string[];
  transferredWorkspaceIds: string[];
};

/**
 * Off-boards a user from an organisation in one transaction: the org
 * membership, their membership rows in the org's workspaces, their agents'
 * auto-enrolled memberships there and their live keys in the org all go.
 * Workspaces the user owned alone pass to the acting owner, so no workspace
 * is left without an owner (removing yourself while owning some alone is a
 * 409: hand them over first). The last org owner cannot be removed.
 */
export async function removeOrgMember(services: Services, actor: Actor, org: Org, userId: string): Promise<OrgMemberRemoval> {
  const now = services.clock.now();
  return transactWithEvents(services, async (tx, events) => {
    await lockOrgMembers(tx, org.id);
    const target = await findOrgMember(tx, org.id, userId);
    if (!target) throw errors.notFound('Member');
    if (target.role === 'owner' && (await countOrgOwners(tx, org.id)) <= 1) {
      throw errors.conflict('This is the only owner of the organisation: make someone else owner first.');
    }
    const soleOwned = await listSoleOwnedWorkspaces(tx, org.id, userId);
    if (soleOwned.length > 0 && userId === actor.userId) {
      throw errors.conflict('You are the only owner of some workspaces in this organisation: make someone else owner of them first.', {
        workspaces: soleOwned.map((w) => w.slug),
      });
    }
    const inOrg = (workspace: Workspace) => ({ workspace, orgSlug: org.slug });

    for (const workspace of soleOwned) {
      await upsertMembership(tx, { workspaceId: workspace.id, principalId: actor.userId, principalType: 'user', role: 'owner', joinedAt: now });
      const actorAgents = await setAutoEnrolledAgentRoles(tx, workspace.id, actor.userId, lowerRole('owner', AGENT_ROLE_CAP));
      events.push({
        ...workspaceEvent('member.role_changed', inOrg(workspace), actor, {
          memberId: actor.userId,
          principalType: 'user',
          role: 'owner',
          reason: 'ownership_transfer',
          cascadedAgentIds: actorAgents,
        }),
        subjectId: actor.userId,
      });
    }

    const memberships = await listUserMembershipsInOrg(tx, org.id, userId);
    const cascadedAgentIds: string[] = [];
    for (const { workspace, role } of memberships) {
      await deleteMembership(tx, workspace.id, userId);
      const agents = await deleteAutoEnrolledAgents(tx, workspace.id, userId);
      cascadedAgentIds.push(...agents);
      events.push({
        ...workspaceEvent('member.removed', inOrg(workspace), actor, { memberId: userId, principalType: 'user', previousRole: role, cascadedAgentIds: agents }),
        subjectId: userId,
      });
    }
    await deleteOrgMember(tx, org.id, userId);
    await repointPrimaryOrg(tx, userId, org.id);
    const revokedKeyIds = await revokeUserKeysInOrg(tx, org.id, userId, now);
    const removedFromWorkspaceIds = memberships.map((m) => m.workspace.id);
    events.push({
      event: 'org.member_removed',
      orgId: org.id,
      workspace: null,
      principal: actor.principal,
      subjectId: userId,
      data: { memberId: userId, previousRole: target.role, removedFromWorkspaceIds, revokedKeyIds },
    });
    return {
      removedFromWorkspaceIds,
      cascadedAgentIds: [...new Set(cascadedAgentIds)].sort(),
      revokedKeyIds,
      transferredWorkspaceIds: soleOwned.map((w) => w.id),
    };
  });
}

// Humans cap

/**
 * Refuses a new human seat when the org is at its plan's `humans` cap: the
 * de-duplicated union of org members and user members of its live
 * workspaces. A user already counted takes no new seat. Inside a
 * transaction, take `lockOrgForCapCheck` first so two accepts cannot both
 * take the last seat.
 */
export async function assertHumanSeat(services: Services, db: Executor, orgId: string, userId: string | null) {
  if (userId && (await isCountedHuman(db, orgId, userId))) return;
  const org = await findOrgById(db, orgId);
  if (!org) throw errors.notFound('Organisation');
  const cap = capsFor(org.plan).humans;
  const current = await countHumans(db, orgId);
  if (current >= cap) throw new OverLimitError('humans', current, cap, { plan: org.plan, upgradeUrl: upgradeUrl(services) });
}
