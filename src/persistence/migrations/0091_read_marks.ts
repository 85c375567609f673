import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * What a person has read of their mentions inbox, kept on the server so it
 * follows them to every device (docs/COMMENTS.md "Read marks"): everything
 * created up to `read_through` ("Mark all read"), and the comments read one
 * by one after it. Marks go with their comment or their principal.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table read_through (
      principal_id text primary key references principals(id) on delete cascade,
      read_through timestamptz not null
    )
  `.execute(db);
  await sql`
    create table read_marks (
      principal_id text not null references principals(id) on delete cascade,
      comment_id text not null references comments(id) on delete cascade,
      read_at timestamptz not null,
      primary key (principal_id, comment_id)
    )
  `.execute(db);
  await sql`create index read_marks_comment_idx on read_marks (comment_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists read_marks`.execute(db);
  await sql`drop table if exists read_through`.execute(db);
}
