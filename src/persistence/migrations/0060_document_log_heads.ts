import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * One row per document log: the head that every append to the document and
 * every compaction of it locks first (`select ... for update` via an upsert),
 * so that on a shared Postgres two instances holding the same document take
 * turns. The log's `seq` is a global identity: without the lock, an append
 * could draw a smaller `seq` than one committed before it, and a compaction
 * in between would fold past it and never load it again.
 *
 * - `writer`, `updated_at`: the instance that appended or compacted last under
 *   the lock, and when (diagnostics).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table document_log_heads (
      document text primary key,
      writer text,
      updated_at timestamptz not null default now()
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists document_log_heads`.execute(db);
}
