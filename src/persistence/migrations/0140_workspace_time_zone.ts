import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * A workspace's time zone (docs/FORMULAS.md "Time zone"): the IANA zone
 * TODAY() and NOW() read in. The table document holds a copy that every
 * reader computes with; this column is the record.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workspaces add column time_zone text not null default 'UTC'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workspaces drop column if exists time_zone`.execute(db);
}
