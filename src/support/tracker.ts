import type { Config } from '../config';
import type { Db } from '../persistence/database';
import { insertTrackerIssue, nextTrackerNumber } from '../persistence/support';

/**
 * Support tickets are mirrored into an issue tracker through this interface
 * (API-DECISIONS: support goes through a provider interface with a local
 * default). The local tracker numbers issues per organisation in Trellis's
 * own database, and its issue page is served by Trellis
 * (`/tracker/{orgSlug}/{number}`); a GitHub, Linear or Jira tracker would
 * implement the same method.
 */

export type TicketForTracker = {
  id: string;
  orgId: string;
  orgSlug: string;
  kind: string;
  title: string;
  body: string;
  createdAt: Date;
};

export interface Tracker {
  readonly name: string;
  /** Files the ticket as an issue and answers its number and URL. */
  fileIssue(ticket: TicketForTracker): Promise<{ number: number; url: string }>;
}

export class LocalTracker implements Tracker {
  readonly name = 'local';

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'publicUrl'>,
  ) {}

  async fileIssue(ticket: TicketForTracker) {
    const number = await this.db.transaction().execute(async (tx) => {
      const next = await nextTrackerNumber(tx, ticket.orgId);
      await insertTrackerIssue(tx, { orgId: ticket.orgId, number: next, ticketId: ticket.id, createdAt: ticket.createdAt });
      return next;
    });
    return { number, url: `${this.config.publicUrl}/tracker/${encodeURIComponent(ticket.orgSlug)}/${number}` };
  }
}
