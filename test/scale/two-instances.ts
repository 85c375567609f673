import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import type * as Y from 'yjs';
import { cookieWebSocket, eventually } from '../helpers/sync';
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
  /** A's environment: another process started with it is another instance A (after A was killed, say). */
  env: Record<string, string>;
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
    env: { ...common, DATA_DIR: aDataDir },
    close: async () => {
      await a.kill();
      await b.close();
      await outage.close();
      for (const dir of [aDataDir, bDataDir]) await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
      await store.dispose();
    },
  };
}

/**
 * What a load balancer does after a failover: the client's Y document
 * connects to `baseUrl` on a new socket, and resends whatever was never
 * acknowledged. Resolves once synced with nothing left unacknowledged; the
 * answer closes the provider and its socket.
 */
export async function reconnectDocument(baseUrl: string, documentName: string, doc: Y.Doc, cookie: string, timeoutMs: number): Promise<() => void> {
  const socket = new HocuspocusProviderWebsocket({ url: `${baseUrl.replace(/^http/, 'ws')}/api/sync`, WebSocketPolyfill: cookieWebSocket({ cookie }) });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name: documentName, document: doc, token: '' });
  provider.attach();
  await eventually(() => provider.isSynced && provider.unsyncedChanges === 0, timeoutMs);
  return () => {
    provider.destroy();
    socket.destroy();
  };
}
