import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { markSingleSession } from './document-log-heads';
import { leaseEmbeddedInstance, leaseSharedInstance, type InstanceLease } from './instances';
import { durableStorage, type PGliteStorage } from './durable-fs';
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
 */
export async function openDatabase(options: { databaseUrl?: string; dataDir: string; migrate?: boolean }): Promise<DatabaseHandle> {
  const handle = options.databaseUrl
    ? openPostgres(options.databaseUrl)
    : await openPGlite(path.join(options.dataDir, 'pglite'));
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

let pgliteStorage: PGliteStorage = durableStorage;

/**
 * Replaces how PGlite stores its data in this process (before it opens the
 * database): test/helpers/power-cut-server.ts runs the server over a file
 * system that simulates power loss, the durability benchmark over PGlite as shipped.
 */
export function usePGliteStorage(storage: PGliteStorage): void {
  pgliteStorage = storage;
}

async function openPGlite(dir: string): Promise<DatabaseHandle> {
  await fs.mkdir(dir, { recursive: true });
  const storage = pgliteStorage;
  const fresh = !(await fs.stat(path.join(dir, 'PG_VERSION')).catch(() => null));
  const pglite = await PGlite.create({
    fs: storage.filesystem(dir),
    startParams: storage.startParams,
    // Search's trigram indexes (migration 0040); Postgres has it in contrib.
    extensions: { pg_trgm },
    parsers: { [INT8_OID]: (value: string) => Number(value) },
  });
  // initdb's files reach the directory without fsync; the first commit must not stand on them unflushed.
  if (fresh) storage.syncNewDataDir?.(dir);
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

/** The names of every migration this build knows. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

/** Runs the pending migrations among `only` (default: all), so a restore can stop at an archive's schema. */
export async function migrateToLatest(db: Kysely<any>, only?: readonly string[]): Promise<void> {
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
