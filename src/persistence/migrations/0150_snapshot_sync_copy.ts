import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * The snapshot's state as the sync protocol sends it (a V1 update), kept
 * beside the V2 state for large documents: the first client of an unloaded
 * document is answered with it as stored, instead of converting the
 * snapshot on the serving thread while the client waits
 * (src/sync/stored-copy.ts). Null when not written; cleared whenever the
 * snapshot is replaced.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table document_snapshots add column sync_state bytea`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table document_snapshots drop column if exists sync_state`.execute(db);
}
