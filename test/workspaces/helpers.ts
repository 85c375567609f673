import { hashToken, randomToken } from '../../src/lib/secrets';
import type { Role } from '../../src/persistence/schema';
import type { Credential, TestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/** A signed-in user with what the tests need to address them. */
export type TestUser = { as: Credential; cookie: string; orgSlug: string; orgId: string; userId: string; email: string };

export async function signInUser(t: TestApp, email: string): Promise<TestUser> {
  const { cookie, orgSlug } = await signIn(t, email);
  const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', email).executeTakeFirstOrThrow();
  return { as: { cookie }, cookie, orgSlug, orgId: user.primaryOrgId!, userId: user.id, email };
}

export async function createWorkspace(t: TestApp, user: { as: Credential }, body: Record<string, unknown>) {
  const res = await t.request('POST', '/api/workspaces', { as: user.as, body: { mode: 'table', ...body } });
  if (res.status !== 200) throw new Error(`POST /api/workspaces answered ${res.status}: ${res.text}`);
  return res.body;
}

/** Elevation right after sign-in is granted at once (the session is fresh). */
export async function elevate(t: TestApp, user: { as: Credential }, scope = 'workspace_delete') {
  const res = await t.request('POST', '/api/me/elevate', { as: user.as, body: { scope } });
  if (res.status !== 200 || !res.body.expiresAt) throw new Error(`elevation answered ${res.status}: ${res.text}`);
}

/** Org invites are another module's; tests make org members directly. */
export async function addOrgMember(t: TestApp, orgId: string, userId: string, role: Role = 'editor') {
  await t.services.db.insertInto('orgMembers').values({ orgId, userId, role }).execute();
}

export async function addMembership(t: TestApp, workspaceId: string, userId: string, role: Role) {
  await t.services.db.insertInto('memberships').values({ workspaceId, principalId: userId, principalType: 'user', role, viaUserId: null }).execute();
}

/**
 * An API key written straight to the database (key minting is another
 * module's). A scoped key's agent is auto-enrolled in its workspace with the
 * key's role, as minting does.
 */
export async function insertKey(
  t: TestApp,
  owner: TestUser,
  options: { role: Exclude<Role, 'owner'>; scopeWorkspaceId?: string; agentName?: string; suggestOnly?: boolean },
): Promise<{ as: Credential; agentId: string }> {
  const db = t.services.db;
  const agentId = `agt_${randomToken(9).replace(/[^a-zA-Z0-9]/g, 'x')}`;
  const secret = `svc_live_${randomToken()}`;
  await db.insertInto('principals').values({ id: agentId, kind: 'agent', name: options.agentName ?? 'robot', avatarUrl: null }).execute();
  await db.insertInto('agents').values({ id: agentId, orgId: owner.orgId, ownerUserId: owner.userId, modelHint: null }).execute();
  await db
    .insertInto('apiKeys')
    .values({
      id: `key_${agentId}`,
      orgId: owner.orgId,
      agentId,
      ownerUserId: owner.userId,
      name: 'test key',
      prefix: secret.slice(0, 12),
      secretHash: hashToken(secret),
      scopeWorkspaceId: options.scopeWorkspaceId ?? null,
      role: options.role,
      suggestOnly: options.suggestOnly ?? false,
    })
    .execute();
  if (options.scopeWorkspaceId) {
    await db
      .insertInto('memberships')
      .values({ workspaceId: options.scopeWorkspaceId, principalId: agentId, principalType: 'agent', role: options.role, viaUserId: owner.userId })
      .execute();
  }
  return { as: { bearer: secret }, agentId };
}
