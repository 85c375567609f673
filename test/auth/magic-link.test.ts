import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp } from '../helpers/app';
import { latestMagicToken, signIn } from '../helpers/sign-in';

type Started = Awaited<ReturnType<typeof startTestApp>>;

describe('magic-link sign-in (outbox)', () => {
  let t: Started;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('mails a link, redeems it once into a session and a personal org with a welcome workspace', async () => {
    const sent = await t.request('POST', '/api/auth', { body: { email: 'Ada@Example.com' } });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ ok: true });
    const token = await latestMagicToken(t, 'ada@example.com');

    const redeemed = await t.request('GET', `/api/auth?token=${token}`);
    expect(redeemed.status).toBe(302);
    expect(redeemed.headers.get('location')).toBe('/ada/welcome');
    const setCookie = redeemed.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^svc-session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/i); // COOKIE_SECURE=false in tests (plain http)
    const cookie = /svc-session=([^;]+)/.exec(setCookie)![1]!;

    const me = await t.request('GET', '/api/me', { as: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe('ada@example.com');
    expect(me.body.principal).toMatchObject({ principalType: 'user', name: 'ada' });
    expect(me.body.org).toMatchObject({ slug: 'ada', plan: 'free' });

    const reused = await t.request('GET', `/api/auth?token=${token}`);
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe('unauthorized');
    expect(reused.headers.get('set-cookie')).toBeNull();
  });

  it('a second sign-in reuses the account and org', async () => {
    const first = await signIn(t, 'grace@example.com');
    const second = await signIn(t, 'grace@example.com');
    expect(second.orgSlug).toBe(first.orgSlug);
    expect(second.cookie).not.toBe(first.cookie);
  });

  it('never gives an organisation a slug the app or the API uses as a path', async () => {
    // `/signin`, `/settings`, `/api`... are pages and prefixes, not organisations: the org moves aside.
    for (const [email, slug] of [['signin@example.com', 'signin-2'], ['settings@example.com', 'settings-2'], ['org-invites@example.com', 'org-invites-2'], ['api@example.com', 'api-2']]) {
      const session = await signIn(t, email!);
      expect(session.orgSlug).toBe(slug);
      expect((await t.request('GET', '/api/me', { as: { cookie: session.cookie } })).body.org.slug).toBe(slug);
    }
  });

  it('refuses an expired link', async () => {
    await t.request('POST', '/api/auth', { body: { email: 'late@example.com' } });
    const token = await latestMagicToken(t, 'late@example.com');
    clock.advance(15 * 60 * 1000 + 1000);
    const res = await t.request('GET', `/api/auth?token=${token}`);
    expect(res.status).toBe(401);
    const me = await t.request('GET', '/api/me', { as: { cookie: 'not-a-session' } });
    expect(me.status).toBe(401);
  });

  it('refuses an unknown token and stores tokens only hashed', async () => {
    const res = await t.request('GET', '/api/auth?token=made-up-token');
    expect(res.status).toBe(401);
    const token = await latestMagicToken(t, 'late@example.com');
    const stored = await t.services.db.selectFrom('magicLinks').select('tokenHash').execute();
    expect(stored.map((s) => s.tokenHash)).not.toContain(token);
  });

  it('signs out every browser session', async () => {
    const a = await signIn(t, 'multi@example.com');
    const b = await signIn(t, 'multi@example.com');
    const res = await t.request('DELETE', '/api/me/sessions', { as: { cookie: a.cookie } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revokedSessions: 2 });
    expect((await t.request('GET', '/api/me', { as: { cookie: b.cookie } })).status).toBe(401);
  });
});

describe('magic-link sign-in over real SMTP', () => {
  let t: Started;
  let smtp: SMTPServer;
  const received: Array<{ to: string; raw: string }> = [];
  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        let raw = '';
        stream.on('data', (chunk) => (raw += chunk.toString()));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo[0]?.address ?? '', raw });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as { port: number }).port;
    t = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Trellis <login@trellis.test>' } });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
    await new Promise<void>((resolve) => smtp.close(resolve));
  });

  it('delivers the link through SMTP and it signs in', async () => {
    const sent = await t.request('POST', '/api/auth', { body: { email: 'smtp@example.com' } });
    expect(sent.status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]!.to).toBe('smtp@example.com');
    expect(received[0]!.raw).toMatch(/From: Trellis <login@trellis.test>/);
    const unfolded = received[0]!.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const token = /token=([A-Za-z0-9_-]+)/.exec(unfolded)![1]!;
    const redeemed = await t.request('GET', `/api/auth?token=${token}`);
    expect(redeemed.status).toBe(302);
    expect(redeemed.headers.get('location')).toBe('/smtp/welcome');
    expect(await t.outbox()).toEqual([]);
  });
});

describe('waitlist sign-up mode', () => {
  let t: Started;
  beforeAll(async () => {
    t = await startTestApp({ env: { SIGNUP_MODE: 'waitlist' } });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('waitlists unknown e-mails without mailing them', async () => {
    const res = await t.request('POST', '/api/auth', { body: { email: 'stranger@example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ waitlisted: true });
    expect(await t.outbox()).toEqual([]);
    const row = await t.services.db.selectFrom('waitlist').selectAll().where('email', '=', 'stranger@example.com').executeTakeFirst();
    expect(row?.source).toBe('sign-in');
  });

  it('mails allow-listed addresses', async () => {
    await t.services.db.insertInto('waitlist').values({ email: 'vip@example.com', source: null, ref: null, allowed: true }).execute();
    const res = await t.request('POST', '/api/auth', { body: { email: 'vip@example.com' } });
    expect(res.body).toEqual({ ok: true });
    expect((await t.outbox()).map((m) => m.to)).toEqual(['vip@example.com']);
  });

  it('POST /api/waitlist is idempotent', async () => {
    const a = await t.request('POST', '/api/waitlist', { body: { email: 'twice@example.com', source: 'landing' } });
    const b = await t.request('POST', '/api/waitlist', { body: { email: 'twice@example.com', source: 'other' } });
    expect(a.body).toEqual({ waitlisted: true });
    expect(b.body).toEqual({ waitlisted: true });
    const rows = await t.services.db.selectFrom('waitlist').selectAll().where('email', '=', 'twice@example.com').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.source).toBe('landing');
  });
});
