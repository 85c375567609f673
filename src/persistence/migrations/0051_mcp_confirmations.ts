import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Confirmation tokens of dangerous MCP tools: single use, short lived,
 * bound to the caller, the tool and its arguments. In the database so a
 * confirmation issued by one instance is honoured by another.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table mcp_confirmations (
      token_hash text primary key,
      caller text not null,
      tool text not null,
      arguments_hash text not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )
  `.execute(db);
  await sql`create index mcp_confirmations_expires_idx on mcp_confirmations (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists mcp_confirmations`.execute(db);
}
