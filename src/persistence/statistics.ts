import { sql } from 'kysely';
import type { Executor } from './database';

/**
 * Planner statistics for the embedded database. PGlite runs no autovacuum,
 * so without these nothing ever runs ANALYZE and the planner keeps guessing
 * from an empty table: with 50,000 rows in one workspace, the row-meta
 * lookup of a 100-row page took 26 ms through the workspace index instead of
 * 0.5 ms through the primary key (docs/PERFORMANCE.md "Filtered pages").
 */

/** Tables whose rows changed enough since their last ANALYZE: autovacuum's own rule, 50 rows plus a tenth of the table. */
export async function tablesDueForAnalyze(db: Executor): Promise<string[]> {
  // The counters a backend keeps reach pg_stat_user_tables at most once a second: flushed first, so the pass sees the latest writes.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ relname: string }>`
    select relname from pg_stat_user_tables
    where schemaname = current_schema() and n_mod_since_analyze > 50 + 0.1 * n_live_tup
    order by n_mod_since_analyze desc`.execute(db);
  return rows.map((row) => row.relname);
}

/** ANALYZE samples at most 30,000 rows a table, so its cost does not grow with the table. */
export async function analyzeTable(db: Executor, table: string): Promise<void> {
  await sql`analyze ${sql.id(table)}`.execute(db);
}

/**
 * Bytes of WAL written since the last checkpoint's redo point: what a crash
 * would replay, and what `pg_wal` must keep. PGlite runs Postgres as a
 * single-user backend, which checkpoints only when asked (or at a clean
 * shutdown): neither the WAL volume nor a timer starts one there.
 */
export async function walSinceCheckpoint(db: Executor): Promise<number> {
  const { rows } = await sql<{ bytes: string | number }>`
    select (pg_current_wal_lsn() - redo_lsn)::int8 as bytes from pg_control_checkpoint()`.execute(db);
  return Number(rows[0]!.bytes);
}

/** A checkpoint: the data files brought up to the WAL and flushed, older WAL segments removed or recycled. */
export async function checkpoint(db: Executor): Promise<void> {
  await sql`checkpoint`.execute(db);
}
