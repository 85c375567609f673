import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { EventRecord } from '../model/event-record';
import type { Clock } from '../lib/clock';
import type { Metrics } from '../metrics/index';
import type { DatabaseHandle } from '../persistence/database';
import { resolveTarget, type ResolvedTarget } from './address-guard';
import { WebhookDrain, type ManualRetryResult } from './drain';
import { WebhookOutbox } from './outbox';
import { PgDeliveryStore } from './pg-store';
import { ATTEMPT_TIMEOUT_MS } from './schedule';
import { SecretBox } from './secret-box';
import { HttpSender } from './sender';

/**
 * Webhook delivery for one process: the outbox that `recordEvents` writes
 * to, the drain that sends (started by the app, stopped on close), the
 * box that keeps signing secrets encrypted, and the SSRF check of targets.
 * See docs/WEBHOOKS.md.
 */
export class Webhooks {
  readonly outbox: WebhookOutbox;
  readonly secrets: SecretBox;
  private readonly sender: HttpSender;
  private readonly drain: WebhookDrain;
  private readonly allowPrivate: boolean;
  private onDeactivated: (webhookId: string) => Promise<void> = async () => {};

  constructor(deps: { config: Config; database: DatabaseHandle; clock: Clock; log: Logger; metrics?: Metrics }) {
    const { config, database, clock, log, metrics } = deps;
    this.outbox = new WebhookOutbox(() => clock.now().getTime());
    this.secrets = SecretBox.open({ configuredKey: config.webhookSecretKey, dataDir: config.dataDir });
    this.allowPrivate = config.webhookAllowPrivate;
    this.sender = new HttpSender({ allowPrivate: config.webhookAllowPrivate, timeoutMs: ATTEMPT_TIMEOUT_MS });
    const store = new PgDeliveryStore(database.db, (attempt) =>
      metrics?.webhookDeliveries.inc({ outcome: attempt.status === 'pending' ? 'retrying' : attempt.status }),
    );
    this.drain = new WebhookDrain(store, this.sender, clock, {
      owner: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      concurrency: 8,
      pollMs: 1_000,
      leaseMs: ATTEMPT_TIMEOUT_MS + 5_000,
      batch: 100,
      // PGlite's files can be opened by one process only: any lease found at start is a dead process's.
      exclusive: database.kind === 'pglite',
      openSecret: (ciphertext) => this.secrets.open(ciphertext),
      onDeactivated: (webhookId) => this.onDeactivated(webhookId),
      log,
    });
  }

  /** Starts sending (the app calls this when it is ready). */
  start(options: { onDeactivated(webhookId: string): Promise<void> }) {
    this.onDeactivated = options.onDeactivated;
    this.drain.start();
  }

  async stop() {
    await this.drain.stop();
    this.sender.close();
  }

  /** After a commit: if it wrote deliveries, send them now rather than at the next poll. */
  committed(records: readonly EventRecord[]) {
    const webhookIds = this.outbox.deliveredTo(records);
    if (webhookIds.length > 0) this.drain.wake(webhookIds);
  }

  /** Looks for due deliveries now (after a subscription was re-activated, the clock moved in tests). */
  wake() {
    this.drain.wake();
  }

  retryNow(deliveryId: string): Promise<ManualRetryResult> {
    return this.drain.retryNow(deliveryId);
  }

  /** The SSRF check applied to a target URL's host (throws ForbiddenTargetError). */
  checkTarget(url: URL): Promise<ResolvedTarget> {
    return resolveTarget(url.hostname, { allowPrivate: this.allowPrivate });
  }
}
