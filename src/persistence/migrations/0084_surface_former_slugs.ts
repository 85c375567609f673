import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * A surface's address follows its name: a rename changes the slug, and the
 * slugs it had before are kept here, newest first, so old links and API
 * clients that hold one still reach it (docs/WORKSPACES.md "Surface
 * addresses"). They stay reserved for it while it lives.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table surfaces add column former_slugs text[] not null default '{}'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table surfaces drop column if exists former_slugs`.execute(db);
}
