import { z } from 'zod';
import { normaliseEmail } from '../domain/accounts';
import type { App } from '../http/types';
import { addToWaitlist } from '../persistence/accounts';
import type { Services } from '../services';
import { Email, errorResponses } from '../model/schemas/common';

const WaitlistRequest = z.strictObject({
  email: Email,
  source: z.string().max(100).optional(),
  ref: z.string().max(100).optional(),
});

export async function waitlistRoutes(app: App, services: Services) {
  app.post(
    '/api/waitlist',
    {
      schema: {
        summary: 'Join the waitlist',
        description: 'Idempotent: repeating an e-mail keeps the first entry.',
        tags: ['auth'],
        body: WaitlistRequest,
        response: { 200: z.object({ waitlisted: z.literal(true) }), ...errorResponses },
      },
      config: { auth: 'none' },
    },
    async (request) => {
      const { email, source, ref } = request.body;
      await addToWaitlist(services.db, { email: normaliseEmail(email), source: source ?? null, ref: ref ?? null });
      return { waitlisted: true as const };
    },
  );
}
