import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * A version that a restore made says so (docs/VERSIONS.md "Restore"):
 * `restored_from` holds the restored version's id, name and time, kept as
 * they were when it was restored, since retention may remove that version
 * later. Null for every other version.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table surface_versions add column restored_from jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table surface_versions drop column if exists restored_from`.execute(db);
}
