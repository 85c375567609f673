import { DocumentObserver } from '../events/observer';
import type { Services } from '../services';
import { SyncEngine } from './engine';

/** The sync engine with the one observer that turns its changes into events. */
export function createSyncEngine(services: Omit<Services, 'sync'> & { sync?: SyncEngine }): SyncEngine {
  const engine = new SyncEngine(services as Services);
  engine.setObserver(new DocumentObserver(services as Services, engine));
  return engine;
}

export { SyncEngine, SYNC_PATH } from './engine';
export { serverOrigin, type ServerOrigin } from './origins';
