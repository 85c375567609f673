import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Projection of doc surfaces' sections (the text under each top-level
 * heading), kept by the observer for search. Rebuilt per surface on every
 * REST write and at most every 2 s while sync clients type; the Y document
 * stays the truth.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table doc_sections (
      workspace_id text not null references workspaces(id) on delete cascade,
      surface_id text not null,
      idx integer not null,
      heading text,
      level integer not null default 0,
      text text not null default '',
      updated_at timestamptz not null default now(),
      primary key (surface_id, idx)
    )
  `.execute(db);
  await sql`create index doc_sections_workspace_idx on doc_sections (workspace_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists doc_sections`.execute(db);
}
