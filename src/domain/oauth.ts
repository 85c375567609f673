import { createHash } from 'node:crypto';
import type { Actor } from '../policy/actor';
import { OAUTH_ACCESS_TOKEN_PREFIX } from '../policy/credentials';
import { parseScopes } from '../model/permissions';
import { ApiError, errors } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { EventName } from '../model/event-names';
import { newId } from '../lib/ids';
import { hashToken, randomToken, safeEqual } from '../lib/secrets';
import { findOrgById, findUserById } from '../persistence/accounts';
import type { Tx } from '../persistence/database';
import {
  deleteExpiredAuthorizationCodes,
  extendGrant,
  findOAuthClient,
  findTokenWithGrant,
  findUserGrant,
  insertAuthorizationCode,
  insertGrant,
  insertOAuthClient,
  insertTokens,
  listLiveGrants,
  lockAuthorizationCode,
  markAuthorizationCodeUsed,
  markRefreshTokenRotated,
  revokeGrant,
  revokeToken,
  type GrantListing,
  type OAuthClientRecord,
} from '../persistence/oauth';
import type { OAuthClientAuthMethod } from '../persistence/schema';
import { OAUTH_SCOPES, type OAuthScope } from '../model/permissions';
import type { Services } from './services';
import { transactWithEvents } from './transact';

/**
 * OAuth 2.1 authorization server (docs/OAUTH.md): dynamic client
 * registration, authorization codes with PKCE (S256 only), access tokens
 * that act as the consenting user capped by the granted scopes, refresh
 * tokens rotated on every use with reuse detection, and revocation.
 */

export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const AUTHORIZATION_CODE_TTL_MS = 5 * 60 * 1000;
export const REFRESH_TOKEN_PREFIX = 'ort_';
const CLIENT_SECRET_PREFIX = 'ocs_';
/** What a client gets when it asks for no particular scope; `admin` is only ever granted when asked for. */
export const DEFAULT_SCOPES: readonly OAuthScope[] = ['read', 'write'];

/** An OAuth protocol error: the RFC 6749 body `{ error, error_description }`, not the REST envelope. */
export class OAuthError extends ApiError {
  constructor(
    readonly oauthCode: string,
    description: string,
    statusCode = 400,
    headers?: Record<string, string>,
  ) {
    super(statusCode, oauthCode, description, undefined, headers);
  }
  override body() {
    return { error: this.oauthCode, error_description: this.message };
  }
}

export const oauthErrors = {
  invalidRequest: (description: string) => new OAuthError('invalid_request', description),
  invalidClient: (description = 'Client authentication failed.') =>
    new OAuthError('invalid_client', description, 401, { 'www-authenticate': 'Basic realm="oauth"' }),
  invalidGrant: (description: string) => new OAuthError('invalid_grant', description),
  unsupportedGrantType: (grantType: string) => new OAuthError('unsupported_grant_type', `Grant type "${grantType}" is not supported.`),
  invalidScope: (description: string) => new OAuthError('invalid_scope', description),
  invalidTarget: (description: string) => new OAuthError('invalid_target', description),
  invalidClientMetadata: (description: string) => new OAuthError('invalid_client_metadata', description),
  invalidRedirectUri: (description: string) => new OAuthError('invalid_redirect_uri', description),
};

// Scopes and resources

