import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp, TestResponse } from '../helpers/app';

/** What an OAuth client (an MCP client, a third-party app) does over plain HTTP, step by step. */

export const REDIRECT_URI = 'http://127.0.0.1:7777/callback';

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function postForm(t: TestApp, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<TestResponse> {
  return t.request('POST', path, {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

export async function registerClient(t: TestApp, metadata: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/oauth/register', {
    body: { client_name: 'Test Assistant', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], ...metadata },
  });
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${res.text}`);
  return res.body as { client_id: string; client_secret?: string; redirect_uris: string[] };
}

export function authorizeQuery(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    ...extra,
  }).toString();
}

/** The hidden fields of the consent form (the authorization request and its CSRF token). */
export function consentFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(match[1]!)] = unescape(match[2]!);
  return fields;
}

function unescape(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, entity) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity as string]!);
}

/** Opens the consent page as the signed-in user and submits it; answers the redirect. */
export async function consent(t: TestApp, cookie: string, query: string, decision: Record<string, string> = { decision: 'approve', grant_write: 'on' }) {
  const page = await t.request('GET', `/oauth/authorize?${query}`, { as: { cookie } });
  if (page.status !== 200 || !page.text.includes('wants to use your Trellis account')) throw new Error(`consent page answered ${page.status}: ${page.text}`);
  return postForm(t, '/oauth/authorize', { ...consentFields(page.text), ...decision }, { cookie: `svc-session=${cookie}` });
}

/** A code for `client`, approved by the user behind `cookie`. */
export async function authorizationCode(t: TestApp, cookie: string, clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const redirect = await consent(t, cookie, authorizeQuery(clientId, challenge, extra));
  if (redirect.status !== 302) throw new Error(`consent answered ${redirect.status}: ${redirect.text}`);
  const location = new URL(redirect.headers.get('location')!);
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { code, location };
}

export async function exchangeCode(t: TestApp, fields: Record<string, string>) {
  return postForm(t, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, ...fields });
}

/** Register, consent and exchange: the tokens of a fresh grant. */
export async function grantTokens(t: TestApp, cookie: string, options: { grant?: Record<string, string>; scope?: string } = {}) {
  const client = await registerClient(t);
  const { verifier, challenge } = pkce();
  const query = authorizeQuery(client.client_id, challenge, options.scope ? { scope: options.scope } : {});
  const redirect = await consent(t, cookie, query, { decision: 'approve', ...(options.grant ?? { grant_write: 'on' }) });
  const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
  const tokens = await exchangeCode(t, { code, code_verifier: verifier, client_id: client.client_id });
  if (tokens.status !== 200) throw new Error(`token endpoint answered ${tokens.status}: ${tokens.text}`);
  return { client, tokens: tokens.body as { access_token: string; refresh_token: string; scope: string; expires_in: number } };
}

/** An MCP client of the official SDK with a bearer credential. */
export async function mcpClient(t: TestApp, bearer: string | null) {
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/api/mcp`), {
    requestInit: { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} },
  });
  const client = new Client({ name: 'trellis-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
