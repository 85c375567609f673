import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
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
import { IsoDateTime, Ok, OverLimitBody, Principal, toIso } from '../model/schemas/common';
import type { Actor } from '../policy/actor';
import type { WebhookRow } from '../persistence/webhooks';
import { isValidEventFilter } from '../webhooks/event-filter';
import { CreatedWebhook, DeliveryList, Webhook, WebhookDelivery, WebhookList } from '../model/schemas/webhooks';
import { defineOperation, type ToolContext } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';

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
    createdBy: row.createdBy ? { principalType: row.createdBy.kind, id: row.createdBy.id, name: row.createdBy.name, avatarUrl: row.createdBy.avatarUrl } : null,
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

// ---------------------------------------------------------------- operations

type Services = ToolContext['services'];

type Form<P extends z.ZodObject> = {
  params: P;
  /** Where the collection is: an org path, or a workspace suffix (served at both workspace URLs); the item is `…/:id`. */
  at: { path: string } | { workspacePath: string };
  what: string;
  owner(services: Services, actor: Actor, params: z.output<P>): Promise<WebhookOwner>;
};

/** The six routes of one form of webhook subscription. */
function webhookOperationsFor<P extends z.ZodObject>(form: Form<P>) {
  const ItemParams = form.params.extend(WebhookIdParam);
  const at = (suffix: string) => ('path' in form.at ? { path: `${form.at.path}${suffix}` } : { workspacePath: `${form.at.workspacePath}${suffix}` });
  const owner = (services: Services, actor: Actor | null, params: unknown) => form.owner(services, requireCaller(actor), params as z.output<P>);
  // The item params are the form's params and `id`; extending a generic schema loses the field's type.
  const idOf = (params: unknown) => (params as { id: string }).id;
  return {
    list: defineOperation(
      { params: form.params, response: WebhookList, rest: { method: 'GET', ...at(''), summary: `List ${form.what}s`, tags: ['webhooks'] } },
      async (services, actor, { params }) => ({ webhooks: (await listWebhooks(services, await owner(services, actor, params))).map(presentWebhook) }),
    ),
    create: defineOperation(
      {
        params: form.params, body: CreateWebhookBody, response: CreatedWebhook,
        rest: {
          method: 'POST',
          ...at(''),
          summary: `Create a ${form.what}`,
          description:
            'Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the `secret` returned here only. The body is the event record. Events recorded after creation are delivered at least once, in order. At most 25 webhooks per organisation (409).',
          tags: ['webhooks'],
        },
      },
      async (services, actor, { params, body }) => {
        const { webhook, secret } = await createWebhook(services, requireCaller(actor), await owner(services, actor, params), body);
        return { ...presentWebhook(webhook), secret };
      },
    ),
    detail: defineOperation(
      { params: ItemParams, response: Webhook, rest: { method: 'GET', ...at('/:id'), summary: `One ${form.what}`, tags: ['webhooks'] } },
      async (services, actor, { params }) => presentWebhook(await getWebhook(services, await owner(services, actor, params), idOf(params))),
    ),
    update: defineOperation(
      {
        params: ItemParams, body: PatchWebhookBody, response: Webhook,
        rest: {
          method: 'PATCH',
          ...at('/:id'),
          summary: `Change or pause a ${form.what}`,
          description: '`active: false` pauses it: events are not queued for it meanwhile, and deliveries already queued wait. `active: true` resumes the queue in order (and clears `failingSince`).',
          tags: ['webhooks'],
        },
      },
      async (services, actor, { params, body }) => presentWebhook(await updateWebhook(services, requireCaller(actor), await owner(services, actor, params), idOf(params), body)),
    ),
    remove: defineOperation(
      {
        params: ItemParams, response: Ok,
        rest: { method: 'DELETE', ...at('/:id'), summary: `Delete a ${form.what}`, description: 'Its queued deliveries are dropped with it.', tags: ['webhooks'] },
      },
      async (services, actor, { params }) => {
        await deleteWebhook(services, requireCaller(actor), await owner(services, actor, params), idOf(params));
        return { ok: true as const };
      },
    ),
    deliveries: defineOperation(
      {
        params: ItemParams, query: DeliveriesQuery, response: DeliveryList,
        rest: {
          method: 'GET',
          ...at('/:id/deliveries'),
          summary: `Deliveries of a ${form.what}, newest first`,
          description: 'Each delivery is one event for this webhook: its status, attempts and the last attempt\'s response status, error and duration. Page with `nextCursor`.',
          tags: ['webhooks'],
        },
      },
      async (services, actor, { params, query }) => {
        const { limit, before, status } = query;
        const page = await listWebhookDeliveries(services, await owner(services, actor, params), idOf(params), {
          limit,
          before: before === undefined ? undefined : Number(before),
          status,
        });
        return { deliveries: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor };
      },
    ),
  };
}

/**
 * Webhook subscriptions, in two forms that share every route: org-wide at
 * `/api/orgs/{slug}/webhooks` (events of every workspace, and org-level
 * events), and the older workspace-scoped `/api/workspaces/{slug}/webhooks`
 * (that workspace's events only). Managing them is the `manage_webhooks`
 * action of the org or workspace permission table.
 */
const orgWebhooks = webhookOperationsFor({
  params: OrgParams,
  at: { path: '/api/orgs/:slug/webhooks' },
  what: 'organisation-wide webhook (every workspace)',
  owner: async (services, actor, params) => {
    const { org } = await resolveOrg(services, actor, params.slug, 'manage_webhooks');
    return { orgId: org.id, orgSlug: org.slug, workspace: null };
  },
});

const workspaceWebhooks = webhookOperationsFor({
  params: WorkspaceParams,
  at: { workspacePath: '/webhooks' },
  what: 'workspace webhook (this workspace only)',
  owner: async (services, actor, params) => {
    const { workspace, orgSlug } = await resolveWorkspace(services, actor, addressOf(params), 'manage_webhooks');
    return { orgId: workspace.orgId, orgSlug, workspace: { id: workspace.id, slug: workspace.slug } };
  },
});

/** Both forms, plus the manual retry of one delivery. None is an MCP tool. */
export const webhookOperations = {
  orgList: orgWebhooks.list,
  orgCreate: orgWebhooks.create,
  orgDetail: orgWebhooks.detail,
  orgUpdate: orgWebhooks.update,
  orgRemove: orgWebhooks.remove,
  orgDeliveries: orgWebhooks.deliveries,
  workspaceList: workspaceWebhooks.list,
  workspaceCreate: workspaceWebhooks.create,
  workspaceDetail: workspaceWebhooks.detail,
  workspaceUpdate: workspaceWebhooks.update,
  workspaceRemove: workspaceWebhooks.remove,
  workspaceDeliveries: workspaceWebhooks.deliveries,
  retryDelivery: defineOperation(
    {
      params: z.object({ id: z.string().min(1).max(100).describe('Delivery id') }),
      response: WebhookDelivery,
      rest: {
        method: 'POST',
        path: '/api/webhook-deliveries/:id/retry',
        summary: 'Send a delivery again, now',
        description:
          'One attempt at once, for a pending or failed delivery, outside the queue order; returns the delivery record after it. A failed attempt leaves the status and automatic schedule as they were. 409 for a succeeded delivery or while an attempt is in flight; 402 at the monthly delivery cap.',
        tags: ['webhooks'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { params }) => presentDelivery(await retryDelivery(services, workspaceResolver(services), requireCaller(actor), params.id)),
  ),
};
