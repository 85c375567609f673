import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * OAuth 2.1 for third-party apps and MCP clients: dynamically registered
 * clients, single-use authorization codes, grants (one per consent, the
 * family of its tokens) and tokens. Codes, tokens and client secrets are
 * stored only as hashes. Magic links gain a return path so a sign-in
 * started on the consent page comes back to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table oauth_clients (
      id text primary key,
      secret_hash text,
      name text not null,
      redirect_uris jsonb not null,
      token_endpoint_auth_method text not null check (token_endpoint_auth_method in ('none', 'client_secret_post', 'client_secret_basic')),
      scope text,
      metadata jsonb not null,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`
    create table oauth_grants (
      id text primary key,
      client_id text not null references oauth_clients(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      scopes text not null,
      resource text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      revoked_reason text
    )
  `.execute(db);
  await sql`create index oauth_grants_user_idx on oauth_grants (user_id)`.execute(db);
  await sql`
    create table oauth_authorization_codes (
      code_hash text primary key,
      client_id text not null references oauth_clients(id) on delete cascade,
      user_id text not null references users(id) on delete cascade,
      redirect_uri text not null,
      redirect_uri_explicit boolean not null,
      code_challenge text not null,
      scopes text not null,
      resource text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      grant_id text references oauth_grants(id) on delete cascade
    )
  `.execute(db);
  await sql`create index oauth_authorization_codes_expires_idx on oauth_authorization_codes (expires_at)`.execute(db);
  await sql`
    create table oauth_tokens (
      id text primary key,
      grant_id text not null references oauth_grants(id) on delete cascade,
      kind text not null check (kind in ('access', 'refresh')),
      token_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      rotated_at timestamptz,
      revoked_at timestamptz
    )
  `.execute(db);
  await sql`create index oauth_tokens_grant_idx on oauth_tokens (grant_id)`.execute(db);
  await sql`alter table magic_links add column return_to text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table magic_links drop column if exists return_to`.execute(db);
  await sql`drop table if exists oauth_tokens`.execute(db);
  await sql`drop table if exists oauth_authorization_codes`.execute(db);
  await sql`drop table if exists oauth_grants`.execute(db);
  await sql`drop table if exists oauth_clients`.execute(db);
}
