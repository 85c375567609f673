import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';
import { RedisOutage } from './redis-outage';

export type TwoInstances = {
  /** A real server process, so a test can SIGKILL it. */
  a: ServerProcess;
  /** In this process; it reaches Redis through `outage`, a proxy a test can cut (an outage for B alone). */
  b: TestApp;
  outage: RedisOutage;
  close(): Promise<void>;
};

/**
 * Two Trellis instances on one fresh Postgres database and the shared test
 * Redis (TEST_DATABASE_URL, TEST_REDIS_URL), as behind a load balancer.
 * `env` is added to both instances' environment.
 */
export async function startTwoInstances(env: Record<string, string> = {}): Promise<TwoInstances> {
  const store = await freshDataStore();
  const outage = await RedisOutage.start(process.env.TEST_REDIS_URL!);
  const common = {
    DATABASE_URL: store.databaseUrl!,
    REDIS_URL: process.env.TEST_REDIS_URL!,
    // Each run its own namespace on the shared Redis.
    REDIS_PREFIX: `trellis-test-${randomBytes(4).toString('hex')}:`,
    // Every instance must open the signing secrets any other sealed.
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    ...env,
  };
  const aDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-a-'));
  const bDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-b-'));
  const [a, b] = await Promise.all([
    startServerProcess({ ...common, DATA_DIR: aDataDir }),
    startTestApp({ dataDir: bDataDir, databaseUrl: store.databaseUrl, env: { ...common, REDIS_URL: outage.url } }),
  ]);
  return {
    a,
    b,
    outage,
    close: async () => {
      await a.kill();
      await b.close();
      await outage.close();
      for (const dir of [aDataDir, bDataDir]) await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
      await store.dispose();
    },
  };
}