/** Parses a requested `scope` parameter; unknown or repeated names are refused rather than dropped. */
export function requestedScopes(scope: string | undefined, fallback: readonly OAuthScope[]): OAuthScope[] {
  if (scope === undefined || scope.trim() === '') return [...fallback];
  const names = scope.trim().split(/ +/);
  const unknown = names.filter((name) => !(OAUTH_SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) throw oauthErrors.invalidScope(`Unknown scope: ${unknown.join(' ')}. Supported: ${OAUTH_SCOPES.join(' ')}.`);
  return parseScopes(names.join(' '));
}

export function scopeString(scopes: readonly OAuthScope[]): string {
  return scopes.join(' ');
}

/** Resource indicators (RFC 8707) this server accepts: the API as a whole, or its MCP endpoint. Tokens are valid for both. */
export function acceptedResources(publicUrl: string): string[] {
  return [publicUrl, `${publicUrl}/`, `${publicUrl}/api/mcp`];
}

function checkResource(services: Services, resource: string | undefined): string | null {
  if (resource === undefined) return null;
  if (!acceptedResources(services.config.publicUrl).includes(resource)) {
    throw oauthErrors.invalidTarget(`Unknown resource "${resource}": tokens from this server are for ${services.config.publicUrl}.`);
  }
  return resource;
}

// Client registration (RFC 7591)

export type ClientMetadata = {
  redirect_uris: string[];
  token_endpoint_auth_method?: OAuthClientAuthMethod;
  grant_types?: string[];
  response_types?: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  scope?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
};

const SUPPORTED_GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** Schemes a browser must never be sent to, and plain http outside this machine. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'filesystem:', 'view-source:', 'ws:', 'wss:', 'ftp:']);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Redirect URIs are compared exactly at authorization time, so they are
 * checked once, here: https anywhere, http only on loopback (native and CLI
 * apps listening locally), a private-use scheme for native apps, no fragment.
 */
export function checkRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw oauthErrors.invalidRedirectUri(`"${uri}" is not an absolute URI.`);
  }
  if (url.hash || uri.includes('#')) throw oauthErrors.invalidRedirectUri(`"${uri}" must not contain a fragment.`);
  if (FORBIDDEN_SCHEMES.has(url.protocol)) throw oauthErrors.invalidRedirectUri(`The scheme of "${uri}" is not allowed.`);
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw oauthErrors.invalidRedirectUri(`"${uri}" must use https (plain http is allowed on localhost only).`);
  }
  if ((url.protocol === 'https:' || url.protocol === 'http:') && (url.username || url.password)) {
    throw oauthErrors.invalidRedirectUri(`"${uri}" must not carry credentials.`);
  }
}

export type RegisteredClient = ClientMetadata & {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  token_endpoint_auth_method: OAuthClientAuthMethod;
  grant_types: string[];
  response_types: string[];
};

/**
 * Open registration, as MCP clients expect: anyone may register an app (a
 * burst limit per IP guards it); what it may do is decided when a user
 * consents. Confidential clients get a secret, returned once.
 */
export async function registerClient(services: Services, metadata: ClientMetadata): Promise<RegisteredClient> {
  metadata.redirect_uris.forEach(checkRedirectUri);
  const grantTypes = metadata.grant_types ?? ['authorization_code'];
  const unsupportedGrant = grantTypes.find((grant) => !SUPPORTED_GRANT_TYPES.includes(grant));
  if (unsupportedGrant) throw oauthErrors.invalidClientMetadata(`Grant type "${unsupportedGrant}" is not supported; use authorization_code and refresh_token.`);
  if (!grantTypes.includes('authorization_code')) throw oauthErrors.invalidClientMetadata('grant_types must include authorization_code.');
  const responseTypes = metadata.response_types ?? ['code'];
  if (responseTypes.some((type) => type !== 'code')) throw oauthErrors.invalidClientMetadata('Only the "code" response type is supported.');
  if (metadata.scope !== undefined) {
    try {
      requestedScopes(metadata.scope, DEFAULT_SCOPES);
    } catch (error) {
      throw oauthErrors.invalidClientMetadata(error instanceof Error ? error.message : 'Invalid scope.');
    }
  }
  // RFC 7591's default: a client that names no method authenticates with a secret.
  const authMethod = metadata.token_endpoint_auth_method ?? 'client_secret_basic';
  const secret = authMethod === 'none' ? undefined : CLIENT_SECRET_PREFIX + randomToken(32);
  const now = services.clock.now();
  const stored: ClientMetadata = {
    ...metadata,
    token_endpoint_auth_method: authMethod,
    grant_types: grantTypes,
    response_types: responseTypes,
  };
  const client: OAuthClientRecord = {
    id: newId('oac', 24),
    secretHash: secret ? hashToken(secret) : null,
    name: metadata.client_name ?? 'Unnamed app',
    redirectUris: metadata.redirect_uris,
    tokenEndpointAuthMethod: authMethod,
    scope: metadata.scope ?? null,
    metadata: stored,
    createdAt: now,
  };
  await insertOAuthClient(services.db, client);
  return {
    ...stored,
    client_id: client.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    token_endpoint_auth_method: authMethod,
    grant_types: grantTypes,
    response_types: responseTypes,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
  };
}

