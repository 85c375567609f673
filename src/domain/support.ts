import { errors } from '../errors';
import type { Actor, Principal } from '../policy/actor';
import { newId } from '../lib/ids';
import type { Org } from '../persistence/schema';
import { findTicket, findTicketByTrackerNumber, insertTicket, listTickets, setTicketTracker, type TicketRow } from '../persistence/support';
import { findPrincipals } from '../persistence/workspaces';
import type { Services } from './services';
import { storeImage, type UploadedImage } from './doc-images';
import { transactWithEvents } from './transact';
import { TICKET_KINDS } from '../model/schemas/support';

/**
 * Support tickets of an organisation, mirrored into the tracker
 * (`services.tracker`). A ticket is kept even when the tracker cannot be
 * reached: its tracker fields stay null and the failure is logged.
 */

export { TICKET_KINDS };
export const TICKETS_LISTED = 100;
export const SCREENSHOT_MAX_BYTES = 5 * 1024 * 1024;
/** `context` is the client's free-form state (page, browser, ids): bounded so a ticket stays readable. */
export const CONTEXT_MAX_BYTES = 16 * 1024;
export const CONTEXT_MAX_DEPTH = 8;

export type TicketInput = {
  kind: (typeof TICKET_KINDS)[number];
  title: string;
  body: string;
  context?: Record<string, unknown>;
  attachmentUrls?: string[];
};

export type Ticket = TicketRow & { createdBy: Principal | null };

export async function createTicket(services: Services, actor: Actor, org: Org, input: TicketInput): Promise<Ticket> {
  const context = input.context ?? null;
  if (context) assertContextFits(context);
  const now = services.clock.now();
  const stored = await insertTicket(services.db, {
    id: newId('tkt'),
    orgId: org.id,
    kind: input.kind,
    title: input.title,
    body: input.body,
    context,
    attachmentUrls: input.attachmentUrls ?? [],
    createdById: actor.principal.id,
    createdByType: actor.principal.principalType,
    createdAt: now,
  });
  let issue: { number: number; url: string } | null = null;
  try {
    issue = await services.tracker.fileIssue({ ...stored, orgSlug: org.slug });
  } catch (error) {
    services.log.error({ err: error, ticketId: stored.id, tracker: services.tracker.name }, 'could not file the support ticket in the tracker');
  }
  const ticket = await transactWithEvents(services, async (tx, events) => {
    const tracked = issue ? await setTicketTracker(tx, stored.id, issue, services.clock.now()) : stored;
    events.push({
      event: 'support.ticket_created',
      orgId: org.id,
      workspace: null,
      principal: actor.principal,
      subjectId: stored.id,
      data: { ticketId: stored.id, kind: stored.kind, title: stored.title, trackerNumber: tracked.trackerNumber, trackerUrl: tracked.trackerUrl },
    });
    return tracked;
  });
  return { ...ticket, createdBy: actor.principal };
}

/** The organisation's tickets, newest first, at most 100. */
export async function listOrgTickets(services: Services, org: Org): Promise<Ticket[]> {
  return withCreators(services, await listTickets(services.db, org.id, TICKETS_LISTED));
}

/** One ticket of the organisation; another organisation's is 404. */
export async function getOrgTicket(services: Services, org: Org, id: string): Promise<Ticket> {
  const ticket = await findTicket(services.db, org.id, id);
  if (!ticket) throw errors.notFound('Ticket');
  return (await withCreators(services, [ticket]))[0]!;
}

export async function getTicketByTrackerNumber(services: Services, org: Org, number: number): Promise<Ticket | null> {
  const ticket = await findTicketByTrackerNumber(services.db, org.id, number);
  return ticket ? (await withCreators(services, [ticket]))[0]! : null;
}

/** A screenshot for `attachmentUrls`: an image, re-encoded without its metadata, at most 5 MB, counted against the org's storage. */
export async function storeScreenshot(services: Services, org: Org, upload: { bytes: Buffer; mimetype: string }): Promise<UploadedImage> {
  return storeImage(services, org.id, upload, { maxBytes: SCREENSHOT_MAX_BYTES, keyPrefix: 'sup', kind: 'support' });
}

async function withCreators(services: Services, tickets: TicketRow[]): Promise<Ticket[]> {
  const creators = await findPrincipals(services.db, tickets.map((t) => t.createdById));
  return tickets.map((t) => ({ ...t, createdBy: creators.get(t.createdById) ?? null }));
}

function assertContextFits(context: Record<string, unknown>) {
  const size = Buffer.byteLength(JSON.stringify(context));
  if (size > CONTEXT_MAX_BYTES) {
    throw errors.validation('`context` is too large.', [{ path: ['context'], code: 'too_big', message: `at most ${CONTEXT_MAX_BYTES} bytes of JSON` }]);
  }
  if (depthOf(context) > CONTEXT_MAX_DEPTH) {
    throw errors.validation('`context` is nested too deeply.', [{ path: ['context'], code: 'too_big', message: `at most ${CONTEXT_MAX_DEPTH} levels of nesting` }]);
  }
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}
