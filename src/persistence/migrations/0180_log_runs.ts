import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * `document_updates.first_seq`: a row of the update log may hold a run of
 * updates, numbered `first_seq` to `seq` with none between (null: the row
 * is one update, at `seq`). The embedded database appends a statement's
 * consecutive updates of one document, author, writer and run as one row
 * (src/persistence/document-log.ts says why); a run's `update` is its
 * updates framed, each after its length as a varuint. Rows logged before
 * stay single updates. Nullable without a default: no table rewrite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table document_updates add column first_seq bigint`.execute(db);
}

/** A run cannot go back to rows of one update in SQL (its frames are read in the server): going down with runs in the log is refused, not lost. */
export async function down(db: Kysely<any>): Promise<void> {
  const runs = await sql<{ n: string }>`select count(*)::text as n from document_updates where first_seq is not null`.execute(db);
  if (Number(runs.rows[0]?.n ?? 0) > 0) throw new Error('document_updates holds runs of updates (migration 0180): the log cannot go back to one update a row');
  await sql`alter table document_updates drop column first_seq`.execute(db);
}
