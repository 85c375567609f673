import { errors } from '../../src/errors';
import type { App } from '../../src/http/types';
import { newId } from '../../src/lib/ids';
import { hashToken, randomToken } from '../../src/lib/secrets';
import { MINUTE } from '../../src/limits/rules';
import { addOrgMember, insertOrg, insertSession, insertUser } from '../../src/persistence/accounts';
import type { Services } from '../../src/domain/services';

/** A signed-in user with a personal org, written straight to the database (no mail round trip). */
export async function signedInUser(services: Services) {
  const orgId = newId('org');
  const userId = newId('usr');
  const token = randomToken();
  await insertOrg(services.db, { id: orgId, slug: orgId.toLowerCase(), name: 'Test org', personal: true });
  await insertUser(services.db, { id: userId, email: `${userId.toLowerCase()}@example.test`, name: 'Tester', primaryOrgId: orgId });
  await addOrgMember(services.db, { orgId, userId, role: 'owner' });
  const now = services.clock.now();
  await insertSession(services.db, {
    id: newId('ses'),
    tokenHash: hashToken(token),
    userId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 365 * 24 * 60 * MINUTE),
    userAgent: null,
  });
  return { orgId, userId, as: { cookie: token } };
}

/** How often each test route's handler ran: a replay must not move these. */
export type HandlerRuns = { write: number; boom: number; slow: number };

/**
 * Routes that exist only in these tests, so every limit can be exercised
 * through real HTTP before the resource routes that use them exist.
 */
export function limitTestRoutes(runs: HandlerRuns, slowGate: { wait: Promise<void> }) {
  return (app: App) => {
    app.get('/test/echo', { config: { auth: 'optional' } }, async (request) => ({ caller: request.actor?.principal.id ?? null }));
    app.get('/test/forbidden', async () => {
      throw errors.forbidden();
    });
    app.post('/test/write', async (request) => {
      runs.write += 1;
      return { run: runs.write, received: request.body ?? null };
    });
    app.post('/test/created', async (_request, reply) => reply.status(201).send({ id: newId('thing') }));
    app.post('/test/boom', async () => {
      runs.boom += 1;
      throw new Error('boom');
    });
    app.post('/test/slow', async () => {
      runs.slow += 1;
      await slowGate.wait;
      return { ok: true };
    });
    app.post(
      '/test/ruled',
      {
        config: {
          auth: 'optional',
          rateLimits: [{ endpoint: 'test_rule', limit: 3, windowMs: MINUTE, bucket: (request) => (request.body as { name?: string })?.name ?? null }],
        },
      },
      async () => ({ ok: true }),
    );
  };
}

export function monthlyHeaders(headers: Headers) {
  return {
    cap: headers.get('x-ratelimit-monthly-cap'),
    used: headers.get('x-ratelimit-monthly-used'),
    reset: headers.get('x-ratelimit-monthly-reset'),
  };
}