// Authorization (the consent page)

export type AuthorizationParams = {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
};

export type AuthorizationRequest = {
  client: OAuthClientRecord;
  redirectUri: string;
  redirectUriExplicit: boolean;
  scopes: OAuthScope[];
  state: string | undefined;
  codeChallenge: string;
  resource: string | null;
};

/**
 * The outcome of checking an authorization request. Problems with the
 * client or the redirect URI are shown to the user (`fatal`): the server
 * must not send anyone to an unverified address. Everything else goes back
 * to the client's redirect URI as an OAuth error (`redirect`).
 */
export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'fatal'; message: string }
  | { kind: 'redirect'; location: string };

const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export async function checkAuthorizationRequest(services: Services, params: AuthorizationParams): Promise<AuthorizationCheck> {
  if (!params.client_id) return { kind: 'fatal', message: 'The request names no client (client_id is missing).' };
  const client = await findOAuthClient(services.db, params.client_id);
  if (!client) return { kind: 'fatal', message: 'This app is not registered with this server (unknown client_id).' };
  let redirectUri: string;
  if (params.redirect_uri !== undefined) {
    if (!client.redirectUris.includes(params.redirect_uri)) {
      return { kind: 'fatal', message: 'The redirect address does not match any the app registered, so this request cannot continue.' };
    }
    redirectUri = params.redirect_uri;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!;
  } else {
    return { kind: 'fatal', message: 'The app registered several redirect addresses and did not say which to use (redirect_uri is missing).' };
  }

  const fail = (error: string, description: string) => ({
    kind: 'redirect' as const,
    location: redirectLocation(services, redirectUri, { error, error_description: description, state: params.state }),
  });
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  if (!params.code_challenge) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  if (params.code_challenge_method !== 'S256') return fail('invalid_request', 'Only the S256 code_challenge_method is supported.');
  if (!PKCE_CHALLENGE.test(params.code_challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters).');
  let scopes: OAuthScope[];
  let resource: string | null;
  try {
    const allowed = client.scope ? requestedScopes(client.scope, DEFAULT_SCOPES) : [...OAUTH_SCOPES];
    // Every grant can read: `write` and `admin` include it, and a token that can do nothing is of no use.
    scopes = parseScopes(scopeString(['read', ...requestedScopes(params.scope, client.scope ? allowed : DEFAULT_SCOPES)]));
    const beyond = scopes.filter((scope) => !allowed.includes(scope));
    if (beyond.length > 0) return fail('invalid_scope', `This app registered for "${client.scope}" and cannot ask for ${beyond.join(' ')}.`);
    resource = checkResource(services, params.resource);
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.oauthCode, error.message);
    throw error;
  }
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri,
      redirectUriExplicit: params.redirect_uri !== undefined,
      scopes,
      state: params.state,
      codeChallenge: params.code_challenge,
      resource,
    },
  };
}

/** The client's redirect URI with the response parameters, and `iss` (RFC 9207) so the client can tell servers apart. */
function redirectLocation(services: Services, redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', services.config.publicUrl);
  return url.toString();
}

/**
 * The signed-in user approved: a single-use code (valid five minutes) for
 * the scopes they granted, which may be fewer than were asked for (never
 * none: `read` stays).
 */
