import { ApiError, errors, OverLimitError } from '../errors';
import { recordEvents, publishEvents } from '../events/emit';
import type { EventDraft } from '../model/event-record';
import type { Actor, Principal } from '../policy/actor';
import { API_KEY_PREFIX } from '../policy/credentials';
import type { ResolvedWorkspace, WorkspaceResolver } from './resolved-workspace';
import { newId } from '../lib/ids';
import { hashToken, randomToken } from '../lib/secrets';
import { capsFor } from '../limits/plans';
import { findOrgById, findOrgRole } from '../persistence/accounts';
import { findWorkspacesWithMembership } from '../persistence/access';
import { enrollAgent, findMembershipRole, findOwnedAgentByName, insertAgent, setAgentModelHint } from '../persistence/agents';
import type { Tx } from '../persistence/database';
import {
  agentHasLiveKey,
  countActiveAgents,
  findKeyInOrg,
  insertApiKey,
  listKeys,
  revokeApiKey,
  type KeyRecord,
  type KeyRole,
} from '../persistence/keys';
import type { Org, Role, Workspace } from '../persistence/schema';
import { lockOrgForCapCheck } from '../persistence/workspaces';
import { authorizeOrg, lowerRole, orgRoleCan, roleAtLeast } from '../policy/index';
import { loadOrgCaller } from './org-caller';
import type { Services } from './services';
import { upgradeUrl } from './workspaces';

export type MintKeyInput = {
  name: string;
  agentName: string;
  /** A workspace of the caller's organisation, or one they are a member of elsewhere; omitted for an unscoped key. */
  scopeSlug?: string;
  role: KeyRole;
  /** Its doc and row writes can only be suggestions. */
  suggestOnly?: boolean;
  modelHint?: string;
};

export type MintedKey = { key: KeyRecord; secret: string };

/** The highest role a key may carry: keys never own. */
const KEY_ROLE_CEILING: Role = 'editor';
/** `svc_live_` and three characters: enough to tell keys apart in a list, useless to an attacker. */
const DISPLAYED_PREFIX_LENGTH = 12;

/**
 * Mints an API key for the caller's agent `agentName` (created on first use,
 * reused after) and returns the secret, which exists nowhere else: only its
 * hash is stored.
 *
 * Elevation is the route's job (`requireElevation(…, 'keys')`); the admin CLI,
 * run by the operator on the host, calls this as the user (`via: 'session'`
 * without a session id) and has no elevation to check.
 */
export async function mintKey(services: Services, resolveWorkspace: WorkspaceResolver, actor: Actor, input: MintKeyInput): Promise<MintedKey> {
  if (actor.via !== 'session') throw errors.forbidden('Keys are minted by people, not by other keys or tokens.');
  const org = await callerOrg(services, actor);
  const { ceiling, scope } = await roleCeiling(services, resolveWorkspace, actor, org, input.scopeSlug);
  if (!roleAtLeast(ceiling, input.role)) {
    throw errors.forbidden(`A key's role cannot be above yours: here you may mint at most "${ceiling}", not "${input.role}".`);
  }

  const secret = API_KEY_PREFIX + randomToken(32);
  const prefix = secret.slice(0, DISPLAYED_PREFIX_LENGTH);
  const now = services.clock.now();
  const { keyId, events } = await services.db.transaction().execute(async (tx) => {
    // Locked so two concurrent mints cannot both take the last agent slot.
    await lockOrgForCapCheck(tx, org.id);
    const agent = await agentForKey(services, tx, { orgId: org.id, ownerUserId: actor.userId }, input, now);
    const keyId = newId('key');
    await insertApiKey(tx, {
      id: keyId,
      orgId: org.id,
      agentId: agent.id,
      ownerUserId: actor.userId,
      name: input.name,
      prefix,
      secretHash: hashToken(secret),
      scopeWorkspaceId: scope?.id ?? null,
      role: input.role,
      suggestOnly: input.suggestOnly ?? false,
      createdAt: now,
    });
    const enrolled = scope ? await enrollScopedAgent(tx, { workspaceId: scope.id, agentId: agent.id, ownerUserId: actor.userId, role: input.role, now }) : null;
    const created = keyEvent('key.created', org, scope, actor.principal, { keyId, name: input.name, role: input.role, prefix, agent, suggestOnly: input.suggestOnly ?? false });
    // An agent new to the workspace is a new member there, as an invited person is: clients listing members (the `@` picker) hear of it.
    const joined = scope && enrolled?.isNew ? [agentJoinedEvent(org, scope, actor.principal, { agentId: agent.id, role: enrolled.role, viaUserId: actor.userId, keyId })] : [];
    const events = await recordEvents(services, tx, [created, ...joined]);
    return { keyId, events };
  });
  publishEvents(services, events);

  const key = await findKeyInOrg(services.db, org.id, keyId);
  return { key: key!, secret };
}

