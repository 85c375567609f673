import { insertEvents } from '../persistence/events';
import type { Db, Executor } from '../persistence/database';
import type { Clock } from '../lib/clock';
import type { Webhooks } from '../webhooks/index';
import type { EventBus } from './bus';
import type { EventDraft, EventRecord } from '../model/event-record';

/** What recording and publishing events needs; the full bag (src/domain/services.ts) satisfies it. */
export type EventDeps = {
  clock: Clock;
  events: Pick<EventBus, 'publish'>;
  webhooks: Pick<Webhooks, 'outbox' | 'committed'>;
};

/**
 * How the events are written: `insertEvents`, or a statement of the commit
 * that also inserts them (the row projection's upsert: observer.ts), called
 * even for no events then, so it still writes what else it carries.
 */
export type EventInsert = (db: Executor, drafts: EventDraft[], now: Date) => Promise<EventRecord[]>;

/**
 * Records events in the audit log, and in the same transaction the webhook
 * deliveries they cause (the outbox: src/webhooks/outbox.ts). Every event
 * goes through here, so no producer can forget webhooks. Inside a
 * transaction pass `tx` and publish the returned records after commit
 * (`publishEvents`), so nobody hears of a change that was rolled back.
 */
export async function recordEvents(services: EventDeps, db: Executor, drafts: EventDraft[], insert: EventInsert = insertEvents): Promise<EventRecord[]> {
  const now = services.clock.now();
  const { outbox } = services.webhooks;
  // The usual case, an organisation without a matching subscription, costs no query (the outbox caches).
  if (drafts.length === 0 || !(await outbox.wants(db, drafts))) return insert(db, drafts, now);
  // Event and deliveries commit together or not at all.
  if (!db.isTransaction) return db.transaction().execute((tx) => recordEvents(services, tx, drafts, insert));
  const records = await insert(db, drafts, now);
  await outbox.enqueue(db, records, now);
  return records;
}

export function publishEvents(services: EventDeps, records: EventRecord[]) {
  services.events.publish(records);
  services.webhooks.committed(records);
}

/** Outside a transaction: record, then publish. */
export async function emitEvents(services: EventDeps & { db: Db }, drafts: EventDraft[]): Promise<EventRecord[]> {
  const records = await recordEvents(services, services.db, drafts);
  publishEvents(services, records);
  return records;
}
