import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { payThroughCheckout } from '../billing/helpers';
import { insertKey, signInUser, type TestUser } from '../workspaces/helpers';

let t: TestApp & { store: { dispose(): Promise<void> } };
// 11 March: 21 days to the end of the month.
const clock = new ManualClock(new Date('2027-03-11T00:00:00Z'));
let ada: TestUser;
let code: string;

const me = (user: { as: TestUser['as'] }) => t.request('GET', '/api/referrals/me', { as: user.as });
const click = (body: unknown, userAgent = 'Mozilla/5.0 test') => t.request('POST', '/api/referrals/click', { body, headers: { 'user-agent': userAgent } });

beforeAll(async () => {
  t = await startTestApp({ clock });
  ada = await signInUser(t, 'ada@referrals.test');
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('referrals', () => {
  it('makes a code on first read and keeps it', async () => {
    const first = await me(ada);
    expect(first.status).toBe(200);
    code = first.body.code;
    expect(code).toMatch(/^[a-z0-9]{8}$/);
    expect(first.body).toEqual({
      code,
      url: `${t.url}/?ref=${code}`,
      clicks: 0,
      signedUp: 0,
      activated: 0,
      daysLeftInMonth: 21,
      monthEndsAt: '2027-04-01T00:00:00.000Z',
      allTime: { clicks: 0, signedUp: 0, activated: 0 },
      recentClicks: [],
    });
    expect((await me(ada)).body.code).toBe(code);
    // An agent's code is its owner's.
    const key = await insertKey(t, ada, { role: 'viewer' });
    expect((await me(key)).body.code).toBe(code);
    expect((await t.request('GET', '/api/referrals/me')).status).toBe(401);
    const other = await signInUser(t, 'other@referrals.test');
    expect((await me(other)).body.code).not.toBe(code);
  });

  it('records clicks without an account, hashed; a repeat by the same visitor within the hour counts once', async () => {
    expect((await click({ code, via: 'newsletter' })).body).toEqual({ recorded: true });
    expect((await click({ code, via: 'newsletter' })).body).toEqual({ recorded: false });
    expect((await click({ code }, 'Another browser')).body).toEqual({ recorded: true });
    clock.advance(3600_000 + 1);
    expect((await click({ code, via: 'newsletter' })).body).toEqual({ recorded: true });

    const summary = (await me(ada)).body;
    expect(summary.clicks).toBe(3);
    expect(summary.recentClicks).toHaveLength(3);
    expect(summary.recentClicks[0]).toEqual({ at: clock.now().toISOString(), via: 'newsletter', withEmail: false });

    expect((await click({ code: 'nosuchcode' })).status).toBe(404);
    expect((await click({ code: 'BAD CODE!' })).status).toBe(422);
    expect((await click({ code, refereeEmail: 'not-an-email' })).status).toBe(422);
    expect((await click({ code, extra: 1 })).status).toBe(400);
  });

  it('attributes a sign-up to the click naming the e-mail, or to the waitlist ref, and counts activation on payment', async () => {
    expect((await click({ code, refereeEmail: 'Cleo@Referrals.test', via: 'chat' }, 'Cleo browser')).body.recorded).toBe(true);
    const stored = JSON.stringify(await t.services.db.selectFrom('referralClicks').selectAll().execute());
    expect(stored.toLowerCase()).not.toContain('cleo@referrals.test');

    const cleo = await signInUser(t, 'cleo@referrals.test');
    expect((await me(ada)).body).toMatchObject({ signedUp: 1, activated: 0 });

    expect((await t.request('POST', '/api/waitlist', { body: { email: 'dan@referrals.test', source: 'landing', ref: code } })).body).toEqual({ waitlisted: true });
    await signInUser(t, 'dan@referrals.test');
    // Nobody else's sign-up is attributed.
    await signInUser(t, 'eve@referrals.test');
    expect((await me(ada)).body).toMatchObject({ signedUp: 2, activated: 0, allTime: { signedUp: 2 } });

    await payThroughCheckout(t, cleo, 'pro');
    expect((await me(ada)).body).toMatchObject({ signedUp: 2, activated: 1 });
  });

  it('counts by calendar month, keeping all-time totals', async () => {
    clock.set(new Date('2027-04-30T12:00:00Z'));
    ada = await signInUser(t, 'ada@referrals.test'); // the March session has expired
    const april = (await me(ada)).body;
    expect(april).toMatchObject({ clicks: 0, signedUp: 0, activated: 0, daysLeftInMonth: 1, monthEndsAt: '2027-05-01T00:00:00.000Z' });
    expect(april.allTime).toEqual({ clicks: 4, signedUp: 2, activated: 1 });
  });
});

describe('waitlist', () => {
  it('is idempotent: a repeated e-mail (in any case) keeps its first entry', async () => {
    const first = await t.request('POST', '/api/waitlist', { body: { email: 'wait@referrals.test', source: 'landing' } });
    const again = await t.request('POST', '/api/waitlist', { body: { email: 'WAIT@Referrals.test', source: 'twitter', ref: 'zzzz' } });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual({ waitlisted: true });
    const rows = await t.services.db.selectFrom('waitlist').selectAll().where('email', '=', 'wait@referrals.test').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ source: 'landing', ref: null });
  });
});
