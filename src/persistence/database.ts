import fs from 'node:fs/promises';
import path from 'node:path';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, sql, type Transaction } from 'kysely';
import type pg from 'pg';
import { whenNeeded } from '../lib/when-needed';
import { markSingleSession } from './document-log-heads';
import { leaseEmbeddedInstance, leaseSharedInstance, type InstanceLease } from './instances';
import type { PGliteStorage } from './durable-fs';
import { copyTemplate } from './pglite-template';
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
export async function openDatabase(options: { databaseUrl?: string; dataDir: string; migrate?: boolean; pgliteTemplate?: string }): Promise<DatabaseHandle> {
  const handle = options.databaseUrl
    ? openPostgres(options.databaseUrl)
    : await openPGlite(path.join(options.dataDir, 'pglite'), options.pgliteTemplate);
  // A restore migrates itself: first to the archive's schema, then on (src/domain/backup.ts).
  if (options.migrate === false) return handle;
  try {
    await migrateToLatest(handle.db);
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

/**
 * Postgres's memory inside PGlite. WebAssembly memory only grows: whatever
 * the database touches once stays resident for the life of the process. The
 * default 128 MB of shared buffers cost ~140 MB resident from the first
 * query on (an empty server: 375 -> 229 MB for a bare open); at 16 MB,
 * reads past the buffers come from the operating system's page cache
 * through the file layer, which a query mix over 100,000 rows did not
 * measurably slow (docs/PERFORMANCE.md, "Footprint"). Index builds and
 * VACUUM take maintenance_work_mem (default 64 MB) once and keep it.
 */
export const PGLITE_MEMORY_PARAMS = ['-c', 'shared_buffers=16MB', '-c', 'maintenance_work_mem=16MB'];

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

async function openPGlite(dir: string, template?: string): Promise<DatabaseHandle> {
  await fs.mkdir(dir, { recursive: true });
  // PGlite is loaded only here: a server on Postgres never loads it.
  const [{ PGlite }, { pg_trgm }, { durableStorage }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('./durable-fs'),
  ]);
  const storage = pgliteStorage ?? durableStorage;
  let fresh = !(await fs.stat(path.join(dir, 'PG_VERSION')).catch(() => null));
  if (fresh && template && (await copyTemplate(template, dir, storage.syncNewDataDir))) fresh = false;
  const pglite = await PGlite.create({
    fs: storage.filesystem(dir),
    startParams: [...storage.startParams, ...PGLITE_MEMORY_PARAMS],
    // Search's trigram indexes (migration 0040); Postgres has it in contrib.
    extensions: { pg_trgm },
    parsers: { [INT8_OID]: (value: string) => Number(value) },
  });
  // initdb's files reach the directory without fsync; the first commit must not stand on them unflushed.
  if (fresh) await storage.syncNewDataDir?.(dir);
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
