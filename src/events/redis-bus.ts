import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { INSTANCE_ID } from '../lib/instance';
import { RecentIds } from '../lib/recent-ids';
import { bothReady, closePubSub, onBothReady, openPubSub } from '../lib/redis';
import type { Metrics } from '../metrics/index';
import type { Executor } from '../persistence/database';
import { latestEventSeq, listEventsAfter, listEventsBySeq, listEventSeqsAfter } from '../persistence/events';
import { InProcessEventBus, type EventBus } from './bus';
import type { EventRecord } from '../model/event-record';

/** Recently delivered event ids remembered, so a catch-up never delivers one twice. */
const REMEMBERED = 20_000;
/** At most this many missed events are read back after an outage (SSE clients resume the rest with Last-Event-ID). */
const CATCH_UP_LIMIT = 10_000;
/**
 * Catch-up reads this many ids before the newest event delivered: ids are
 * drawn when an event is inserted, not when it commits, so an event with a
 * lower id can commit (and be published, unheard) after a higher one was
 * delivered. Those already delivered are skipped.
 */
const CATCH_UP_OVERLAP = 1_000;
/** Events per message when republishing what others could not hear. */
const REPUBLISH_CHUNK = 200;
/** How often the audit log is compared with what was delivered (see `deliverUnheard`). */
export const UNHEARD_SWEEP_MS = 2_000;

/**
 * The event bus shared by every instance through Redis pub/sub (REDIS_URL):
 * an SSE stream on one instance hears events committed on any other.
 * Records are delivered to this instance's own subscribers at once and
 * published on one channel for the others; each instance ignores its own.
 *
 * Webhooks do not ride on this bus: their deliveries are written to the
 * outbox in the event's own transaction and drained by whichever instance
 * leases the subscription (src/webhooks), so each event reaches each webhook
 * once however many instances run.
 *
 * Losing Redis: local delivery goes on; what this instance commits
 * meanwhile is kept (up to CATCH_UP_LIMIT events) and published when Redis
 * is back, so the others hear it even if their own connections never
 * dropped. What the others committed meanwhile is read from the audit log
 * (after the newest event this instance delivered before it lost Redis) and
 * delivered, skipping any already seen. An SSE client that reconnects
 * resumes from the audit log anyway.
 */
export class RedisEventBus implements EventBus {
  private readonly local = new InProcessEventBus();
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly delivered = new RecentIds(REMEMBERED);
  private newest = 0;
  /** The newest event when this instance first reached Redis: catch-up never reads before it (those events were never ours to deliver). */
  private floor: number | null = null;
  /** The newest event delivered when Redis went away: catch-up reads after it. */
  private lostAfter: number | null = null;
  /** Events committed here that the other instances could not hear (published while Redis was away, or the publish failed). */
  private unpublished: EventRecord[] = [];
  private closed = false;
  /** Reconnections are handled one at a time. */
  private reconnecting: Promise<void> = Promise.resolve();
  private readonly unheardSweep: NodeJS.Timeout;

  constructor(private readonly options: { redisUrl: string; prefix: string; db: Executor; log: Logger; metrics?: Metrics }) {
    ({ pub: this.pub, sub: this.sub } = openPubSub(options.redisUrl));
    this.channel = `${options.prefix}events`;
    this.sub.on('message', (_channel: string, message: string) => this.receive(message));
    onBothReady({ pub: this.pub, sub: this.sub }, () => {
      this.reconnecting = this.reconnecting.then(() => this.connected());
    });
    this.unheardSweep = setInterval(() => void this.deliverUnheard(), UNHEARD_SWEEP_MS).unref();
    this.sub.on('close', () => {
      // Only the subscriber misses what others publish; a publisher that drops keeps what it could not send (`unpublished`).
      if (this.floor === null || this.lostAfter !== null) return;
      this.lostAfter = this.newest;
      if (!this.closed) options.log.warn('event bus lost Redis; events from other instances come from the audit log until it is back');
    });
  }

  isConnected(): boolean {
    return bothReady({ pub: this.pub, sub: this.sub });
  }

  publish(records: EventRecord[]) {
    if (records.length === 0) return;
    this.deliver(records);
    this.send(records);
  }

  private send(records: EventRecord[]) {
    if (!this.isConnected()) return this.keepUnpublished(records);
    const message = JSON.stringify({ from: INSTANCE_ID, at: Date.now(), records });
    // A publish that fails (Redis went away mid-way) is sent again on reconnection; receivers skip what they already have.
    this.pub.publish(this.channel, message).catch(() => this.keepUnpublished(records));
  }

