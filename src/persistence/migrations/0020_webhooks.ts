import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Webhook subscriptions and the durable outbox. A delivery row ("send event
 * E to subscription S") is written in the same transaction as the event, so
 * a crash between the write and the send loses nothing; a drain sends them
 * per subscription in event order. Only 2xx deliveries count in
 * `webhook_usage` (the monthly cap).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhooks (
      id text primary key,
      org_id text not null references orgs(id) on delete cascade,
      -- Set for the workspace-scoped form: only that workspace's events.
      workspace_id text references workspaces(id) on delete cascade,
      url text not null,
      events text[] not null,
      -- AES-256-GCM under a key kept outside the database (docs/WEBHOOKS.md).
      secret_ciphertext text not null,
      active boolean not null default true,
      created_by_id text references principals(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- First failed attempt since the last success; 3 days of it deactivates.
      failing_since timestamptz,
      deactivated_at timestamptz,
      deactivation_reason text,
      -- Events after this seq recorded soon after creation are checked once for
      -- deliveries another instance's cache missed; null once done.
      catchup_after_seq bigint,
      -- The instance draining this subscription, and until when.
      lease_owner text,
      lease_until timestamptz
    )
  `.execute(db);
  await sql`create index webhooks_org_idx on webhooks (org_id)`.execute(db);
  await sql`create index webhooks_workspace_idx on webhooks (workspace_id) where workspace_id is not null`.execute(db);
  await sql`create index webhooks_catchup_idx on webhooks (created_at) where catchup_after_seq is not null`.execute(db);

  await sql`
    create table webhook_deliveries (
      id text primary key default ('whd_' || replace(gen_random_uuid()::text, '-', '')),
      webhook_id text not null references webhooks(id) on delete cascade,
      org_id text not null,
      event_seq bigint not null,
      event text not null,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
      attempts integer not null default 0,
      response_status integer,
      error text,
      duration_ms integer,
      created_at timestamptz not null default now(),
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      -- An attempt in flight (the drain's or a manual retry), so two never overlap.
      attempting_until timestamptz,
      unique (webhook_id, event_seq)
    )
  `.execute(db);
  // The head of each subscription's queue.
  await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (webhook_id, event_seq) where status = 'pending'`.execute(db);
  // Finished deliveries are kept for a while, then pruned oldest first.
  await sql`create index webhook_deliveries_done_idx on webhook_deliveries (created_at) where status <> 'pending'`.execute(db);

  await sql`
    create table webhook_usage (
      org_id text not null references orgs(id) on delete cascade,
      period text not null,
      delivered integer not null default 0,
      primary key (org_id, period)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists webhook_usage, webhook_deliveries, webhooks`.execute(db);
}
