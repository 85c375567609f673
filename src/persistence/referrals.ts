import type { Executor } from './database';

/** Referral codes, clicks (attribution stored hashed) and attributed sign-ups. */

export async function findReferralCode(db: Executor, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('referralCodes').select('code').where('userId', '=', userId).executeTakeFirst())?.code;
}

/** Claims `code` for the user; false when the code is taken (the caller tries another), or the user already has one. */
export async function insertReferralCode(db: Executor, userId: string, code: string, now: Date): Promise<boolean> {
  const row = await db
    .insertInto('referralCodes')
    .values({ userId, code, createdAt: now })
    .onConflict((oc) => oc.doNothing())
    .returning('code')
    .executeTakeFirst();
  return Boolean(row);
}

export async function referralCodeExists(db: Executor, code: string): Promise<boolean> {
  return Boolean(await db.selectFrom('referralCodes').select('code').where('code', '=', code).executeTakeFirst());
}

export async function insertReferralClick(
  db: Executor,
  click: { id: string; code: string; refereeEmailHash: string | null; via: string | null; visitorHash: string; createdAt: Date },
) {
  await db.insertInto('referralClicks').values(click).execute();
}

/** Whether this visitor already clicked this code since `since` (repeat clicks are counted once). */
export async function recentClickExists(db: Executor, code: string, visitorHash: string, since: Date): Promise<boolean> {
  const row = await db
    .selectFrom('referralClicks')
    .select('id')
    .where('code', '=', code)
    .where('visitorHash', '=', visitorHash)
    .where('createdAt', '>=', since)
    .executeTakeFirst();
  return Boolean(row);
}

/** The code of the newest click naming this (hashed) e-mail since `since`. */
export async function codeClickedForEmail(db: Executor, refereeEmailHash: string, since: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('referralClicks')
    .select('code')
    .where('refereeEmailHash', '=', refereeEmailHash)
    .where('createdAt', '>=', since)
    .orderBy('createdAt', 'desc')
    .executeTakeFirst();
  return row?.code;
}

export async function waitlistRef(db: Executor, email: string): Promise<string | null> {
  return (await db.selectFrom('waitlist').select('ref').where('email', '=', email).executeTakeFirst())?.ref ?? null;
}

export async function insertReferralSignup(db: Executor, signup: { userId: string; code: string; signedUpAt: Date }) {
  await db.insertInto('referralSignups').values(signup).onConflict((oc) => oc.column('userId').doNothing()).execute();
}

/** Clicks, sign-ups and activations of a code: in all, and since `since`. */
export async function referralCounts(db: Executor, code: string, since: Date) {
  const clicks = await db
    .selectFrom('referralClicks')
    .select((eb) => [eb.fn.countAll<number>().as('all'), eb.fn.count<number>(eb.case().when('createdAt', '>=', since).then(1).end()).as('recent')])
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  const signups = await db
    .selectFrom('referralSignups')
    .select((eb) => [
      eb.fn.countAll<number>().as('signedUp'),
      eb.fn.count<number>(eb.case().when('signedUpAt', '>=', since).then(1).end()).as('signedUpRecently'),
      eb.fn.count<number>('activatedAt').as('activated'),
      eb.fn.count<number>(eb.case().when('activatedAt', '>=', since).then(1).end()).as('activatedRecently'),
    ])
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  return {
    clicks: { all: Number(clicks.all), recent: Number(clicks.recent) },
    signedUp: { all: Number(signups.signedUp), recent: Number(signups.signedUpRecently) },
    activated: { all: Number(signups.activated), recent: Number(signups.activatedRecently) },
  };
}

export async function recentClicks(db: Executor, code: string, limit: number) {
  return db
    .selectFrom('referralClicks')
    .select(['createdAt', 'via', 'refereeEmailHash'])
    .where('code', '=', code)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
