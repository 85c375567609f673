import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp } from '../helpers/app';
import { latestMagicToken } from '../helpers/sign-in';
import { signInUser, type TestUser } from '../workspaces/helpers';
import {
  authorizationCode,
  authorizeQuery,
  consent,
  consentFields,
  exchangeCode,
  grantTokens,
  mcpClient,
  pkce,
  postForm,
  REDIRECT_URI,
  registerClient,
} from './helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock();
let user: TestUser;

beforeAll(async () => {
  t = await startTestApp({ clock });
  user = await signInUser(t, 'oauth-user@example.com');
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});
// The token endpoint allows 30 requests a minute per IP, and every test here comes from 127.0.0.1.
beforeEach(() => clock.advance(61_000));

async function mcpStatus(token: string) {
  const res = await t.request('POST', '/api/mcp', {
    as: { bearer: token },
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 7, method: 'tools/list' },
  });
  return res;
}

describe('discovery', () => {
  it('serves the protected-resource and authorization-server metadata', async () => {
    const resource = await t.request('GET', '/.well-known/oauth-protected-resource');
    expect(resource.status).toBe(200);
    expect(resource.body).toMatchObject({ resource: t.url, authorization_servers: [t.url], scopes_supported: ['read', 'write', 'admin'], bearer_methods_supported: ['header'] });
    const forMcp = await t.request('GET', '/.well-known/oauth-protected-resource/api/mcp');
    expect(forMcp.body.resource).toBe(`${t.url}/api/mcp`);

    const server = await t.request('GET', '/.well-known/oauth-authorization-server');
    expect(server.body).toMatchObject({
      issuer: t.url,
      authorization_endpoint: `${t.url}/oauth/authorize`,
      token_endpoint: `${t.url}/oauth/token`,
      registration_endpoint: `${t.url}/oauth/register`,
      revocation_endpoint: `${t.url}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
    });
  });

  it('answers an MCP call without a token with 401, -32001 and the metadata address', async () => {
    const res = await t.request('POST', '/api/mcp', { headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource", scope="read write"`);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: expect.any(String) } });
  });

  it('lists the OAuth routes in /openapi.json', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/.well-known/oauth-protected-resource', 'get'],
      ['/.well-known/oauth-authorization-server', 'get'],
      ['/oauth/register', 'post'],
      ['/oauth/authorize', 'get'],
      ['/oauth/authorize', 'post'],
      ['/oauth/token', 'post'],
      ['/oauth/revoke', 'post'],
      ['/api/me/oauth-grants', 'get'],
      ['/api/me/oauth-grants/{id}', 'delete'],
      ['/api/mcp', 'post'],
    ]) {
      expect(doc.paths[path!]?.[method!], `${method} ${path}`).toBeDefined();
    }
    expect(Object.keys(doc.paths['/oauth/token'].post.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
  });
});

