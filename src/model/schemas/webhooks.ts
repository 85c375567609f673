import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** Webhooks and their deliveries (docs/WEBHOOKS.md), as the API answers them and the web app's webhook settings read them. */

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    active: z.boolean(),
    workspace: z.object({ id: z.string(), slug: z.string() }).nullable().describe('Set for a workspace-scoped webhook, which receives only that workspace\'s events'),
    createdBy: Principal.nullable(),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
    failingSince: IsoDateTime.nullable().describe('First failed attempt since the last success; after 3 days the webhook is turned off'),
    deactivatedAt: IsoDateTime.nullable(),
    deactivationReason: z.enum(['paused', 'failing']).nullable().describe('`paused` by PATCH, `failing` after 3 days of failed deliveries'),
  })
  .meta({ id: 'Webhook' });

export const CreatedWebhook = Webhook.extend({
  secret: z.string().describe('`whsec_…`, the Standard Webhooks signing secret: returned only here; store it now'),
}).meta({ id: 'CreatedWebhook' });

export const WebhookDelivery = z
  .object({
    id: z.string().describe('Also the `webhook-id` header: the same on every attempt, so receivers can dedupe'),
    webhookId: z.string(),
    eventId: z.string(),
    event: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    responseStatus: z.number().int().nullable().describe("The receiver's HTTP status on the last attempt"),
    error: z.string().nullable().describe('Why the last attempt failed, or why a pending delivery waits'),
    durationMs: z.number().int().nullable(),
    createdAt: IsoDateTime,
    nextAttemptAt: IsoDateTime.nullable(),
    lastAttemptAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookList = z.object({ webhooks: z.array(Webhook) }).meta({ id: 'WebhookList' });

export const DeliveryList = z.object({ deliveries: z.array(WebhookDelivery), nextCursor: z.string().nullable() }).meta({ id: 'WebhookDeliveryList' });

export type Webhook = z.infer<typeof Webhook>;
export type CreatedWebhook = z.infer<typeof CreatedWebhook>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export type WebhookList = z.infer<typeof WebhookList>;
export type DeliveryList = z.infer<typeof DeliveryList>;
