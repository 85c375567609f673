import type { Logger } from 'pino';
import type { Config } from '../config';
import type { EventBus } from '../events/bus';
import type { InboxFeed } from '../events/inbox-feed';
import type { Clock } from '../lib/clock';
import type { Failpoints } from '../lib/failpoints';
import type { Limits } from '../limits/index';
import type { Mailer } from '../mail/mailer';
import type { DatabaseHandle, Db } from '../persistence/database';
import type { DocumentSync } from '../sync/document-sync';
import type { PresenceSource } from '../sync/presence';

/**
 * Everything a route or domain function may reach, built once by `main` (or a
 * test) and handed to the app. No module reads globals or the environment.
 */
export type Services = {
  config: Config;
  db: Db;
  database: DatabaseHandle;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
  /** Live fan-out of committed events (SSE, webhooks). */
  events: EventBus;
  /** Wakes open inbox streams (`GET /api/me/messages/stream`) when a message is delivered. */
  inbox: InboxFeed;
  /** Rate limiter, monthly API meter and idempotency store (enforced in src/http/limits.ts). */
  limits: Limits;
  /** Y documents over Hocuspocus, with the durable update log and the observer. */
  sync: DocumentSync;
  /** Who has each document open, on any instance (src/sync/presence.ts). */
  presence: PresenceSource;
  /** Webhook outbox and delivery (src/webhooks). */
  webhooks: import('../webhooks/index').Webhooks;
  /** Uploaded bytes (doc images, later files): local disk under DATA_DIR/blobs, or S3. */
  blobs: import('../files/blob-store').BlobStore;
  /** Plans are paid through this (local by default: src/billing/local-payments.ts). */
  payments: import('../billing/payment-provider').PaymentProvider;
  /** Support tickets are mirrored here (local by default: src/support/tracker.ts). */
  tracker: import('../support/tracker').Tracker;
  /** Deliberate failures for recovery tests; nothing is armed in production. */
  failpoints: Failpoints;
  /** Prometheus metrics, served at /metrics (src/metrics). */
  metrics: import('../metrics/index').Metrics;
  /** Whether this instance shares sync and events with others through Redis right now (docs/SCALING.md). */
  cluster: ClusterStatus;
  /** Which run each write joins, and the automatic runs of keys (src/domain/runs.ts, docs/RUNS.md). */
  runs: import('./run-registry').RunRegistry;
};

export type ClusterStatus = {
  /** REDIS_URL is set. */
  redisConfigured: boolean;
  /** Both the sync relay and the event bus are connected (false when Redis is not configured). */
  redisConnected(): boolean;
};
