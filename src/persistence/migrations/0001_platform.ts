import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of splitStatements(PLATFORM_SCHEMA)) await sql.raw(statement).execute(db);
}

// PGlite's extended protocol takes one statement per query.
function splitStatements(script: string): string[] {
  return script
    .split(/;\s*\n/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}

const PLATFORM_SCHEMA = `
    create table orgs (
      id text primary key,
      slug text not null unique,
      name text not null,
      plan text not null default 'free' check (plan in ('free', 'pro', 'scale')),
      default_workspace_visibility text not null default 'private'
        check (default_workspace_visibility in ('org', 'private')),
      personal boolean not null default false,
      payment_customer_id text,
      payment_subscription_id text,
      pending_downgrade_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table principals (
      id text primary key,
      kind text not null check (kind in ('user', 'agent')),
      name text not null,
      avatar_url text,
      created_at timestamptz not null default now()
    );

    create table users (
      id text primary key references principals(id) on delete cascade,
      email text not null unique,
      primary_org_id text references orgs(id),
      created_at timestamptz not null default now(),
      last_sign_in_at timestamptz
    );

    create table agents (
      id text primary key references principals(id) on delete cascade,
      org_id text not null references orgs(id),
      owner_user_id text not null references users(id),
      model_hint text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    );
    create index agents_org_idx on agents (org_id);
    create index agents_owner_idx on agents (owner_user_id);
    create unique index agents_owner_name_idx on agents (org_id, owner_user_id, id);

    create table org_members (
      org_id text not null references orgs(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      role text not null check (role in ('owner', 'editor', 'commenter', 'viewer')),
      joined_at timestamptz not null default now(),
      primary key (org_id, user_id)
    );
    create index org_members_user_idx on org_members (user_id);

    create table sessions (
      id text primary key,
      token_hash text not null unique,
      user_id text not null references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz,
      user_agent text
    );
    create index sessions_user_idx on sessions (user_id);

    create table magic_links (
      token_hash text primary key,
      email text not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );

    create table elevation_grants (
      session_id text not null references sessions(id) on delete cascade,
      scope text not null,
      expires_at timestamptz not null,
      primary key (session_id, scope)
    );

    create table elevation_codes (
      session_id text not null references sessions(id) on delete cascade,
      scope text not null,
      code_hash text not null,
      expires_at timestamptz not null,
      attempts integer not null default 0,
      primary key (session_id, scope)
    );

    create table workspaces (
      id text primary key,
      org_id text not null references orgs(id),
      slug text not null,
      name text not null,
      mode text not null check (mode in ('table', 'doc')),
      visibility text not null check (visibility in ('private', 'org', 'unlisted', 'public')),
      comments_on_public_share boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      created_by_id text references principals(id),
      created_by_type text,
      archived_at timestamptz,
      archived_by_id text references principals(id),
      archived_by_type text
    );
    -- Archived workspaces release their slug so it can be reclaimed.
    create unique index workspaces_live_slug_idx on workspaces (org_id, slug) where archived_at is null;
    create index workspaces_slug_idx on workspaces (slug);

    create table surfaces (
      id text primary key,
      workspace_id text not null references workspaces(id) on delete cascade,
      slug text not null,
      kind text not null check (kind in ('table', 'doc', 'html', 'files')),
      name text not null,
      position integer not null,
      created_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create unique index surfaces_live_slug_idx on surfaces (workspace_id, slug) where deleted_at is null;

    create table memberships (
      workspace_id text not null references workspaces(id) on delete cascade,
      principal_id text not null references principals(id) on delete cascade,
      principal_type text not null check (principal_type in ('user', 'agent')),
      role text not null check (role in ('owner', 'editor', 'commenter', 'viewer')),
      via_user_id text references users(id) on delete cascade,
      pinned_at timestamptz,
      joined_at timestamptz not null default now(),
      primary key (workspace_id, principal_id)
    );
    create index memberships_principal_idx on memberships (principal_id);
    create index memberships_via_user_idx on memberships (workspace_id, via_user_id);

    create table api_keys (
      id text primary key,
      org_id text not null references orgs(id),
      agent_id text not null references agents(id),
      owner_user_id text not null references users(id),
      name text not null,
      prefix text not null,
      secret_hash text not null unique,
      scope_workspace_id text references workspaces(id),
      role text not null check (role in ('editor', 'commenter', 'viewer')),
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    );
    create index api_keys_org_idx on api_keys (org_id);
    create index api_keys_agent_idx on api_keys (agent_id);

    create table invites (
      id text primary key,
      kind text not null check (kind in ('workspace', 'org')),
      org_id text not null references orgs(id),
      workspace_id text references workspaces(id) on delete cascade,
      email text not null,
      role text not null check (role in ('owner', 'editor', 'commenter', 'viewer')),
      token_hash text not null unique,
      invited_by_id text not null references principals(id),
      created_at timestamptz not null default now(),
      last_sent_at timestamptz not null default now(),
      expires_at timestamptz not null,
      accepted_at timestamptz,
      accepted_by_user_id text references users(id),
      revoked_at timestamptz
    );
    create index invites_org_idx on invites (org_id, kind);
    create index invites_email_idx on invites (email);

    create table waitlist (
      email text primary key,
      source text,
      ref text,
      allowed boolean not null default false,
      created_at timestamptz not null default now()
    );

    create table idempotency_keys (
      owner text not null,
      key text not null,
      request_hash text not null,
      status_code integer not null,
      response_body text not null,
      created_at timestamptz not null default now(),
      primary key (owner, key)
    );
    create index idempotency_keys_created_idx on idempotency_keys (created_at);

    create table api_usage (
      org_id text not null references orgs(id) on delete cascade,
      period text not null,
      calls integer not null default 0,
      primary key (org_id, period)
    );

    -- One event record serves the audit log, SSE resume and webhooks.
    create table events (
      seq bigint generated always as identity primary key,
      org_id text not null,
      workspace_id text,
      event text not null,
      subject_id text,
      principal_id text,
      record jsonb not null,
      created_at timestamptz not null default now()
    );
    create index events_workspace_idx on events (workspace_id, seq);
    create index events_workspace_event_idx on events (workspace_id, event, seq);
    create index events_subject_idx on events (workspace_id, subject_id, seq);
`;

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table if exists events, api_usage, idempotency_keys, waitlist, invites, api_keys,
      memberships, surfaces, workspaces, elevation_codes, elevation_grants, magic_links,
      sessions, org_members, agents, users, principals, orgs cascade;
  `.execute(db);
}
