import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';

/**
 * A commit with nothing to write (a keystroke that only joins its typing
 * burst) opened and committed a transaction on the embedded database's
 * serving thread for nothing: `begin` now waits for the transaction's first
 * statement (src/persistence/pglite-dialect.ts). Counted by the database
 * itself (pg_stat_database), not by timing.
 */
const onPostgres = Boolean(testDatabaseUrl());

describe.skipIf(onPostgres)('transactions on the embedded database', () => {
  let store: Awaited<ReturnType<typeof freshDataStore>>;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    store = await freshDataStore();
    handle = await openDatabase({ dataDir: store.dataDir });
    await sql`create table tx_probe (n int)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await store?.dispose();
  });

  /** Transactions the database committed so far (each statement outside a transaction is one, these three included). */
  async function commits() {
    await sql`select pg_stat_force_next_flush()`.execute(handle.db);
    await sql`select pg_stat_clear_snapshot()`.execute(handle.db);
    const { rows } = await sql<{ commits: string }>`select xact_commit::text as commits from pg_stat_database where datname = current_database()`.execute(handle.db);
    return Number(rows[0]!.commits);
  }

  it('commits nothing for a transaction that sends no statement, and once for one that does', async () => {
    await commits();
    const before = await commits();
    for (let i = 0; i < 5; i++) await handle.db.transaction().execute(async () => {});
    const afterEmpty = await commits();
    expect(afterEmpty - before).toBe(3);
    for (let i = 0; i < 5; i++) await handle.db.transaction().execute((tx) => sql`insert into tx_probe values (${i})`.execute(tx));
    expect((await commits()) - afterEmpty).toBe(3 + 5);
    expect((await sql<{ n: number }>`select count(*)::int as n from tx_probe`.execute(handle.db)).rows[0]!.n).toBe(5);
  });

  it('still rolls back what a transaction wrote before it failed, and a failed first statement leaves the session usable', async () => {
    await expect(
      handle.db.transaction().execute(async (tx) => {
        await sql`insert into tx_probe values (100)`.execute(tx);
        await sql`insert into tx_probe values ('not a number')`.execute(tx);
      }),
    ).rejects.toThrow();
    await expect(handle.db.transaction().execute((tx) => sql`select * from no_such_table`.execute(tx))).rejects.toThrow();
    await expect(
      handle.db.transaction().execute(async (tx) => {
        await sql`insert into tx_probe values (101)`.execute(tx);
        throw new Error('given up');
      }),
    ).rejects.toThrow('given up');
    expect((await sql<{ n: number }>`select count(*)::int as n from tx_probe where n >= 100`.execute(handle.db)).rows[0]!.n).toBe(0);
    await handle.db.transaction().execute((tx) => sql`insert into tx_probe values (102)`.execute(tx));
    expect((await sql<{ n: number }>`select count(*)::int as n from tx_probe where n >= 100`.execute(handle.db)).rows[0]!.n).toBe(1);
  });
});
