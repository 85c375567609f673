import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Trigram indexes for search (case-insensitive substring, `ILIKE '%q%'`):
 * workspace names, the text of row cells, and doc sections. pg_trgm ships
 * with Postgres (contrib) and with PGlite, which loads it when the database
 * is opened. The searched text of rows and sections is a stored generated
 * column: computed once when the observer writes the projection (in the
 * write's own transaction), never at query time, and no writer has to
 * remember to fill it.
 */
const STATEMENTS = [
  `create extension if not exists pg_trgm`,
  // String and number cells, one per line, in key order. Lines keep a match
  // from spanning two cells; other types (checkbox, nested JSON) are not text.
  `create or replace function trellis_row_text(data jsonb) returns text
     language sql immutable parallel safe
     as $$
       select coalesce(string_agg(case jsonb_typeof(value) when 'string' then value #>> '{}' else value::text end, chr(10) order by key), '')
       from jsonb_each(data)
       where jsonb_typeof(value) in ('string', 'number')
     $$`,
  `alter table table_rows add column search_text text generated always as (trellis_row_text(data)) stored`,
  `create index table_rows_search_trgm_idx on table_rows using gin (search_text gin_trgm_ops)`,
  `alter table doc_sections add column search_text text generated always as (coalesce(heading, '') || chr(10) || text) stored`,
  `create index doc_sections_search_trgm_idx on doc_sections using gin (search_text gin_trgm_ops)`,
  `create index workspaces_name_trgm_idx on workspaces using gin (name gin_trgm_ops)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists workspaces_name_trgm_idx`.execute(db);
  await sql`alter table doc_sections drop column if exists search_text`.execute(db);
  await sql`alter table table_rows drop column if exists search_text`.execute(db);
  await sql`drop function if exists trellis_row_text(jsonb)`.execute(db);
}
