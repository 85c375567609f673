import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * No planner statistics for the JSON payload columns no query filters or
 * joins on: a row's cells (`table_rows.data`), an event's record
 * (`events.record`) and a run's change (`run_changes.change`). ANALYZE
 * sorted a sample of up to 30,000 of these documents by jsonb comparison to
 * build a histogram the planner never used (no predicate reads these
 * columns; the search column `table_rows.search_text` keeps its own). On the
 * embedded database ANALYZE runs in the serving thread (docs/PERFORMANCE.md,
 * issue 38, session 18 "the 100,000-row stall was PGlite's ANALYZE"):
 * `analyze table_rows` on 50,000 rows took 239-290 ms of CPU with the
 * payload's statistics and 83-88 ms without (session 19, h19-pauses). A
 * column's target of 0 leaves the rest of the table analyzed as before.
 */
const COLUMNS: Array<[table: string, column: string]> = [
  ['table_rows', 'data'],
  ['events', 'record'],
  ['run_changes', 'change'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, column] of COLUMNS) await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set statistics 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, column] of COLUMNS) await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set statistics -1`.execute(db);
}
