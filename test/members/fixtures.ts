import { expect } from 'vitest';
import { hashToken, randomToken } from '../../src/lib/secrets';
import { newId } from '../../src/lib/ids';
import type { Role } from '../../src/persistence/schema';
import type { TestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/**
 * Shared set-up for the member and invite tests. People sign in through the
 * real magic-link flow; agents, keys and extra org members are written to
 * the database directly (keys are minted by another module, and the humans
 * cap needs more people than the per-IP sign-in limit allows).
 */

export type Person = { email: string; cookie: string; userId: string; orgSlug: string; orgId: string; welcomeId: string };

export async function person(t: TestApp, email: string): Promise<Person> {
  const { cookie, orgSlug } = await signIn(t, email);
  const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', email).executeTakeFirstOrThrow();
  const welcome = await t.services.db
    .selectFrom('workspaces')
    .select('id')
    .where('orgId', '=', user.primaryOrgId!)
    .where('slug', '=', 'welcome')
    .executeTakeFirstOrThrow();
  return { email, cookie, userId: user.id, orgSlug, orgId: user.primaryOrgId!, welcomeId: welcome.id };
}

export const as = (p: Person) => ({ cookie: p.cookie });

/** The canonical path of a workspace route: never ambiguous, whoever else has a `welcome`. */
export const wsPath = (owner: Person, suffix = '', slug = 'welcome') => `/api/orgs/${owner.orgSlug}/workspaces/${slug}${suffix}`;

/** The newest invite token mailed to an address (`kind` picks the link path). */
export async function latestInviteToken(t: TestApp, email: string, kind: 'invites' | 'org-invites' = 'invites'): Promise<string> {
  const mails = (await t.outbox()).filter((m) => m.to === email);
  const match = new RegExp(`/${kind}/([A-Za-z0-9_-]+)`).exec(mails.at(-1)?.text ?? '');
  if (!match) throw new Error(`no ${kind} link mailed to ${email}`);
  return match[1]!;
}

/** Shares `owner`'s welcome workspace with `invitee` and accepts through HTTP. */
export async function addMember(t: TestApp, owner: Person, invitee: Person, role: Role) {
  const shared = await t.request('POST', wsPath(owner, '/share'), { as: as(owner), body: { email: invitee.email, role } });
  expect(shared.status, shared.text).toBe(200);
  const accepted = await t.request('POST', `/api/invites/${await latestInviteToken(t, invitee.email)}`, { as: as(invitee) });
  expect(accepted.status, accepted.text).toBe(200);
}

export async function seedAgent(t: TestApp, owner: { userId: string; orgId: string }, name: string): Promise<string> {
  const id = newId('agt');
  await t.services.db.insertInto('principals').values({ id, kind: 'agent', name, avatarUrl: null }).execute();
  await t.services.db.insertInto('agents').values({ id, orgId: owner.orgId, ownerUserId: owner.userId, modelHint: null }).execute();
  return id;
}

/** An agent enrolled on a workspace through its owner, as a scoped key enrols it. */
export async function enrolAgent(t: TestApp, workspaceId: string, agentId: string, ownerUserId: string, role: Role) {
  await t.services.db
    .insertInto('memberships')
    .values({ workspaceId, principalId: agentId, principalType: 'agent', role, viaUserId: ownerUserId })
    .execute();
}

/** Inserts a live key for an agent and returns its secret. */
export async function seedKey(
  t: TestApp,
  key: {
    agentId: string;
    orgId: string;
    ownerUserId: string;
    scopeWorkspaceId?: string | null;
    role?: 'editor' | 'commenter' | 'viewer';
    revoked?: boolean;
    suggestOnly?: boolean;
  },
): Promise<{ id: string; secret: string }> {
  const secret = `svc_live_${randomToken()}`;
  const id = newId('key');
  await t.services.db
    .insertInto('apiKeys')
    .values({
      id,
      orgId: key.orgId,
      agentId: key.agentId,
      ownerUserId: key.ownerUserId,
      name: 'test key',
      prefix: secret.slice(0, 12),
      secretHash: hashToken(secret),
      scopeWorkspaceId: key.scopeWorkspaceId ?? null,
      role: key.role ?? 'editor',
      revokedAt: key.revoked ? new Date() : null,
      suggestOnly: key.suggestOnly ?? false,
    })
    .execute();
  return { id, secret };
}

/** A user who never signed in, made an org member directly (to fill the humans cap). */
export async function seedOrgMember(t: TestApp, orgId: string, email: string, role: Role = 'viewer'): Promise<string> {
  const id = newId('usr');
  await t.services.db.insertInto('principals').values({ id, kind: 'user', name: email.split('@')[0]!, avatarUrl: null }).execute();
  await t.services.db.insertInto('users').values({ id, email, primaryOrgId: null }).execute();
  await t.services.db.insertInto('orgMembers').values({ orgId, userId: id, role }).execute();
  return id;
}

export async function membershipRole(t: TestApp, workspaceId: string, principalId: string): Promise<Role | null> {
  const row = await t.services.db
    .selectFrom('memberships')
    .select('role')
    .where('workspaceId', '=', workspaceId)
    .where('principalId', '=', principalId)
    .executeTakeFirst();
  return row?.role ?? null;
}

export async function eventsNamed(t: TestApp, event: string) {
  const rows = await t.services.db.selectFrom('events').select(['record']).where('event', '=', event).orderBy('seq').execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record) as { data: Record<string, unknown>; principal: { id: string } });
}
