import { z } from 'zod';
import { resolveCallerOrg } from '../domain/members';
import { createTicket, getOrgTicket, getTicketByTrackerNumber, listOrgTickets, SCREENSHOT_MAX_BYTES, storeScreenshot, TICKET_KINDS, type Ticket } from '../domain/support';
import { requireCaller } from '../access/callers';
import { requireActor } from '../http/authenticate';
import { spendBudget } from '../http/limits';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { sendPage } from '../http/html-page';
import { httpExchange } from '../http/exchange';
import { defineOperation } from '../operations/operation';
import { escapeHtml, renderPage } from '../lib/html';
import { HOUR } from '../limits/rules';
import type { Services } from '../services';
import { ErrorBody, errorResponses, OrgQuery } from '../model/schemas/common';
import { Screenshot, Ticket as TicketRecord } from '../model/schemas/support';

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
const TrackerParams = z.object({ orgSlug: z.string().min(1).max(100), number: z.coerce.number().int().min(1).max(2_147_483_647) });

function presentTicket(ticket: Ticket) {
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

/** Each route's policy check and domain call; the MCP tool `create_support_ticket` (src/mcp/tools.ts) runs `create`. */
export const supportOperations = {
  list: defineOperation({ query: OrgQuery, response: z.object({ tickets: z.array(TicketRecord) }) }, async (services, actor, { query }) => {
    const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
    return { tickets: (await listOrgTickets(services, org)).map(presentTicket) };
  }),
  create: defineOperation({ query: OrgQuery, body: TicketBody, response: TicketRecord }, async (services, actor, { query, body }, http) => {
    const caller = requireCaller(actor);
    const org = await resolveCallerOrg(services, caller, query.org, 'read_org');
    await spendBudget(services, TICKET_BUDGET, org.id, http);
    return presentTicket(await createTicket(services, caller, org, body));
  }),
  detail: defineOperation({ params: TicketParams, query: OrgQuery, response: TicketRecord }, async (services, actor, { params, query }) => {
    const org = await resolveCallerOrg(services, requireCaller(actor), query.org, 'read_org');
    return presentTicket(await getOrgTicket(services, org, params.id));
  }),
};

/** Support tickets, their screenshots, and the local tracker's issue page (docs/BILLING.md, "Support"). */
export async function supportRoutes(app: App, services: Services) {
  const { list, create, detail } = supportOperations;
  app.get(
    '/api/support',
    {
      schema: {
        summary: "The organisation's support tickets",
        description: 'Newest first, at most 100. Any member of the organisation (API keys included).',
        tags: ['support'],
        querystring: list.query,
        response: { 200: list.response, ...errorResponses },
      },
    },
    async (request) => list.run(services, request.actor, request),
  );

  app.post(
    '/api/support',
    {
      schema: {
        summary: 'Open a support ticket',
        description:
          'Any member of the organisation, or its agents. The ticket is mirrored into the tracker (`trackerNumber`, `trackerUrl`: numbered per organisation) and announced as `support.ticket_created`. ' +
          `Kinds: ${TICKET_KINDS.join(', ')}. 10 per hour per organisation.`,
        tags: ['support'],
        querystring: create.query,
        body: create.body,
        response: { 200: create.response, ...errorResponses },
      },
    },
    async (request, reply) => create.run(services, request.actor, request, httpExchange(request, reply)),
  );

  app.get(
    '/api/support/:id',
    {
      schema: {
        summary: 'One support ticket',
        description: "Only the organisation's own: another organisation's ticket is 404.",
        tags: ['support'],
        params: detail.params,
        querystring: detail.query,
        response: { 200: detail.response, ...errorResponses },
      },
    },
    async (request) => detail.run(services, request.actor, request),
  );

  await app.register(async (scope: App) => {
    await registerMultipart(scope, SCREENSHOT_MAX_BYTES);
    scope.post(
      '/api/support/upload',
      {
        schema: {
          summary: 'Upload a screenshot for a ticket',
          description:
            'multipart/form-data with one field `file`: an image (image/*), at most 5 MB (413 `payload_too_large` beyond; 415 for anything else). ' +
            'Re-encoded without its metadata, like doc images; the URL goes into `attachmentUrls`. Any member of the organisation.',
          tags: ['support'],
          consumes: ['multipart/form-data'],
          querystring: OrgQuery,
          response: { 200: Screenshot, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
        },
      },
      async (request) => {
        const org = await resolveCallerOrg(services, requireActor(request), request.query.org, 'read_org');
        const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: SCREENSHOT_MAX_BYTES, tooLarge: 'Screenshots are limited to 5 MB.' });
        const stored = await storeScreenshot(services, org, file);
        return { url: stored.url, contentType: stored.contentType, size: stored.size, width: stored.width, height: stored.height };
      },
    );
  });

  app.get(
    '/tracker/:orgSlug/:number',
    {
      schema: {
        summary: 'Local tracker issue page (HTML)',
        description: "The `trackerUrl` of a ticket while the local tracker is in use: the ticket as an issue, for members of its organisation (404 for anyone else).",
        tags: ['support'],
        params: TrackerParams,
        response: { 404: ErrorBody },
      },
      config: { auth: 'optional' },
    },
    async (request, reply) => {
      const notFound = () => sendPage(reply, 404, renderPage('Not found', '<h1>Issue not found</h1>'));
      if (!request.actor) return notFound();
      const org = await resolveCallerOrg(services, request.actor, request.params.orgSlug, 'read_org').catch(() => null);
      const ticket = org ? await getTicketByTrackerNumber(services, org, request.params.number) : null;
      if (!ticket) return notFound();
      return sendPage(reply, 200, trackerPage(request.params.number, ticket));
    },
  );
}

function trackerPage(number: number, ticket: Ticket) {
  const attachments = ticket.attachmentUrls.map((url) => `<li><a href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(url)}</a></li>`).join('');
  const context = ticket.context ? `<h2>Context</h2><pre>${escapeHtml(JSON.stringify(ticket.context, null, 2))}</pre>` : '';
  return renderPage(
    `#${number} ${ticket.title}`,
    `<h1>#${number} ${escapeHtml(ticket.title)}</h1>
<p class="muted">${escapeHtml(ticket.kind)} · ${escapeHtml(ticket.status)} · opened by ${escapeHtml(ticket.createdBy?.name ?? 'unknown')} on ${ticket.createdAt.toISOString()}</p>
<div class="text">${escapeHtml(ticket.body)}</div>
${context}
${attachments ? `<h2>Attachments</h2><ul>${attachments}</ul>` : ''}`,
  );
}
