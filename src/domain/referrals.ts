import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { newId } from '../lib/ids';
import { sha256Hex } from '../lib/secrets';
import { monthOf } from '../limits/monthly-meter';
import type { Tx } from '../persistence/database';
import {
  codeClickedForEmail,
  findReferralCode,
  insertReferralClick,
  insertReferralCode,
  insertReferralSignup,
  recentClickExists,
  recentClicks,
  referralCodeExists,
  referralCounts,
  waitlistRef,
} from '../persistence/referrals';
import type { Services } from './services';

/**
 * Referrals: each user has a code (made on first read). A click on a
 * referral link is recorded with its attribution hashed: the referee's
 * e-mail (so a later sign-up can be matched), and the visitor (IP and user
 * agent, salted with the code, so visitors cannot be followed across codes).
 * A new user is attributed to the newest click naming their e-mail in the
 * last 90 days, else to the `ref` they joined the waitlist with. A referee
 * is activated when an organisation they own moves to a paid plan. Counts
 * are for the current calendar UTC month, with all-time totals beside them.
 */

const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const CODE_LENGTH = 8;
const ATTRIBUTION_WINDOW_MS = 90 * 24 * 60 * 60_000;
/** The same visitor clicking the same link again within an hour is one click. */
const REPEAT_CLICK_MS = 60 * 60_000;
const RECENT_CLICKS = 20;
const DAY_MS = 24 * 60 * 60_000;

export const REFERRAL_CODE_PATTERN = /^[a-z0-9]{4,32}$/;

function newCode(): string {
  const id = newId('x', CODE_LENGTH).slice(2).toLowerCase();
  return [...id].map((c) => CODE_ALPHABET[c.charCodeAt(0) % CODE_ALPHABET.length]).join('');
}

/** Of a normalised e-mail (`normaliseEmail`). */
function emailHash(email: string): string {
  return sha256Hex(`trellis-referral:${email}`);
}

async function codeOf(services: Services, userId: string): Promise<string> {
  for (;;) {
    const existing = await findReferralCode(services.db, userId);
    if (existing) return existing;
    // A taken code (or a concurrent first read) just goes round again.
    await insertReferralCode(services.db, userId, newCode(), services.clock.now());
  }
}

export type ReferralSummary = {
  code: string;
  url: string;
  clicks: number;
  signedUp: number;
  activated: number;
  daysLeftInMonth: number;
  monthEndsAt: string;
  allTime: { clicks: number; signedUp: number; activated: number };
  recentClicks: Array<{ at: string; via: string | null; withEmail: boolean }>;
};

export async function referralSummary(services: Services, actor: Actor): Promise<ReferralSummary> {
  const code = await codeOf(services, actor.userId);
  const now = services.clock.now();
  const { resetAt } = monthOf(now);
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const [counts, clicks] = await Promise.all([referralCounts(services.db, code, monthStart), recentClicks(services.db, code, RECENT_CLICKS)]);
  return {
    code,
    url: `${services.config.publicUrl}/?ref=${code}`,
    clicks: counts.clicks.recent,
    signedUp: counts.signedUp.recent,
    activated: counts.activated.recent,
    daysLeftInMonth: Math.ceil((resetAt.getTime() - now.getTime()) / DAY_MS),
    monthEndsAt: resetAt.toISOString(),
    allTime: { clicks: counts.clicks.all, signedUp: counts.signedUp.all, activated: counts.activated.all },
    recentClicks: clicks.map((c) => ({ at: c.createdAt.toISOString(), via: c.via, withEmail: c.refereeEmailHash !== null })),
  };
}

/** `refereeEmail` normalised. */
export type ReferralClick = { code: string; refereeEmail?: string; via?: string };

/** Records a click on a referral link; a repeat by the same visitor within the hour is not counted again. */
export async function recordReferralClick(services: Services, click: ReferralClick, visitor: { ip: string; userAgent: string }): Promise<{ recorded: boolean }> {
  if (!(await referralCodeExists(services.db, click.code))) throw errors.notFound('Referral code');
  const now = services.clock.now();
  const visitorHash = sha256Hex(`${click.code}|${visitor.ip}|${visitor.userAgent}`);
  if (await recentClickExists(services.db, click.code, visitorHash, new Date(now.getTime() - REPEAT_CLICK_MS))) return { recorded: false };
  await insertReferralClick(services.db, {
    id: newId('rc'),
    code: click.code,
    refereeEmailHash: click.refereeEmail ? emailHash(click.refereeEmail) : null,
    via: click.via ?? null,
    visitorHash,
    createdAt: now,
  });
  return { recorded: true };
}

/** Called when an account is created (`email` normalised): attributes the new user to the referral code that brought them, if any. */
export async function attributeReferralSignup(services: Services, tx: Tx, userId: string, email: string): Promise<void> {
  const now = services.clock.now();
  const clicked = await codeClickedForEmail(tx, emailHash(email), new Date(now.getTime() - ATTRIBUTION_WINDOW_MS));
  const ref = clicked ?? (await waitlistRef(tx, email));
  if (!ref || !REFERRAL_CODE_PATTERN.test(ref) || !(await referralCodeExists(tx, ref))) return;
  await insertReferralSignup(tx, { userId, code: ref, signedUpAt: now });
}