export async function approveAuthorization(services: Services, actor: Actor, request: AuthorizationRequest, granted: readonly OAuthScope[]): Promise<string> {
  if (actor.via !== 'session') throw errors.forbidden('Only a person signed in with a session can authorize an app.');
  const scopes = request.scopes.filter((scope) => scope === 'read' || granted.includes(scope));
  const code = randomToken(32);
  const now = services.clock.now();
  await deleteExpiredAuthorizationCodes(services.db, now);
  await insertAuthorizationCode(services.db, {
    codeHash: hashToken(code),
    clientId: request.client.id,
    userId: actor.userId,
    redirectUri: request.redirectUri,
    redirectUriExplicit: request.redirectUriExplicit,
    codeChallenge: request.codeChallenge,
    scopes: scopeString(scopes.length > 0 ? scopes : ['read']),
    resource: request.resource,
    createdAt: now,
    expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS),
  });
  return redirectLocation(services, request.redirectUri, { code, state: request.state });
}

export function denyAuthorization(services: Services, request: AuthorizationRequest): string {
  return redirectLocation(services, request.redirectUri, { error: 'access_denied', error_description: 'The user declined.', state: request.state });
}

// Client authentication at the token and revocation endpoints

export type ClientCredentials = { clientId?: string; clientSecret?: string; basic?: { clientId: string; clientSecret: string } };

/** Public clients name themselves; confidential ones prove it with the method they registered. */
export async function authenticateClient(services: Services, credentials: ClientCredentials): Promise<OAuthClientRecord> {
  const { basic } = credentials;
  if (basic && credentials.clientId !== undefined && credentials.clientId !== basic.clientId) {
    throw oauthErrors.invalidRequest('client_id in the body does not match the Authorization header.');
  }
  const clientId = basic?.clientId ?? credentials.clientId;
  if (!clientId) throw oauthErrors.invalidClient('Client authentication is required: send client_id (and the secret, for confidential clients).');
  const client = await findOAuthClient(services.db, clientId);
  if (!client) throw oauthErrors.invalidClient();
  const secret = client.tokenEndpointAuthMethod === 'client_secret_basic' ? basic?.clientSecret : client.tokenEndpointAuthMethod === 'client_secret_post' ? credentials.clientSecret : undefined;
  if (client.tokenEndpointAuthMethod !== 'none') {
    if (!secret || !client.secretHash || !safeEqual(hashToken(secret), client.secretHash)) throw oauthErrors.invalidClient();
  } else if (basic?.clientSecret || credentials.clientSecret) {
    // Some libraries send public clients as HTTP Basic with an empty secret; a secret that is not empty is a mistake worth refusing.
    throw oauthErrors.invalidClient('This client is public: it authenticates with client_id alone.');
  }
  return client;
}

// The token endpoint

export type TokenResponse = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
};

export type TokenRequest = {
  grant_type: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  refresh_token?: string;
  resource?: string;
};

