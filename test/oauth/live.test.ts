import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { signInUser, type TestUser } from '../workspaces/helpers';
import { consentFields, grantTokens, postForm, REDIRECT_URI } from './helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let user: TestUser;
let workspaceId: string;
let surfaceId: string;

beforeAll(async () => {
  t = await startTestApp();
  user = await signInUser(t, 'live@example.com');
  const ws = await t.services.db
    .selectFrom('workspaces')
    .innerJoin('surfaces', 'surfaces.workspaceId', 'workspaces.id')
    .select(['workspaces.id', 'surfaces.id as surfaceId'])
    .where('workspaces.orgId', '=', user.orgId)
    .where('workspaces.slug', '=', 'welcome')
    .executeTakeFirstOrThrow();
  workspaceId = ws.id;
  surfaceId = ws.surfaceId;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function rowIds(): Promise<string[]> {
  const rows = await t.request('GET', '/api/workspaces/welcome/rows', { as: user.as });
  return rows.body.rows.map((r: any) => r.id);
}

describe('OAuth tokens on sync connections and event streams', () => {
  it('open both; revoking the grant closes them', async () => {
    const { tokens } = await grantTokens(t, user.cookie);
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { token: tokens.access_token });
    await synced(client);
    insertRow(client.doc, { id: 'by-app', surfaceId, data: { title: 'written over sync by an app' } }, null);
    await acknowledged(client);
    expect(await rowIds()).toContain('by-app');
    const stream = openSse(`${t.url}/api/workspaces/welcome/subscribe`, { authorization: `Bearer ${tokens.access_token}` });
    expect(await stream.ready).toBe(200);

    const grant = (await t.request('GET', '/api/me/oauth-grants', { as: user.as })).body.grants[0];
    expect((await t.request('DELETE', `/api/me/oauth-grants/${grant.id}`, { as: user.as })).status).toBe(200);

    expect(await client.closed).toMatchObject({ reason: 'unauthorized' });
    await stream.ended;
    insertRow(client.doc, { id: 'after-revoke', surfaceId, data: { title: 'x' } }, null);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await rowIds()).not.toContain('after-revoke');
    client.destroy();
  });

  it('a read-only token gets a read-only sync connection', async () => {
    const { tokens } = await grantTokens(t, user.cookie, { grant: {} });
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { token: tokens.access_token });
    await synced(client);
    insertRow(client.doc, { id: 'read-only-write', surfaceId, data: { title: 'dropped' } }, null);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await rowIds()).not.toContain('read-only-write');
    client.destroy();
  });

  it('revoking only the access token ends its event stream (re-checked twice a second, not at the 15 s ping)', async () => {
    const { tokens, client } = await grantTokens(t, user.cookie);
    const stream = openSse(`${t.url}/api/workspaces/welcome/subscribe`, { authorization: `Bearer ${tokens.access_token}` });
    expect(await stream.ready).toBe(200);
    await postForm(t, '/oauth/revoke', { token: tokens.access_token, client_id: client.client_id });
    await stream.ended;
  });
});

/** An OAuth client provider as an MCP host implements it; "the browser" is this test, consenting over HTTP as the signed-in user. */
class TestProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationCode: string | undefined;
  constructor(private readonly cookie: string) {}
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return { client_name: 'SDK Host', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL) {
    const page = await t.request('GET', `${url.pathname}${url.search}`, { as: { cookie: this.cookie } });
    const approved = await postForm(t, '/oauth/authorize', { ...consentFields(page.text), decision: 'approve', grant_write: 'on' }, { cookie: `svc-session=${this.cookie}` });
    this.authorizationCode = new URL(approved.headers.get('location')!).searchParams.get('code') ?? undefined;
  }
}

describe("the SDK's own OAuth client", () => {
  it('discovers the flow from the 401, registers, authorizes with PKCE and the resource indicator, and calls tools', async () => {
    const provider = new TestProvider(user.cookie);
    const url = new URL(`${t.url}/api/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'host', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toMatch(/^oac_/);
    expect(provider.authorizationCode).toBeTruthy();
    await first.finishAuth(provider.authorizationCode!);
    expect(provider.saved?.access_token).toMatch(/^oat_/);

    const client = new Client({ name: 'host', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const result = await client.callTool({ name: 'list_workspaces', arguments: {} });
    expect((result.structuredContent as any).workspaces[0].slug).toBe('welcome');

    // An access token the server no longer honours makes the SDK refresh it on its own and retry.
    const stale = provider.saved!.access_token;
    await t.services.db.updateTable('oauthTokens').set({ expiresAt: new Date(0) }).where('kind', '=', 'access').execute();
    const again = await client.callTool({ name: 'list_rows', arguments: { slug: 'welcome', limit: 1 } });
    expect(again.isError).toBeFalsy();
    expect(provider.saved!.access_token).not.toBe(stale);
    await client.close();
    await eventually(async () => (await t.request('GET', '/api/me/oauth-grants', { as: user.as })).body.grants.some((g: any) => g.client.name === 'SDK Host'));
  });
});
