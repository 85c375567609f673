import { PeriodicJob } from '../lib/periodic-job';
import { analyzeTable, tablesDueForAnalyze } from '../persistence/statistics';
import type { Services } from './services';

/**
 * Keeps the embedded database's planner statistics fresh, as autovacuum
 * does on a real Postgres (which this job leaves alone): ten seconds after
 * start and then every minute, the tables whose rows changed enough since
 * their last ANALYZE are analyzed, one at a time. A pass answers the tables
 * it analyzed.
 */
export class PlannerStatisticsJob extends PeriodicJob<string[]> {
  /** Only the embedded database needs it: Postgres runs autovacuum. */
  readonly enabled: boolean;

  constructor(services: Services, timing = { intervalMs: 60 * 1000, firstRunAfterMs: 10 * 1000 }) {
    const enabled = services.config.databaseUrl === undefined;
    super(
      async () => {
        if (!enabled) return [];
        const due = await tablesDueForAnalyze(services.db);
        for (const table of due) await analyzeTable(services.db, table);
        if (due.length > 0) services.log.debug({ tables: due }, 'planner statistics refreshed');
        return due;
      },
      (error) => services.log.warn({ err: error }, 'planner statistics pass failed'),
      timing,
    );
    this.enabled = enabled;
  }

  override start() {
    if (this.enabled) super.start();
  }
}
