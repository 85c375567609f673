import { z } from 'zod';
import { requestMagicLink } from '../domain/accounts';
import { HOUR, type RateLimitRule } from '../limits/rules';
import { Email } from '../model/schemas/common';
import { SignInMethods, SignInResponse } from '../model/schemas/account';
import { defineOperation } from './operation';

const SignInRequest = z.strictObject({ email: Email });

/** Shared with the OAuth sign-in form, which sends the same links: one budget per address and per IP. */
export const MAGIC_LINK_LIMITS: RateLimitRule[] = [
  { endpoint: 'magic_link_email', limit: 5, windowMs: HOUR, bucket: (request) => (request.body as { email: string }).email.trim().toLowerCase() },
  { endpoint: 'magic_link_ip', limit: 20, windowMs: HOUR, bucket: (request) => request.ip },
];

/** Signing in by e-mail: asking for the link. Redeeming it sets the session cookie (src/api/auth.ts). */
export const authOperations = {
  requestLink: defineOperation(
    {
      body: SignInRequest, response: SignInResponse,
      rest: {
        method: 'POST',
        path: '/api/auth',
        summary: 'Request a magic sign-in link by e-mail',
        description:
          'Sends a single-use link valid for 15 minutes. With SIGNUP_MODE=waitlist, unknown addresses are put on the waitlist and get `{ waitlisted: true }`.',
        tags: ['auth'],
        config: {
          auth: 'none',
          rateLimits: MAGIC_LINK_LIMITS,
          capExempt: true,
        },
      },
    },
    async (services, _actor, { body }) => requestMagicLink(services, body.email),
  ),
  methods: defineOperation(
    {
      response: SignInMethods,
      rest: {
        method: 'GET',
        path: '/api/auth/methods',
        summary: 'How a person can sign in here',
        description: 'Magic links always; OpenID Connect single sign-on when the server is configured for it (OIDC_ISSUER), with the name its button shows.',
        tags: ['auth'],
        config: { auth: 'none', capExempt: true },
      },
    },
    async (services) => ({
      magicLink: true as const,
      oidc: services.config.oidc ? { name: services.config.oidc.name, startUrl: '/api/auth/oidc/start' } : null,
    }),
  ),
};
