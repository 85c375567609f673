/**
 * Redeeming a magic link, and the two legs of OpenID Connect sign-in. Not
 * operations: they set cookies and answer with redirects, not JSON. Asking
 * for a link and listing the sign-in methods are operations
 * (src/operations/auth.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { redeemMagicLink, SESSION_TTL_MS, WELCOME_SLUG } from '../domain/accounts';
import { finishOidcSignIn, OIDC_PENDING_TTL_MS, OidcPending, OidcRefused, startOidcSignIn } from '../domain/oidc';
import { errors } from '../errors';
import { SESSION_COOKIE } from '../http/authenticate';
import type { App } from '../http/types';
import type { Services } from '../domain/services';
import { errorResponses } from '../model/schemas/common';

const RedeemQuery = z.strictObject({ token: z.string().min(1).max(200) });
const OidcStartQuery = z.strictObject({ next: z.string().max(4000).optional() });
// The provider's answer: code and state, or error; providers add their own fields (iss, session_state, scope).
const OidcCallbackQuery = z.looseObject({
  code: z.string().max(4000).optional(),
  state: z.string().max(4000).optional(),
  iss: z.string().max(4000).optional(),
  error: z.string().max(4000).optional(),
  error_description: z.string().max(4000).optional(),
});

/** Holds state, nonce and the PKCE verifier between the two legs; only the callback path receives it. */
const OIDC_PENDING_COOKIE = 'svc-oidc';
const OIDC_COOKIE_PATH = '/api/auth/oidc';

/** The end of every sign-in: the session cookie, then the page the person asked for or their welcome workspace. */
function enterSession(reply: FastifyReply, services: Services, session: { sessionToken: string; orgSlug: string; returnTo: string | null }) {
  reply.setCookie(SESSION_COOKIE, session.sessionToken, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: services.config.cookieSecure,
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
  return reply.redirect(session.returnTo ?? `/${session.orgSlug}/${WELCOME_SLUG}`, 302);
}

/** Stored with the session row, cut to a length no real browser needs. */
function userAgentOf(request: FastifyRequest): string | null {
  return request.headers['user-agent']?.slice(0, 300) ?? null;
}

function readPending(raw: string | undefined): OidcPending | null {
  if (!raw) return null;
  try {
    const parsed = OidcPending.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function authRoutes(app: App, services: Services) {
  app.get(
    '/api/auth',
    {
      schema: {
        summary: 'Redeem a magic link',
        description:
          'Sets the `svc-session` cookie and redirects (302) to `/{orgSlug}/welcome`, or back to the page that asked for the link (the OAuth consent page). A used or expired token is 401.',
        tags: ['auth'],
        querystring: RedeemQuery,
        response: { 302: z.null().describe('Redirect to the welcome workspace'), ...errorResponses },
      },
      config: { auth: 'none' },
    },
    async (request, reply) => {
      return enterSession(reply, services, await redeemMagicLink(services, request.query.token, userAgentOf(request)));
    },
  );

  const refusedTo = (code: string) => `/signin?error=${code}`;
  // Mounted on every server so the interface does not change with configuration; unconfigured, they are 404.
  const requireOidc = () => {
    if (!services.config.oidc) throw errors.notFound('OpenID Connect sign-in (OIDC_ISSUER is not configured on this server)');
  };

  app.get(
    '/api/auth/oidc/start',
    {
      schema: {
        summary: 'Start OpenID Connect sign-in',
        description:
          'Redirects (302) to the identity provider (authorization code with PKCE). `next` is a path on this server to open after sign-in (the same rules as a magic link). 404 when OIDC_ISSUER is not configured. If the provider cannot be reached, redirects to `/signin?error=oidc_failed`.',
        tags: ['auth'],
        querystring: OidcStartQuery,
        response: { 302: z.null().describe('Redirect to the identity provider'), ...errorResponses },
      },
      config: { auth: 'none' },
    },
    async (request, reply) => {
      requireOidc();
      try {
        const { url, pending } = await startOidcSignIn(services, request.query.next);
        reply.setCookie(OIDC_PENDING_COOKIE, Buffer.from(JSON.stringify(pending)).toString('base64url'), {
          path: OIDC_COOKIE_PATH,
          httpOnly: true,
          // Lax: the provider's redirect back is a top-level GET, which carries it.
          sameSite: 'lax',
          secure: services.config.cookieSecure,
          maxAge: Math.floor(OIDC_PENDING_TTL_MS / 1000),
        });
        return reply.redirect(url, 302);
      } catch (error) {
        if (!(error instanceof OidcRefused)) throw error;
        request.log.warn({ code: error.code, reason: error.reason }, 'OpenID Connect sign-in could not start');
        return reply.redirect(refusedTo(error.code), 302);
      }
    },
  );

  app.get(
    '/api/auth/oidc/callback',
    {
      schema: {
        summary: 'Finish OpenID Connect sign-in',
        description:
          'The redirect URI to register at the identity provider. Checks the answer (state, PKCE, nonce, ID token audience, issuer, signature and expiry) and the e-mail (verified, in OIDC_ALLOWED_DOMAINS, SIGNUP_MODE), sets the `svc-session` cookie and redirects (302) to the welcome workspace or the `next` path. A refusal redirects to `/signin?error=<code>` with no session: `oidc_cancelled`, `oidc_failed`, `oidc_email_missing`, `oidc_email_unverified`, `oidc_domain_not_allowed`, `oidc_waitlisted`. 404 when OIDC_ISSUER is not configured.',
        tags: ['auth'],
        querystring: OidcCallbackQuery,
        response: { 302: z.null().describe('Redirect into the app, or to the sign-in page with an error code'), ...errorResponses },
      },
      config: { auth: 'none' },
    },
    async (request, reply) => {
      requireOidc();
      const pending = readPending(request.cookies[OIDC_PENDING_COOKIE]);
      // One use: a replayed callback finds no pending sign-in.
      reply.clearCookie(OIDC_PENDING_COOKIE, { path: OIDC_COOKIE_PATH });
      const query = new URLSearchParams(request.query as Record<string, string>).toString();
      try {
        return enterSession(reply, services, await finishOidcSignIn(services, query, pending, userAgentOf(request)));
      } catch (error) {
        if (!(error instanceof OidcRefused)) throw error;
        request.log.warn({ code: error.code, reason: error.reason }, 'OpenID Connect sign-in refused');
        return reply.redirect(refusedTo(error.code), 302);
      }
    },
  );
}
