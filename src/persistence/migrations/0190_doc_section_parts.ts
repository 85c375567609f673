import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Doc sections searched in parts. The trigram index moves from each whole
 * section (`doc_sections.search_text`, migration 0040) to
 * `doc_section_parts`: the section's searched text (heading, newline, text)
 * cut into parts of about 1-4 KB, each with the 100 characters before it,
 * keyed by the md5 of its searched text. A keystroke in a 100 KB section
 * then indexes the one or two parts it changed, not the whole section
 * again (a 100 KB row's trigram insert held the embedded database's
 * serving thread 25-50 ms: docs/PERFORMANCE.md, issue 38, session 24).
 * Sections stored before this migration become one part each, their whole
 * searched text; the next projection of their doc cuts them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table doc_section_parts (
      workspace_id text not null references workspaces(id) on delete cascade,
      surface_id text not null,
      idx integer not null,
      hash text not null,
      search_text text not null,
      primary key (surface_id, idx, hash)
    )
  `.execute(db);
  await sql`create index doc_section_parts_workspace_idx on doc_section_parts (workspace_id)`.execute(db);
  await sql`create index doc_section_parts_search_trgm_idx on doc_section_parts using gin (search_text gin_trgm_ops)`.execute(db);
  await sql`
    insert into doc_section_parts (workspace_id, surface_id, idx, hash, search_text)
    select workspace_id, surface_id, idx, md5(search_text), search_text from doc_sections
  `.execute(db);
  await sql`alter table doc_sections drop column search_text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table doc_sections add column search_text text generated always as (coalesce(heading, '') || chr(10) || text) stored`.execute(db);
  await sql`create index doc_sections_search_trgm_idx on doc_sections using gin (search_text gin_trgm_ops)`.execute(db);
  await sql`drop table if exists doc_section_parts`.execute(db);
}