async function callerOrg(services: Services, actor: Actor): Promise<Org> {
  const org = actor.orgId ? await findOrgById(services.db, actor.orgId) : undefined;
  if (!org) throw errors.notFound('Organisation');
  return org;
}

/**
 * A key never outranks its minter. Unscoped: the minter's org role, capped
 * at editor. Scoped: the minter's own membership role in that workspace; a
 * virtual (org-visibility) or public reader has no membership the agent's
 * enrolment could follow, so role changes and removals would not cascade to
 * it — such a caller mints an unscoped key instead.
 */
async function roleCeiling(services: Services, resolveWorkspace: WorkspaceResolver, actor: Actor, org: Org, scopeSlug: string | undefined): Promise<{ ceiling: Role; scope: Workspace | null }> {
  const orgRole = authorizeOrg(await loadOrgCaller(services, actor, org.id), 'mint_keys');
  if (scopeSlug === undefined) return { ceiling: lowerRole(orgRole, KEY_ROLE_CEILING), scope: null };

  const { workspace, access } = await resolveScope(services, resolveWorkspace, actor, org, scopeSlug);
  if (workspace.archivedAt) throw errors.conflict('This workspace is archived; unarchive it before scoping a key to it.');
  if (access.basis !== 'member' || !access.role) {
    throw errors.forbidden('Scoping a key to a workspace needs your own membership in it; mint an unscoped key to act through org visibility.');
  }
  return { ceiling: lowerRole(access.role, KEY_ROLE_CEILING), scope: workspace };
}

/**
 * The workspace a key is scoped to: one of the minter's own organisation,
 * else one of another organisation the minter is an explicit member of
 * (SPEC "Member": a user's agents reach workspaces through their owner
 * "even if they live in another organisation"). The agent and the key stay
 * in the minter's organisation, which the key is metered against; the
 * enrolment follows the minter's row there like any other.
 */
async function resolveScope(services: Services, resolveWorkspace: WorkspaceResolver, actor: Actor, org: Org, scopeSlug: string): Promise<ResolvedWorkspace> {
  try {
    return await resolveWorkspace(actor, { slug: scopeSlug, orgSlug: org.slug }, 'read');
  } catch (error) {
    if (!(error instanceof ApiError) || error.statusCode !== 404) throw error;
    const elsewhere = (await findWorkspacesWithMembership(services.db, actor.userId, scopeSlug)).filter((w) => w.orgId !== org.id);
    const orgSlugs = [...new Set(elsewhere.map((w) => w.orgSlug))];
    if (orgSlugs.length === 0) throw error;
    if (orgSlugs.length > 1) {
      throw new ApiError(400, 'ambiguous_slug', `You are a member of workspaces "${scopeSlug}" in several organisations; pass the workspace id as scopeSlug.`, {
        hint: elsewhere.map((w) => ({ scopeSlug: w.id, org: w.orgSlug })),
      });
    }
    return resolveWorkspace(actor, { slug: scopeSlug, orgSlug: orgSlugs[0] }, 'read');
  }
}

/**
 * Finds or creates the owner's agent of that name. Counting rule 1: an agent
 * takes a plan slot while it holds a live key, so only an agent that has none
 * yet (new, or all keys revoked) needs a free slot.
 */
async function agentForKey(
  services: Services,
  tx: Tx,
  { orgId, ownerUserId }: { orgId: string; ownerUserId: string },
  input: MintKeyInput,
  now: Date,
): Promise<Principal> {
  const existing = await findOwnedAgentByName(tx, { orgId, ownerUserId, name: input.agentName });
  const takesNewSlot = !existing || !(await agentHasLiveKey(tx, existing.id));
  if (takesNewSlot) await assertAgentSlotFree(services, tx, orgId);

  if (existing) {
    if (input.modelHint !== undefined && input.modelHint !== existing.modelHint) await setAgentModelHint(tx, existing.id, input.modelHint);
    return { principalType: 'agent', id: existing.id, name: existing.name, avatarUrl: existing.avatarUrl };
  }
  const id = newId('agt');
  await insertAgent(tx, { id, orgId, ownerUserId, name: input.agentName, modelHint: input.modelHint ?? null, createdAt: now });
  return { principalType: 'agent', id, name: input.agentName, avatarUrl: null };
}

async function assertAgentSlotFree(services: Services, tx: Tx, orgId: string) {
  // Read inside the locked transaction: a plan raised a moment ago applies at once.
  const org = (await findOrgById(tx, orgId))!;
  const cap = capsFor(org.plan).agents;
  const active = await countActiveAgents(tx, orgId);
  if (active >= cap) throw new OverLimitError('agents', active, cap, { plan: org.plan, upgradeUrl: upgradeUrl(services) });
}

