import fs from 'node:fs/promises';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import type { PGliteStorage } from './durable-fs';
import { copyTemplate } from './pglite-template';
import { startMark } from '../lib/start-marks';

const BYTEA_OID = 17;
const INT8_OID = 20;

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

/**
 * How much of a WebAssembly function V8 runs (roughly, bytes of code
 * executed) before it compiles the function again with its optimising
 * compiler; V8's default is 1,800,000. Opening the database runs much of
 * Postgres once, and at the default V8 optimises hundreds of functions that
 * will not run hot again: 0.25-0.4 s of CPU and ~45 MB resident at every
 * start. Each function is given its budget when the module is compiled
 * (inside `PGlite.create`), so a budget raised while PGlite opens delays
 * every function's first optimisation; the hot ones (a query's executor)
 * still reach it within seconds of load, and a query mix after the open ran
 * at the same CPU (docs/PERFORMANCE.md, issue 38 "h6-start"). Later budgets
 * come from the default again. Three of Postgres's largest functions reach
 * even this budget while the database opens; at the largest budget the flag
 * takes, their optimisation (0.6-0.8 s of CPU) left the start only to land
 * in the first seconds of load, where the benchmarks' REST and trace figures
 * paid for it (session 23), so it stays here.
 */
const OPENING_TIERING_BUDGET = 180_000_000;
const V8_TIERING_BUDGET = 1_800_000;

/**
 * Opens embedded PGlite on `dir` over `storage` (the durable file layer
 * unless a test replaced it), copying `template` into a fresh directory.
 * Runs in the serving thread or in the database thread (./pglite-thread.ts).
 */
export async function createPGlite(dir: string, template: string | undefined, storage?: PGliteStorage): Promise<PGlite> {
  await fs.mkdir(dir, { recursive: true });
  // PGlite is loaded only here: a server on Postgres never loads it.
  const [{ PGlite }, { pg_trgm }, { durableStorage }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('./durable-fs'),
  ]);
  const store = storage ?? durableStorage;
  startMark('PGlite modules loaded');
  let fresh = !(await fs.stat(path.join(dir, 'PG_VERSION')).catch(() => null));
  if (fresh && template && (await copyTemplate(template, dir, store.syncNewDataDir))) fresh = false;
  setFlagsFromString(`--wasm-tiering-budget=${OPENING_TIERING_BUDGET}`);
  const pglite = await PGlite.create({
    fs: store.filesystem(dir),
    startParams: [...store.startParams, ...PGLITE_MEMORY_PARAMS],
    // Search's trigram indexes (migration 0040); Postgres has it in contrib.
    extensions: { pg_trgm },
    // Counts and identities are int8; they stay far below 2^53, so plain numbers are safe.
    parsers: { [INT8_OID]: (value: string) => Number(value) },
    // A `bytea` parameter goes as the bytes themselves, in binary (PGlite's own serializer writes hex text, byte by byte, that Postgres then parses): ./bytea.ts.
    serializers: { [BYTEA_OID]: (bytes: Uint8Array) => bytes as unknown as string },
  }).finally(() => setFlagsFromString(`--wasm-tiering-budget=${V8_TIERING_BUDGET}`));
  startMark('PGlite open');
  // initdb's files reach the directory without fsync; the first commit must not stand on them unflushed.
  if (fresh) await store.syncNewDataDir?.(dir);
  return pglite;
}
