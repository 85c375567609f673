import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { startTestApp, type TestResponse } from '../helpers/app';
import { grantTokens, postForm } from '../oauth/helpers';
import { connectClient, synced } from '../helpers/sync';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Who may read an answer to a request that carried the session cookie: the
 * app's own origin and CORS_ORIGINS only. Everyone else gets `*` without
 * credentials, which a browser refuses for a credentialed request, and which
 * is all a bearer-token client (API key, OAuth token, MCP) needs.
 */
const APP = 'https://app.trellis.example';
const LISTED = 'https://tools.partner.example';
const SIBLING = 'https://usercontent.trellis.example';
const FOREIGN = 'https://evil.example';

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: TestUser;
let key: { bearer: string };

beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL: APP, CORS_ORIGINS: `${LISTED}, http://localhost:5173` } });
  owner = await signInUser(t, 'cors-owner@example.com');
  await createWorkspace(t, owner, { name: 'Plans', slug: 'plans' });
  key = (await insertKey(t, owner, { role: 'editor' })).as as { bearer: string };
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const credentialed = (origin: string) => t.request('GET', '/api/me', { as: { cookie: owner.cookie }, headers: { origin } });
const preflight = (origin: string, path = '/api/workspaces', method = 'POST', headers = 'content-type') =>
  t.request('OPTIONS', path, { headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
const cors = (res: TestResponse) => ({
  origin: res.headers.get('access-control-allow-origin'),
  credentials: res.headers.get('access-control-allow-credentials'),
});
const varies = (res: TestResponse) => (res.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/).includes('origin');

describe('credentialed CORS', () => {
  it('lets the app origin and the configured origins read with the cookie, preflights included', async () => {
    for (const origin of [APP, LISTED, 'http://localhost:5173']) {
      const read = await credentialed(origin);
      expect(read.status).toBe(200);
      expect(cors(read)).toEqual({ origin, credentials: 'true' });
      expect(varies(read)).toBe(true);
      const pre = await preflight(origin);
      expect(pre.status).toBe(204);
      expect(cors(pre)).toEqual({ origin, credentials: 'true' });
      expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    }
  });

  it('never allows credentials to a foreign origin, a same-site sibling or an opaque origin', async () => {
    for (const origin of [FOREIGN, SIBLING, 'null', `${APP}.evil.example`, 'http://app.trellis.example']) {
      const read = await credentialed(origin);
      // Without Allow-Credentials a browser hands the page nothing; and the cookie does not sign it in anyway.
      expect(cors(read)).toEqual({ origin: '*', credentials: null });
      expect(read.status).toBe(401);
      expect(varies(read)).toBe(true);
      for (const [method, path] of [
        ['POST', '/api/workspaces'],
        ['DELETE', '/api/me/sessions'],
        ['PATCH', '/api/me/org'],
      ] as const) {
        const pre = await preflight(origin, path, method);
        expect(pre.status).toBe(204);
        expect(cors(pre)).toEqual({ origin: '*', credentials: null });
      }
    }
  });

  it('signs in with the cookie only from the app itself: its origin, another name for this server, or no Origin at all', async () => {
    expect((await credentialed(APP)).body.principal.id).toBe(owner.userId);
    // The page's own origin under the name this person uses (here: the address the test talks to).
    expect((await credentialed(t.url)).body.principal.id).toBe(owner.userId);
    expect((await t.request('GET', '/api/me', { as: { cookie: owner.cookie } })).body.principal.id).toBe(owner.userId);
    // A write that needs no preflight (a POST without a body) sent by a sibling page is anonymous, so refused;
    // the same from the app reaches the route (409: a free plan has nothing to downgrade).
    const forged = await t.request('POST', '/api/billing/downgrade', { as: { cookie: owner.cookie }, headers: { origin: SIBLING } });
    expect(forged.status).toBe(401);
    const own = await t.request('POST', '/api/billing/downgrade', { as: { cookie: owner.cookie }, headers: { origin: APP } });
    expect(own.status).toBe(409);
  });

  it('gives a sync handshake from another site no session, and one from the app its session', async () => {
    const detail = await t.request('GET', `/api/orgs/${owner.orgSlug}/workspaces/plans`, { as: { cookie: owner.cookie } });
    const documentName = detail.body.surfaces.find((s: { kind: string }) => s.kind === 'doc' || s.kind === 'table').syncDocument as string;
    const sibling = connectClient(t.url, documentName, { cookie: owner.cookie, origin: SIBLING });
    try {
      expect(await sibling.authenticationFailed).toBe('unauthorized');
    } finally {
      sibling.destroy();
    }
    for (const origin of [APP, t.url]) {
      const app = connectClient(t.url, documentName, { cookie: owner.cookie, origin });
      try {
        await synced(app);
      } finally {
        app.destroy();
      }
    }
  });

  it('keeps bearer-token calls open to any origin, without credentials', async () => {
    const pre = await preflight(FOREIGN, '/api/workspaces', 'POST', 'authorization, content-type, idempotency-key');
    expect(pre.status).toBe(204);
    expect(cors(pre)).toEqual({ origin: '*', credentials: null });
    const allowed = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));

    const read = await t.request('GET', '/api/workspaces', { as: key, headers: { origin: FOREIGN } });
    expect(read.status).toBe(200);
    expect(read.body.workspaces.map((w: { slug: string }) => w.slug)).toContain('plans');
    expect(cors(read)).toEqual({ origin: '*', credentials: null });
    const exposed = (read.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'x-ratelimit-monthly-used', 'etag', 'link']));

    const write = await t.request('POST', `/api/orgs/${owner.orgSlug}/workspaces/plans/rows`, { as: key, headers: { origin: FOREIGN }, body: { data: { title: 'From a partner page' } } });
    expect(write.status).toBe(200);
    expect(cors(write)).toEqual({ origin: '*', credentials: null });
    const refused = await t.request('GET', '/api/me', { headers: { origin: FOREIGN, authorization: 'Bearer svc_live_nope' } });
    expect(refused.status).toBe(401);
    expect(cors(refused)).toEqual({ origin: '*', credentials: null });
  });

  it('keeps OAuth discovery, the token endpoint and MCP usable from a third-party page', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/api/mcp']) {
      const pre = await preflight(FOREIGN, path, 'GET', 'mcp-protocol-version');
      expect(pre.status).toBe(204);
      expect(cors(pre)).toEqual({ origin: '*', credentials: null });
      const metadata = await t.request('GET', path, { headers: { origin: FOREIGN } });
      expect(metadata.status).toBe(200);
      expect(cors(metadata)).toEqual({ origin: '*', credentials: null });
    }
    const token = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code: 'nope', code_verifier: 'x'.repeat(43), client_id: 'nope', redirect_uri: 'http://127.0.0.1:7777/callback' }, { origin: FOREIGN });
    expect(token.status).toBe(401);
    expect(cors(token)).toEqual({ origin: '*', credentials: null });

    const { tokens } = await grantTokens(t, owner.cookie);
    const mcpPreflight = await preflight(FOREIGN, '/api/mcp', 'POST', 'authorization, content-type, mcp-protocol-version');
    expect(cors(mcpPreflight)).toEqual({ origin: '*', credentials: null });
    const mcp = await t.request('POST', '/api/mcp', {
      as: { bearer: tokens.access_token },
      headers: { origin: FOREIGN, accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.status).toBe(200);
    expect(mcp.body.result.tools.length).toBeGreaterThan(0);
    expect(cors(mcp)).toEqual({ origin: '*', credentials: null });
    const challenge = await t.request('POST', '/api/mcp', { headers: { origin: FOREIGN, accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(challenge.status).toBe(401);
    expect(cors(challenge)).toEqual({ origin: '*', credentials: null });
  });

  it('applies the same rule to event streams, which write their own headers', async () => {
    const path = `/api/orgs/${owner.orgSlug}/workspaces/plans/subscribe`;
    const stream = async (origin: string, credential: Record<string, string> = { cookie: `svc-session=${owner.cookie}` }) => {
      const controller = new AbortController();
      const response = await fetch(`${t.url}${path}`, { headers: { accept: 'text/event-stream', origin, ...credential }, signal: controller.signal });
      controller.abort();
      return { status: response.status, origin: response.headers.get('access-control-allow-origin'), credentials: response.headers.get('access-control-allow-credentials') };
    };
    expect(await stream(APP)).toEqual({ status: 200, origin: APP, credentials: 'true' });
    expect(await stream(SIBLING, { authorization: `Bearer ${key.bearer}` })).toEqual({ status: 200, origin: '*', credentials: null });
    // The cookie from a sibling page is nobody: the private workspace is not there for it.
    expect(await stream(SIBLING)).toEqual({ status: 404, origin: '*', credentials: null });
  });

  it('answers a preflight in full before any route: methods, the asked headers reflected, Vary, and 400 when it is not one', async () => {
    for (const origin of [APP, FOREIGN]) {
      const pre = await preflight(origin, `/api/orgs/${owner.orgSlug}/workspaces/plans/rows/row_none`, 'PATCH', 'authorization, if-match');
      expect(pre.status).toBe(204);
      expect(pre.headers.get('content-length')).toBe('0');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      expect(pre.headers.get('access-control-allow-headers')).toBe('authorization, if-match');
      expect((pre.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/)).toEqual(['origin', 'access-control-request-headers']);
      expect(cors(pre)).toEqual(origin === APP ? { origin, credentials: 'true' } : { origin: '*', credentials: null });
    }
    // Not a preflight: without the method asked for, or without an Origin.
    const noMethod = await t.request('OPTIONS', '/api/workspaces', { headers: { origin: FOREIGN } });
    expect(noMethod.status).toBe(400);
    expect(noMethod.text).toBe('Invalid Preflight Request');
    const noOrigin = await t.request('OPTIONS', '/api/workspaces', { headers: { 'access-control-request-method': 'POST' } });
    expect(noOrigin.status).toBe(400);
  });

  it('serves the web app without CORS headers or Vary: Origin, but unknown API paths with them', async () => {
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(readFileSync(new URL('../../web/dist/index.html', import.meta.url), 'utf8'))![1]!;
    for (const path of ['/', `/${owner.orgSlug}/plans`, script, '/sw.js']) {
      const res = await t.request('GET', path, { headers: { origin: APP } });
      expect(res.status).toBe(200);
      expect(varies(res)).toBe(false);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    const missing = await t.request('GET', '/api/nowhere', { headers: { origin: FOREIGN } });
    expect(missing.status).toBe(404);
    expect(cors(missing)).toEqual({ origin: '*', credentials: null });
    expect(varies(missing)).toBe(true);
  });
});

describe('CORS_ORIGINS', () => {
  it('accepts a list of origins and refuses anything that is not one', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173/ ,https://b.example:8443' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
      'https://b.example:8443',
    ]);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    for (const bad of ['*', 'https://*.example.com', 'https://a.example/app', 'ftp://a.example', 'a.example', 'https://a.example?x=1', 'null']) {
      expect(() => loadConfig({ CORS_ORIGINS: `https://ok.example,${bad}` }), bad).toThrow(ConfigError);
      try {
        loadConfig({ CORS_ORIGINS: bad });
      } catch (error) {
        expect((error as ConfigError).problems[0]).toMatch(/^CORS_ORIGINS: .*is not an origin/);
      }
    }
  });
});
