import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

const STATEMENTS = [
  // The local payment provider's own records (a real provider keeps these on its side):
  // one customer per org with the card on file, reduced to what a receipt shows.
  `create table local_payment_customers (
     id text primary key,
     org_id text not null unique references orgs(id) on delete cascade,
     card_brand text,
     card_last4 text,
     card_exp_month integer,
     card_exp_year integer,
     created_at timestamptz not null default now(),
     updated_at timestamptz not null default now()
   )`,
  // Checkout and portal sessions of the local provider: the URL's token, stored hashed.
  `create table local_payment_sessions (
     id text primary key,
     token_hash text not null unique,
     kind text not null check (kind in ('checkout', 'portal')),
     org_id text not null references orgs(id) on delete cascade,
     plan text check (plan in ('pro', 'scale')),
     created_by_id text not null,
     created_at timestamptz not null default now(),
     expires_at timestamptz not null,
     completed_at timestamptz
   )`,
  `create index local_payment_sessions_org_idx on local_payment_sessions (org_id, created_at)`,
  // Requests for caps beyond the plan; recorded for the operator, no reply loop.
  `create table limit_increase_requests (
     id text primary key,
     org_id text not null references orgs(id) on delete cascade,
     kind text not null,
     desired_value bigint not null,
     current_cap bigint,
     plan text not null,
     reason text not null,
     requested_by_id text not null,
     requested_by_type text not null,
     created_at timestamptz not null default now()
   )`,
  `create index limit_increase_requests_org_idx on limit_increase_requests (org_id, created_at)`,
  // The period-end job finds due downgrades without scanning every org.
  `create index orgs_pending_downgrade_idx on orgs (pending_downgrade_at) where pending_downgrade_at is not null`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists orgs_pending_downgrade_idx`.execute(db);
  await sql`drop table if exists limit_increase_requests, local_payment_sessions, local_payment_customers`.execute(db);
}
