import { z } from 'zod';
import { requestMagicLink } from '../domain/accounts';
import { HOUR, type RateLimitRule } from '../limits/rules';
import { Email } from '../model/schemas/common';
import { SignInResponse } from '../model/schemas/account';
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
};
