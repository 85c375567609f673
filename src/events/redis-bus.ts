import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { INSTANCE_ID } from '../lib/instance';
import { bothReady, closePubSub, openPubSub } from '../lib/redis';
import type { Metrics } from '../metrics/index';
import type { Executor } from '../persistence/database';
import { listEventsAfter } from '../persistence/events';
import { InProcessEventBus, type EventBus } from './bus';
import type { EventRecord } from './types';

/** Recently delivered event ids remembered, so a catch-up never delivers one twice. */
const REMEMBERED = 20_000;
/** At most this many missed events are read back after an outage (SSE clients resume the rest with Last-Event-ID). */
const CATCH_UP_LIMIT = 10_000;

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
 * Losing Redis: local delivery goes on; publishes fail quietly. When Redis
 * is back, the events committed meanwhile (read from the audit log after the
 * newest one this instance delivered) are delivered, skipping any already
 * seen. An SSE client that reconnects resumes from the audit log anyway.
 */
export class RedisEventBus implements EventBus {
  private readonly local = new InProcessEventBus();
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly delivered = new Set<string>();
  private newest = 0;
  /** The newest event delivered when Redis went away: catch-up reads after it. */
  private lostAfter: number | null = null;
  private wasReady = false;
  private closed = false;

  constructor(private readonly options: { redisUrl: string; prefix: string; db: Executor; log: Logger; metrics?: Metrics }) {
    ({ pub: this.pub, sub: this.sub } = openPubSub(options.redisUrl));
    this.channel = `${options.prefix}events`;
    this.sub.on('message', (_channel: string, message: string) => this.receive(message));
    this.sub.on('ready', () => void this.listen());
    this.sub.on('close', () => {
      if (this.wasReady) this.lostAfter ??= this.newest;
      if (this.wasReady && !this.closed) options.log.warn('event bus lost Redis; events from other instances wait until it is back');
    });
  }

  isConnected(): boolean {
    return bothReady({ pub: this.pub, sub: this.sub });
  }

  publish(records: EventRecord[]) {
    if (records.length === 0) return;
    this.deliver(records);
    if (!this.isConnected()) return;
    const message = JSON.stringify({ from: INSTANCE_ID, at: Date.now(), records });
    this.pub.publish(this.channel, message).catch(() => {
      // Redis went away mid-publish: the others read it from the audit log when they reconnect.
    });
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
    const fresh = records.filter((record) => !this.delivered.has(record.eventId));
    for (const record of fresh) {
      this.delivered.add(record.eventId);
      this.newest = Math.max(this.newest, Number(record.eventId));
    }
    if (this.delivered.size > REMEMBERED) {
      const excess = this.delivered.size - REMEMBERED / 2;
      let n = 0;
      for (const id of this.delivered) {
        if (n++ >= excess) break;
        this.delivered.delete(id);
      }
    }
    if (fresh.length > 0) this.local.publish(fresh);
  }

  private async listen() {
    const returning = this.wasReady;
    this.wasReady = true;
    try {
      await this.sub.subscribe(this.channel);
      if (returning && this.lostAfter !== null) await this.catchUp(this.lostAfter);
      this.lostAfter = null;
    } catch (error) {
      this.options.log.warn({ err: error }, 'event bus could not subscribe; trying again on the next connection');
    }
  }

  private async catchUp(after: number) {
    const missed = await listEventsAfter(this.options.db, after, CATCH_UP_LIMIT);
    this.deliver(missed);
    this.options.log.info({ events: missed.length }, 'event bus reconnected to Redis; delivered the events committed meanwhile');
  }
}
