import type { Executor } from './database';

/** Many Y updates appended to the durable log in one statement per chunk (group commit). */

// Two parameters a row; Postgres allows 65,535 parameters per statement.
const ROWS_PER_STATEMENT = 10_000;

export async function appendUpdates(db: Executor, rows: ReadonlyArray<{ document: string; update: Uint8Array }>): Promise<void> {
  for (let from = 0; from < rows.length; from += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(from, from + ROWS_PER_STATEMENT);
    await db
      .insertInto('documentUpdates')
      .values(chunk.map((r) => ({ document: r.document, update: r.update })))
      .execute();
  }
}
