import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/** The web app on the API's port: app paths get the HTML, API paths never do. */
describe('web app serving', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  it('answers app paths with the app shell, uncached, under a strict CSP', async () => {
    for (const path of ['/', '/acme', '/acme/welcome', '/acme/welcome/table', '/settings', '/invites/abc', '/signin?next=x']) {
      const res = await t.request('GET', path, { headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.text, path).toContain('<div id="app">');
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(res.headers.get('content-security-policy'), path).toContain("script-src 'self'");
    }
  });

  it('never shadows the API: unknown /api paths and other server paths answer the JSON 404', async () => {
    for (const path of ['/api/nope', '/api', '/api/workspaces/x/nope/deeper', '/share/files/abc', '/oauth/authorize-nope', '/.well-known/nope', '/openapi.json/x']) {
      const res = await t.request('GET', path, { headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(404);
      expect(res.body?.error?.code, path).toBe('not_found');
      expect(res.body?.requestId, path).toMatch(/^req_/);
    }
    expect((await t.request('GET', '/openapi.json')).body.openapi).toBe('3.1.0');
    expect((await t.request('GET', '/api/health')).status).toBe(200);
    // Writes to app paths are not pages.
    expect((await t.request('POST', '/acme/welcome', { body: {} })).status).toBe(404);
  });

  it('serves built assets immutable and the service worker revalidated', async () => {
    const shell = (await t.request('GET', '/')).text;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(shell)?.[1];
    expect(script).toBeDefined();
    const asset = await t.request('GET', script!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');

    const worker = await t.request('GET', '/sw.js');
    expect(worker.status).toBe(200);
    expect(worker.text).toContain('trellis-shell-');
    expect(worker.text).not.toContain('__SHELL_FILES__');
    expect(worker.headers.get('cache-control')).toContain('max-age=0');

    expect((await t.request('GET', '/assets/missing-file.js')).status).toBe(404);
    expect((await t.request('GET', '/favicon-missing.ico')).status).toBe(404);
  });

  it('refuses path tricks without leaking files outside the build', async () => {
    for (const path of ['/assets/..%2f..%2fpackage.json', '/..%2fpackage.json', '/assets/%2e%2e/%2e%2e/package.json', '/%E0%A4%A']) {
      const res = await t.request('GET', path);
      expect(res.status, path).not.toBe(500);
      expect(res.text, path).not.toContain('"name": "trellis"');
    }
  });

  it('tells the app in a cookie it can read whether this browser holds a live session, so a signed-out page never asks /api/me', async () => {
    const hint = (res: { headers: Headers }) => res.headers.getSetCookie().find((line) => line.startsWith('svc-signed-in='));
    expect(hint(await t.request('GET', '/acme/welcome'))).toBeUndefined();

    const { cookie } = await signIn(t, 'hint@example.com');
    const signedIn = hint(await t.request('GET', '/hint/welcome', { as: { cookie } }));
    expect(signedIn).toMatch(/^svc-signed-in=1;/);
    expect(signedIn).toMatch(/Path=\//);
    expect(signedIn).toMatch(/SameSite=Lax/i);
    expect(signedIn).not.toMatch(/HttpOnly/i);
    expect(signedIn).toMatch(/Max-Age=2592000/);

    // A session that ended: the hint goes with it (and stays away without a session cookie at all).
    expect((await t.request('DELETE', '/api/me/sessions', { as: { cookie } })).status).toBe(200);
    const ended = hint(await t.request('GET', '/hint/welcome', { headers: { cookie: `svc-session=${cookie}; svc-signed-in=1` } }));
    expect(ended).toMatch(/^svc-signed-in=;/);
    expect(ended).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(hint(await t.request('GET', '/hint/welcome', { headers: { cookie: 'svc-signed-in=1' } }))).toMatch(/^svc-signed-in=;/);
    // Assets and the API are not pages: they never touch it.
    expect(hint(await t.request('GET', '/sw.js', { as: { cookie } }))).toBeUndefined();
  });

  it('does not count app pages against the monthly API meter', async () => {
    const before = await t.request('GET', '/api/health');
    await t.request('GET', '/acme/welcome');
    await t.request('GET', '/sw.js');
    const after = await t.request('GET', '/api/health');
    expect(after.headers.get('x-ratelimit-monthly-used')).toBe(before.headers.get('x-ratelimit-monthly-used'));
  });
});
