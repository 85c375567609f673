import { errors } from '../errors';
import { RESERVED_ORG_SLUGS } from '../model/app-paths';
import { newId } from '../lib/ids';
import { hashToken, randomToken } from '../lib/secrets';
import {
  addOrgMember,
  addToWaitlist,
  consumeMagicLink,
  findOrgById,
  findUserByEmail,
  hasPendingInvite,
  insertMagicLink,
  insertOrg,
  insertSession,
  insertUser,
  isAllowListed,
  setPrimaryOrg,
  slugTaken,
  touchSignIn,
} from '../persistence/accounts';
import type { Executor, Tx } from '../persistence/database';
import type { Services } from './services';
import { attributeReferralSignup } from './referrals';
import { seedCreatedWorkspace } from './workspace-documents';
import { createWorkspace } from './workspaces';

export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000;
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const WELCOME_SLUG = 'welcome';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A path on this server a redeemed link may lead to: relative, and never `//host` or `/\\host` (which browsers read as another site). */
export function isSafeReturnPath(path: string): boolean {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(path) && path.length <= 4000;
}

/** The waitlist form: repeating an address keeps its first entry. */
export async function joinWaitlist(services: Services, entry: { email: string; source?: string; ref?: string }): Promise<void> {
  await addToWaitlist(services.db, { email: normaliseEmail(entry.email), source: entry.source ?? null, ref: entry.ref ?? null });
}

/**
 * Sends a sign-in link, or puts an unknown address on the waitlist when
 * sign-up is invite-only. Known users, allow-listed and invited addresses
 * always get a link. `returnTo` (a path here, such as an OAuth consent page)
 * is where the redeemed link goes instead of the welcome workspace.
 */
export async function requestMagicLink(services: Services, rawEmail: string, options: { returnTo?: string } = {}): Promise<{ ok: true } | { waitlisted: true }> {
  const email = normaliseEmail(rawEmail);
  if (services.config.signupMode === 'waitlist' && !(await mayJoin(services, email))) {
    await addToWaitlist(services.db, { email, source: 'sign-in', ref: null });
    return { waitlisted: true };
  }
  const token = randomToken();
  const now = services.clock.now();
  const returnTo = options.returnTo !== undefined && isSafeReturnPath(options.returnTo) ? options.returnTo : null;
  await insertMagicLink(services.db, { tokenHash: hashToken(token), email, expiresAt: new Date(now.getTime() + MAGIC_LINK_TTL_MS), returnTo });
  const link = `${services.config.publicUrl}/api/auth?token=${encodeURIComponent(token)}`;
  await services.mailer.send({
    to: email,
    subject: 'Your Trellis sign-in link',
    text: `Sign in to Trellis:\n\n${link}\n\nThe link works once and expires in 15 minutes. If you did not ask for it, ignore this mail.`,
    html: `<p><a href="${link}">Sign in to Trellis</a></p><p>The link works once and expires in 15 minutes. If you did not ask for it, ignore this mail.</p>`,
  });
  return { ok: true };
}

/** Whether an address may have an account in waitlist mode: known, allow-listed or invited. */
export async function mayJoin(services: Services, email: string): Promise<boolean> {
  if (await findUserByEmail(services.db, email)) return true;
  if (await isAllowListed(services.db, email)) return true;
  return hasPendingInvite(services.db, email, services.clock.now());
}

/**
 * Redeems a magic link (once, within 15 minutes) into a session. The first
 * sign-in creates the user, a personal organisation and its `welcome` workspace.
 */
export async function redeemMagicLink(
  services: Services,
  token: string,
  userAgent: string | null,
): Promise<{ sessionToken: string; orgSlug: string; userId: string; expiresAt: Date; returnTo: string | null }> {
  const now = services.clock.now();
  const session = await services.db.transaction().execute(async (tx) => {
    const link = await consumeMagicLink(tx, hashToken(token), now);
    if (!link) throw errors.unauthorized('This sign-in link is invalid, already used or expired. Request a new one.');
    const account = await ensureAccount(services, tx, link.email);
    return { ...(await openSession(tx, account, userAgent, now)), returnTo: link.returnTo };
  });
  // Documents are seeded after the SQL rows commit (the sync engine commits through its own transaction).
  if (session.welcome) await seedCreatedWorkspace(services, session.welcome);
  return session;
}

