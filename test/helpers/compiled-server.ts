import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildServer, buildTemplate, SERVER_BUNDLE } from '../../scripts/build';
import { freshDataStore, testDatabaseUrl } from './database';
import { startServerProcess, type ServerProcess } from './server-process';

export type CompiledServer = { server: ServerProcess; dataDir: string; dispose(): Promise<void> };

/**
 * What `npm start` runs (dist/server/main.js, built when stale, and on the
 * embedded database the template a fresh DATA_DIR copies), started by
 * plain node on an empty DATA_DIR as on a fresh machine; on Postgres a
 * fresh database (the directory holds blobs and the outbox). `env` is
 * added to the process's environment.
 */
export async function startCompiledServer(env: Record<string, string> = {}): Promise<CompiledServer> {
  await buildServer({ ifStale: true });
  if (!testDatabaseUrl()) await buildTemplate({ ifStale: true });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-compiled-'));
  const store = testDatabaseUrl() ? await freshDataStore() : null;
  const server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: store?.databaseUrl ?? '', SMTP_URL: '', REDIS_URL: '', ...env }, { compiled: SERVER_BUNDLE, startTimeoutMs: 120_000 });
  return {
    server,
    dataDir,
    dispose: async () => {
      await server.kill('SIGTERM');
      await store?.dispose();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
