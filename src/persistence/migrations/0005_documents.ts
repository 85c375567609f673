import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

const STATEMENTS = [
  // The durable update log: every Y update is appended here before it is acknowledged.
  `create table document_updates (
     seq bigint generated always as identity primary key,
     document text not null,
     update bytea not null,
     created_at timestamptz not null default now()
   )`,
  `create index document_updates_document_idx on document_updates (document, seq)`,
  // Compaction folds the log into one snapshot per document (update format V2).
  `create table document_snapshots (
     document text primary key,
     state bytea not null,
     upto_seq bigint not null,
     updated_at timestamptz not null default now()
   )`,
  // Projection of table rows kept by the observer: attribution, timestamps, counts, search.
  `create table table_rows (
     id text primary key,
     workspace_id text not null references workspaces(id) on delete cascade,
     surface_id text,
     position integer not null default 0,
     data jsonb not null default '{}'::jsonb,
     created_by_id text,
     created_by_type text,
     updated_by_id text,
     updated_by_type text,
     created_at timestamptz not null default now(),
     updated_at timestamptz not null default now()
   )`,
  `create index table_rows_workspace_idx on table_rows (workspace_id, surface_id, position)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists table_rows, document_snapshots, document_updates`.execute(db);
}
