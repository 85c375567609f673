import { errors, OverLimitError } from '../errors';
import { emitEvents } from '../events/emit';
import type { EventName } from '../model/event-names';
import type { EventDraft } from '../model/event-record';
import type { Actor } from '../policy/actor';
import type { WorkspaceResolver } from './resolved-workspace';
import { newId } from '../lib/ids';
import { monthOf } from '../limits/monthly-meter';
import { findOrgById } from '../persistence/accounts';
import {
  countOrgWebhooks,
  deleteWebhook as deleteWebhookRow,
  findCreatorEmail,
  findDelivery,
  findWebhook,
  findWebhookContext,
  insertWebhook,
  listDeliveries,
  listWebhooks as listWebhookRows,
  updateWebhook as updateWebhookRow,
  webhookUsage,
  type DeliveryRow,
  type WebhookRow,
} from '../persistence/webhooks';
import type { DeliveryStatus } from '../persistence/schema';
import type { Services } from './services';
import { ForbiddenTargetError } from '../webhooks/address-guard';
import { normalizeFilter } from '../webhooks/event-filter';
import { WEBHOOK_CAPS } from '../webhooks/pg-store';
import { newSigningSecret } from '../webhooks/secret-box';
import { resolveOrg } from './members';
import { transactWithEvents } from './transact';
import { upgradeUrl } from './workspaces';

/**
 * Webhook subscriptions: org-wide (`/api/orgs/{slug}/webhooks`, every
 * workspace's events) or scoped to one workspace (the older
 * `/api/workspaces/{slug}/webhooks`). Delivery itself is src/webhooks.
 */

/** Whose subscriptions: an organisation's org-wide ones, or one workspace's. */
export type WebhookOwner = { orgId: string; orgSlug: string; workspace: { id: string; slug: string } | null };

/** Bounds the work every event of an organisation can cause. */
export const MAX_WEBHOOKS_PER_ORG = 25;

export const WAITING_FOR_CAP = 'waiting: the monthly webhook delivery cap of this plan is reached; sends resume when the month turns or the plan is raised';

export function listWebhooks(services: Services, owner: WebhookOwner): Promise<WebhookRow[]> {
  return listWebhookRows(services.db, scopeOf(owner));
}

export async function getWebhook(services: Services, owner: WebhookOwner, id: string): Promise<WebhookRow> {
  const webhook = await findWebhook(services.db, id, scopeOf(owner));
  if (!webhook) throw errors.notFound('Webhook');
  return webhook;
}

/** Creates a subscription; its signing secret is returned here and never again. */
export async function createWebhook(
  services: Services,
  actor: Actor,
  owner: WebhookOwner,
  input: { url: string; events: string[] },
): Promise<{ webhook: WebhookRow; secret: string }> {
  const url = await checkedUrl(services, input.url);
  const events = normalizeFilter(input.events);
  const secret = newSigningSecret();
  const id = newId('whk');
  await transactWithEvents(services, async (tx, drafts) => {
    if ((await countOrgWebhooks(tx, owner.orgId)) >= MAX_WEBHOOKS_PER_ORG) {
      throw errors.conflict(`An organisation has at most ${MAX_WEBHOOKS_PER_ORG} webhooks (org-wide and workspace ones together); delete one first.`);
    }
    await insertWebhook(tx, {
      id,
      orgId: owner.orgId,
      workspaceId: owner.workspace?.id ?? null,
      url,
      events,
      secretCiphertext: services.webhooks.secrets.seal(secret),
      createdById: actor.principal.id,
      now: services.clock.now(),
    });
    drafts.push(webhookEvent('webhook.created', owner, actor.principal, id, { url, events, active: true }));
  });
  services.webhooks.outbox.invalidate(owner.orgId);
  return { webhook: await getWebhook(services, owner, id), secret };
}

