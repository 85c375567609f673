/**
 * Redeeming a magic link. Not an operation: it sets the session cookie and
 * answers with a redirect, not JSON. Asking for a link is an operation
 * (src/operations/auth.ts).
 */
import { z } from 'zod';
import { redeemMagicLink, SESSION_TTL_MS, WELCOME_SLUG } from '../domain/accounts';
import { SESSION_COOKIE } from '../http/authenticate';
import type { App } from '../http/types';
import type { Services } from '../domain/services';
import { errorResponses } from '../model/schemas/common';

const RedeemQuery = z.strictObject({ token: z.string().min(1).max(200) });

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
