import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';

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

  it('does not count app pages against the monthly API meter', async () => {
    const before = await t.request('GET', '/api/health');
    await t.request('GET', '/acme/welcome');
    await t.request('GET', '/sw.js');
    const after = await t.request('GET', '/api/health');
    expect(after.headers.get('x-ratelimit-monthly-used')).toBe(before.headers.get('x-ratelimit-monthly-used'));
  });
});
