import pino, { type Logger } from 'pino';
import type { Config } from './config';
import { systemClock, type Clock } from './lib/clock';
import { LocalPaymentProvider } from './billing/local-payments';
import { Failpoints } from './lib/failpoints';
import { InProcessEventBus, type EventBus } from './events/bus';
import { InboxFeed } from './events/inbox-feed';
import { RedisEventBus } from './events/redis-bus';
import { Metrics } from './metrics/index';
import { createBlobStore } from './files/open-blob-store';
import { createLimits } from './limits/index';
import { createMailer } from './mail/mailer';
import { openDatabase } from './persistence/database';
import type { InstanceLease } from './persistence/instances';
import type { WriteEpochs } from './persistence/write-epochs';
import { INSTANCE_ID } from './lib/instance';
import { SyncConnectionGate } from './access/connection-auth';
import type { Services } from './domain/services';
import { RunRegistry } from './domain/run-registry';
import { DocumentObserver } from './events/observer';
import { LocalTracker } from './support/tracker';
import { SyncEngine } from './sync/engine';
import { RedisSyncRelay } from './sync/redis-relay';
import { LocalPresence, RedisPresence, type PresenceSource } from './sync/presence';
import { Webhooks } from './webhooks/index';

/**
 * Builds the Services object from configuration: shared by `main` (the
 * server) and the admin CLI, so both open the same database and mailer the
 * same way. `close()` releases what was opened, newest first.
 */
export async function createServices(
  config: Config,
  options: { log?: Logger; clock?: Clock; limitsKeyPrefix?: string; pgliteTemplate?: string } = {},
): Promise<{ services: Services; close(): Promise<void> }> {
  const log = options.log ?? createLogger(config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgliteTemplate: options.pgliteTemplate, pgliteThread: config.embeddedDatabaseThread });
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, log });
  const clock = options.clock ?? systemClock;
  const limits = createLimits(config, database.db, clock, { log, redisKeyPrefix: options.limitsKeyPrefix });
  const metrics = new Metrics();
  const webhooks = new Webhooks({ config, database, clock, log, metrics });
  const redis = config.redisUrl ? { url: config.redisUrl, prefix: config.redisPrefix } : undefined;
  // With Redis, events are shared with the other instances (src/events/redis-bus.ts); sync is, below (src/sync/redis-relay.ts).
  const events = redis ? new RedisEventBus({ redisUrl: redis.url, prefix: redis.prefix, db: database.db, log, metrics }) : new InProcessEventBus();
  webhooks.outbox.shareInvalidations((orgId) => events.notifyOthers('webhooks.invalidate', orgId));
  events.onNotice('webhooks.invalidate', (orgId) => webhooks.outbox.invalidate(orgId, true));
  shareCacheRetirement(database.epochs, events);
  const inbox = new InboxFeed();
  inbox.shareWith((recipientId) => events.notifyOthers('inbox.notify', recipientId));
  events.onNotice('inbox.notify', (recipientId) => inbox.notify(recipientId, false));
  const base = {
    config,
    db: database.db,
    database,
    mailer,
    clock,
    log,
    events,
    inbox,
    limits,
    blobs: await createBlobStore(config),
    failpoints: Failpoints.parse(config.failpoints),
    webhooks,
    metrics,
    cluster: {
      redisConfigured: Boolean(redis),
      redisConnected: () => Boolean(redis) && (events as RedisEventBus).isConnected() && (relay?.isConnected() ?? false),
    },
    payments: new LocalPaymentProvider(database.db, config),
    tracker: new LocalTracker(database.db, config),
  };
  // Which instance this is, among those sharing the database: it derives what it logs unless it dies first (src/persistence/instances.ts).
  const instance = await database.leaseInstance(INSTANCE_ID, (error) => log.warn({ err: error }, 'lost the database connection that shows this instance alive; taking it again'));
  const runs = new RunRegistry(base);
  const { engine, relay, presence } = createSyncEngine({ ...base, runs }, instance, redis);
  const services: Services = { ...base, runs, sync: engine, presence };
  return {
    services,
    close: async () => {
      // The app's preClose stops sync for the server; a CLI may have written through it too.
      await services.sync.drain();
      await instance.release();
      await relay?.close();
      await presence.close();
      await webhooks.stop();
      await services.events.close();
      await limits.close();
      services.blobs.close?.();
      await mailer.close();
      await database.close();
    },
  };
}

/**
 * The sync engine, with what it is handed from above it: the gate that
 * decides who may connect (src/access/connection-auth.ts), the one observer
 * that turns its changes into events (src/events/observer.ts) and, given
 * Redis, the relay that shares its documents with other instances.
 */
function createSyncEngine(
  services: Omit<Services, 'sync' | 'presence'>,
  instance: InstanceLease,
  redis?: { url: string; prefix: string },
): { engine: SyncEngine; relay: RedisSyncRelay | null; presence: PresenceSource } {
  const relay: RedisSyncRelay | null = redis
    ? new RedisSyncRelay({ redisUrl: redis.url, prefix: redis.prefix, committed: (name: string): Promise<void> => engine.committed(name), log: services.log, metrics: services.metrics })
    : null;
  // Who has each document open: this instance's connections, and with Redis the other instances' too.
  const local = new LocalPresence();
  const presence = redis ? new RedisPresence(local, { redisUrl: redis.url, prefix: redis.prefix, ttlSeconds: services.config.presenceTtlSeconds, log: services.log }) : local;
  // The gate resolves callers through src/access, which takes the whole bag; it never reaches `sync`.
  const gate = new SyncConnectionGate(services as Services);
  const engine: SyncEngine = new SyncEngine(services, { gate, instance, extensions: relay ? [relay, local] : [local] });
  engine.setObserver(new DocumentObserver(services, engine));
  return { engine, relay, presence };
}

/**
 * A write through another instance that may change a cached request context
 * (a key revoked, a member removed) retires this instance's cache at once
 * rather than when its entries expire (src/persistence/read-cache.ts): one
 * notice per event-loop turn of such writes; nothing without Redis.
 */
function shareCacheRetirement(epochs: WriteEpochs, events: EventBus) {
  let pending = false;
  epochs.onDurableWrite(() => {
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      events.notifyOthers('cache.retire', '');
    });
  });
  events.onNotice('cache.retire', () => epochs.bump());
}

/** Query parameters that carry credentials (magic links, invites, share tokens). */
const SECRET_QUERY_PARAMS = /([?&](?:token|code|secret|access_token|refresh_token)=)[^&#]*/gi;

/** Paths whose last segment is a bearer token (invite links, share links). */
const SECRET_PATH_SEGMENTS = /^(\/api\/(?:org-)?invites\/|\/share\/files\/|\/(?:api\/)?forms\/)[^/?#]+/;

/** A URL as it may be logged: credential-bearing query values and path tokens replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, '$1[redacted]').replace(SECRET_PATH_SEGMENTS, '$1[redacted]');
}

/** The process logger; credentials in headers and query strings never reach the log. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
    serializers: {
      req: (req: { method?: string; url?: string; headers?: Record<string, unknown>; socket?: { remoteAddress?: string } }) => ({
        method: req.method,
        url: req.url === undefined ? undefined : redactUrl(req.url),
        remoteAddress: req.socket?.remoteAddress,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
