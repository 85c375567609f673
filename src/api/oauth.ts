import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SESSION_COOKIE } from '../access/callers';
import { requestMagicLink } from '../domain/accounts';
import {
  approveAuthorization,
  authenticateClient,
  checkAuthorizationRequest,
  denyAuthorization,
  exchangeToken,
  OAuthError,
  oauthErrors,
  registerClient,
  revokeByClient,
  scopeString,
  type AuthorizationParams,
  type AuthorizationRequest,
  type ClientCredentials,
} from '../domain/oauth';
import { errors, RateLimitedError, type ApiError } from '../errors';
import { handleError, toApiError } from '../http/error-handler';
import { htmlResponse, sendPage, sendPageError } from '../http/html-page';
import type { App } from '../http/types';
import { safeEqual } from '../lib/secrets';
import { storableJson } from '../lib/text';
import { HOUR, MINUTE } from '../limits/rules';
import { findUserById } from '../persistence/accounts';
import { OAUTH_SCOPES } from '../model/permissions';
import type { Services } from '../domain/services';
import { MAGIC_LINK_LIMITS } from '../operations/auth';
import { checkMailPage, consentPage, errorPage, PAGE_HEADERS, signInPage } from './oauth-pages';
import { Ok, RateLimitedBody } from '../model/schemas/common';

/**
 * OAuth 2.1 for third-party apps and MCP clients (docs/OAUTH.md): the
 * discovery documents, dynamic registration, the consent page, the token
 * and revocation endpoints. Not operations: they are the OAuth protocol
 * (form bodies, redirects, HTML pages, RFC 6749 errors, RFC 8414/9728
 * documents). The user's list of grants is: src/operations/oauth-grants.ts.
 */

const Text = (max: number) => z.string().max(max);
const WebUrl = z.url({ protocol: /^https?$/ }).max(2000);

const ProtectedResourceMetadata = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string(),
    resource_documentation: z.string(),
  })
  .meta({ id: 'OAuthProtectedResourceMetadata', description: 'RFC 9728' });

const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string(),
    revocation_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    revocation_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
    service_documentation: z.string(),
  })
  .meta({ id: 'OAuthAuthorizationServerMetadata', description: 'RFC 8414' });

const clientMetadataFields = {
  redirect_uris: z.array(Text(2000)).min(1).max(10),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_post', 'client_secret_basic']).optional(),
  grant_types: z.array(Text(100)).max(10).optional(),
  response_types: z.array(Text(100)).max(10).optional(),
  client_name: Text(200).optional(),
  client_uri: WebUrl.optional(),
  logo_uri: WebUrl.optional(),
  tos_uri: WebUrl.optional(),
  policy_uri: WebUrl.optional(),
  scope: Text(200).optional(),
  contacts: z.array(Text(320)).max(10).optional(),
  software_id: Text(200).optional(),
  software_version: Text(200).optional(),
};

// Unknown metadata is dropped, not refused (RFC 7591 §2): only these fields are stored and echoed.
const ClientRegistrationRequest = z.object(clientMetadataFields).meta({ id: 'OAuthClientMetadata', description: 'RFC 7591 client metadata' });

const ClientRegistrationResponse = z
  .object({
    ...clientMetadataFields,
    client_id: z.string(),
    client_id_issued_at: z.number().int(),
    client_secret: z.string().optional().describe('Confidential clients only; returned once'),
    client_secret_expires_at: z.number().int().optional().describe('0: the secret does not expire'),
  })
  .meta({ id: 'OAuthClientInformation' });

