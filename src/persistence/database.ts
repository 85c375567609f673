import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, sql, type Transaction } from 'kysely';
import type pg from 'pg';
import { whenNeeded } from '../lib/when-needed';
import { startMark } from '../lib/start-marks';
import { markSingleSession } from './document-log-heads';
import { leaseEmbeddedInstance, leaseSharedInstance, type InstanceLease } from './instances';
import type { PGliteStorage } from './durable-fs';
import { createPGlite } from './pglite-instance';
import { pgliteDirOf } from './pglite-template';
import { PGliteThread } from './pglite-thread';
import { migrations } from './migrations/index';
import { PGliteDialect } from './pglite-dialect';
import type { Database } from './schema';
import { WriteEpochs } from './write-epochs';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A repository function takes either the database or an open transaction. */
export type Executor = Db | Tx;

export type DatabaseHandle = {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Moves on every write that a cached read may depend on (src/persistence/write-epochs.ts). */
  epochs: WriteEpochs;
  ping(): Promise<boolean>;
  /** Numbers this process as a sync instance and keeps it alive for others to see (src/persistence/instances.ts). */
  leaseInstance(name: string, onLost?: (error: unknown) => void): Promise<InstanceLease>;
  close(): Promise<void>;
};

const INT8_OID = 20;

/**
 * Opens Postgres when a URL is given, else embedded PGlite in `dataDir/pglite`,
 * and runs pending migrations either way: both dialects share one migration set.
 * `pgliteTemplate`: a migrated data directory to copy when `dataDir` holds
 * none yet (src/persistence/pglite-template.ts), instead of creating one.
 */
export async function openDatabase(options: { databaseUrl?: string; dataDir: string; migrate?: boolean; pgliteTemplate?: string; pgliteThread?: boolean }): Promise<DatabaseHandle> {
  const handle = options.databaseUrl
    ? openPostgres(options.databaseUrl)
    : await openPGlite(pgliteDirOf(options.dataDir), options.pgliteTemplate, options.pgliteThread);
  // A restore migrates itself: first to the archive's schema, then on (src/domain/backup.ts).
  if (options.migrate === false) return handle;
  try {
    await migrateToLatest(handle.db);
    startMark('migrations checked');
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

function kysely(dialect: ConstructorParameters<typeof Kysely<Database>>[0]['dialect'], epochs: WriteEpochs): Db {
  // Nested keys are kept: JSON columns hold user data (row cells) whose keys are not ours.
  return new Kysely<Database>({ dialect: epochs.watch(dialect), plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })] });
}

function openPostgres(url: string): DatabaseHandle {
  const pg = whenNeeded<typeof import('pg')>('pg');
  // Counts and identities are int8; they stay far below 2^53, so plain numbers are safe.
  pg.types.setTypeParser(INT8_OID, (value: string) => Number(value));
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client dropped by the server (restart, failover) must not crash the process; the pool reconnects.
  pool.on('error', () => {});
  const epochs = new WriteEpochs();
  const db = kysely(new PostgresDialect({ pool }), epochs);
  return {
    db,
    kind: 'postgres',
    epochs,
    ping: () => ping(db),
    leaseInstance: (name, onLost) => leaseSharedInstance(db, url, name, onLost),
    close: () => db.destroy(),
  };
}

/** Unset: the durable layer of ./durable-fs.ts. */
let pgliteStorage: PGliteStorage | null = null;

/**
 * Replaces how PGlite stores its data in this process (before it opens the
 * database): test/helpers/power-cut-server.ts runs the server over a file
 * system that simulates power loss, the durability benchmark over PGlite as shipped.
 */
export function usePGliteStorage(storage: PGliteStorage): void {
  pgliteStorage = storage;
}

/**
 * PGlite in a thread of its own when asked (`EMBEDDED_DATABASE_THREAD`,
 * ./pglite-thread.ts), else in this one; always in this one when a test
 * replaced its storage (a file layer is not something a thread can be sent).
 */
async function openPGlite(dir: string, template: string | undefined, thread: boolean | undefined): Promise<DatabaseHandle> {
  const ownThread = pgliteStorage === null && thread === true;
  const pglite = ownThread ? await PGliteThread.open(dir, template) : await createPGlite(dir, template, pgliteStorage ?? undefined);
  const epochs = new WriteEpochs();
  const db = kysely(new PGliteDialect(pglite), epochs);
  // One process, one session: appends to a document log cannot interleave (document-log-heads.ts).
  markSingleSession(db);
  return {
    db,
    kind: 'pglite',
    epochs,
    ping: () => ping(db),
    leaseInstance: (name) => leaseEmbeddedInstance(db, name),
    close: async () => {
      await db.destroy();
      // Kysely destroys a driver only once a query ran; a handle opened and closed unused must still release the directory.
      if (!pglite.closed) await pglite.close();
    },
  };
}

async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether every migration of this build has run: one query, where the
 * migrator checks its tables, takes its lock and reads them at every start.
 */
async function upToDate(db: Kysely<any>): Promise<boolean> {
  try {
    const done = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const names = new Set(done.rows.map((row) => row.name));
    return knownMigrations().every((name) => names.has(name));
  } catch {
    // No migration table yet: a new database.
    return false;
  }
}

/**
 * For the build's template (scripts/build.ts) only: drops initdb's template0
 * and template1, which Trellis never uses (it runs in the `postgres`
 * database and never creates one). They are 600 of the template's 1,366
 * files, and a fresh DATA_DIR's first start creates every file it copies:
 * ~0.5 ms of system CPU a file on the machine measured (docs/PERFORMANCE.md, "h19-start").
 */
export async function dropTemplateDatabases(db: Db): Promise<void> {
  for (const name of ['template0', 'template1']) {
    await sql`alter database ${sql.id(name)} with is_template false`.execute(db);
    await sql`drop database ${sql.id(name)}`.execute(db);
  }
}

/** The names of every migration this build knows. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

/** Runs the pending migrations among `only` (default: all), so a restore can stop at an archive's schema. */
export async function migrateToLatest(db: Kysely<any>, only?: readonly string[]): Promise<void> {
  if (!only && (await upToDate(db))) return;
  const chosen = only ? Object.fromEntries(Object.entries(migrations).filter(([name]) => only.includes(name))) : migrations;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => chosen },
    // Migration numbers are reserved per area (0010 comments, 0020 webhooks, ...), so an
    // installation that already ran a later area's migration still takes an earlier number
    // that lands afterwards; each migration touches only its own tables.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? 'unknown error'}`);
  }
}
