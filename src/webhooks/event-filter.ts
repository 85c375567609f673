import { EVENT_AREAS, eventArea, isEventName } from '../model/event-names';

/**
 * A subscription's `events`: event names (`row.created`), whole areas
 * (`row.*`) or everything (`*`). The SQL that writes deliveries
 * (`matchesEvent` in src/persistence/webhooks.ts) applies the same rule.
 */

export const ALL_EVENTS = '*';

export function isValidEventFilter(entry: string): boolean {
  if (entry === ALL_EVENTS) return true;
  if (entry.endsWith('.*')) return EVENT_AREAS.has(entry.slice(0, -2));
  return isEventName(entry);
}

export function filterMatches(filter: readonly string[], event: string): boolean {
  return filter.includes(ALL_EVENTS) || filter.includes(event) || filter.includes(`${eventArea(event)}.*`);
}

/** Sorted and without repeats, so equal filters look equal. */
export function normalizeFilter(filter: readonly string[]): string[] {
  return [...new Set(filter)].sort();
}
