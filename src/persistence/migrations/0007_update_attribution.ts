import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Events derived at least once from every logged update, and who made each
 * update.
 *
 * - `document_updates.derived`: false while the events and projections of a
 *   sync client's update are not yet committed. A server change is logged in
 *   the same transaction as its events, so it is written derived. On load,
 *   underived updates are derived again; compaction never folds one.
 * - `document_updates.principal_type` / `principal_id`: the principal whose
 *   update it is (null for the system or unknown), for re-derivation and
 *   version history.
 * - `events.dedupe_key`: a stable key for events derived from a logged
 *   update (`<document>:<seq>:<n>`), so deriving it twice records it once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table document_updates add column derived boolean not null default true`.execute(db);
  await sql`alter table document_updates add column principal_type text`.execute(db);
  await sql`alter table document_updates add column principal_id text`.execute(db);
  await sql`create index document_updates_underived_idx on document_updates (document, seq) where not derived`.execute(db);
  await sql`alter table events add column dedupe_key text`.execute(db);
  await sql`create unique index events_dedupe_key_idx on events (dedupe_key) where dedupe_key is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists events_dedupe_key_idx`.execute(db);
  await sql`alter table events drop column if exists dedupe_key`.execute(db);
  await sql`drop index if exists document_updates_underived_idx`.execute(db);
  await sql`alter table document_updates drop column if exists principal_id`.execute(db);
  await sql`alter table document_updates drop column if exists principal_type`.execute(db);
  await sql`alter table document_updates drop column if exists derived`.execute(db);
}