  private keepUnpublished(records: EventRecord[]) {
    this.unpublished.push(...records);
    const excess = this.unpublished.length - CATCH_UP_LIMIT;
    if (excess > 0) {
      this.unpublished.splice(0, excess);
      this.options.log.warn({ dropped: excess }, 'event bus: too many events kept while Redis is away; other instances miss the oldest (SSE clients resume them from the audit log)');
    }
  }

  subscribeWorkspace(workspaceId: string, listener: (record: EventRecord) => void) {
    return this.local.subscribeWorkspace(workspaceId, listener);
  }

  subscribeAll(listener: (record: EventRecord) => void) {
    return this.local.subscribeAll(listener);
  }

  notifyOthers(topic: string, payload: string) {
    if (!this.isConnected()) return;
    this.pub.publish(this.channel, JSON.stringify({ from: INSTANCE_ID, at: Date.now(), notice: { topic, payload } })).catch(() => {});
  }

  onNotice(topic: string, listener: (payload: string) => void) {
    this.notices.set(topic, [...(this.notices.get(topic) ?? []), listener]);
  }

  private readonly notices = new Map<string, Array<(payload: string) => void>>();

  async close() {
    this.closed = true;
    clearInterval(this.unheardSweep);
    await closePubSub({ pub: this.pub, sub: this.sub });
    await this.local.close();
  }

  private receive(message: string) {
    let parsed: { from: string; at: number; records?: EventRecord[]; notice?: { topic: string; payload: string } };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (parsed.from === INSTANCE_ID) return;
    if (parsed.notice) {
      for (const listener of this.notices.get(parsed.notice.topic) ?? []) listener(String(parsed.notice.payload));
      return;
    }
    if (!Array.isArray(parsed.records)) return;
    this.options.metrics?.eventBusLag.observe(Math.max(0, Date.now() - parsed.at) / 1000);
    this.deliver(parsed.records);
  }

  /** To this instance's subscribers, each event once. */
  private deliver(records: EventRecord[]) {
    const fresh = records.filter((record) => this.delivered.add(record.eventId));
    for (const record of fresh) this.newest = Math.max(this.newest, Number(record.eventId));
    if (fresh.length > 0) this.local.publish(fresh);
  }

  /** Both connections are up (again): listen, deliver what others committed meanwhile, send what they could not hear. */
  private async connected() {
    if (this.closed) return;
    try {
      await this.sub.subscribe(this.channel);
      if (this.floor === null) {
        this.floor = await latestEventSeq(this.options.db);
        this.newest = Math.max(this.newest, this.floor);
      }
      if (this.lostAfter !== null) await this.catchUp(this.lostAfter);
      this.lostAfter = null;
      const pending = this.unpublished.splice(0);
      for (let from = 0; from < pending.length; from += REPUBLISH_CHUNK) this.send(pending.slice(from, from + REPUBLISH_CHUNK));
      if (pending.length > 0) this.options.log.info({ events: pending.length }, 'event bus published the events committed here while Redis was away');
    } catch (error) {
      this.options.log.warn({ err: error }, 'event bus could not subscribe; trying again on the next connection');
    }
  }

  /**
   * Pub/sub is fire and forget: an instance that commits events and dies
   * before its publish left it (or before it first reached Redis) takes them
   * with it, though they are in the audit log. Every UNHEARD_SWEEP_MS the
   * ids of the newest events are compared with those delivered here, and
   * the ones never heard are read and delivered (late, but once). The same
   * keeps SSE streams hearing the other instances while Redis is away.
   */
  private async deliverUnheard() {
    if (this.closed || this.floor === null) return;
    try {
      const seqs = await listEventSeqsAfter(this.options.db, Math.max(this.floor, this.newest - CATCH_UP_OVERLAP), CATCH_UP_LIMIT);
      const unheard = seqs.filter((seq) => !this.delivered.has(String(seq)));
      if (unheard.length === 0) return;
      this.deliver(await listEventsBySeq(this.options.db, unheard));
    } catch (error) {
      this.options.log.warn({ err: error }, 'event bus could not compare the audit log with what it delivered; will try again');
    }
  }

  private async catchUp(after: number) {
    const missed = await listEventsAfter(this.options.db, Math.max(this.floor ?? 0, after - CATCH_UP_OVERLAP), CATCH_UP_LIMIT);
    this.deliver(missed);
    this.options.log.info({ events: missed.length }, 'event bus reconnected to Redis; delivered the events committed meanwhile');
  }
}
