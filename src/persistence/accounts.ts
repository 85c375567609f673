import { sql } from 'kysely';
import type { Executor } from './database';
import type { PlanName, Role } from './schema';

/** Users, organisations, sessions, magic links and elevations. */

export async function findUserByEmail(db: Executor, email: string) {
  return db
    .selectFrom('users')
    .innerJoin('principals', 'principals.id', 'users.id')
    .select(['users.id', 'users.email', 'users.primaryOrgId', 'principals.name', 'principals.avatarUrl', 'users.createdAt'])
    .where('users.email', '=', email)
    .executeTakeFirst();
}

export async function findUserById(db: Executor, id: string) {
  return db
    .selectFrom('users')
    .innerJoin('principals', 'principals.id', 'users.id')
    .select(['users.id', 'users.email', 'users.primaryOrgId', 'principals.name', 'principals.avatarUrl', 'users.createdAt'])
    .where('users.id', '=', id)
    .executeTakeFirst();
}

export async function insertUser(db: Executor, user: { id: string; email: string; name: string; primaryOrgId: string | null }) {
  await db.insertInto('principals').values({ id: user.id, kind: 'user', name: user.name, avatarUrl: null }).execute();
  await db.insertInto('users').values({ id: user.id, email: user.email, primaryOrgId: user.primaryOrgId }).execute();
}

export async function updatePrincipalProfile(db: Executor, id: string, patch: { name?: string; avatarUrl?: string | null }) {
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('principals').set(patch).where('id', '=', id).execute();
}

export async function setPrimaryOrg(db: Executor, userId: string, orgId: string) {
  await db.updateTable('users').set({ primaryOrgId: orgId }).where('id', '=', userId).execute();
}

export async function touchSignIn(db: Executor, userId: string, at: Date) {
  await db.updateTable('users').set({ lastSignInAt: at }).where('id', '=', userId).execute();
}

export async function slugTaken(db: Executor, slug: string): Promise<boolean> {
  const row = await db.selectFrom('orgs').select('id').where('slug', '=', slug).executeTakeFirst();
  return Boolean(row);
}

export async function insertOrg(db: Executor, org: { id: string; slug: string; name: string; personal: boolean }) {
  await db.insertInto('orgs').values(org).execute();
}