export async function exchangeToken(services: Services, client: OAuthClientRecord, request: TokenRequest): Promise<TokenResponse> {
  checkResource(services, request.resource);
  switch (request.grant_type) {
    case 'authorization_code':
      return exchangeCode(services, client, request);
    case 'refresh_token':
      if (!(client.metadata.grant_types as string[] | undefined)?.includes('refresh_token')) {
        throw new OAuthError('unauthorized_client', 'This client did not register the refresh_token grant.');
      }
      return refresh(services, client, request);
    default:
      throw oauthErrors.unsupportedGrantType(request.grant_type);
  }
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * A code is exchanged once, by the client it was issued to, with the
 * verifier of its challenge and the same redirect URI. A second exchange is
 * refused and revokes the grant the first one created (RFC 6749 §4.1.2).
 */
async function exchangeCode(services: Services, client: OAuthClientRecord, request: TokenRequest): Promise<TokenResponse> {
  if (!request.code) throw oauthErrors.invalidRequest('code is required.');
  if (!request.code_verifier) throw oauthErrors.invalidRequest('code_verifier is required (PKCE).');
  if (!PKCE_VERIFIER.test(request.code_verifier)) throw oauthErrors.invalidRequest('code_verifier must be 43 to 128 unreserved characters.');
  const now = services.clock.now();
  const outcome = await transactWithEvents(services, async (tx, events) => {
    const code = await lockAuthorizationCode(tx, hashToken(request.code!));
    if (!code || code.clientId !== client.id) return oauthErrors.invalidGrant('The authorization code is invalid.');
    if (code.usedAt) {
      if (code.grantId) events.push(...(await revokeGrantWithEvent(services, tx, code.grantId, 'code_reuse')));
      return oauthErrors.invalidGrant('The authorization code was already used; the tokens issued for it are revoked.');
    }
    if (code.expiresAt <= now) return oauthErrors.invalidGrant('The authorization code has expired.');
    const redirectMatches = request.redirect_uri === undefined ? !code.redirectUriExplicit : request.redirect_uri === code.redirectUri;
    if (!redirectMatches) return oauthErrors.invalidGrant('redirect_uri does not match the authorization request.');
    if (!safeEqual(s256(request.code_verifier!), code.codeChallenge)) return oauthErrors.invalidGrant('The code_verifier does not match the code_challenge.');

    const grantId = newId('ogr', 20);
    await insertGrant(tx, {
      id: grantId,
      clientId: client.id,
      userId: code.userId,
      scopes: code.scopes,
      resource: code.resource,
      createdAt: now,
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS),
    });
    await markAuthorizationCodeUsed(tx, code.codeHash, grantId, now);
    events.push(...(await grantEvent(tx, 'oauth.grant_created', { grantId, userId: code.userId, client, scopes: code.scopes })));
    return issueTokens(tx, grantId, code.scopes, now);
  });
  // Refusals commit too: a replayed code has just revoked what it was exchanged for.
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

/**
 * Rotation: every refresh answers a new refresh token and retires the one
 * presented. Presenting a retired one again means two parties hold it, so
 * the whole grant is revoked (OAuth 2.1 §4.3.1) and both must sign in anew.
 */
async function refresh(services: Services, client: OAuthClientRecord, request: TokenRequest): Promise<TokenResponse> {
  if (!request.refresh_token) throw oauthErrors.invalidRequest('refresh_token is required.');
  const now = services.clock.now();
  const outcome = await transactWithEvents(services, async (tx, events) => {
    const token = await findTokenWithGrant(tx, hashToken(request.refresh_token!), { lock: true });
    if (!token || token.kind !== 'refresh' || token.clientId !== client.id) return oauthErrors.invalidGrant('The refresh token is invalid.');
    if (token.grantRevokedAt) return oauthErrors.invalidGrant('The grant behind this refresh token was revoked. Authorize again.');
    if (token.rotatedAt || token.revokedAt || !(await markRefreshTokenRotated(tx, token.tokenId, now))) {
      events.push(...(await revokeGrantWithEvent(services, tx, token.grantId, 'refresh_token_reuse')));
      return oauthErrors.invalidGrant('This refresh token was already used; the grant is revoked. Authorize again.');
    }
    if (token.expiresAt <= now) return oauthErrors.invalidGrant('The refresh token has expired. Authorize again.');
    await extendGrant(tx, token.grantId, new Date(now.getTime() + REFRESH_TOKEN_TTL_MS));
    return issueTokens(tx, token.grantId, token.scopes, now);
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

async function issueTokens(tx: Tx, grantId: string, scopes: string, now: Date): Promise<TokenResponse> {
  const accessToken = OAUTH_ACCESS_TOKEN_PREFIX + randomToken(32);
  const refreshToken = REFRESH_TOKEN_PREFIX + randomToken(32);
  await insertTokens(tx, [
    { id: newId('otk', 20), grantId, kind: 'access', tokenHash: hashToken(accessToken), createdAt: now, expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_MS) },
    { id: newId('otk', 20), grantId, kind: 'refresh', tokenHash: hashToken(refreshToken), createdAt: now, expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS) },
  ]);
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_MS / 1000, refresh_token: refreshToken, scope: scopes };
}

// Revocation

/**
 * RFC 7009: a refresh token revokes its whole grant (every access token
 * issued under it), an access token only itself. Unknown tokens, and tokens
 * of other clients, are answered the same way (200) so nothing can be
 * learned by probing.
 */
export async function revokeByClient(services: Services, client: OAuthClientRecord, token: string): Promise<void> {
  const found = await findTokenWithGrant(services.db, hashToken(token));
  if (!found || found.clientId !== client.id) return;
  if (found.kind === 'access') return revokeToken(services.db, found.tokenId, services.clock.now());
  await transactWithEvents(services, async (tx, events) => {
    events.push(...(await revokeGrantWithEvent(services, tx, found.grantId, 'client')));
  });
}

// The user's view of their grants

export type GrantView = GrantListing & { scopeList: OAuthScope[] };

export async function listUserGrants(services: Services, actor: Actor): Promise<GrantView[]> {
  const grants = await listLiveGrants(services.db, actor.userId, services.clock.now());
  return grants.map((grant) => ({ ...grant, scopeList: parseScopes(grant.scopes) }));
}

/** Revokes one of the user's grants: its tokens stop working at once, open sync connections and streams within a second. */
export async function revokeUserGrant(services: Services, actor: Actor, grantId: string): Promise<void> {
  const grant = await findUserGrant(services.db, actor.userId, grantId);
  if (!grant) throw errors.notFound('Grant');
  await transactWithEvents(services, async (tx, events) => {
    events.push(...(await revokeGrantWithEvent(services, tx, grantId, 'user')));
  });
}

export async function revokeAllUserGrants(services: Services, actor: Actor): Promise<number> {
  const grants = await listLiveGrants(services.db, actor.userId, services.clock.now());
  await transactWithEvents(services, async (tx, events) => {
    for (const grant of grants) events.push(...(await revokeGrantWithEvent(services, tx, grant.id, 'user')));
  });
  return grants.length;
}

// Events: grants appear in the audit log of the user's organisation (webhooks see them too)

type GrantFacts = { grantId: string; userId: string; client: Pick<OAuthClientRecord, 'id' | 'name'>; scopes: string };

async function grantEvent(tx: Tx, event: EventName, facts: GrantFacts, extra: Record<string, unknown> = {}): Promise<EventDraft[]> {
  const user = await findUserById(tx, facts.userId);
  const org = user?.primaryOrgId ? await findOrgById(tx, user.primaryOrgId) : undefined;
  if (!user || !org) return [];
  return [
    {
      event,
      orgId: org.id,
      workspace: null,
      principal: { principalType: 'user', id: user.id, name: user.name, avatarUrl: user.avatarUrl },
      subjectId: facts.grantId,
      data: { grantId: facts.grantId, client: { id: facts.client.id, name: facts.client.name }, scopes: parseScopes(facts.scopes), ...extra },
    },
  ];
}

type RevocationReason = 'user' | 'client' | 'code_reuse' | 'refresh_token_reuse';

/** Revokes inside `tx`; the `oauth.grant_revoked` draft, or none when it was revoked already. */
async function revokeGrantWithEvent(services: Services, tx: Tx, grantId: string, reason: RevocationReason): Promise<EventDraft[]> {
  const revoked = await revokeGrant(tx, grantId, reason, services.clock.now());
  if (!revoked) return [];
  const client = await findOAuthClient(tx, revoked.clientId);
  return grantEvent(tx, 'oauth.grant_revoked', { grantId, userId: revoked.userId, client: { id: revoked.clientId, name: client?.name ?? '' }, scopes: revoked.scopes }, { reason });
}