/**
 * Opens a session for an e-mail an identity provider has verified (OpenID
 * Connect): the same account, first-sign-in creation and session as a
 * redeemed magic link. The caller has applied the sign-up rules.
 */
export async function signInVerifiedEmail(
  services: Services,
  email: string,
  userAgent: string | null,
  options: { name?: string } = {},
): Promise<{ sessionToken: string; orgSlug: string; userId: string; expiresAt: Date }> {
  const now = services.clock.now();
  const session = await services.db.transaction().execute(async (tx) => {
    const account = await ensureAccount(services, tx, email, options);
    return openSession(tx, account, userAgent, now);
  });
  if (session.welcome) await seedCreatedWorkspace(services, session.welcome);
  return session;
}

/** A new session for an account that just proved who it is (a redeemed link, a provider's verified e-mail). */
async function openSession(tx: Tx, account: Awaited<ReturnType<typeof ensureAccount>>, userAgent: string | null, now: Date) {
  await touchSignIn(tx, account.userId, now);
  const sessionToken = randomToken();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await insertSession(tx, { id: newId('ses'), tokenHash: hashToken(sessionToken), userId: account.userId, expiresAt, userAgent, createdAt: now });
  return { sessionToken, orgSlug: account.orgSlug, userId: account.userId, expiresAt, welcome: account.welcome };
}

/** Finds or creates the user for an e-mail, with a personal org and welcome workspace on creation. */
export async function ensureAccount(services: Services, tx: Tx, rawEmail: string, options: { name?: string; orgName?: string } = {}) {
  const email = normaliseEmail(rawEmail);
  const existing = await findUserByEmail(tx, email);
  if (existing?.primaryOrgId) {
    const org = await findOrgById(tx, existing.primaryOrgId);
    if (!org) throw new Error(`user ${existing.id} has a primary org that does not exist`);
    return { userId: existing.id, orgId: existing.primaryOrgId, orgSlug: org.slug, created: false, welcome: null };
  }
  const userId = existing?.id ?? newId('usr');
  const localPart = email.split('@')[0] ?? 'user';
  if (!existing) {
    await insertUser(tx, { id: userId, email, name: options.name ?? localPart, primaryOrgId: null });
    await attributeReferralSignup(services, tx, userId, email);
  }
  const orgSlug = await uniqueOrgSlug(tx, options.orgName ?? localPart);
  const orgId = newId('org');
  await insertOrg(tx, { id: orgId, slug: orgSlug, name: options.orgName ?? `${options.name ?? localPart}'s workspace`, personal: true });
  await addOrgMember(tx, { orgId, userId, role: 'owner' });
  await setPrimaryOrg(tx, userId, orgId);
  const principal = { principalType: 'user' as const, id: userId, name: options.name ?? localPart, avatarUrl: null };
  const welcome = await createWorkspace(services, tx, {
    orgId,
    slug: WELCOME_SLUG,
    name: 'Welcome',
    mode: 'table',
    visibility: 'private',
    createdBy: principal,
    ownerUserId: userId,
  });
  return { userId, orgId, orgSlug, created: true, welcome };
}

export function slugify(text: string): string {
  const slug = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return slug || 'org';
}

async function uniqueOrgSlug(db: Executor, base: string): Promise<string> {
  const root = slugify(base);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? root : `${root}-${n}`;
    // A reserved slug counts as taken: signin@example.com gets `signin-2`, never the sign-in page's path.
    if (!RESERVED_ORG_SLUGS.has(candidate) && !(await slugTaken(db, candidate))) return candidate;
  }
}