const OAuthErrorBody = z
  .object({ error: z.string(), error_description: z.string(), requestId: z.string() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2' });

const Param = Text(4000).optional();
const AuthorizationQuery = z.looseObject({
  response_type: Param,
  client_id: Param,
  redirect_uri: Param,
  scope: Param,
  state: Param,
  code_challenge: Param,
  code_challenge_method: Param,
  resource: Param,
});

const ConsentForm = AuthorizationQuery.extend({
  csrf: Text(200),
  decision: z.enum(['approve', 'deny']),
  ...Object.fromEntries(OAUTH_SCOPES.map((scope) => [`grant_${scope}`, z.literal('on').optional()])),
});

const SignInForm = z.strictObject({ email: z.email().max(254), return_to: Text(4000) });

const TokenForm = z.looseObject({
  grant_type: Text(100),
  code: Param,
  redirect_uri: Param,
  code_verifier: Param,
  refresh_token: Param,
  resource: Param,
  scope: Param,
  client_id: Param,
  client_secret: Param,
});

const TokenResponse = z
  .object({
    access_token: z.string().describe('`oat_…`, valid one hour'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string().describe('`ort_…`, single use: every refresh answers a new one'),
    scope: z.string(),
  })
  .meta({ id: 'OAuthTokenResponse' });

const RevocationForm = z.looseObject({ token: Text(4000), token_type_hint: Param, client_id: Param, client_secret: Param });

const redirectResponse = z.null().describe("Redirect to the app's redirect URI with `code` (or `error`), `state` and `iss`");
const oauthErrorResponses = { 400: OAuthErrorBody, 401: OAuthErrorBody, 429: RateLimitedBody, 500: OAuthErrorBody };
const FORM = ['application/x-www-form-urlencoded'];
const perIp = (request: FastifyRequest) => request.ip;

export async function oauthRoutes(app: App, services: Services) {
  const metadataPaths: Array<[string, string]> = [
    ['/.well-known/oauth-protected-resource', ''],
    ['/.well-known/oauth-protected-resource/api/mcp', '/api/mcp'],
  ];
  for (const [path, suffix] of metadataPaths) {
    app.get(
      path,
      {
        schema: {
          summary: 'Protected resource metadata (RFC 9728)',
          description: 'Where MCP clients and apps learn which authorization server issues tokens for this API. The `/api/mcp` form names the MCP endpoint as the resource; tokens are valid for the whole API either way.',
          tags: ['oauth'],
          response: { 200: ProtectedResourceMetadata },
        },
        config: { auth: 'none', metered: false },
      },
      async () => {
        const base = services.config.publicUrl;
        return {
          resource: base + suffix,
          authorization_servers: [base],
          scopes_supported: [...OAUTH_SCOPES],
          bearer_methods_supported: ['header'],
          resource_name: 'Trellis',
          resource_documentation: `${base}/openapi.json`,
        };
      },
    );
  }

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: { summary: 'Authorization server metadata (RFC 8414)', tags: ['oauth'], response: { 200: AuthorizationServerMetadata } },
      config: { auth: 'none', metered: false },
    },
    async () => {
      const base = services.config.publicUrl;
      return {
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        scopes_supported: [...OAUTH_SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
        revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${base}/openapi.json`,
      };
    },
  );

  // The protocol endpoints answer OAuth's own error shape and read form bodies, so they live in their own scope.
  await app.register(async (scope) => {
    const oauth = scope as App;
    // Form text is made storable like every other entrance (src/lib/text.ts): a `%00` must not reach Postgres.
    oauth.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, storableJson(parseForm(body as string))));
    oauth.setErrorHandler((error, request, reply) => answerError(error, request, reply));
    registerProtocolRoutes(oauth, services);
  });

}

function registerProtocolRoutes(app: App, services: Services) {
  app.post(
    '/oauth/register',
    {
      schema: {
        summary: 'Register an app (RFC 7591 dynamic client registration)',
        description:
          'Open registration. Redirect URIs must be https, http on localhost, or a private-use scheme of a native app; they are matched exactly when authorizing. ' +
          '`token_endpoint_auth_method` `none` registers a public client (PKCE only); the default, `client_secret_basic`, and `client_secret_post` get a secret, returned once. 60 per hour per IP.',
        tags: ['oauth'],
        body: ClientRegistrationRequest,
        response: { 201: ClientRegistrationResponse, ...oauthErrorResponses },
      },
      config: { auth: 'none', metered: false, rateLimits: [{ endpoint: 'oauth_register', limit: 60, windowMs: HOUR, bucket: perIp }] },
    },
    async (request, reply) => reply.code(201).header('cache-control', 'no-store').send(await registerClient(services, request.body)),
  );

  app.get(
    '/oauth/authorize',
    {
      schema: {
        summary: 'Authorization endpoint: the consent page',
        description:
          'For the signed-in user, a page naming the app and the scopes it asks for (`read`, `write`, `admin`; default `read write`), which the user may narrow. ' +
          'Without a session, a sign-in form that e-mails a magic link leading back here. PKCE with S256 is required; `redirect_uri` must equal a registered one; `state` is returned as given. ' +
          'An unknown client or redirect URI is shown as an error page; other errors go back to the redirect URI.',
        tags: ['oauth'],
        querystring: AuthorizationQuery,
        response: { 200: htmlResponse('Consent or sign-in page'), 302: redirectResponse, 400: htmlResponse('Error page') },
      },
      config: { auth: 'optional', metered: false },
    },
    async (request, reply) => {
      const check = await checkAuthorizationRequest(services, request.query);
      if (check.kind === 'fatal') return refuse(request, reply, errors.badRequest(check.message));
      if (check.kind === 'redirect') return reply.redirect(check.location, 302);
      const actor = request.actor;
      if (actor?.via !== 'session') return page(reply, 200, signInPage(authorizePath(check.request), check.request.client.name));
      const user = await findUserById(services.db, actor.userId);
      const hidden = consentFields(check.request);
      return page(
        reply,
        200,
        consentPage({
          clientName: check.request.client.name,
          clientUri: typeof check.request.client.metadata.client_uri === 'string' ? check.request.client.metadata.client_uri : null,
          redirectUri: check.request.redirectUri,
          userEmail: user?.email ?? '',
          scopes: check.request.scopes,
          hidden: { ...hidden, csrf: csrfToken(sessionCookie(request), hidden) },
        }),
      );
    },
  );

  app.post(
    '/oauth/authorize',
    {
      schema: {
        summary: 'Record the consent decision',
        description:
          'Posted by the consent page: the authorization request, `decision` (`approve` or `deny`), `grant_write` / `grant_admin` for the scopes kept, and `csrf`, a token bound to the session and to the request. ' +
          'Approving redirects with a single-use `code` valid for 5 minutes; denying with `error=access_denied`.',
        tags: ['oauth'],
        consumes: FORM,
        body: ConsentForm,
        response: { 302: redirectResponse, 200: htmlResponse('Sign-in page, when the session has ended'), 400: htmlResponse('Error page'), 403: htmlResponse('Error page') },
      },
      config: { auth: 'optional', metered: false },
    },
    async (request, reply) => {
      if (!sameOrigin(services, request)) return refuse(request, reply, errors.forbidden('This form must be submitted from the consent page of this server.'));
      const check = await checkAuthorizationRequest(services, request.body as AuthorizationParams);
      if (check.kind === 'fatal') return refuse(request, reply, errors.badRequest(check.message));
      if (check.kind === 'redirect') return reply.redirect(check.location, 302);
      const actor = request.actor;
      if (actor?.via !== 'session') return page(reply, 200, signInPage(authorizePath(check.request), check.request.client.name));
      const body = request.body as Record<string, string | undefined>;
      const expected = csrfToken(sessionCookie(request), consentFields(check.request));
      if (!safeEqual(expected, request.body.csrf)) {
        return refuse(request, reply, errors.forbidden('This consent form has expired or was not issued to you. Start again from the app.'));
      }
      if (request.body.decision === 'deny') return reply.redirect(denyAuthorization(services, check.request), 302);
      const granted = OAUTH_SCOPES.filter((scope) => body[`grant_${scope}`] === 'on');
      return reply.redirect(await approveAuthorization(services, actor, check.request, granted), 302);
    },
  );

  app.post(
    '/oauth/sign-in',
    {
      schema: {
        summary: 'E-mail a sign-in link that returns to the consent page',
        description: 'The form of the consent page for visitors without a session. Shares the magic-link limits of POST /api/auth (5 per hour per address, 20 per IP).',
        tags: ['oauth'],
        consumes: FORM,
        body: SignInForm,
        response: { 200: htmlResponse('Check-your-e-mail page'), 400: htmlResponse('Error page'), 429: htmlResponse('Too many links requested') },
      },
      config: { auth: 'none', metered: false, rateLimits: MAGIC_LINK_LIMITS },
    },
    async (request, reply) => {
      const { email, return_to: returnTo } = request.body;
      if (!returnTo.startsWith('/oauth/authorize?')) return refuse(request, reply, errors.badRequest('This sign-in form only returns to an authorization request.'));
      const sent = await requestMagicLink(services, email, { returnTo });
      return page(reply, 200, checkMailPage(email, 'waitlisted' in sent));
    },
  );

  app.post(
    '/oauth/token',
    {
      schema: {
        summary: 'Token endpoint',
        description:
          '`authorization_code` (with `code_verifier` and the same `redirect_uri`) or `refresh_token`. Access tokens (`oat_…`) last one hour; refresh tokens (`ort_…`) rotate on every use, and presenting a used one revokes the grant. ' +
          'Clients authenticate as they registered: `client_id` alone (public), HTTP Basic, or `client_secret` in the body. 30 per minute per IP.',
        tags: ['oauth'],
        consumes: FORM,
        body: TokenForm,
        response: { 200: TokenResponse, ...oauthErrorResponses },
      },
      config: { auth: 'none', metered: false, rateLimits: [{ endpoint: 'oauth_token', limit: 30, windowMs: MINUTE, bucket: perIp }] },
    },
    async (request, reply) => {
      const client = await authenticateClient(services, clientCredentials(request, request.body));
      const tokens = await exchangeToken(services, client, request.body);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    },
  );

  app.post(
    '/oauth/revoke',
    {
      schema: {
        summary: 'Revoke a token (RFC 7009)',
        description:
          'A refresh token revokes its grant and every token issued under it; an access token only itself. Open sync connections and event streams of revoked tokens close within a second. ' +
          'Answers 200 for unknown tokens too. 30 per minute per IP.',
        tags: ['oauth'],
        consumes: FORM,
        body: RevocationForm,
        response: { 200: Ok, ...oauthErrorResponses },
      },
      config: { auth: 'none', metered: false, rateLimits: [{ endpoint: 'oauth_revoke', limit: 30, windowMs: MINUTE, bucket: perIp }] },
    },
    async (request) => {
      const client = await authenticateClient(services, clientCredentials(request, request.body));
      await revokeByClient(services, client, request.body.token);
      return { ok: true as const };
    },
  );
}

/** Form fields, with a repeated field kept as an array (which the schemas then refuse: OAuth forbids repeating a parameter). */
function parseForm(body: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(body)) {
    const existing = fields[name];
    fields[name] = existing === undefined ? value : [...[existing].flat(), value];
  }
  return { ...fields };
}

function page(reply: FastifyReply, status: number, html: string) {
  return sendPage(reply, status, html, PAGE_HEADERS);
}

/** An error of the browser routes: the error page for a browser, the JSON error for a client that asks for JSON. */
function refuse(request: FastifyRequest, reply: FastifyReply, error: unknown, message = (apiError: ApiError) => apiError.message) {
  return sendPageError(request, reply, error, (apiError) => errorPage(message(apiError)), PAGE_HEADERS);
}

/** The authorization request as the consent form carries it (and the CSRF token covers). */
function consentFields(request: AuthorizationRequest): Record<string, string> {
  return {
    response_type: 'code',
    client_id: request.client.id,
    // Left out when the app left it out (its one registered URI applies): the token request may then omit it too.
    ...(request.redirectUriExplicit ? { redirect_uri: request.redirectUri } : {}),
    scope: scopeString(request.scopes),
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    ...(request.state === undefined ? {} : { state: request.state }),
    ...(request.resource === null ? {} : { resource: request.resource }),
  };
}

function authorizePath(request: AuthorizationRequest): string {
  return `/oauth/authorize?${new URLSearchParams(consentFields(request)).toString()}`;
}

function sessionCookie(request: FastifyRequest): string {
  return request.cookies[SESSION_COOKIE] ?? '';
}

/**
 * The consent form's CSRF token: an HMAC of the request keyed by the
 * session cookie, which another site can neither read nor send (SameSite),
 * so a forged form cannot carry a valid one. Stateless: any instance checks it.
 */
function csrfToken(sessionToken: string, fields: Record<string, string>): string {
  const canonical = JSON.stringify(Object.keys(fields).sort().map((name) => [name, fields[name]]));
  return createHmac('sha256', `oauth-consent:${sessionToken}`).update(canonical).digest('base64url');
}

/** A browser posting the consent form sends its origin; another site's origin, or a cross-site fetch, is refused. */
function sameOrigin(services: Services, request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(services.config.publicUrl).origin) return false;
  return request.headers['sec-fetch-site'] !== 'cross-site';
}

/** Client authentication from HTTP Basic (RFC 6749 §2.3.1: form-encoded, then base64) and the body. */
function clientCredentials(request: FastifyRequest, body: { client_id?: string; client_secret?: string }): ClientCredentials {
  const header = request.headers.authorization;
  let basic: ClientCredentials['basic'];
  if (header) {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon < 0) throw oauthErrors.invalidClient('The Authorization header must be HTTP Basic with the client id and secret.');
    try {
      const formDecode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
      basic = { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
    } catch {
      throw oauthErrors.invalidClient('The Authorization header is not valid HTTP Basic.');
    }
  }
  return { clientId: body.client_id, clientSecret: body.client_secret, basic };
}

const PAGE_ROUTES = new Set(['/oauth/authorize', '/oauth/sign-in']);

/**
 * Errors of the protocol endpoints: for the browser routes, pages (or the
 * JSON error to a client that asks for JSON); for the others, the RFC 6749
 * body (a malformed request is `invalid_request`, or
 * `invalid_client_metadata` at registration). Limits keep their bodies.
 */
function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error);
  const route = request.routeOptions.url ?? '';
  if (PAGE_ROUTES.has(route)) {
    return refuse(request, reply, error, (refused) => (refused instanceof RateLimitedError ? refused.message : `The request is not valid: ${refused.message}`));
  }
  if (apiError instanceof OAuthError || apiError instanceof RateLimitedError || apiError.statusCode >= 500) return handleError(apiError, request, reply);
  const code = route === '/oauth/register' ? 'invalid_client_metadata' : 'invalid_request';
  return handleError(new OAuthError(code, apiError.message), request, reply);
}
