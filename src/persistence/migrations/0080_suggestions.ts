import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Suggestions (docs/SUGGESTIONS.md). The suggested change itself lives in
 * the surface's Y document (marks in a doc body, an entry beside the rows of
 * a table); this projection holds what lists and decisions need: who
 * suggested it, its status and who decided it, and the summary frozen at the
 * decision. The observer writes a row when a suggestion first appears in a
 * document, whoever made it. An API key may be limited to suggesting.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('suggestions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('surface_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('row_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open'))
    .addColumn('author_type', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_by_type', 'text')
    .addColumn('decided_by_id', 'text')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`create index suggestions_by_surface on suggestions (workspace_id, status, created_at)`.execute(db);
  await sql`alter table api_keys add column suggest_only boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys drop column suggest_only`.execute(db);
  await db.schema.dropTable('suggestions').execute();
}
