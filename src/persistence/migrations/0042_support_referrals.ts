import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

const STATEMENTS = [
  `create table support_tickets (
     id text primary key,
     org_id text not null references orgs(id) on delete cascade,
     kind text not null,
     title text not null,
     body text not null,
     context jsonb,
     attachment_urls jsonb not null default '[]'::jsonb,
     status text not null default 'open' check (status in ('open', 'closed')),
     tracker_number integer,
     tracker_url text,
     created_by_id text not null,
     created_by_type text not null,
     created_at timestamptz not null default now(),
     updated_at timestamptz not null default now()
   )`,
  `create index support_tickets_org_idx on support_tickets (org_id, created_at desc, id desc)`,
  // The local tracker numbers issues per org, like an issue tracker per repository.
  `create table local_tracker_issues (
     org_id text not null references orgs(id) on delete cascade,
     number integer not null,
     ticket_id text not null,
     created_at timestamptz not null default now(),
     primary key (org_id, number)
   )`,
  `create table local_tracker_counters (
     org_id text primary key references orgs(id) on delete cascade,
     last_number integer not null
   )`,
  `create table referral_codes (
     user_id text primary key references users(id) on delete cascade,
     code text not null unique,
     created_at timestamptz not null default now()
   )`,
  // Attribution is kept hashed: the referee's e-mail (to attribute a later sign-up), the visitor's IP and user agent.
  `create table referral_clicks (
     id text primary key,
     code text not null,
     referee_email_hash text,
     via text,
     visitor_hash text not null,
     created_at timestamptz not null default now()
   )`,
  `create index referral_clicks_code_idx on referral_clicks (code, created_at desc)`,
  `create index referral_clicks_email_idx on referral_clicks (referee_email_hash, created_at desc) where referee_email_hash is not null`,
  // A sign-up attributed to a code (one per user), and when the referee first paid.
  `create table referral_signups (
     user_id text primary key references users(id) on delete cascade,
     code text not null,
     signed_up_at timestamptz not null,
     activated_at timestamptz
   )`,
  `create index referral_signups_code_idx on referral_signups (code, signed_up_at)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists referral_signups, referral_clicks, referral_codes, local_tracker_counters, local_tracker_issues, support_tickets`.execute(db);
}
