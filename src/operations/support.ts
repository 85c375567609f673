import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveCallerOrg } from '../domain/members';
import { createTicket, getOrgTicket, listOrgTickets, TICKET_KINDS, type Ticket as TicketRecord } from '../domain/support';
import { spendBudget } from '../limits/budget';
import { HOUR } from '../limits/rules';
import { IsoDateTime, OrgQuery, Principal } from '../model/schemas/common';
import { Ticket } from '../model/schemas/support';
import { defineOperation } from './operation';
import { ORG, WRITE } from './tool-text';

const TicketBody = z.strictObject({
  kind: z.enum(TICKET_KINDS),
  title: z.string().trim().min(1).max(200),
  body: z.string().trim().min(1).max(20_000),
  context: z.record(z.string(), z.unknown()).optional().describe('Free-form state of the client (page, browser, ids); at most 16 KB of JSON, 8 levels deep'),
  attachmentUrls: z
    .array(z.url({ protocol: /^https?$/ }).max(2000))
    .max(10)
    .optional()
    .describe('Screenshots from POST /api/support/upload, or other http(s) links'),
});

const TicketParams = z.object({ id: z.string().min(1).max(100) });

function presentTicket(ticket: TicketRecord) {
  return {
    id: ticket.id,
    kind: ticket.kind,
    status: ticket.status,
    title: ticket.title,
    body: ticket.body,
    context: ticket.context,
    attachmentUrls: ticket.attachmentUrls,
    trackerNumber: ticket.trackerNumber,
    trackerUrl: ticket.trackerUrl,
    createdBy: ticket.createdBy,
    createdAt: ticket.createdAt.toISOString(),
    updatedAt: ticket.updatedAt.toISOString(),
  };
}

/** Tickets spend a budget of 10 an hour per organisation, over REST and MCP alike. */
const TICKET_BUDGET = { endpoint: 'support_tickets', limit: 10, windowMs: HOUR };

/**
 * Support tickets (docs/BILLING.md, "Support"): REST routes and the MCP tool
 * `create_support_ticket`. The screenshot upload and the local tracker's
 * issue page stay hand-written routes (src/api/support.ts).
 */
export const supportOperations = {
  list: defineOperation(
    {
      query: OrgQuery, response: z.object({ tickets: z.array(Ticket) }),
      rest: {
        method: 'GET',
        path: '/api/support',
        summary: "The organisation's support tickets",
        description: 'Newest first, at most 100. Any member of the organisation (API keys included).',
        tags: ['support'],
      },
    },
    async (services, actor, { query }) => {
      const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
      return { tickets: (await listOrgTickets(services, org)).map(presentTicket) };
    },
  ),
  create: defineOperation(
    {
      query: OrgQuery, body: TicketBody, response: Ticket,
      rest: {
        method: 'POST',
        path: '/api/support',
        summary: 'Open a support ticket',
        description:
          'Any member of the organisation, or its agents (not with a suggest-only key). The ticket is mirrored into the tracker (`trackerNumber`, `trackerUrl`: numbered per organisation) and announced as `support.ticket_created`. ' +
          `Kinds: ${TICKET_KINDS.join(', ')}. 10 per hour per organisation.`,
        tags: ['support'],
      },
      mcp: {
        name: 'create_support_ticket',
        title: 'Open a support ticket',
        description: `Files a ticket with Trellis support (\`kind\`, \`title\`, \`body\`; \`context\` for ids and state that help reproduce it) and mirrors it into the tracker (\`trackerUrl\`). 10 an hour per organisation. ${ORG}`,
        annotations: { ...WRITE, openWorldHint: true },
      },
    },
    async (services, actor, { query, body }, http) => {
      const caller = requireCaller(actor);
      const org = await resolveCallerOrg(services, caller, query.org, 'contact_support');
      await spendBudget(services, TICKET_BUDGET, org.id, http);
      return presentTicket(await createTicket(services, caller, org, body));
    },
  ),
  detail: defineOperation(
    {
      params: TicketParams, query: OrgQuery, response: Ticket,
      rest: {
        method: 'GET',
        path: '/api/support/:id',
        summary: 'One support ticket',
        description: "Only the organisation's own: another organisation's ticket is 404.",
        tags: ['support'],
      },
    },
    async (services, actor, { params, query }) => {
      const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
      return presentTicket(await getOrgTicket(services, org, params.id));
    },
  ),
};
