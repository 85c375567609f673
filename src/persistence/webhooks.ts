import { sql, type RawBuilder } from 'kysely';
import type { Db, Executor, Tx } from './database';
import type { DeliveryStatus, PlanName } from './schema';

/**
 * Webhook subscriptions, the delivery outbox and the monthly usage of
 * successful deliveries. Event-name matching is SQL here (`matchesEvent`),
 * so whatever a cache in front of it believes, a delivery is only ever
 * written for a subscription that exists, is active and wants the event.
 */

// ---------------------------------------------------------------- subscriptions

export type WebhookRow = {
  id: string;
  orgId: string;
  workspaceId: string | null;
  workspaceSlug: string | null;
  url: string;
  events: string[];
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
  failingSince: Date | null;
  deactivatedAt: Date | null;
  deactivationReason: string | null;
  createdBy: { id: string; kind: 'user' | 'agent'; name: string; avatarUrl: string | null } | null;
};

export type WebhookScope = { orgId: string; workspaceId: string | null };

function webhookQuery(db: Executor) {
  return db
    .selectFrom('webhooks as w')
    .leftJoin('workspaces as ws', 'ws.id', 'w.workspaceId')
    .leftJoin('principals as p', 'p.id', 'w.createdById')
    .select([
      'w.id',
      'w.orgId',
      'w.workspaceId',
      'ws.slug as workspaceSlug',
      'w.url',
      'w.events',
      'w.active',
      'w.createdAt',
      'w.updatedAt',
      'w.failingSince',
      'w.deactivatedAt',
      'w.deactivationReason',
      'p.id as creatorId',
      'p.kind as creatorKind',
      'p.name as creatorName',
      'p.avatarUrl as creatorAvatarUrl',
    ]);
}

type WebhookQueryRow = Awaited<ReturnType<ReturnType<typeof webhookQuery>['executeTakeFirstOrThrow']>>;

function toWebhookRow(row: WebhookQueryRow): WebhookRow {
  const { creatorId, creatorKind, creatorName, creatorAvatarUrl, ...rest } = row;
  return {
    ...rest,
    events: parseTextArray(rest.events),
    createdBy: creatorId ? { id: creatorId, kind: creatorKind!, name: creatorName!, avatarUrl: creatorAvatarUrl ?? null } : null,
  };
}

/** `text[]` arrives as an array from pg and PGlite; a literal `{a,b}` is parsed just in case. */
function parseTextArray(value: unknown): string[] {
  if (Array.isArray(value)) return value as string[];
  if (typeof value === 'string') return value.replace(/^\{|\}$/g, '').split(',').filter(Boolean).map((s) => s.replace(/^"|"$/g, ''));
  return [];
}

/** The subscriptions of one scope: org-wide ones (`workspaceId` null) or one workspace's. Oldest first. */
export async function listWebhooks(db: Executor, scope: WebhookScope): Promise<WebhookRow[]> {
  let query = webhookQuery(db).where('w.orgId', '=', scope.orgId);
  query = scope.workspaceId ? query.where('w.workspaceId', '=', scope.workspaceId) : query.where('w.workspaceId', 'is', null);
  return (await query.orderBy('w.createdAt', 'asc').orderBy('w.id', 'asc').execute()).map(toWebhookRow);
}

export async function findWebhook(db: Executor, id: string, scope: WebhookScope): Promise<WebhookRow | undefined> {
  let query = webhookQuery(db).where('w.id', '=', id).where('w.orgId', '=', scope.orgId);
  query = scope.workspaceId ? query.where('w.workspaceId', '=', scope.workspaceId) : query.where('w.workspaceId', 'is', null);
  const row = await query.executeTakeFirst();
  return row && toWebhookRow(row);
}

