import type { Role } from '../../src/persistence/schema';
import type { Credential, TestApp, TestResponse } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/** A signed-in person, with the ids the tests need. */
export type Person = { as: Credential; cookie: string; userId: string; orgId: string; orgSlug: string; email: string };

export async function signInPerson(t: TestApp, email: string): Promise<Person> {
  const { cookie, orgSlug } = await signIn(t, email);
  const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', email).executeTakeFirstOrThrow();
  return { as: { cookie }, cookie, userId: user.id, orgId: user.primaryOrgId!, orgSlug, email };
}

/** Right after sign-in the session is fresh, so the `keys` elevation is granted at once. */
export async function elevateForKeys(t: TestApp, person: Person) {
  const res = await t.request('POST', '/api/me/elevate', { as: person.as, body: { scope: 'keys' } });
  if (res.status !== 200 || !res.body.expiresAt) throw new Error(`elevation answered ${res.status}: ${res.text}`);
}

export type MintBody = { name?: string; agentName?: string; scopeSlug?: string; role?: string; [field: string]: unknown };

export function postKey(t: TestApp, person: { as: Credential }, body: MintBody): Promise<TestResponse> {
  return t.request('POST', '/api/keys', { as: person.as, body });
}

/** Mints through the API and returns the key record and a bearer credential for its secret. */
export async function mint(t: TestApp, person: Person, body: MintBody) {
  const res = await postKey(t, person, { name: 'test key', agentName: 'robot', role: 'editor', ...body });
  if (res.status !== 200) throw new Error(`POST /api/keys answered ${res.status}: ${res.text}`);
  return { key: res.body.key, secret: res.body.secret as string, as: { bearer: res.body.secret as string } as Credential };
}

/** Makes `person` a member of `orgId` and switches their primary org to it, so it is the org they act in. */
export async function joinOrg(t: TestApp, person: Person, orgId: string, role: Role) {
  await t.services.db.insertInto('orgMembers').values({ orgId, userId: person.userId, role }).execute();
  await t.services.db.updateTable('users').set({ primaryOrgId: orgId }).where('id', '=', person.userId).execute();
  person.orgId = orgId;
}

export async function addMember(t: TestApp, workspaceId: string, userId: string, role: Role) {
  await t.services.db
    .insertInto('memberships')
    .values({ workspaceId, principalId: userId, principalType: 'user', role, viaUserId: null })
    .onConflict((oc) => oc.columns(['workspaceId', 'principalId']).doUpdateSet({ role }))
    .execute();
}

export async function createWorkspace(t: TestApp, person: { as: Credential }, body: { slug: string; name?: string; visibility?: string }) {
  const res = await t.request('POST', '/api/workspaces', { as: person.as, body: { name: body.slug, mode: 'table', ...body } });
  if (res.status !== 200) throw new Error(`POST /api/workspaces answered ${res.status}: ${res.text}`);
  return res.body as { id: string; slug: string };
}

export async function countRows(t: TestApp) {
  const db = t.services.db;
  const count = async (table: 'apiKeys' | 'agents' | 'principals' | 'memberships') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { apiKeys: await count('apiKeys'), agents: await count('agents'), principals: await count('principals'), memberships: await count('memberships') };
}
