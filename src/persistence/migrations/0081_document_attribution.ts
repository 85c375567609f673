import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Who made each item of a document, for the log compaction folds away
 * (docs/ATTRIBUTION.md). Every logged update names its principal; when
 * compaction folds updates into the snapshot and deletes them, it first
 * folds the clock ranges of their items, with those principals, into this
 * table, in the same transaction. Touching ranges of one client and one
 * principal are one row; ranges never overlap (the first update to bring
 * an item keeps it). A null principal is the system or unknown.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table document_attribution (
      document text not null,
      client bigint not null,
      clock_from bigint not null,
      clock_to bigint not null,
      principal_type text,
      principal_id text,
      primary key (document, client, clock_from)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists document_attribution`.execute(db);
}
