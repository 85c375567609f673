import { z } from 'zod';
import { Author } from './common';

export const Event = z
  .object({
    eventId: z.string().describe('Increasing; use as Last-Event-ID to resume'),
    event: z.string(),
    ts: z.string(),
    workspace: z.object({ id: z.string(), slug: z.string(), org: z.object({ slug: z.string() }) }).nullable(),
    surface: z.object({ id: z.string(), slug: z.string() }).optional(),
    principal: Author.nullable().describe('Who made the change: a user, an agent, or a public form (`principalType: "form"`) for the rows it collects; null for the service itself'),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

export type Event = z.infer<typeof Event>;

/** A page of the audit log. */
export const EventPage = z.object({ events: z.array(Event), nextCursor: z.string().nullable() });
export type EventPage = z.infer<typeof EventPage>;
