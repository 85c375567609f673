import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Comments and their reactions, the agents' inbox (mention wake-ups) with
 * its 60-second dedup, and the per-organisation monthly messages meter.
 *
 * - `comments.resolved_*` carry the thread's state on every comment of the
 *   thread (root and replies), so filtering by status needs no join.
 * - `target_id` is what clients filter on: the row for row and cell targets,
 *   the surface for doc ranges, html elements and surfaces, the workspace,
 *   the file. `column_id` (cells) follows a column through key renames;
 *   `anchor` holds the doc range's Yjs relative positions or the html
 *   element's selector.
 */
const STATEMENTS = [
  `create table comments (
     id text primary key,
     workspace_id text not null references workspaces(id) on delete cascade,
     parent_id text references comments(id) on delete cascade,
     target_type text not null
       check (target_type in ('row', 'cell', 'doc_range', 'html_element', 'surface', 'workspace', 'file')),
     target_id text not null,
     surface_id text,
     column_id text,
     column_key text,
     anchor jsonb,
     body text not null,
     mentions jsonb not null default '[]'::jsonb,
     author_id text not null references principals(id) on delete cascade,
     author_type text not null check (author_type in ('user', 'agent')),
     correlation_id text,
     resolved_at timestamptz,
     resolved_by_id text,
     resolved_by_type text,
     created_at timestamptz not null,
     updated_at timestamptz not null
   )`,
  `create index comments_workspace_idx on comments (workspace_id, created_at, id)`,
  `create index comments_target_idx on comments (workspace_id, target_id, created_at)`,
  `create index comments_parent_idx on comments (parent_id, created_at)`,
  `create index comments_author_idx on comments (author_id, created_at)`,
  `create index comments_mentions_idx on comments using gin (mentions jsonb_path_ops)`,

  `create table comment_reactions (
     comment_id text not null references comments(id) on delete cascade,
     principal_id text not null references principals(id) on delete cascade,
     principal_type text not null check (principal_type in ('user', 'agent')),
     emoji text not null,
     created_at timestamptz not null,
     primary key (comment_id, principal_id, emoji)
   )`,
  `create index comment_reactions_principal_idx on comment_reactions (principal_id)`,

  `create table inbox_messages (
     seq bigint generated always as identity primary key,
     id text not null unique,
     recipient_id text not null references principals(id) on delete cascade,
     org_id text not null references orgs(id) on delete cascade,
     workspace_id text references workspaces(id) on delete cascade,
     kind text not null,
     payload jsonb not null,
     created_at timestamptz not null
   )`,
  `create index inbox_messages_recipient_idx on inbox_messages (recipient_id, seq)`,

  // One row per (recipient, thread): the last wake; a newer one within 60 s is skipped.
  `create table inbox_wake_dedup (
     recipient_id text not null,
     thread_key text not null,
     woken_at timestamptz not null,
     primary key (recipient_id, thread_key)
   )`,
  `create index inbox_wake_dedup_woken_idx on inbox_wake_dedup (woken_at)`,

  // Delivered messages per organisation and calendar UTC month (YYYY-MM).
  `create table message_usage (
     org_id text not null references orgs(id) on delete cascade,
     period text not null,
     delivered integer not null default 0,
     primary key (org_id, period)
   )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists message_usage, inbox_wake_dedup, inbox_messages, comment_reactions, comments`.execute(db);
}
