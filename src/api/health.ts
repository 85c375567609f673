import { z } from 'zod';
import type { App } from '../http/types';
import type { Services } from '../services';

const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  database: z.object({ kind: z.enum(['pglite', 'postgres']), ok: z.boolean() }),
  uptimeSeconds: z.number(),
});

export async function healthRoutes(app: App, services: Services) {
  app.get(
    '/api/health',
    {
      schema: { summary: 'Liveness and database state', tags: ['platform'], response: { 200: HealthResponse, 503: HealthResponse } },
      config: { auth: 'none', metered: false },
    },
    async (_request, reply) => {
      const databaseOk = await services.database.ping();
      const body = {
        status: databaseOk ? ('ok' as const) : ('degraded' as const),
        version: '1.0.1',
        database: { kind: services.database.kind, ok: databaseOk },
        uptimeSeconds: Math.round(process.uptime()),
      };
      return reply.status(databaseOk ? 200 : 503).send(body);
    },
  );
}