describe('the whole flow over HTTP', () => {
  it('register, sign in from the consent page, consent, token, MCP call, refresh, revoke, then 401', async () => {
    const client = await registerClient(t);
    expect(client.client_id).toMatch(/^oac_/);
    expect(client.client_secret).toBeUndefined();
    const { verifier, challenge } = pkce();
    const query = authorizeQuery(client.client_id, challenge);

    // Not signed in: the page offers a magic link that comes back here.
    const anonymous = await t.request('GET', `/oauth/authorize?${query}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('content-type')).toMatch(/^text\/html/);
    expect(anonymous.headers.get('x-frame-options')).toBe('DENY');
    const returnTo = /name="return_to" value="([^"]+)"/.exec(anonymous.text)![1]!.replace(/&amp;/g, '&');
    const mailed = await postForm(t, '/oauth/sign-in', { email: 'flow@example.com', return_to: returnTo });
    expect(mailed.status).toBe(200);
    expect(mailed.text).toContain('Check your e-mail');
    const redeemed = await t.request('GET', `/api/auth?token=${encodeURIComponent(await latestMagicToken(t, 'flow@example.com'))}`);
    expect(redeemed.status).toBe(302);
    expect(redeemed.headers.get('location')).toBe(returnTo);
    const cookie = /svc-session=([^;]+)/.exec(redeemed.headers.get('set-cookie')!)![1]!;

    // Signed in: the consent page names the app and the scopes; approving redirects with a code and the state.
    const page = await t.request('GET', returnTo, { as: { cookie } });
    expect(page.text).toContain('Test Assistant wants to use your Trellis account');
    expect(page.text).toContain('flow@example.com');
    const approved = await postForm(t, '/oauth/authorize', { ...consentFields(page.text), decision: 'approve', grant_write: 'on' }, { cookie: `svc-session=${cookie}` });
    expect(approved.status).toBe(302);
    const location = new URL(approved.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('st-123');
    expect(location.searchParams.get('iss')).toBe(t.url);

    const tokens = await exchangeCode(t, { code: location.searchParams.get('code')!, code_verifier: verifier, client_id: client.client_id });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toEqual({ access_token: expect.stringMatching(/^oat_/), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^ort_/), scope: 'read write' });

    // The token acts as the user: an MCP call through the SDK's own client, attributed to them.
    const mcp = await mcpClient(t, tokens.body.access_token);
    const listed = await mcp.callTool({ name: 'list_workspaces', arguments: {} });
    expect((listed.structuredContent as any).workspaces.map((w: any) => w.slug)).toEqual(['welcome']);
    const created = await mcp.callTool({ name: 'create_row', arguments: { slug: 'welcome', data: { title: 'from an app' } } });
    const flowUserId = (await t.services.db.selectFrom('users').select('id').where('email', '=', 'flow@example.com').executeTakeFirstOrThrow()).id;
    expect((created.structuredContent as any).createdByPrincipalId).toBe(flowUserId);
    await mcp.close();
    expect((await t.request('GET', '/api/me', { as: { bearer: tokens.body.access_token } })).body.principal.id).toBe(flowUserId);

    // Refresh rotates both tokens.
    const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);
    expect((await mcpStatus(refreshed.body.access_token)).status).toBe(200);

    // Revoking the refresh token revokes the grant: every token of it is 401 from now on.
    const revoked = await postForm(t, '/oauth/revoke', { token: refreshed.body.refresh_token, client_id: client.client_id });
    expect(revoked.status).toBe(200);
    const after = await mcpStatus(refreshed.body.access_token);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe(-32001);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await t.request('GET', '/api/me', { as: { bearer: refreshed.body.access_token } })).status).toBe(401);
    const events = await t.services.db.selectFrom('events').select(['event', 'record']).where('subjectId', 'is not', null).where('event', 'like', 'oauth.%').execute();
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['oauth.grant_created', 'oauth.grant_revoked']));
  });

  it('revoking an access token ends only that token', async () => {
    const { client, tokens } = await grantTokens(t, user.cookie);
    await postForm(t, '/oauth/revoke', { token: tokens.access_token, token_type_hint: 'access_token', client_id: client.client_id });
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);
    const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
  });

  it('access tokens expire after an hour; the refresh token still works', async () => {
    const { client, tokens } = await grantTokens(t, user.cookie);
    clock.advance(60 * 60 * 1000 + 1000);
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);
    const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect((await mcpStatus(refreshed.body.access_token)).status).toBe(200);
  });

  it('a denied consent goes back with access_denied and the state', async () => {
    const client = await registerClient(t);
    const denied = await consent(t, user.cookie, authorizeQuery(client.client_id, pkce().challenge), { decision: 'deny' });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('st-123');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('a confidential client authenticates with its secret (HTTP Basic); a wrong secret is invalid_client', async () => {
    const client = await registerClient(t, { token_endpoint_auth_method: 'client_secret_basic' });
    expect(client.client_secret).toMatch(/^ocs_/);
    const { verifier, challenge } = pkce();
    const { code } = await authorizationCode(t, user.cookie, client.client_id, challenge);
    const basic = (secret: string) => `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;
    const wrong = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI }, { authorization: basic('ocs_wrong') });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const right = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI }, { authorization: basic(client.client_secret!) });
    expect(right.status).toBe(200);
    const noSecret = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id });
    expect(noSecret.body.error).toBe('invalid_client');
  });
});

