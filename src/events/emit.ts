import { insertEvents } from '../persistence/events';
import type { Executor } from '../persistence/database';
import type { Services } from '../services';
import type { EventDraft, EventRecord } from './types';

/**
 * Records events in the audit log. Inside a transaction pass `tx` and
 * publish the returned records after commit (`publishEvents`), so nobody
 * hears of a change that was rolled back.
 */
export async function recordEvents(services: Services, db: Executor, drafts: EventDraft[]): Promise<EventRecord[]> {
  return insertEvents(db, drafts, services.clock.now());
}

export function publishEvents(services: Services, records: EventRecord[]) {
  services.events.publish(records);
}

/** Outside a transaction: record, then publish. */
export async function emitEvents(services: Services, drafts: EventDraft[]): Promise<EventRecord[]> {
  const records = await recordEvents(services, services.db, drafts);
  publishEvents(services, records);
  return records;
}