/** `active: false` pauses (new events are not queued, queued ones wait); `true` resumes the queue. */
export async function updateWebhook(
  services: Services,
  actor: Actor,
  owner: WebhookOwner,
  id: string,
  patch: { url?: string; events?: string[]; active?: boolean },
): Promise<WebhookRow> {
  const before = await getWebhook(services, owner, id);
  const change = {
    ...(patch.url !== undefined ? { url: await checkedUrl(services, patch.url) } : {}),
    ...(patch.events !== undefined ? { events: normalizeFilter(patch.events) } : {}),
    ...(patch.active !== undefined ? { active: patch.active } : {}),
  };
  if (Object.keys(change).length === 0) return before;
  await transactWithEvents(services, async (tx, drafts) => {
    await updateWebhookRow(tx, id, change, services.clock.now());
    drafts.push(webhookEvent('webhook.updated', owner, actor.principal, id, { url: change.url ?? before.url, events: change.events ?? before.events, active: change.active ?? before.active }));
  });
  services.webhooks.outbox.invalidate(owner.orgId);
  if (change.active) services.webhooks.wake();
  return getWebhook(services, owner, id);
}

/** Deletes a subscription and every delivery it has, pending ones included. */
export async function deleteWebhook(services: Services, actor: Actor, owner: WebhookOwner, id: string): Promise<void> {
  const before = await getWebhook(services, owner, id);
  await transactWithEvents(services, async (tx, drafts) => {
    await deleteWebhookRow(tx, id);
    drafts.push(webhookEvent('webhook.deleted', owner, actor.principal, id, { url: before.url, events: before.events, active: before.active }));
  });
  services.webhooks.outbox.invalidate(owner.orgId);
}

export type DeliveryView = DeliveryRow;

/** A subscription's deliveries, newest first; pending ones waiting for the monthly cap say so. */
export async function listWebhookDeliveries(
  services: Services,
  owner: WebhookOwner,
  id: string,
  query: { limit: number; before?: number; status?: DeliveryStatus },
): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
  await getWebhook(services, owner, id);
  const rows = await listDeliveries(services.db, id, { limit: query.limit, beforeSeq: query.before, status: query.status });
  const atCap = await isAtCap(services, owner.orgId);
  const deliveries = rows.map((d) => (atCap && d.status === 'pending' ? { ...d, error: WAITING_FOR_CAP } : d));
  return { deliveries, nextCursor: rows.length === query.limit ? String(rows.at(-1)!.eventSeq) : null };
}

/**
 * One attempt now, for any delivery that has not succeeded (409 for one
 * that has, or while another attempt of it is in flight; 402 at the
 * monthly cap). Managing the subscription is what it takes.
 */
export async function retryDelivery(services: Services, resolveWorkspace: WorkspaceResolver, actor: Actor, deliveryId: string): Promise<DeliveryView> {
  const found = await findDelivery(services.db, deliveryId);
  if (!found) throw errors.notFound('Delivery');
  await authorizeManage(services, resolveWorkspace, actor, found);
  const result = await services.webhooks.retryNow(deliveryId);
  switch (result.state) {
    case 'missing':
      throw errors.notFound('Delivery');
    case 'succeeded':
      throw errors.conflict('This delivery has succeeded; there is nothing to retry.');
    case 'busy':
      throw errors.conflict('An attempt of this delivery is in progress; look at it again in a few seconds.');
    case 'over_cap': {
      const { plan } = await webhookUsage(services.db, found.orgId, monthOf(services.clock.now()).period);
      throw new OverLimitError('webhook_deliveries', result.used, result.cap, { plan, upgradeUrl: upgradeUrl(services) });
    }
    case 'done': {
      const after = await findDelivery(services.db, deliveryId);
      if (!after) throw errors.notFound('Delivery');
      const { orgId: _org, workspaceId: _workspace, ...delivery } = after;
      return delivery;
    }
  }
}

/** Starts the drain; what it deactivates is announced here. */
export function startWebhookDelivery(services: Services) {
  services.webhooks.start({ onDeactivated: (webhookId) => announceDeactivation(services, webhookId) });
}

/**
 * After the drain deactivated a failing subscription: the event (audit log,
 * SSE, other subscriptions) and a mail to whoever created it.
 */