/**
 * A scoped key's agent is enrolled in its workspace with the key's role. An
 * existing enrolment keeps the higher role: lowering it would silently demote
 * the agent's other keys there, and every key is capped by its own role anyway.
 */
async function enrollScopedAgent(tx: Tx, e: { workspaceId: string; agentId: string; ownerUserId: string; role: KeyRole; now: Date }): Promise<{ role: Role; isNew: boolean }> {
  const current = await findMembershipRole(tx, e.workspaceId, e.agentId);
  const role = current && roleAtLeast(current, e.role) ? current : e.role;
  await enrollAgent(tx, { workspaceId: e.workspaceId, agentId: e.agentId, ownerUserId: e.ownerUserId, role, joinedAt: e.now });
  return { role, isNew: !current };
}

/** `member.added` for an agent a scoped key enrolled: the same event an accepted invite records, with who it acts for instead of the invite. */
function agentJoinedEvent(
  org: Pick<Org, 'id' | 'slug'>,
  scope: Pick<Workspace, 'id' | 'slug'>,
  principal: Principal,
  joined: { agentId: string; role: Role; viaUserId: string; keyId: string },
): EventDraft {
  return {
    event: 'member.added',
    orgId: org.id,
    workspace: { id: scope.id, slug: scope.slug, org: { slug: org.slug } },
    principal,
    subjectId: joined.agentId,
    data: { memberId: joined.agentId, principalType: 'agent', role: joined.role, viaUserId: joined.viaUserId, keyId: joined.keyId },
  };
}

type KeyFacts = { keyId: string; name: string; role: KeyRole; prefix: string; agent: Principal; suggestOnly?: boolean };

function keyEvent(
  event: 'key.created' | 'key.revoked',
  org: Pick<Org, 'id' | 'slug'>,
  scope: Pick<Workspace, 'id' | 'slug'> | null,
  principal: Principal,
  key: KeyFacts,
): EventDraft {
  return {
    event,
    orgId: org.id,
    // A scoped key shows in its workspace's audit log; an unscoped one is an org-level event (webhooks still see it).
    workspace: scope ? { id: scope.id, slug: scope.slug, org: { slug: org.slug } } : null,
    principal,
    subjectId: key.keyId,
    data: { ...key, scopeWorkspaceId: scope?.id ?? null },
  };
}

/**
 * Who administers which keys: everyone their own, and whoever may remove
 * organisation members (the owner) every key of the organisation, since
 * revoking a member's keys is part of removing their access.
 */
async function administersAllKeys(services: Services, actor: Actor, orgId: string): Promise<boolean> {
  if (actor.via !== 'session') return false;
  const orgRole = await findOrgRole(services.db, orgId, actor.userId);
  return orgRole !== null && orgRoleCan(orgRole, 'remove_members');
}

/** The keys the caller may see: their own, or all of the organisation's for its owner. No secret or hash is ever read. */
export async function listVisibleKeys(services: Services, actor: Actor, filter: { agentId?: string } = {}): Promise<KeyRecord[]> {
  const org = await callerOrg(services, actor);
  authorizeOrg(await loadOrgCaller(services, actor, org.id), 'read_org');
  const all = await administersAllKeys(services, actor, org.id);
  return listKeys(services.db, { orgId: org.id, agentId: filter.agentId, ...(all ? {} : { ownerUserId: actor.userId }) });
}

/**
 * Revokes a key at once (every request looks its key up, so the next one is
 * 401). The key's owner and the organisation owner may revoke it, and a key
 * may revoke itself (rotation, or a leak noticed by the agent); revoking an
 * already revoked key is a no-op that succeeds. The agent's plan slot frees
 * with its last live key.
 */
export async function revokeKey(services: Services, actor: Actor, keyId: string): Promise<void> {
  const org = await callerOrg(services, actor);
  const key = await findKeyInOrg(services.db, org.id, keyId);
  if (!key) throw errors.notFound('API key');
  const allowed =
    actor.via === 'session'
      ? key.ownerUserId === actor.userId || (await administersAllKeys(services, actor, org.id))
      : actor.key?.id === key.id;
  if (!allowed) throw errors.forbidden('Only the key’s owner or the organisation owner may revoke this key.');

  const events = await services.db.transaction().execute(async (tx) => {
    if (!(await revokeApiKey(tx, key.id, services.clock.now()))) return [];
    const scope = key.scopeWorkspaceId && key.scopeSlug ? { id: key.scopeWorkspaceId, slug: key.scopeSlug } : null;
    const agent: Principal = { principalType: 'agent', id: key.agentId, name: key.agentName, avatarUrl: key.agentAvatarUrl };
    const revoked = keyEvent('key.revoked', org, scope, actor.principal, { keyId: key.id, name: key.name, role: key.role, prefix: key.prefix, agent });
    return recordEvents(services, tx, [revoked]);
  });
  publishEvents(services, events);
}
