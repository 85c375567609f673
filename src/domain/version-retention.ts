import { capsFor, PLAN_NAMES } from '../limits/plans';
import { deleteExpiredVersions } from '../persistence/versions';
import type { Services } from './services';
import { pruneBaseHolds } from '../sync/version-index';

const DAY_MS = 24 * 60 * 60_000;
const EVERY_MS = 60 * 60_000;

/**
 * Keeps version history within each plan's window: automatic versions
 * older than the plan's `versionRetentionDays` go (named versions never),
 * and base holds past their hour are dropped. Started and stopped by the
 * app; `runOnce` is what the timer calls (tests call it with a ManualClock).
 */
export class VersionRetention {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly services: Services) {}

  start() {
    this.timer ??= setInterval(() => {
      this.runOnce().catch((error) => this.services.log.warn({ err: error }, 'version retention failed; will try again'));
    }, EVERY_MS).unref();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async runOnce(): Promise<{ removed: number }> {
    const now = this.services.clock.now().getTime();
    let removed = 0;
    for (const plan of PLAN_NAMES) {
      const days = capsFor(plan).versionRetentionDays;
      if (days !== null) removed += await deleteExpiredVersions(this.services.db, plan, new Date(now - days * DAY_MS));
    }
    await pruneBaseHolds(this.services.db, new Date(now));
    if (removed > 0) this.services.log.info({ removed }, 'removed automatic versions past their retention');
    return { removed };
  }
}
