import { DocumentObserver } from '../events/observer';
import type { Services } from '../services';
import { SyncEngine } from './engine';
import { RedisSyncRelay } from './redis-relay';

/**
 * The sync engine with the one observer that turns its changes into events,
 * and, given Redis, the relay that shares its documents with other instances.
 */
export function createSyncEngine(
  services: Omit<Services, 'sync'> & { sync?: SyncEngine },
  redis?: { url: string; prefix: string },
): { engine: SyncEngine; relay: RedisSyncRelay | null } {
  const relay: RedisSyncRelay | null = redis
    ? new RedisSyncRelay({ redisUrl: redis.url, prefix: redis.prefix, committed: (name: string): Promise<void> => engine.committed(name), log: services.log, metrics: services.metrics })
    : null;
  const engine: SyncEngine = new SyncEngine(services as Services, { extensions: relay ? [relay] : [] });
  engine.setObserver(new DocumentObserver(services as Services, engine));
  return { engine, relay };
}

export { SyncEngine, SYNC_PATH } from './engine';
export { serverOrigin, type ServerOrigin } from './origins';