describe('failures at the token endpoint', () => {
  it('a wrong PKCE verifier is invalid_grant', async () => {
    const client = await registerClient(t);
    const { challenge } = pkce();
    const { code } = await authorizationCode(t, user.cookie, client.client_id, challenge);
    const res = await exchangeCode(t, { code, code_verifier: pkce().verifier, client_id: client.client_id });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('code_verifier') });
  });

  it('a reused code is refused and revokes the tokens issued for it', async () => {
    const client = await registerClient(t);
    const { verifier, challenge } = pkce();
    const { code } = await authorizationCode(t, user.cookie, client.client_id, challenge);
    const first = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id });
    expect(first.status).toBe(200);
    const second = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id });
    expect(second.body.error).toBe('invalid_grant');
    expect((await mcpStatus(first.body.access_token)).status).toBe(401);
    const refresh = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: client.client_id });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('an expired code is refused (codes last five minutes)', async () => {
    const client = await registerClient(t);
    const { verifier, challenge } = pkce();
    const { code } = await authorizationCode(t, user.cookie, client.client_id, challenge);
    clock.advance(5 * 60 * 1000 + 1);
    const res = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id });
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });
  });

  it('a redirect URI that was not registered is shown as an error and never redirected to; a different one at the token endpoint is invalid_grant', async () => {
    const client = await registerClient(t, { redirect_uris: [REDIRECT_URI, 'http://127.0.0.1:7777/other'] });
    const { verifier, challenge } = pkce();
    const foreign = await t.request('GET', `/oauth/authorize?${authorizeQuery(client.client_id, challenge, { redirect_uri: 'https://attacker.example/cb' })}`, { as: { cookie: user.cookie } });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('location')).toBeNull();
    expect(foreign.text).toContain('redirect address does not match');
    // Registered URIs match exactly: a trailing slash or another port is another URI.
    const near = await t.request('GET', `/oauth/authorize?${authorizeQuery(client.client_id, challenge, { redirect_uri: `${REDIRECT_URI}/` })}`, { as: { cookie: user.cookie } });
    expect(near.status).toBe(400);

    const { code } = await authorizationCode(t, user.cookie, client.client_id, challenge);
    const res = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id, redirect_uri: 'http://127.0.0.1:7777/other' });
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('redirect_uri') });
  });

  it('an app with one registered redirect URI may leave it out of both requests', async () => {
    const client = await registerClient(t);
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams(authorizeQuery(client.client_id, challenge));
    query.delete('redirect_uri');
    const approved = await consent(t, user.cookie, query.toString());
    const location = new URL(approved.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    const code = location.searchParams.get('code')!;
    const tokens = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: client.client_id });
    expect(tokens.status).toBe(200);
  });

  it("another client's code is invalid_grant and stays usable by its own client", async () => {
    const mine = await registerClient(t);
    const other = await registerClient(t);
    const { verifier, challenge } = pkce();
    const { code } = await authorizationCode(t, user.cookie, mine.client_id, challenge);
    const stolen = await exchangeCode(t, { code, code_verifier: verifier, client_id: other.client_id });
    expect(stolen.body.error).toBe('invalid_grant');
    expect((await exchangeCode(t, { code, code_verifier: verifier, client_id: mine.client_id })).status).toBe(200);
  });

  it('a reused refresh token revokes the whole grant', async () => {
    const { client, tokens } = await grantTokens(t, user.cookie);
    const rotated = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(rotated.status).toBe(200);
    const replay = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await mcpStatus(rotated.body.access_token)).status).toBe(401);
    const next = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token, client_id: client.client_id });
    expect(next.body.error).toBe('invalid_grant');
    const grants = (await t.request('GET', '/api/me/oauth-grants', { as: user.as })).body.grants.map((g: any) => g.client.id);
    expect(grants).not.toContain(client.client_id);
  });

  it('refuses PKCE without S256, unknown scopes and resources back at the redirect URI, with the state', async () => {
    const client = await registerClient(t);
    const cases: Array<[Record<string, string>, string]> = [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ scope: 'read everything' }, 'invalid_scope'],
      [{ resource: 'https://elsewhere.example' }, 'invalid_target'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
    ];
    for (const [extra, error] of cases) {
      const res = await t.request('GET', `/oauth/authorize?${authorizeQuery(client.client_id, pkce().challenge, extra)}`, { as: { cookie: user.cookie } });
      expect(res.status, JSON.stringify(extra)).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe('st-123');
    }
  });

  it('malformed token requests are invalid_request or unsupported_grant_type, in the OAuth error shape', async () => {
    const client = await registerClient(t);
    const unsupported = await postForm(t, '/oauth/token', { grant_type: 'password', client_id: client.client_id });
    expect(unsupported.body).toMatchObject({ error: 'unsupported_grant_type' });
    const missing = await postForm(t, '/oauth/token', { client_id: client.client_id });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    const repeated = await t.request('POST', '/oauth/token', {
      rawBody: `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${client.client_id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(repeated.body.error).toBe('invalid_request');
    const unknownClient = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'ort_x', client_id: 'oac_nope' });
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.body.error).toBe('invalid_client');
  });

  it('allows 30 token requests a minute per IP', async () => {
    const client = await registerClient(t);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await postForm(t, '/oauth/token', { grant_type: 'password', client_id: client.client_id })).status);
    expect(statuses.slice(0, 30).every((status) => status === 400)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe('registration', () => {
  it('refuses redirect URIs that are not https, loopback http or an app scheme, and unsupported metadata', async () => {
    const register = (body: Record<string, unknown>) => t.request('POST', '/oauth/register', { body: { client_name: 'x', ...body } });
    for (const uri of ['http://evil.example/cb', 'javascript:alert(1)', 'data:text/html,hi', 'https://app.example/cb#frag', 'not a uri']) {
      const res = await register({ redirect_uris: [uri] });
      expect(res.status, uri).toBe(400);
      expect(res.body.error, uri).toBe('invalid_redirect_uri');
    }
    for (const uri of ['https://app.example/cb', 'http://localhost:3456/cb', 'com.example.app:/oauth']) {
      expect((await register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status, uri).toBe(201);
    }
    const badGrant = await register({ redirect_uris: [REDIRECT_URI], grant_types: ['client_credentials'] });
    expect(badGrant.body.error).toBe('invalid_client_metadata');
    const badScope = await register({ redirect_uris: [REDIRECT_URI], scope: 'root' });
    expect(badScope.body.error).toBe('invalid_client_metadata');
    // Text is made storable at the entrance, as everywhere: a lone surrogate becomes U+FFFD.
    const loneSurrogate = await register({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', client_name: 'odd \ud800 name' });
    expect(loneSurrogate.status).toBe(201);
    expect(loneSurrogate.body.client_name).toBe('odd \ufffd name');
    const nul = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'ort_\u0000', client_id: 'oac_\u0000' });
    expect(nul.body.error).toBe('invalid_client');
    const missing = await register({});
    expect(missing.body.error).toBe('invalid_client_metadata');
    const unknownFields = await register({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', __proto__: { x: 1 }, extra: { deep: [1, 2] } });
    expect(unknownFields.status).toBe(201);
    expect(unknownFields.body.extra).toBeUndefined();
  });

  it('escapes what an app registered on the consent page', async () => {
    const client = await registerClient(t, { client_name: '<script>alert("x")</script>' });
    const page = await t.request('GET', `/oauth/authorize?${authorizeQuery(client.client_id, pkce().challenge)}`, { as: { cookie: user.cookie } });
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('&lt;script&gt;');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('the consent form', () => {
  it('refuses a forged form: wrong CSRF token, another origin, or no session', async () => {
    const client = await registerClient(t);
    const query = authorizeQuery(client.client_id, pkce().challenge);
    const page = await t.request('GET', `/oauth/authorize?${query}`, { as: { cookie: user.cookie } });
    const fields = { ...consentFields(page.text), decision: 'approve' };
    const cookie = { cookie: `svc-session=${user.cookie}` };

    const forged = await postForm(t, '/oauth/authorize', { ...fields, csrf: 'forged' }, cookie);
    expect(forged.status).toBe(403);
    const crossSite = await postForm(t, '/oauth/authorize', fields, { ...cookie, origin: 'https://attacker.example' });
    expect(crossSite.status).toBe(403);
    // Another user's session cannot replay this user's form.
    const other = await signInUser(t, 'someone-else@example.com');
    const replayed = await postForm(t, '/oauth/authorize', fields, { cookie: `svc-session=${other.cookie}` });
    expect(replayed.status).toBe(403);
    // The token covers the request: widening the scope after the page was shown breaks it.
    const widened = await postForm(t, '/oauth/authorize', { ...fields, scope: 'read write admin' }, cookie);
    expect(widened.status).toBe(403);
    const signedOut = await postForm(t, '/oauth/authorize', fields);
    expect(signedOut.status).toBe(200);
    expect(signedOut.text).toContain('Sign in to continue');
    expect(signedOut.headers.get('location')).toBeNull();
  });

  it('lets the user grant less than asked: an unticked write leaves a read-only token', async () => {
    const { tokens } = await grantTokens(t, user.cookie, { grant: {} });
    expect(tokens.scope).toBe('read');
    const mcp = await mcpClient(t, tokens.access_token);
    const read = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'welcome' } });
    expect(read.isError).toBeFalsy();
    const write = await mcp.callTool({ name: 'create_row', arguments: { slug: 'welcome', data: { title: 'no' } } });
    expect(write.isError).toBe(true);
    expect(JSON.parse((write.content as any)[0].text)).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('"write" scope') }, status: 403 });
    await mcp.close();
    const rest = await t.request('POST', '/api/workspaces/welcome/rows', { as: { bearer: tokens.access_token }, body: { data: { title: 'no' } } });
    expect(rest.status).toBe(403);
    const create = await t.request('POST', '/api/workspaces', { as: { bearer: tokens.access_token }, body: { name: 'No', slug: 'no-ws', mode: 'table' } });
    expect(create.status).toBe(403);
  });

  it('admin is granted only when asked for; account settings stay with the person', async () => {
    const { tokens } = await grantTokens(t, user.cookie);
    expect(tokens.scope).toBe('read write');
    const bearer = { bearer: tokens.access_token };
    expect((await t.request('PATCH', '/api/workspaces/welcome', { as: bearer, body: { name: 'Renamed by app' } })).status).toBe(200);
    expect((await t.request('PATCH', '/api/workspaces/welcome', { as: bearer, body: { visibility: 'public' } })).status).toBe(403);
    expect((await t.request('DELETE', '/api/me/sessions', { as: bearer })).status).toBe(403);
    expect((await t.request('GET', '/api/me/oauth-grants', { as: bearer })).status).toBe(403);
    expect((await t.request('POST', '/api/me/elevate', { as: bearer, body: { scope: 'keys' } })).status).toBe(403);
  });
});

describe('the user’s grants', () => {
  it('lists live grants and revokes one, or all', async () => {
    const person = await signInUser(t, 'grants@example.com');
    const first = await grantTokens(t, person.cookie);
    clock.advance(1000);
    const second = await grantTokens(t, person.cookie);
    const listed = await t.request('GET', '/api/me/oauth-grants', { as: person.as });
    expect(listed.status).toBe(200);
    expect(listed.body.grants).toHaveLength(2);
    expect(listed.body.grants[0]).toMatchObject({ client: { id: second.client.client_id, name: 'Test Assistant' }, scopes: ['read', 'write'], lastUsedAt: null });

    const someoneElse = await t.request('DELETE', `/api/me/oauth-grants/${listed.body.grants[0].id}`, { as: user.as });
    expect(someoneElse.status).toBe(404);
    const one = await t.request('DELETE', `/api/me/oauth-grants/${listed.body.grants[0].id}`, { as: person.as });
    expect(one.body).toEqual({ ok: true });
    expect((await mcpStatus(second.tokens.access_token)).status).toBe(401);
    expect((await mcpStatus(first.tokens.access_token)).status).toBe(200);

    const all = await t.request('DELETE', '/api/me/oauth-grants', { as: person.as });
    expect(all.body).toEqual({ revokedGrants: 1 });
    expect((await mcpStatus(first.tokens.access_token)).status).toBe(401);
    expect((await t.request('GET', '/api/me/oauth-grants', { as: person.as })).body.grants).toEqual([]);
  });
});
