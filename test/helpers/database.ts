import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/persistence/database';
import { eventually } from './sync';
import { copyTree } from '../../src/persistence/pglite-template';

/**
 * Test databases. A fresh PGlite directory takes seconds to initialise, so
 * global setup migrates one template and every test copies it. On Postgres
 * (TEST_DATABASE_URL) each test app gets its own database cloned from a
 * migrated template database.
 */

// One template per test run (named by the runner's pid), so concurrent runs never share one.
const RUN_ID = process.env.TRELLIS_TEST_RUN_ID ?? String(process.pid);
const templateDirOf = (runId: string) => path.resolve(`.test-data/template-${runId}`);
export const TEMPLATE_DIR = templateDirOf(RUN_ID);
const templateDatabase = (runId: string) => `trellis_test_template_${runId}`;
const TEMPLATE_DB = templateDatabase(RUN_ID);

export function testDatabaseUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

export async function prepareTemplate(): Promise<void> {
  // Workers inherit this, so they find the template this process creates.
  process.env.TRELLIS_TEST_RUN_ID = RUN_ID;
  const url = testDatabaseUrl();
  if (url) {
    await withAdminClient(url, async (client) => {
      await client.query(`drop database if exists ${TEMPLATE_DB} with (force)`);
      await client.query(`create database ${TEMPLATE_DB}`);
    });
    const handle = await openDatabase({ databaseUrl: withDatabase(url, TEMPLATE_DB), dataDir: os.tmpdir() });
    await handle.close();
    return;
  }
  await fs.rm(TEMPLATE_DIR, { recursive: true, force: true });
  const handle = await openDatabase({ dataDir: TEMPLATE_DIR });
  await handle.close();
}

export async function removeTemplate(): Promise<void> {
  await removeRun(RUN_ID);
}

/**
 * What a run made and may have left: its embedded database template
 * (`.test-data/template-<run>`, tens of MB) and, on Postgres, its databases
 * (`removeRunDatabases`). Benches start runs of their own (each bench
 * server, and the in-process benches' one): a developer's checkout kept
 * 36 templates, 1.5 GB, that nothing removed (session 24).
 */
export async function removeRun(runId: string, url: string | undefined = testDatabaseUrl()): Promise<void> {
  await removeRunDatabases(runId, url);
  await fs.rm(templateDirOf(runId), { recursive: true, force: true });
}

/**
 * On Postgres, a run's template and every database of it that a test left
 * behind (one that failed before its dispose, or never disposed), or that a
 * bench server left when it stopped: a developer's cluster kept hundreds of
 * them, which autovacuum then visits. `url`: the cluster, where it is not
 * this process's TEST_DATABASE_URL (a bench given `--database-url`).
 */
export async function removeRunDatabases(runId: string, url: string | undefined = testDatabaseUrl()): Promise<void> {
  if (!url) return;
  // freshDataStore's names, in a LIKE pattern: the run's id with its underscores taken literally.
  const pattern = `trellis\\_test\\_${runId.replace(/_/g, '\\_')}\\_%`;
  await withAdminClient(url, async (client) => {
    const left = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [pattern]);
    for (const { datname } of left.rows) await client.query(`drop database if exists ${datname} with (force)`);
    await client.query(`drop database if exists ${templateDatabase(runId)} with (force)`);
  }).catch(() => {});
}

/** A data dir (always) and, on Postgres, a database URL for one test app. */
export async function freshDataStore(): Promise<{ dataDir: string; databaseUrl?: string; dispose(): Promise<void> }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-test-'));
  const url = testDatabaseUrl();
  if (url) {
    // The run's id in the name: global teardown drops what a test left (removeTemplate).
    const name = `trellis_test_${RUN_ID}_${path.basename(dataDir).slice(-6).replace(/[^a-z0-9]/gi, 'x').toLowerCase()}`;
    await withAdminClient(url, (client) => client.query(`create database ${name} template ${TEMPLATE_DB}`));
    return {
      dataDir,
      databaseUrl: withDatabase(url, name),
      dispose: async () => {
        await withAdminClient(url, (client) => client.query(`drop database if exists ${name} with (force)`)).catch(() => {});
        await fs.rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  await copyTree(TEMPLATE_DIR, dataDir);
  return { dataDir, dispose: () => fs.rm(dataDir, { recursive: true, force: true }) };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withAdminClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A test's second transaction, started while its first holds what the
 * second needs: on Postgres the second runs on a connection of its own, and
 * this waits until it shows in `pg_locks` as waiting for a lock. The
 * embedded database's one session runs the two in turn: nothing to wait for.
 */
export async function untilBlockedBehindLock(services: { db: Db; database: { kind: string } }): Promise<void> {
  if (services.database.kind !== 'postgres') return;
  await eventually(async () => {
    const { rows } = await sql<{ waiting: number }>`select count(*)::int as waiting from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()`.execute(services.db);
    return rows[0]!.waiting > 0;
  }, 10_000);
}
