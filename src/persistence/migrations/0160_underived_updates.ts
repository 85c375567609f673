import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * What is still to derive, kept beside the log instead of in it (issue 38).
 * A sync client's update was appended with `document_updates.derived` false
 * and rewritten once its events committed: every typed update written twice,
 * and not as a HOT update (the flag was in the partial index's predicate),
 * so a new heap tuple and two index entries each.
 *
 * - `underived_updates`: one row per append statement (per document and
 *   writer) that logged sync clients' updates, written by that statement:
 *   the sequence numbers whose events and projections are still to commit.
 *   Marking updates derived takes them out of their rows' arrays (an emptied
 *   row is deleted by the document's next mark); an update is underived
 *   exactly while its number is in a row of its document. `writer` is the
 *   instance that logged them (migration 0090; null: logged before it).
 * - `document_updates.derived` and its partial index go: the log's rows are
 *   written once, by their append.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table underived_updates (
      document text not null,
      writer integer,
      seqs bigint[] not null
    )
  `.execute(db);
  await sql`create index underived_updates_document_idx on underived_updates (document)`.execute(db);
  await sql`
    insert into underived_updates (document, writer, seqs)
    select document, writer, array_agg(seq order by seq) from document_updates where not derived group by document, writer
  `.execute(db);
  await sql`drop index if exists document_updates_underived_idx`.execute(db);
  await sql`alter table document_updates drop column derived`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table document_updates add column derived boolean not null default true`.execute(db);
  await sql`
    update document_updates u set derived = false
    from (select document, unnest(seqs) as seq from underived_updates) pending
    where u.document = pending.document and u.seq = pending.seq
  `.execute(db);
  await sql`create index document_updates_underived_idx on document_updates (document, seq) where not derived`.execute(db);
  await sql`drop table if exists underived_updates`.execute(db);
}
