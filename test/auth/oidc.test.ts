import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/bootstrap';
import { ConfigError, loadConfig } from '../../src/config';
import type { Clock } from '../../src/lib/clock';
import { startTestApp } from '../helpers/app';
import { oidcSignIn, startOidcProvider, type OidcDance, type TestOidcProvider } from '../helpers/oidc';
import { signIn } from '../helpers/sign-in';

type Started = Awaited<ReturnType<typeof startTestApp>>;

/** Real time plus an offset the test moves (the provider keeps real time). */
class OffsetClock implements Clock {
  offsetMs = 0;
  now() {
    return new Date(Date.now() + this.offsetMs);
  }
}

describe('OpenID Connect sign-in against a real provider', () => {
  let t: Started;
  let idp: TestOidcProvider;
  const clock = new OffsetClock();

  beforeAll(async () => {
    idp = await startOidcProvider();
    t = await startTestApp({
      clock,
      env: { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_NAME: 'Acme SSO' },
    });
    idp.configure(`${t.url}/api/auth/oidc/callback`);
  });
  afterAll(async () => {
    await t?.close();
    await t?.store.dispose();
    await idp?.close();
  });

  async function userCount(email: string) {
    const rows = await t.services.db.selectFrom('users').select('id').where('email', '=', email).execute();
    return rows.length;
  }

  function expectRefused(dance: OidcDance, code: string) {
    expect(dance.location).toBe(`/signin?error=${code}`);
    expect(dance.session).toBeNull();
    // Nothing of the exchange travels back to the browser in the URL.
    expect(dance.location).not.toMatch(/code=|token|state=/);
  }

  it('tells the web app the method and the name on its button', async () => {
    const methods = await t.request('GET', '/api/auth/methods');
    expect(methods.status).toBe(200);
    expect(methods.body).toEqual({ magicLink: true, oidc: { name: 'Acme SSO', startUrl: '/api/auth/oidc/start' } });
  });

  it('signs in through the whole redirect dance: the session cookie reads /api/me as the person; a second sign-in finds the same user', async () => {
    idp.signInAs({ sub: 'ada-1', email: 'Ada@Acme.test', email_verified: true, name: 'Ada Lovelace' });
    const first = await oidcSignIn(t.url);
    expect(first.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.location).toBe('/ada/welcome');
    const me = await t.request('GET', '/api/me', { as: { cookie: first.session! } });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe('ada@acme.test');
    expect(me.body.principal).toMatchObject({ principalType: 'user', name: 'Ada Lovelace' });
    expect(me.body.org).toMatchObject({ slug: 'ada' });

    const second = await oidcSignIn(t.url);
    expect(second.session).not.toBeNull();
    expect(second.session).not.toBe(first.session);
    const again = await t.request('GET', '/api/me', { as: { cookie: second.session! } });
    expect(again.body.user.id).toBe(me.body.user.id);
    expect(again.body.org.slug).toBe('ada');
    expect(await userCount('ada@acme.test')).toBe(1);
  });

  it('finds the person a magic link created by verified e-mail, and keeps `next` on this server only', async () => {
    const linked = await signIn(t, 'grace@acme.test');
    idp.signInAs({ sub: 'grace-sso', email: 'grace@acme.test', email_verified: true });
    const back = await oidcSignIn(t.url, { next: '/grace/welcome?view=grid' });
    expect(back.location).toBe('/grace/welcome?view=grid');
    const me = await t.request('GET', '/api/me', { as: { cookie: back.session! } });
    expect(me.body.org.slug).toBe(linked.orgSlug);
    expect(await userCount('grace@acme.test')).toBe(1);

    for (const hostile of ['//evil.example/x', '/\\evil.example', 'https://evil.example/']) {
      const dance = await oidcSignIn(t.url, { next: hostile });
      expect(dance.location, hostile).toBe('/grace/welcome');
      expect(dance.session).not.toBeNull();
    }
  });

  it('refuses an ID token issued for another client (wrong audience): clear error, no session, no user', async () => {
    idp.signInAs({ sub: 'mallory-1', email: 'mallory@acme.test', email_verified: true });
    idp.tamper.audience = 'another-client';
    try {
      expectRefused(await oidcSignIn(t.url), 'oidc_failed');
    } finally {
      idp.tamper.audience = null;
    }
    expect(await userCount('mallory@acme.test')).toBe(0);
    // The same person with an honest token gets in: it was the audience that was refused.
    expect((await oidcSignIn(t.url)).session).not.toBeNull();
  });

  it('refuses an expired ID token (the server’s clock is past its exp)', async () => {
    idp.signInAs({ sub: 'late-1', email: 'late@acme.test', email_verified: true });
    clock.offsetMs = 2 * 60 * 60 * 1000; // the provider's ID tokens live one hour
    try {
      expectRefused(await oidcSignIn(t.url), 'oidc_failed');
    } finally {
      clock.offsetMs = 0;
    }
    expect(await userCount('late@acme.test')).toBe(0);
    expect((await oidcSignIn(t.url)).session).not.toBeNull();
  });

  it('refuses an e-mail the provider has not verified, or none at all', async () => {
    idp.signInAs({ sub: 'unverified-1', email: 'eve@acme.test', email_verified: false });
    expectRefused(await oidcSignIn(t.url), 'oidc_email_unverified');
    idp.signInAs({ sub: 'unverified-2', email: 'eve@acme.test' });
    expectRefused(await oidcSignIn(t.url), 'oidc_email_unverified');
    idp.signInAs({ sub: 'unverified-3', email: 'eve@acme.test', email_verified: 'false' as unknown as boolean });
    expectRefused(await oidcSignIn(t.url), 'oidc_email_unverified');
    expect(await userCount('eve@acme.test')).toBe(0);
    idp.signInAs({ sub: 'no-mail' });
    expectRefused(await oidcSignIn(t.url), 'oidc_email_missing');
  });

  it('refuses a domain outside OIDC_ALLOWED_DOMAINS', async () => {
    const settings = t.services.config.oidc!;
    settings.allowedDomains = ['acme.test'];
    try {
      idp.signInAs({ sub: 'outsider-1', email: 'out@elsewhere.test', email_verified: true });
      expectRefused(await oidcSignIn(t.url), 'oidc_domain_not_allowed');
      expect(await userCount('out@elsewhere.test')).toBe(0);
      // A look-alike subdomain is another domain.
      idp.signInAs({ sub: 'outsider-2', email: 'x@evil.acme.test', email_verified: true });
      expectRefused(await oidcSignIn(t.url), 'oidc_domain_not_allowed');
      idp.signInAs({ sub: 'insider-1', email: 'in@ACME.test', email_verified: true });
      expect((await oidcSignIn(t.url)).session).not.toBeNull();
    } finally {
      settings.allowedDomains = [];
    }
  });

  it('in waitlist mode refuses an unknown person (put on the waitlist) and lets a known one in', async () => {
    t.services.config.signupMode = 'waitlist';
    try {
      idp.signInAs({ sub: 'stranger-1', email: 'stranger@acme.test', email_verified: true });
      expectRefused(await oidcSignIn(t.url), 'oidc_waitlisted');
      expect(await userCount('stranger@acme.test')).toBe(0);
      const waiting = await t.services.db.selectFrom('waitlist').select(['email', 'source']).where('email', '=', 'stranger@acme.test').execute();
      expect(waiting).toEqual([{ email: 'stranger@acme.test', source: 'oidc' }]);
      // The magic link says the same to the same person.
      expect((await t.request('POST', '/api/auth', { body: { email: 'stranger@acme.test' } })).body).toEqual({ waitlisted: true });

      idp.signInAs({ sub: 'ada-1', email: 'ada@acme.test', email_verified: true });
      expect((await oidcSignIn(t.url)).session).not.toBeNull();
    } finally {
      t.services.config.signupMode = 'open';
    }
  });

  it('refuses a callback with no sign-in started in this browser, a replayed one, and a cancelled one', async () => {
    idp.signInAs({ sub: 'ada-1', email: 'ada@acme.test', email_verified: true });
    const done = await oidcSignIn(t.url);
    expect(done.session).not.toBeNull();
    // The same redirect again, even with the pending cookie a browser would have dropped: the code was spent.
    const replayed = await fetch(done.callback!.url, { redirect: 'manual', headers: { cookie: done.callback!.cookie } });
    expect(replayed.headers.get('location')).toBe('/signin?error=oidc_failed');
    expect(replayed.headers.getSetCookie().some((c) => c.startsWith('svc-session='))).toBe(false);

    const stray = await t.request('GET', '/api/auth/oidc/callback?code=abc&state=def');
    expect(stray.status).toBe(302);
    expect(stray.headers.get('location')).toBe('/signin?error=oidc_failed');
    expect(stray.headers.getSetCookie().some((c) => c.startsWith('svc-session='))).toBe(false);

    const cancelled = await t.request('GET', '/api/auth/oidc/callback?error=access_denied&error_description=The%20user%20said%20no');
    expect(cancelled.headers.get('location')).toBe('/signin?error=oidc_cancelled');
  });
});

