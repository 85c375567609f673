import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics (served at `/metrics`, src/http/metrics.ts).
 * One registry per Services object, never prom-client's global one: tests run
 * several apps in one process. Gauges that describe state owned elsewhere
 * (connections, loaded documents, outbox backlog, Redis) are read when
 * scraped, through `gauge(...)`. Labels are bounded: route patterns, never
 * URLs; no label carries an id, a name or a secret.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'trellis_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'trellis_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly logAppends = new Counter({
    name: 'trellis_document_log_appends_total',
    help: 'Y updates appended to the durable document log, by who made them (client: a sync connection; server: REST, MCP, system)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly commitDuration = new Histogram({
    name: 'trellis_document_commit_duration_seconds',
    help: 'Database transactions that commit document changes with their events and projections',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'trellis_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome (succeeded, retrying, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly eventBusLag = new Histogram({
    name: 'trellis_event_bus_lag_seconds',
    help: 'From an event being published on one instance to another instance receiving it through Redis',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly relayMessages = new Counter({
    name: 'trellis_sync_relay_messages_total',
    help: 'Sync messages exchanged with other instances through Redis, by direction and kind',
    labelNames: ['direction', 'kind'] as const,
    registers: [this.registry],
  });

  readonly syncDivergences = new Counter({
    name: 'trellis_sync_divergences_detected_total',
    help: 'Sync clients whose document state was found to differ from the server\'s by a digest check, by the side that lacked something (server: an update never arrived; client: the client lacked server state)',
    labelNames: ['side'] as const,
    registers: [this.registry],
  });

  readonly syncDivergencesHealed = new Counter({
    name: 'trellis_sync_divergences_healed_total',
    help: 'Divergences found by a digest check that a later check on the same connection found healed',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'trellis_' });
  }

  /** A gauge whose value is read from `read` at every scrape. */
  gauge(name: string, help: string, read: () => number | Promise<number>) {
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
