import type { Executor } from './database';
import type { PrincipalKind } from './schema';

/** Support tickets, and the local tracker's issues (numbered per org). */

export type TicketRow = {
  id: string;
  orgId: string;
  kind: string;
  title: string;
  body: string;
  context: Record<string, unknown> | null;
  attachmentUrls: string[];
  status: 'open' | 'closed';
  trackerNumber: number | null;
  trackerUrl: string | null;
  createdById: string;
  createdByType: PrincipalKind;
  createdAt: Date;
  updatedAt: Date;
};

export async function insertTicket(
  db: Executor,
  ticket: Omit<TicketRow, 'status' | 'trackerNumber' | 'trackerUrl' | 'updatedAt'>,
): Promise<TicketRow> {
  return db
    .insertInto('supportTickets')
    .values({
      ...ticket,
      context: ticket.context === null ? null : JSON.stringify(ticket.context),
      attachmentUrls: JSON.stringify(ticket.attachmentUrls),
      updatedAt: ticket.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setTicketTracker(db: Executor, id: string, tracker: { number: number; url: string }, now: Date): Promise<TicketRow> {
  return db
    .updateTable('supportTickets')
    .set({ trackerNumber: tracker.number, trackerUrl: tracker.url, updatedAt: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The org's tickets, newest first. */
export async function listTickets(db: Executor, orgId: string, limit: number): Promise<TicketRow[]> {
  return db.selectFrom('supportTickets').selectAll().where('orgId', '=', orgId).orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function findTicket(db: Executor, orgId: string, id: string): Promise<TicketRow | undefined> {
  return db.selectFrom('supportTickets').selectAll().where('orgId', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** The next issue number of an org's local tracker: atomic, so concurrent tickets never share one. */
export async function nextTrackerNumber(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .insertInto('localTrackerCounters')
    .values({ orgId, lastNumber: 1 })
    .onConflict((oc) => oc.column('orgId').doUpdateSet((eb) => ({ lastNumber: eb('localTrackerCounters.lastNumber', '+', 1) })))
    .returning('lastNumber')
    .executeTakeFirstOrThrow();
  return row.lastNumber;
}

export async function insertTrackerIssue(db: Executor, issue: { orgId: string; number: number; ticketId: string; createdAt: Date }) {
  await db.insertInto('localTrackerIssues').values(issue).execute();
}

/** The ticket behind an org's local tracker issue. */
export async function findTicketByTrackerNumber(db: Executor, orgId: string, number: number): Promise<TicketRow | undefined> {
  return db
    .selectFrom('localTrackerIssues')
    .innerJoin('supportTickets', 'supportTickets.id', 'localTrackerIssues.ticketId')
    .selectAll('supportTickets')
    .where('localTrackerIssues.orgId', '=', orgId)
    .where('localTrackerIssues.number', '=', number)
    .executeTakeFirst();
}