describe('a server without OpenID Connect', () => {
  it('says so to the web app and answers its sign-in routes with 404', async () => {
    const plain = await startTestApp();
    try {
      expect((await plain.request('GET', '/api/auth/methods')).body).toEqual({ magicLink: true, oidc: null });
      for (const path of ['/api/auth/oidc/start?next=/x', '/api/auth/oidc/callback?code=a&state=b']) {
        const res = await plain.request('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body.error.code).toBe('not_found');
        expect(res.headers.getSetCookie()).toEqual([]);
      }

      // Configured, but the provider cannot be reached: a clear error on the sign-in page, no redirect elsewhere.
      plain.services.config.oidc = { issuer: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', allowedDomains: [], name: 'Down' };
      const down = await plain.request('GET', '/api/auth/oidc/start');
      expect(down.status).toBe(302);
      expect(down.headers.get('location')).toBe('/signin?error=oidc_failed');
      expect(down.headers.getSetCookie()).toEqual([]);
    } finally {
      await plain.close();
      await plain.store.dispose();
    }
  });
});

describe('OpenID Connect in the log', () => {
  it('the process logger drops the authorization code of a callback URL', () => {
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((out += chunk), done()) });
    createLogger('info', sink).info({ req: { method: 'GET', url: '/api/auth/oidc/callback?code=Jxfiias2eMm6YHgeoyab&state=T-D60oXD&iss=http%3A%2F%2F127.0.0.1', headers: { cookie: 'svc-oidc=pending' }, socket: {} } }, 'incoming request');
    expect(out).toContain('/api/auth/oidc/callback?code=[redacted]&state=');
    expect(out).not.toMatch(/Jxfiias2eMm6YHgeoyab|svc-oidc=pending/);
  });
});

