/*
 * Not an operation: its status is the database's state (503 with the same
 * body), and it documents no error responses, unlike every operation.
 */
import { z } from 'zod';
import type { App } from '../http/types';
import type { Services } from '../domain/services';

const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  database: z.object({ kind: z.enum(['pglite', 'postgres']), ok: z.boolean() }),
  redis: z
    .object({ configured: z.boolean(), ok: z.boolean() })
    .describe('With REDIS_URL, whether sync and events are shared with other instances right now; without it, ok is true (nothing to share)'),
  backup: z
    .object({
      scheduled: z.boolean(),
      lastSuccessAt: z.string().nullable(),
      lastFailureAt: z.string().nullable(),
    })
    .describe('Backups this server took since it started (scheduled with BACKUP_DIR, or through the admin route); a failure more recent than the last success wants a look at the logs'),
  uptimeSeconds: z.number(),
});

export async function healthRoutes(app: App, services: Services) {
  app.get(
    '/api/health',
    {
      schema: { summary: 'Liveness, database and Redis state (503 only when the database is down)', tags: ['platform'], response: { 200: HealthResponse, 503: HealthResponse } },
      config: { auth: 'none', metered: false },
    },
    async (_request, reply) => {
      const databaseOk = await services.database.ping();
      // Without Redis this instance still serves its own clients: degraded, but not taken out of the load balancer (200).
      const redis = { configured: services.cluster.redisConfigured, ok: !services.cluster.redisConfigured || services.cluster.redisConnected() };
      const body = {
        status: databaseOk && redis.ok ? ('ok' as const) : ('degraded' as const),
        version: '1.0.1',
        database: { kind: services.database.kind, ok: databaseOk },
        redis,
        backup: {
          scheduled: app.backups.status.scheduled,
          lastSuccessAt: app.backups.status.lastSuccessAt?.toISOString() ?? null,
          lastFailureAt: app.backups.status.lastFailureAt?.toISOString() ?? null,
        },
        uptimeSeconds: Math.round(process.uptime()),
      };
      return reply.status(databaseOk ? 200 : 503).send(body);
    },
  );
}
