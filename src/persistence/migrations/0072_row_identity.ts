import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * A row id is chosen by whoever writes the table document, sync clients
 * included, so two workspaces can hold the same id. The row projection's
 * identity becomes (workspace, row id): one workspace's row can no longer
 * overwrite, delete or count as another's. Existing rows were unique by id
 * alone, so they are unique by the pair.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table table_rows drop constraint table_rows_pkey`.execute(db);
  await sql`alter table table_rows add constraint table_rows_pkey primary key (workspace_id, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table table_rows drop constraint table_rows_pkey`.execute(db);
  await sql`alter table table_rows add constraint table_rows_pkey primary key (id)`.execute(db);
}