describe('OpenID Connect configuration', () => {
  const base = { OIDC_ISSUER: 'https://login.example.com', OIDC_CLIENT_ID: 'trellis', OIDC_CLIENT_SECRET: 's3cret-value' };

  it('is all or nothing, names what is missing and never echoes the secret', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
    expect(loadConfig(base).oidc).toEqual({ issuer: base.OIDC_ISSUER, clientId: 'trellis', clientSecret: 's3cret-value', allowedDomains: [], name: 'login.example.com' });
    expect(loadConfig({ ...base, OIDC_ALLOWED_DOMAINS: ' Acme.com, acme.co.uk ,', OIDC_NAME: 'Okta' }).oidc).toMatchObject({ allowedDomains: ['acme.com', 'acme.co.uk'], name: 'Okta' });

    for (const [env, missing] of [
      [{ OIDC_ISSUER: base.OIDC_ISSUER }, ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']],
      [{ OIDC_ISSUER: base.OIDC_ISSUER, OIDC_CLIENT_ID: 'trellis' }, ['OIDC_CLIENT_SECRET']],
      [{ OIDC_CLIENT_ID: 'trellis', OIDC_CLIENT_SECRET: 'x' }, ['OIDC_ISSUER']],
      [{ OIDC_ALLOWED_DOMAINS: 'acme.com' }, ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']],
    ] as const) {
      try {
        loadConfig(env);
        expect.unreachable(JSON.stringify(env));
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(missing);
      }
    }
    expect(() => loadConfig({ ...base, OIDC_ALLOWED_DOMAINS: '@acme.com' })).toThrow(/OIDC_ALLOWED_DOMAINS: .*not a domain/);
    expect(() => loadConfig({ ...base, OIDC_ISSUER: 'ftp://login.example.com' })).toThrow(/OIDC_ISSUER/);
    expect(() => loadConfig({ ...base, OIDC_CLIENT_SECRET: 's3cret-value', OIDC_ISSUER: 'not a url', OIDC_ALLOWED_DOMAINS: 's3cret-value' })).toThrow(ConfigError);
  });

  it('npm start exits with 78 when the issuer comes without a client id', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main.ts')], {
      env: { ...process.env, PORT: '0', OIDC_ISSUER: 'https://login.example.com', OIDC_CLIENT_ID: '', OIDC_CLIENT_SECRET: '', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(78);
    expect(output).toMatch(/OIDC_CLIENT_ID: required/);
  }, 60_000);
});
