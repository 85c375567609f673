import { z } from 'zod';
import { redeemMagicLink, requestMagicLink, SESSION_TTL_MS, WELCOME_SLUG } from '../domain/accounts';
import { SESSION_COOKIE } from '../http/authenticate';
import type { App } from '../http/types';
import { HOUR, type RateLimitRule } from '../limits/rules';
import type { Services } from '../services';
import { Email, errorResponses } from '../model/schemas/common';
import { SignInResponse } from '../model/schemas/account';

const SignInRequest = z.strictObject({ email: Email });
const RedeemQuery = z.strictObject({ token: z.string().min(1).max(200) });

/** Shared with the OAuth sign-in form, which sends the same links: one budget per address and per IP. */
export const MAGIC_LINK_LIMITS: RateLimitRule[] = [
  { endpoint: 'magic_link_email', limit: 5, windowMs: HOUR, bucket: (request) => (request.body as { email: string }).email.trim().toLowerCase() },
  { endpoint: 'magic_link_ip', limit: 20, windowMs: HOUR, bucket: (request) => request.ip },
];

export async function authRoutes(app: App, services: Services) {
  app.post(
    '/api/auth',
    {
      schema: {
        summary: 'Request a magic sign-in link by e-mail',
        description:
          'Sends a single-use link valid for 15 minutes. With SIGNUP_MODE=waitlist, unknown addresses are put on the waitlist and get `{ waitlisted: true }`.',
        tags: ['auth'],
        body: SignInRequest,
        response: { 200: SignInResponse, ...errorResponses },
      },
      config: {
        auth: 'none',
        rateLimits: MAGIC_LINK_LIMITS,
        capExempt: true,
      },
    },
    async (request) => requestMagicLink(services, request.body.email),
  );

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
      const session = await redeemMagicLink(services, request.query.token, request.headers['user-agent']?.slice(0, 300) ?? null);
      reply.setCookie(SESSION_COOKIE, session.sessionToken, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: services.config.cookieSecure,
        maxAge: Math.floor(SESSION_TTL_MS / 1000),
      });
      return reply.redirect(session.returnTo ?? `/${session.orgSlug}/${WELCOME_SLUG}`, 302);
    },
  );
}
