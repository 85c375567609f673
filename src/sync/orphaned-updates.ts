import type { Logger } from 'pino';
import type { Db } from '../persistence/database';
import { listOrphanedUpdates, type InstanceLease } from '../persistence/instances';

/** How often every instance looks for updates whose instance died before deriving them. */
export const ORPHAN_SWEEP_MS = 2_000;
/** A document that could not be derived (too large to load, a failing commit) is tried again after this long. */
const RETRY_AFTER_MS = 30_000;

/**
 * Every logged update is derived (events, projections) once, by a live
 * instance, within seconds of its writer dying (issue 33). The instance that
 * logs a sync client's update derives it; if it dies first, the update stays
 * underived in the log, stamped with a number that is no longer alive
 * (src/persistence/instances.ts). Every instance looks for such updates
 * every ORPHAN_SWEEP_MS and derives them through the engine, whether or not
 * anyone has their document open; deriving claims them under the document's
 * log lock, so two instances sweeping at once derive each update once.
 */
export class OrphanedUpdates {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | null = null;
  /** Documents whose derivation failed, and when they may be tried again. */
  private readonly failed = new Map<string, number>();

  constructor(
    private readonly deps: {
      db: Db;
      instance: InstanceLease;
      log: Logger;
      /** Derives the document's orphaned updates in its persistence queue (loading it if needed); throws if it could not. */
      derive(documentName: string): Promise<void>;
    },
  ) {}

  start() {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), ORPHAN_SWEEP_MS).unref();
    // An instance starting after a crash derives at once what the dead one left.
    void this.sweep();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass over the log; a pass still running is awaited instead of starting another. */
  sweep(): Promise<void> {
    this.sweeping ??= this.pass().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  /** The seqs of a document's updates that no live instance will derive. */
  async of(documentName: string): Promise<number[]> {
    const orphaned = await listOrphanedUpdates(this.deps.db, await this.deps.instance.alive(), { document: documentName });
    return orphaned.get(documentName) ?? [];
  }

  private async pass() {
    let orphaned: Map<string, number[]>;
    try {
      orphaned = await listOrphanedUpdates(this.deps.db, await this.deps.instance.alive());
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not look for updates left underived by a dead instance; will try again');
      return;
    }
    const now = Date.now();
    for (const [documentName, seqs] of orphaned) {
      if ((this.failed.get(documentName) ?? 0) > now) continue;
      try {
        await this.deps.derive(documentName);
        this.failed.delete(documentName);
        this.deps.log.info({ documentName, updates: seqs.length }, 'derived updates an instance logged but did not live to derive');
      } catch (error) {
        this.failed.set(documentName, now + RETRY_AFTER_MS);
        this.deps.log.error({ err: error, documentName, updates: seqs.length }, 'could not derive updates left by a dead instance; will try again');
      }
    }
  }
}