export async function announceDeactivation(services: Services, webhookId: string): Promise<void> {
  const context = await findWebhookContext(services.db, webhookId);
  if (!context) return;
  services.webhooks.outbox.invalidate(context.orgId);
  const owner: WebhookOwner = {
    orgId: context.orgId,
    orgSlug: context.orgSlug,
    workspace: context.workspaceId ? { id: context.workspaceId, slug: context.workspaceSlug ?? context.workspaceId } : null,
  };
  await emitEvents(services, [
    webhookEvent('webhook.deactivated', owner, null, webhookId, { url: context.url, events: context.events, active: false, reason: 'failing', failingSince: context.failingSince }),
  ]);
  const email = await findCreatorEmail(services.db, webhookId);
  if (!email) return;
  const host = new URL(context.url).host;
  const where = owner.workspace ? `the workspace ${owner.workspace.slug} in ${context.orgName}` : context.orgName;
  await services.mailer.send({
    to: email,
    subject: `Webhook to ${host} turned off after 3 days of failed deliveries`,
    text: [
      `The webhook ${webhookId} of ${where} has failed every delivery since ${new Date(context.failingSince ?? Date.now()).toUTCString()}, so it has been turned off.`,
      'Deliveries that were waiting are kept. Once the receiver works again, turn the webhook back on (PATCH it with {"active": true}) and they will be sent, in order.',
      `Recent attempts: ${services.config.publicUrl}/api/${owner.workspace ? `workspaces/${owner.workspace.id}` : `orgs/${owner.orgSlug}`}/webhooks/${webhookId}/deliveries`,
    ].join('\n\n'),
  });
}

async function isAtCap(services: Services, orgId: string): Promise<boolean> {
  const { used, plan } = await webhookUsage(services.db, orgId, monthOf(services.clock.now()).period);
  return used >= WEBHOOK_CAPS[plan];
}

async function authorizeManage(services: Services, resolveWorkspace: WorkspaceResolver, actor: Actor, delivery: { orgId: string; workspaceId: string | null }) {
  if (delivery.workspaceId) {
    await resolveWorkspace(actor, { slug: delivery.workspaceId }, 'manage_webhooks');
    return;
  }
  const org = await findOrgById(services.db, delivery.orgId);
  if (!org) throw errors.notFound('Delivery');
  await resolveOrg(services, actor, org.slug, 'manage_webhooks');
}

/**
 * The URL as stored: absolute http(s) (the schema checks that), no
 * credentials, and a host that resolves only to public addresses.
 */
async function checkedUrl(services: Services, raw: string): Promise<string> {
  const url = new URL(raw);
  if (url.username || url.password) {
    throw errors.validation('Webhook URLs may not carry credentials; the signature authenticates deliveries.', [
      { path: ['url'], code: 'credentials_in_url', message: 'Remove the user:password@ part.' },
    ]);
  }
  try {
    await services.webhooks.checkTarget(url);
  } catch (error) {
    if (error instanceof ForbiddenTargetError) throw errors.validation(error.message, [{ path: ['url'], code: error.code, message: error.message }]);
    throw error;
  }
  return url.href;
}

function scopeOf(owner: WebhookOwner) {
  return { orgId: owner.orgId, workspaceId: owner.workspace?.id ?? null };
}

/**
 * Events about subscriptions carry the target's host, never its URL: a
 * receiver URL often embeds a token, and workspace readers see these events.
 */
function webhookEvent(
  event: EventName,
  owner: WebhookOwner,
  principal: Actor['principal'] | null,
  webhookId: string,
  facts: { url: string; events: string[]; active: boolean } & Record<string, unknown>,
): EventDraft {
  const { url, ...rest } = facts;
  return {
    event,
    orgId: owner.orgId,
    workspace: owner.workspace ? { id: owner.workspace.id, slug: owner.workspace.slug, org: { slug: owner.orgSlug } } : null,
    principal,
    subjectId: webhookId,
    data: { webhookId, host: new URL(url).host, ...rest },
  };
}
