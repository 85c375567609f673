import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { errors } from '../errors';
import { countPendingDeliveries } from '../persistence/webhooks';
import type { Services } from '../domain/services';
import type { App } from './types';

/**
 * `/metrics` in Prometheus text format, and the hook that counts and times
 * every HTTP request by route pattern (never the URL: no ids or tokens in a
 * label). With METRICS_TOKEN set, the scrape needs `Authorization: Bearer
 * <token>`; without it the endpoint is open, as Prometheus endpoints usually
 * are (it names no tenant, only counts). See docs/SCALING.md.
 */
export function registerMetrics(app: App, services: Services) {
  const { metrics } = services;
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  metrics.gauge('trellis_sync_connections', 'Open sync websockets on /api/sync', () => services.sync.stats().connections);
  metrics.gauge('trellis_documents_loaded', 'Y documents held in memory', () => services.sync.stats().documents);
  metrics.gauge('trellis_webhook_outbox_backlog', 'Webhook deliveries written and not yet delivered or given up', () => countPendingDeliveries(services.db).catch(() => -1));
  metrics.gauge('trellis_redis_configured', '1 when REDIS_URL is set (several instances share sync and events)', () => (services.cluster.redisConfigured ? 1 : 0));
  const seconds = (at: Date | null) => (at ? at.getTime() / 1000 : 0);
  metrics.gauge('trellis_backup_last_success_timestamp_seconds', 'When the last backup this server took succeeded (Unix seconds; 0: none since start)', () => seconds(app.backups.status.lastSuccessAt));
  metrics.gauge('trellis_backup_last_failure_timestamp_seconds', 'When the last backup this server took failed (Unix seconds; 0: none since start)', () => seconds(app.backups.status.lastFailureAt));
  metrics.gauge('trellis_redis_connected', '1 while the sync relay and the event bus are connected to Redis', () => (services.cluster.redisConnected() ? 1 : 0));

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: 'Requests, sync, document log, webhook outbox, event bus and process metrics in the Prometheus text format. Needs `Authorization: Bearer <METRICS_TOKEN>` when the server sets METRICS_TOKEN.',
        tags: ['platform'],
        response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } } },
      },
      config: { auth: 'none', metered: false },
    },
    async (request, reply) => {
      const token = services.config.metricsToken ? Buffer.from(`Bearer ${services.config.metricsToken}`) : null;
      if (token) {
        const presented = Buffer.from(request.headers.authorization ?? '');
        if (presented.length !== token.length || !timingSafeEqual(presented, token)) throw errors.unauthorized('Send Authorization: Bearer <METRICS_TOKEN>.');
      }
      return reply.type(metrics.contentType).send(await metrics.text());
    },
  );
}
