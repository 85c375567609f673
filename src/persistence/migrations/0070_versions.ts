import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Version history of doc, html and table surfaces (docs/VERSIONS.md).
 *
 * - `surface_versions`: points in a surface's history with the surface's
 *   content at that point (gzip-compressed JSON), so a listed version never
 *   depends on the update log, which compaction folds away. `auto` versions
 *   are unique per surface and log position (`seq`); `named` ones are kept
 *   whatever the plan's retention.
 * - `version_cursors`: per Y document, how far the log has been turned into
 *   versions (`upto_seq`), where history begins, and the editing sessions
 *   still open (one per principal) so the next pass can extend them.
 * - `document_holds`: the lowest log position handed out as a base version
 *   (`ETag`) per document and time bucket; compaction does not fold past a
 *   live hold, so a stale write can still be merged against its base.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table surface_versions (
      id text primary key,
      workspace_id text not null references workspaces(id) on delete cascade,
      surface_id text not null,
      document text not null,
      kind text not null check (kind in ('auto', 'named')),
      name text,
      seq bigint not null,
      start_point boolean not null default false,
      created_at timestamptz not null,
      principal_type text,
      principal_id text,
      editors jsonb not null default '[]'::jsonb,
      changes jsonb not null default '{}'::jsonb,
      content bytea not null,
      content_bytes integer not null
    )
  `.execute(db);
  await sql`create unique index surface_versions_auto_idx on surface_versions (surface_id, seq) where kind = 'auto'`.execute(db);
  await sql`create index surface_versions_list_idx on surface_versions (surface_id, seq desc, kind desc, id desc)`.execute(db);
  await sql`create index surface_versions_retention_idx on surface_versions (created_at) where kind = 'auto'`.execute(db);
  await sql`create index surface_versions_workspace_idx on surface_versions (workspace_id)`.execute(db);
  await sql`
    create table version_cursors (
      document text primary key,
      upto_seq bigint not null,
      history_from_seq bigint not null,
      history_from timestamptz,
      sessions jsonb not null default '{}'::jsonb
    )
  `.execute(db);
  await sql`
    create table document_holds (
      document text not null,
      bucket timestamptz not null,
      seq bigint not null,
      primary key (document, bucket)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists document_holds, version_cursors, surface_versions`.execute(db);
}
