import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { resolveOrg } from '../domain/members';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryDelivery,
  updateWebhook,
  type DeliveryView,
  type WebhookOwner,
} from '../domain/webhooks';
import { EVENT_NAMES } from '../model/event-names';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { WebhookRow } from '../persistence/webhooks';
import type { Services } from '../services';
import { isValidEventFilter } from '../webhooks/event-filter';
import { presentPrincipal } from '../operations/keys';
import { errorResponses, Ok, OverLimitBody, toIso } from '../model/schemas/common';
import { CreatedWebhook, DeliveryList, Webhook, WebhookDelivery, WebhookList } from '../model/schemas/webhooks';

// ---------------------------------------------------------------- schemas

const EventFilter = z
  .string()
  .min(1)
  .max(100)
  .refine(isValidEventFilter, { message: 'not a known event name, area.* or *' })
  .describe(`An event name, an area with \`.*\` (\`row.*\`), or \`*\` for every event. Names: ${EVENT_NAMES.map((n) => `\`${n}\``).join(', ')}.`);

const WebhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .describe('Absolute http(s) URL whose host resolves only to public addresses (422 otherwise, also for user:password@). Redirects are not followed.');

const CreateWebhookBody = z.strictObject({
  url: WebhookUrl,
  events: z.array(EventFilter).min(1).max(100),
});

const PatchWebhookBody = z.strictObject({
  url: WebhookUrl.optional(),
  events: z.array(EventFilter).min(1).max(100).optional(),
  active: z.boolean().optional().describe('false pauses: new events are not queued and queued deliveries wait; true resumes them in order'),
});

const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.string().regex(/^\d{1,18}$/).optional().describe('The nextCursor of the previous page'),
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
});

const OrgParams = z.object({ slug: z.string().min(1).max(100).describe('Organisation slug') });
const WebhookIdParam = { id: z.string().min(1).max(100).describe('Webhook id') };

// ---------------------------------------------------------------- presenters

export function presentWebhook(row: WebhookRow): z.infer<typeof Webhook> {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    active: row.active,
    workspace: row.workspaceId ? { id: row.workspaceId, slug: row.workspaceSlug ?? row.workspaceId } : null,
    createdBy: row.createdBy ? presentPrincipal(row.createdBy.kind, row.createdBy.id, row.createdBy.name, row.createdBy.avatarUrl) : null,
    createdAt: toIso(row.createdAt)!,
    updatedAt: toIso(row.updatedAt)!,
    failingSince: toIso(row.failingSince),
    deactivatedAt: toIso(row.deactivatedAt),
    deactivationReason: row.deactivationReason === 'paused' || row.deactivationReason === 'failing' ? row.deactivationReason : null,
  };
}

export function presentDelivery(row: DeliveryView): z.infer<typeof WebhookDelivery> {
  return {
    id: row.id,
    webhookId: row.webhookId,
    eventId: String(row.eventSeq),
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.responseStatus,
    error: row.error,
    durationMs: row.durationMs,
    createdAt: toIso(row.createdAt)!,
    nextAttemptAt: toIso(row.nextAttemptAt),
    lastAttemptAt: toIso(row.lastAttemptAt),
  };
}

// ---------------------------------------------------------------- routes

type Form = {
  /** Path of the collection; the item is `${base}/:id`. */
  bases: string[];
  params: z.ZodObject;
  tag: string;
  what: string;
  owner(request: FastifyRequest): Promise<WebhookOwner>;
};

/**
 * Webhook subscriptions, in two forms that share every route: org-wide at
 * `/api/orgs/{slug}/webhooks` (events of every workspace, and org-level
 * events), and the older workspace-scoped `/api/workspaces/{slug}/webhooks`
 * (that workspace's events only). Managing them is the `manage_webhooks`
 * action of the org or workspace permission table. Plus the manual retry
 * of one delivery.
 */
export async function webhookRoutes(app: App, services: Services) {
  const forms: Form[] = [
    {
      bases: ['/api/orgs/:slug/webhooks'],
      params: OrgParams,
      tag: 'webhooks',
      what: 'organisation-wide webhook (every workspace)',
      owner: async (request) => {
        const { org } = await resolveOrg(services, requireActor(request), (request.params as { slug: string }).slug, 'manage_webhooks');
        return { orgId: org.id, orgSlug: org.slug, workspace: null };
      },
    },
    {
      bases: workspacePaths('/webhooks'),
      params: WorkspaceParams,
      tag: 'webhooks',
      what: 'workspace webhook (this workspace only)',
      owner: async (request) => {
        const { workspace, orgSlug } = await resolveWorkspace(services, requireActor(request), addressOf(request.params as z.infer<typeof WorkspaceParams>), 'manage_webhooks');
        return { orgId: workspace.orgId, orgSlug, workspace: { id: workspace.id, slug: workspace.slug } };
      },
    },
  ];

  for (const form of forms) {
    const ItemParams = form.params.extend(WebhookIdParam);
    for (const base of form.bases) {
      app.get(
        base,
        { schema: { summary: `List ${form.what}s`, tags: [form.tag], params: form.params, response: { 200: WebhookList, ...errorResponses } } },
        async (request) => ({ webhooks: (await listWebhooks(services, await form.owner(request))).map(presentWebhook) }),
      );

      app.post(
        base,
        {
          schema: {
            summary: `Create a ${form.what}`,
            description:
              'Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the `secret` returned here only. The body is the event record. Events recorded after creation are delivered at least once, in order. At most 25 webhooks per organisation (409).',
            tags: [form.tag],
            params: form.params,
            body: CreateWebhookBody,
            response: { 200: CreatedWebhook, ...errorResponses },
          },
        },
        async (request) => {
          const { webhook, secret } = await createWebhook(services, requireActor(request), await form.owner(request), request.body);
          return { ...presentWebhook(webhook), secret };
        },
      );

      app.get(
        `${base}/:id`,
        { schema: { summary: `One ${form.what}`, tags: [form.tag], params: ItemParams, response: { 200: Webhook, ...errorResponses } } },
        async (request) => presentWebhook(await getWebhook(services, await form.owner(request), (request.params as { id: string }).id)),
      );

      app.patch(
        `${base}/:id`,
        {
          schema: {
            summary: `Change or pause a ${form.what}`,
            description: '`active: false` pauses it: events are not queued for it meanwhile, and deliveries already queued wait. `active: true` resumes the queue in order (and clears `failingSince`).',
            tags: [form.tag],
            params: ItemParams,
            body: PatchWebhookBody,
            response: { 200: Webhook, ...errorResponses },
          },
        },
        async (request) =>
          presentWebhook(await updateWebhook(services, requireActor(request), await form.owner(request), (request.params as { id: string }).id, request.body)),
      );

      app.delete(
        `${base}/:id`,
        {
          schema: {
            summary: `Delete a ${form.what}`,
            description: 'Its queued deliveries are dropped with it.',
            tags: [form.tag],
            params: ItemParams,
            response: { 200: Ok, ...errorResponses },
          },
        },
        async (request) => {
          await deleteWebhook(services, requireActor(request), await form.owner(request), (request.params as { id: string }).id);
          return { ok: true as const };
        },
      );

      app.get(
        `${base}/:id/deliveries`,
        {
          schema: {
            summary: `Deliveries of a ${form.what}, newest first`,
            description: 'Each delivery is one event for this webhook: its status, attempts and the last attempt\'s response status, error and duration. Page with `nextCursor`.',
            tags: [form.tag],
            params: ItemParams,
            querystring: DeliveriesQuery,
            response: { 200: DeliveryList, ...errorResponses },
          },
        },
        async (request) => {
          const { limit, before, status } = request.query;
          const page = await listWebhookDeliveries(services, await form.owner(request), (request.params as { id: string }).id, {
            limit,
            before: before === undefined ? undefined : Number(before),
            status,
          });
          return { deliveries: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor };
        },
      );
    }
  }

  app.post(
    '/api/webhook-deliveries/:id/retry',
    {
      schema: {
        summary: 'Send a delivery again, now',
        description:
          'One attempt at once, for a pending or failed delivery, outside the queue order; returns the delivery record after it. A failed attempt leaves the status and automatic schedule as they were. 409 for a succeeded delivery or while an attempt is in flight; 402 at the monthly delivery cap.',
        tags: ['webhooks'],
        params: z.object({ id: z.string().min(1).max(100).describe('Delivery id') }),
        response: { 200: WebhookDelivery, 402: OverLimitBody, ...errorResponses },
      },
    },
    async (request) => presentDelivery(await retryDelivery(services, workspaceResolver(services), requireActor(request), request.params.id)),
  );
}
