import type { Author } from './schemas/common';
import type { EventName } from './event-names';

/**
 * One record serves the audit log, SSE frames, resume and webhooks
 * (API-DECISIONS, "Events"). `eventId` is the audit log's sequence number
 * as a string: increasing, so `Last-Event-ID` resume is "everything after".
 */
export type EventRecord = {
  eventId: string;
  event: string;
  ts: string;
  workspace: { id: string; slug: string; org: { slug: string } } | null;
  surface?: { id: string; slug: string };
  principal: Author | null;
  data: Record<string, unknown>;
};

/** What a producer supplies; the log assigns `eventId` and `ts`. Names come from the central list (./event-names.ts). */
export type EventDraft = Omit<EventRecord, 'eventId' | 'ts' | 'event'> & {
  event: EventName;
  orgId: string;
  /** The row, comment or file the event is about, for per-subject history. */
  subjectId?: string | null;
  ts?: string;
  /** Stable identity of an event derived from a logged update: recorded once however often it is derived. */
  dedupeKey?: string;
};
