import { z } from 'zod';
import { resolveCallerOrg } from '../domain/members';
import { Screenshot } from '../model/schemas/support';
import { getTicketByTrackerNumber, SCREENSHOT_MAX_BYTES, storeScreenshot, type Ticket } from '../domain/support';
import { requireActor } from '../http/authenticate';
import { readMultipart, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { errors, type ApiError } from '../errors';
import { htmlResponse, sendPage, sendPageError } from '../http/html-page';
import { escapeHtml, renderPage } from '../lib/html';
import type { Services } from '../domain/services';
import { ErrorBody, errorResponses, OrgQuery } from '../model/schemas/common';


const TrackerParams = z.object({ orgSlug: z.string().min(1).max(100), number: z.coerce.number().int().min(1).max(2_147_483_647) });

/**
 * The support routes that are not operations (src/operations/support.ts has
 * the JSON ones): the screenshot upload is multipart/form-data, and the
 * local tracker's issue page is HTML for a browser (its errors too, or
 * JSON to a client that asks for it: src/http/html-page.ts).
 */
export async function supportRoutes(app: App, services: Services) {
  await app.register(async (scope: App) => {
    await registerMultipart(scope, SCREENSHOT_MAX_BYTES);
    scope.post(
      '/api/support/upload',
      {
        schema: {
          summary: 'Upload a screenshot for a ticket',
          description:
            'multipart/form-data with one field `file`: an image (image/*), at most 5 MB (413 `payload_too_large` beyond; 415 for anything else). ' +
            'Re-encoded without its metadata, like doc images; the URL goes into `attachmentUrls`. Any member of the organisation, or its agents (not with a suggest-only key).',
          tags: ['support'],
          consumes: ['multipart/form-data'],
          querystring: OrgQuery,
          response: { 200: Screenshot, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
        },
      },
      async (request) => {
        const org = await resolveCallerOrg(services, requireActor(request), request.query.org, 'contact_support');
        const { file } = await readMultipart(request, { fileField: 'file', fields: [], maxFileBytes: SCREENSHOT_MAX_BYTES, tooLarge: 'Screenshots are limited to 5 MB.' });
        const stored = await storeScreenshot(services, org, file);
        return { url: stored.url, contentType: stored.contentType, size: stored.size, width: stored.width, height: stored.height };
      },
    );
  });

  await app.register(async (scope: App) => {
    scope.setErrorHandler((error, request, reply) => sendPageError(request, reply, error, refusedPage));
    scope.get(
      '/tracker/:orgSlug/:number',
      {
        schema: {
          summary: 'Local tracker issue page (HTML)',
          description: "The `trackerUrl` of a ticket while the local tracker is in use: the ticket as an issue, for members of its organisation (404 for anyone else).",
          tags: ['support'],
          params: TrackerParams,
          response: { 200: htmlResponse('The ticket as an issue'), 404: htmlResponse('No such issue, or not for this caller') },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const notFound = () => sendPageError(request, reply, errors.notFound('Issue'), () => renderPage('Not found', '<h1>Issue not found</h1>'));
        if (!request.actor) return notFound();
        const org = await resolveCallerOrg(services, request.actor, request.params.orgSlug, 'read_org').catch(() => null);
        const ticket = org ? await getTicketByTrackerNumber(services, org, request.params.number) : null;
        if (!ticket) return notFound();
        return sendPage(reply, 200, trackerPage(request.params.number, ticket));
      },
    );
  });
}

function refusedPage(error: ApiError) {
  return renderPage('Request refused', `<h1>This page cannot be shown</h1><p>${escapeHtml(error.message)}</p>`);
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