export async function countOrgWebhooks(db: Executor, orgId: string): Promise<number> {
  const row = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('orgId', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhook(
  tx: Tx,
  values: { id: string; orgId: string; workspaceId: string | null; url: string; events: string[]; secretCiphertext: string; createdById: string; now: Date },
) {
  // Events after this seq get the cross-instance catch-up (see catchUpNewWebhooks).
  const { max } = await tx.selectFrom('events').select((eb) => eb.fn.max('seq').as('max')).executeTakeFirstOrThrow();
  await tx
    .insertInto('webhooks')
    .values({
      id: values.id,
      orgId: values.orgId,
      workspaceId: values.workspaceId,
      url: values.url,
      events: sql`${values.events}::text[]` as unknown as string[],
      secretCiphertext: values.secretCiphertext,
      active: true,
      createdById: values.createdById,
      createdAt: values.now,
      updatedAt: values.now,
      catchupAfterSeq: Number(max ?? 0),
    })
    .execute();
}

/** Turning a subscription back on also makes its queued deliveries due now: whoever fixed the receiver wants them. */
export async function updateWebhook(tx: Tx, id: string, patch: { url?: string; events?: string[]; active?: boolean }, now: Date) {
  if (patch.active === true) {
    await tx.updateTable('webhookDeliveries').set({ nextAttemptAt: now }).where('webhookId', '=', id).where('status', '=', 'pending').where('nextAttemptAt', '>', now).execute();
  }
  await tx
    .updateTable('webhooks')
    .set({
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: sql`${patch.events}::text[]` as unknown as string[] } : {}),
      ...(patch.active === true ? { active: true, deactivatedAt: null, deactivationReason: null, failingSince: null } : {}),
      ...(patch.active === false ? { active: false, deactivatedAt: now, deactivationReason: 'paused' } : {}),
      updatedAt: now,
    })
    .where('id', '=', id)
    .execute();
}

