import type { EventDraft, EventRecord } from '../model/event-record';
import type { Executor } from '../persistence/database';
import { enqueueDeliveries, listOrgSubscriptionFilters, type SubscriptionFilter } from '../persistence/webhooks';
import { filterMatches } from './event-filter';

/**
 * The write side of the outbox, called by `recordEvents` for every event:
 * deliveries are inserted in the transaction that records the events.
 *
 * The hot path must not pay for webhooks an organisation does not have, so
 * each organisation's subscriptions are cached (an empty list too): an org
 * without subscriptions costs no query per write, only one per
 * `CACHE_TTL_MS` at most. Which rows get written is decided again in SQL
 * against the current subscriptions, so a stale cache can never produce a
 * wrong delivery, only miss one:
 *
 * - In this process a change invalidates the cache at once, and a load
 *   that raced the change is not kept (generations).
 * - Another instance may go on using its cached "no subscription" for up
 *   to `CACHE_TTL_MS` after a subscription is created. The drain's
 *   catch-up (src/persistence/webhooks.ts `catchUpNewWebhooks`) runs once
 *   per new subscription after `CATCH_UP_AFTER_MS` and writes the
 *   deliveries such writes missed. (With Redis, invalidations can be
 *   broadcast; the catch-up stays as the guarantee.)
 */

export const CACHE_TTL_MS = 5_000;
/** Past every instance's cache, with room for transactions that read the cache just before it expired. */
export const CATCH_UP_AFTER_MS = CACHE_TTL_MS + 10_000;
const MAX_CACHED_ORGS = 50_000;

type Entry = { loadedAt: number; filters: SubscriptionFilter[] };

export class WebhookOutbox {
  private readonly cache = new Map<string, Entry>();
  private readonly generations = new Map<string, number>();
  /** Records whose transaction wrote deliveries → the subscriptions they went to. */
  private readonly enqueued = new WeakMap<EventRecord, readonly string[]>();

  /** `now` is the services clock, so tests can hold a cache or expire it. */
  constructor(private readonly now: () => number) {}

  /** Whether any of these events may need a delivery (reads the database only on a cache miss, through `db`). */
  async wants(db: Executor, drafts: readonly EventDraft[]): Promise<boolean> {
    const orgIds = new Set(drafts.map((d) => d.orgId));
    for (const orgId of orgIds) {
      const filters = await this.filtersOf(db, orgId);
      if (filters.length === 0) continue;
      if (drafts.some((draft) => draft.orgId === orgId && filters.some((f) => wanted(f, draft)))) return true;
    }
    return false;
  }

  /** Writes the deliveries of recorded events, inside their transaction. */
  async enqueue(db: Executor, records: readonly EventRecord[], now: Date): Promise<void> {
    const webhookIds = await enqueueDeliveries(
      db,
      records.map((r) => Number(r.eventId)),
      now,
    );
    if (webhookIds.length > 0) for (const record of records) this.enqueued.set(record, webhookIds);
  }

  /** The subscriptions these records' transaction wrote deliveries for (after commit: wake the drain for them). */
  deliveredTo(records: readonly EventRecord[]): string[] {
    const ids = new Set<string>();
    for (const record of records) for (const id of this.enqueued.get(record) ?? []) ids.add(id);
    return [...ids];
  }

  /** After a subscription of this organisation changed (here, or on another instance: `fromPeer`). */
  invalidate(orgId: string, fromPeer = false) {
    this.cache.delete(orgId);
    this.generations.set(orgId, (this.generations.get(orgId) ?? 0) + 1);
    if (!fromPeer) this.tellPeers(orgId);
  }

  private tellPeers: (orgId: string) => void = () => {};

  /** With Redis, other instances drop their cached subscriptions at once too (the catch-up stays as the guarantee). */
  shareInvalidations(tell: (orgId: string) => void) {
    this.tellPeers = tell;
  }

  private async filtersOf(db: Executor, orgId: string): Promise<SubscriptionFilter[]> {
    const cached = this.cache.get(orgId);
    const now = this.now();
    // A clock that went back counts as expired, or a stale entry could outlive the catch-up window.
    if (cached && now >= cached.loadedAt && now - cached.loadedAt < CACHE_TTL_MS) return cached.filters;
    const generation = this.generations.get(orgId) ?? 0;
    const filters = await listOrgSubscriptionFilters(db, orgId);
    // A change committed while we were reading: our answer may predate it, so it is used once and not kept.
    if ((this.generations.get(orgId) ?? 0) === generation) {
      if (this.cache.size >= MAX_CACHED_ORGS) this.cache.clear();
      this.cache.set(orgId, { loadedAt: now, filters });
    }
    return filters;
  }
}

function wanted(filter: SubscriptionFilter, draft: EventDraft): boolean {
  if (!filter.active) return false;
  if (filter.workspaceId && filter.workspaceId !== draft.workspace?.id) return false;
  return filterMatches(filter.events, draft.event);
}
