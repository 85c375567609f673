import { z } from 'zod';
import { joinWaitlist } from '../domain/accounts';
import { Email } from '../model/schemas/common';
import { defineOperation } from './operation';

const WaitlistRequest = z.strictObject({
  email: Email,
  source: z.string().max(100).optional(),
  ref: z.string().max(100).optional(),
});

/** The public waitlist form; open to anyone (no actor). */
export const waitlistOperations = {
  join: defineOperation(
    {
      body: WaitlistRequest, response: z.object({ waitlisted: z.literal(true) }),
      rest: {
        method: 'POST',
        path: '/api/waitlist',
        summary: 'Join the waitlist',
        description: 'Idempotent: repeating an e-mail keeps the first entry.',
        tags: ['auth'],
        config: { auth: 'none' },
      },
    },
    async (services, _actor, { body }) => {
      await joinWaitlist(services, body);
      return { waitlisted: true as const };
    },
  ),
};