export async function deleteWebhook(tx: Tx, id: string) {
  await tx.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** What the outbox cache keeps per organisation: enough to tell whether an event may need a delivery. */
export type SubscriptionFilter = { id: string; workspaceId: string | null; events: string[]; active: boolean };

export async function listOrgSubscriptionFilters(db: Executor, orgId: string): Promise<SubscriptionFilter[]> {
  const rows = await db.selectFrom('webhooks').select(['id', 'workspaceId', 'events', 'active']).where('orgId', '=', orgId).execute();
  return rows.map((r) => ({ ...r, events: parseTextArray(r.events) }));
}

/** A subscription with its organisation's and workspace's names, whatever its scope. */
export async function findWebhookContext(db: Executor, id: string) {
  const row = await db
    .selectFrom('webhooks as w')
    .innerJoin('orgs as o', 'o.id', 'w.orgId')
    .leftJoin('workspaces as ws', 'ws.id', 'w.workspaceId')
    .select(['w.orgId', 'o.slug as orgSlug', 'o.name as orgName', 'w.workspaceId', 'ws.slug as workspaceSlug', 'w.url', 'w.events', 'w.failingSince'])
    .where('w.id', '=', id)
    .executeTakeFirst();
  return row && { ...row, events: parseTextArray(row.events) };
}

/** Who to tell that a subscription was deactivated: the creator's address (an agent's owner for agents). */
export async function findCreatorEmail(db: Executor, webhookId: string): Promise<string | null> {
  const row = await db
    .selectFrom('webhooks as w')
    .leftJoin('agents as a', 'a.id', 'w.createdById')
    .leftJoin('users as u', (join) => join.on((eb) => eb.or([eb('u.id', '=', eb.ref('w.createdById')), eb('u.id', '=', eb.ref('a.ownerUserId'))])))
    .select('u.email')
    .where('w.id', '=', webhookId)
    .executeTakeFirst();
  return row?.email ?? null;
}

// ---------------------------------------------------------------- the outbox

/**
 * An event (alias `e`) matches a subscription (alias `w`) by its name,
 * its area (`row.*`) or `*`; a workspace-scoped subscription only gets its
 * workspace's events.
 */
function matchesEvent(): RawBuilder<boolean> {
  return sql<boolean>`w.org_id = e.org_id and w.active
    and (w.workspace_id is null or w.workspace_id = e.workspace_id)
    and w.events && array['*', e.event, split_part(e.event, '.', 1) || '.*']::text[]`;
}

/** One delivery per (event, matching subscription), in the transaction that recorded the events. Returns the subscriptions that got some. */
export async function enqueueDeliveries(tx: Executor, eventSeqs: number[], now: Date): Promise<string[]> {
  if (eventSeqs.length === 0) return [];
  const result = await sql<{ webhookId: string }>`
    insert into webhook_deliveries (webhook_id, org_id, event_seq, event, next_attempt_at, created_at)
    select w.id, w.org_id, e.seq, e.event, ${now}, ${now}
    from events e join webhooks w on ${matchesEvent()}
    where e.seq = any(${eventSeqs}::bigint[])
    on conflict (webhook_id, event_seq) do nothing
    returning webhook_id
  `.execute(tx);
  return [...new Set(result.rows.map((r) => r.webhookId))];
}

/**
 * Another instance may have recorded events with a cache that did not yet
 * know a new subscription. Once every cache has expired (`settledBefore`),
 * each new subscription gets the deliveries it missed from its creation
 * until then, once. Returns the subscriptions that got some.
 */
export async function catchUpNewWebhooks(db: Db, settledBefore: Date, windowMs: number, now: Date): Promise<string[]> {
  // Read-only first, as the claim does: an idle pass must not move the write epoch.
  if (!(await anyRow(db, sql`select 1 from webhooks where catchup_after_seq is not null and created_at <= ${settledBefore}`))) return [];
  return db.transaction().execute(async (tx) => {
    const due = await sql<{ id: string; catchupAfterSeq: number }>`
      with due as (
        select id, catchup_after_seq from webhooks
        where catchup_after_seq is not null and created_at <= ${settledBefore}
        limit 20 for update skip locked
      ),
      done as (update webhooks set catchup_after_seq = null from due where webhooks.id = due.id)
      select id, catchup_after_seq from due
    `.execute(tx);
    const touched: string[] = [];
    for (const webhook of due.rows) {
      const inserted = await sql`
        insert into webhook_deliveries (webhook_id, org_id, event_seq, event, next_attempt_at, created_at)
        select w.id, w.org_id, e.seq, e.event, ${now}, ${now}
        from webhooks w join events e on ${matchesEvent()}
        where w.id = ${webhook.id} and e.seq > ${webhook.catchupAfterSeq}
          and e.created_at >= w.created_at and e.created_at < w.created_at + ${`${windowMs} milliseconds`}::interval
        on conflict (webhook_id, event_seq) do nothing
      `.execute(tx);
      if (Number(inserted.numAffectedRows ?? 0) > 0) touched.push(webhook.id);
    }
    return touched;
  });
}

// ---------------------------------------------------------------- the drain

/** Monthly caps by plan, as a SQL expression over an org id column. */
export type PlanCaps = Record<PlanName, number>;

function capOf(orgIdRef: RawBuilder<unknown>, caps: PlanCaps): RawBuilder<number> {
  const cases = Object.entries(caps).map(([plan, cap]) => sql`when ${plan} then ${cap}::integer`);
  return sql<number>`(select case o.plan ${sql.join(cases, sql` `)} else 0 end from orgs o where o.id = ${orgIdRef})`;
}

function usedOf(orgIdRef: RawBuilder<unknown>, period: string): RawBuilder<number> {
  return sql<number>`coalesce((select u.delivered from webhook_usage u where u.org_id = ${orgIdRef} and u.period = ${period}), 0)`;
}

export type ClaimOptions = { owner: string; now: Date; leaseUntil: Date; limit: number; period: string; caps: PlanCaps };

/**
 * Leases up to `limit` subscriptions whose next delivery is due, that no
 * live lease holds and whose organisation is under its monthly cap.
 * `skip locked`: instances claiming at once take different subscriptions.
 */
export async function claimSubscriptions(db: Executor, options: ClaimOptions): Promise<string[]> {
  const { owner, now, leaseUntil, limit, period, caps } = options;
  const due = sql`
      select w.id from webhooks w
      cross join lateral (
        select d.next_attempt_at, d.attempting_until from webhook_deliveries d
        where d.webhook_id = w.id and d.status = 'pending'
        order by d.event_seq limit 1
      ) head
      where w.active and (w.lease_until is null or w.lease_until < ${now})
        and head.next_attempt_at <= ${now}
        and (head.attempting_until is null or head.attempting_until < ${now})
        and ${usedOf(sql.ref('w.org_id'), period)} < ${capOf(sql.ref('w.org_id'), caps)}`;
  // Most polls find nothing due. Asking first, without writing, keeps an idle poll from moving the
  // write epoch (write-epochs.ts), which would retire every cached caller and workspace lookup once a poll.
  if (!(await anyRow(db, due))) return [];
  const result = await sql<{ id: string }>`
    update webhooks set lease_owner = ${owner}, lease_until = ${leaseUntil}
    where id in (${due}
      order by head.next_attempt_at
      limit ${limit}
      for update of w skip locked
    )
    returning id
  `.execute(db);
  return result.rows.map((r) => r.id);
}

/** Whether `query` (a select) finds a row. */
async function anyRow(db: Executor, query: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select exists (${query}) as found`.execute(db);
  return rows[0]?.found === true;
}

export type LockedDelivery = {
  id: string;
  webhookId: string;
  orgId: string;
  eventSeq: number;
  event: string;
  attempts: number;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  url: string;
  secretCiphertext: string;
  failingSince: Date | null;
  /** The event record as stored; null if it no longer exists. */
  record: unknown;
};

export type LockNextOptions = { webhookId: string; owner: string; now: Date; leaseUntil: Date; attemptUntil: Date; period: string; caps: PlanCaps };

/**
 * The next delivery of a leased subscription, locked for one attempt, with
 * what the attempt needs; renews the lease. Nothing when the lease is lost,
 * the subscription was deactivated, its queue is empty, its head is not due
 * or busy, or the organisation is at its cap.
 */
export async function lockNextDelivery(db: Executor, options: LockNextOptions): Promise<LockedDelivery | null> {
  const { webhookId, owner, now, leaseUntil, attemptUntil, period, caps } = options;
  const result = await sql<LockedDelivery>`
    with lease as (
      update webhooks set lease_until = ${leaseUntil}
      where id = ${webhookId} and lease_owner = ${owner} and active
      returning id, url, secret_ciphertext, failing_since
    ),
    head as (
      select d.id from webhook_deliveries d
      where d.webhook_id = ${webhookId} and d.status = 'pending'
      order by d.event_seq limit 1
    ),
    locked as (
      update webhook_deliveries d set attempting_until = ${attemptUntil}
      from head, lease
      where d.id = head.id and d.next_attempt_at <= ${now}
        and (d.attempting_until is null or d.attempting_until < ${now})
        and ${usedOf(sql.ref('d.org_id'), period)} < ${capOf(sql.ref('d.org_id'), caps)}
      returning d.id, d.webhook_id, d.org_id, d.event_seq, d.event, d.attempts, d.status, d.next_attempt_at
    )
    select locked.*, lease.url, lease.secret_ciphertext, lease.failing_since, e.record
    from locked join lease on true left join events e on e.seq = locked.event_seq
  `.execute(db);
  return result.rows[0] ?? null;
}

export type RetryLock =
  | { state: 'locked'; delivery: LockedDelivery; used: number; cap: number }
  | { state: 'succeeded' | 'busy' | 'missing' };

/** A manual retry's lock on one delivery (any status but succeeded), with the org's usage against its cap. */
export async function lockDeliveryForRetry(db: Executor, id: string, options: { now: Date; attemptUntil: Date; period: string; caps: PlanCaps }): Promise<RetryLock> {
  const { now, attemptUntil, period, caps } = options;
  const locked = await sql<LockedDelivery & { used: number; cap: number }>`
    with locked as (
      update webhook_deliveries d set attempting_until = ${attemptUntil}
      where d.id = ${id} and d.status <> 'succeeded' and (d.attempting_until is null or d.attempting_until < ${now})
      returning d.id, d.webhook_id, d.org_id, d.event_seq, d.event, d.attempts, d.status, d.next_attempt_at
    )
    select locked.*, w.url, w.secret_ciphertext, w.failing_since, e.record,
      ${usedOf(sql.ref('locked.org_id'), period)} as used, ${capOf(sql.ref('locked.org_id'), caps)} as cap
    from locked join webhooks w on w.id = locked.webhook_id left join events e on e.seq = locked.event_seq
  `.execute(db);
  const row = locked.rows[0];
  if (row) {
    const { used, cap, ...delivery } = row;
    return { state: 'locked', delivery, used: Number(used), cap: Number(cap) };
  }
  const current = await db.selectFrom('webhookDeliveries').select('status').where('id', '=', id).executeTakeFirst();
  if (!current) return { state: 'missing' };
  return { state: current.status === 'succeeded' ? 'succeeded' : 'busy' };
}

export type AttemptRecord = {
  deliveryId: string;
  webhookId: string;
  orgId: string;
  now: Date;
  period: string;
  status: DeliveryStatus;
  /** False for an attempt that never reached the receiver's judgement (shutdown): only the lock is released. */
  counted: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number | null;
  nextAttemptAt: Date | null;
  /** Deactivate the subscription (failing for too long). */
  deactivate: boolean;
};

/**
 * One attempt's outcome, in one statement (so one round trip, and atomic):
 * the delivery, the subscription's failure streak (and deactivation), and
 * the month's count of successful deliveries.
 */
export async function recordAttempt(db: Executor, attempt: AttemptRecord): Promise<void> {
  const { deliveryId, webhookId, orgId, now, period } = attempt;
  if (!attempt.counted) {
    await unlockDelivery(db, deliveryId);
    return;
  }
  const succeeded = attempt.status === 'succeeded';
  await sql`
    with delivery as (
      update webhook_deliveries set
        status = ${attempt.status}, attempts = attempts + 1, response_status = ${attempt.responseStatus}, error = ${attempt.error},
        duration_ms = ${attempt.durationMs}, last_attempt_at = ${now}, next_attempt_at = ${attempt.nextAttemptAt}, attempting_until = null
      where id = ${deliveryId}
    ),
    usage as (
      insert into webhook_usage (org_id, period, delivered) select ${orgId}, ${period}, 1 where ${succeeded}::boolean
      on conflict (org_id, period) do update set delivered = webhook_usage.delivered + 1
    ),
    streak as (
      update webhooks set
        failing_since = case when ${succeeded}::boolean then null else coalesce(failing_since, ${now}) end,
        active = active and not ${attempt.deactivate}::boolean,
        deactivated_at = case when ${attempt.deactivate}::boolean then ${now} else deactivated_at end,
        deactivation_reason = case when ${attempt.deactivate}::boolean then 'failing' else deactivation_reason end,
        updated_at = case when ${attempt.deactivate}::boolean then ${now} else updated_at end
      where id = ${webhookId} and (not ${succeeded}::boolean or failing_since is not null)
    )
    select 1
  `.execute(db);
}

/** Deletes up to `limit` finished (succeeded or failed) deliveries created before `before`; returns how many. */
export async function pruneFinishedDeliveries(db: Executor, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries where status <> 'pending' and created_at < ${before} order by created_at limit ${limit}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export async function releaseSubscription(db: Executor, webhookId: string, owner: string) {
  await db.updateTable('webhooks').set({ leaseOwner: null, leaseUntil: null }).where('id', '=', webhookId).where('leaseOwner', '=', owner).execute();
}

/** Unlocks a delivery without counting an attempt (it could not be made by this instance). */
export async function unlockDelivery(db: Executor, deliveryId: string) {
  await db.updateTable('webhookDeliveries').set({ attemptingUntil: null }).where('id', '=', deliveryId).execute();
}

/** Every lease and attempt lock: for a database only this process can open (PGlite), all of them are stale at start. */
export async function clearAllLeases(db: Executor) {
  await db.updateTable('webhooks').set({ leaseOwner: null, leaseUntil: null }).where('leaseOwner', 'is not', null).execute();
  await db.updateTable('webhookDeliveries').set({ attemptingUntil: null }).where('attemptingUntil', 'is not', null).execute();
}

export async function webhookUsage(db: Executor, orgId: string, period: string): Promise<{ used: number; plan: PlanName }> {
  const row = await db
    .selectFrom('orgs as o')
    .leftJoin('webhookUsage as u', (join) => join.onRef('u.orgId', '=', 'o.id').on('u.period', '=', period))
    .select(['o.plan', 'u.delivered'])
    .where('o.id', '=', orgId)
    .executeTakeFirst();
  return { used: Number(row?.delivered ?? 0), plan: row?.plan ?? 'free' };
}

// ---------------------------------------------------------------- the delivery record

export type DeliveryRow = {
  id: string;
  webhookId: string;
  eventSeq: number;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  responseStatus: number | null;
  error: string | null;
  durationMs: number | null;
  createdAt: Date;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
};

const DELIVERY_COLUMNS = [
  'id',
  'webhookId',
  'eventSeq',
  'event',
  'status',
  'attempts',
  'responseStatus',
  'error',
  'durationMs',
  'createdAt',
  'nextAttemptAt',
  'lastAttemptAt',
] as const;

/** Newest first (by event), paged with `beforeSeq`. */
export async function listDeliveries(
  db: Executor,
  webhookId: string,
  options: { limit: number; beforeSeq?: number; status?: DeliveryStatus },
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhookDeliveries').select(DELIVERY_COLUMNS).where('webhookId', '=', webhookId);
  if (options.beforeSeq !== undefined) query = query.where('eventSeq', '<', options.beforeSeq);
  if (options.status) query = query.where('status', '=', options.status);
  return query.orderBy('eventSeq', 'desc').limit(options.limit).execute();
}

export async function findDelivery(db: Executor, id: string): Promise<(DeliveryRow & { orgId: string; workspaceId: string | null }) | undefined> {
  return db
    .selectFrom('webhookDeliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhookId')
    .select(DELIVERY_COLUMNS.map((c) => `d.${c}` as const))
    .select(['w.orgId', 'w.workspaceId'])
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/** Deliveries written and not yet delivered or given up on (the outbox backlog, for metrics). */
export async function countPendingDeliveries(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhookDeliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