export async function findOrgById(db: Executor, id: string) {
  return db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An organisation's plan; null when it does not exist. */
export async function findOrgPlan(db: Executor, orgId: string): Promise<PlanName | null> {
  const row = await db.selectFrom('orgs').select('plan').where('id', '=', orgId).executeTakeFirst();
  return row?.plan ?? null;
}

export async function findOrgBySlug(db: Executor, slug: string) {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function listOrgs(db: Executor) {
  return db
    .selectFrom('orgs')
    .leftJoin('orgMembers', 'orgMembers.orgId', 'orgs.id')
    .select(['orgs.id', 'orgs.slug', 'orgs.name', 'orgs.plan', 'orgs.createdAt'])
    .select((eb) => eb.fn.count<number>('orgMembers.userId').as('members'))
    .groupBy('orgs.id')
    .orderBy('orgs.createdAt')
    .execute();
}

export async function updateOrg(db: Executor, id: string, patch: { name?: string; defaultWorkspaceVisibility?: 'org' | 'private'; plan?: 'free' | 'pro' | 'scale' }) {
  if (Object.keys(patch).length === 0) return;
  await db.updateTable('orgs').set({ ...patch, updatedAt: new Date() }).where('id', '=', id).execute();
}

export async function addOrgMember(db: Executor, member: { orgId: string; userId: string; role: Role }) {
  await db
    .insertInto('orgMembers')
    .values(member)
    .onConflict((oc) => oc.columns(['orgId', 'userId']).doNothing())
    .execute();
}

export async function findOrgRole(db: Executor, orgId: string, userId: string): Promise<Role | null> {
  const row = await db.selectFrom('orgMembers').select('role').where('orgId', '=', orgId).where('userId', '=', userId).executeTakeFirst();
  return row?.role ?? null;
}

/** The organisations a user belongs to, with their role in each. */
export async function listOrgMemberships(db: Executor, userId: string): Promise<Array<{ id: string; slug: string; name: string; role: Role }>> {
  return db
    .selectFrom('orgMembers')
    .innerJoin('orgs', 'orgs.id', 'orgMembers.orgId')
    .select(['orgs.id', 'orgs.slug', 'orgs.name', 'orgMembers.role'])
    .where('orgMembers.userId', '=', userId)
    .execute();
}

// Magic links

export async function insertMagicLink(db: Executor, link: { tokenHash: string; email: string; expiresAt: Date; returnTo?: string | null }) {
  await db.insertInto('magicLinks').values(link).execute();
}

/** Marks the link used and returns it, in one statement, so a link redeems at most once even under races. */
export async function consumeMagicLink(db: Executor, tokenHash: string, now: Date) {
  return db
    .updateTable('magicLinks')
    .set({ usedAt: now })
    .where('tokenHash', '=', tokenHash)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', now)
    .returning(['email', 'returnTo'])
    .executeTakeFirst();
}

// Sessions

export async function insertSession(db: Executor, session: { id: string; tokenHash: string; userId: string; expiresAt: Date; userAgent: string | null; createdAt: Date }) {
  await db.insertInto('sessions').values({ ...session, lastSeenAt: session.createdAt }).execute();
}

export async function revokeUserSessions(db: Executor, userId: string, at: Date): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ revokedAt: at })
    .where('userId', '=', userId)
    .where('revokedAt', 'is', null)
    .where('expiresAt', '>', at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function countSessions(db: Executor, userId: string) {
  const row = await db.selectFrom('sessions').select((eb) => eb.fn.countAll<number>().as('n')).where('userId', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

// Elevation

export async function upsertElevationGrant(db: Executor, grant: { sessionId: string; scope: string; expiresAt: Date }) {
  await db
    .insertInto('elevationGrants')
    .values(grant)
    .onConflict((oc) => oc.columns(['sessionId', 'scope']).doUpdateSet({ expiresAt: grant.expiresAt }))
    .execute();
}

/** Uses a live grant and slides its window forward; false when there is none. */
export async function useElevationGrant(db: Executor, sessionId: string, scope: string, now: Date, slideTo: Date): Promise<boolean> {
  const result = await db
    .updateTable('elevationGrants')
    .set({ expiresAt: slideTo })
    .where('sessionId', '=', sessionId)
    .where('scope', '=', scope)
    .where('expiresAt', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function upsertElevationCode(db: Executor, code: { sessionId: string; scope: string; codeHash: string; expiresAt: Date }) {
  await db
    .insertInto('elevationCodes')
    .values({ ...code, attempts: 0 })
    .onConflict((oc) => oc.columns(['sessionId', 'scope']).doUpdateSet({ codeHash: code.codeHash, expiresAt: code.expiresAt, attempts: 0 }))
    .execute();
}

export async function findElevationCode(db: Executor, sessionId: string, scope: string) {
  return db.selectFrom('elevationCodes').selectAll().where('sessionId', '=', sessionId).where('scope', '=', scope).executeTakeFirst();
}

export async function countElevationAttempt(db: Executor, sessionId: string, scope: string) {
  await db
    .updateTable('elevationCodes')
    .set({ attempts: sql`attempts + 1` })
    .where('sessionId', '=', sessionId)
    .where('scope', '=', scope)
    .execute();
}

export async function deleteElevationCode(db: Executor, sessionId: string, scope: string) {
  await db.deleteFrom('elevationCodes').where('sessionId', '=', sessionId).where('scope', '=', scope).execute();
}

// Waitlist

export async function addToWaitlist(db: Executor, entry: { email: string; source: string | null; ref: string | null }) {
  await db
    .insertInto('waitlist')
    .values(entry)
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
}

export async function isAllowListed(db: Executor, email: string): Promise<boolean> {
  const row = await db.selectFrom('waitlist').select('allowed').where('email', '=', email).executeTakeFirst();
  return row?.allowed === true;
}

export async function hasPendingInvite(db: Executor, email: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('invites')
    .select('id')
    .where('email', '=', email)
    .where('acceptedAt', 'is', null)
    .where('revokedAt', 'is', null)
    .where('expiresAt', '>', now)
    .executeTakeFirst();
  return Boolean(row);
}
