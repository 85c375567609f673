import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * A checkpoint per version cursor: the document's state (Yjs update V2) at
 * exactly `upto_seq`, written with the cursor in one transaction. The next
 * history pass starts from it and reads only the log after the cursor, and
 * compaction folding up to the cursor stores it as the snapshot, so neither
 * replays the log from the snapshot again (issue 21). Null for cursors
 * written before this migration: their next pass replays once and fills it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table version_cursors add column state bytea`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table version_cursors drop column if exists state`.execute(db);
}
