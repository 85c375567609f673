import { WaitingPeriodicJob } from '../lib/periodic-job';
import { quietMoment, type QuietMoment } from '../lib/quiet-moment';
import { analyzeTable, tablesDueForAnalyze } from '../persistence/statistics';
import type { Services } from './services';

/**
 * When a timed pass analyzes: each table once the serving thread has had a
 * quiet second (busy under a fifth of it), or after fifteen minutes of waiting
 * anyway. PGlite runs ANALYZE in the serving thread, in one synchronous
 * call: on a server that has just taken 100,000 rows, `analyze events`
 * held it 0.2-2 s and `analyze table_rows` 0.4-1 s (load 6-7), a stall
 * for every client typing then (docs/PERFORMANCE.md "h18-stall").
 */
export const ANALYZE_WHEN: QuietMoment = { windowMs: 1_000, busyShare: 0.2, maxWaitMs: 15 * 60 * 1000 };

/**
 * Keeps the embedded database's planner statistics fresh, as autovacuum
 * does on a real Postgres (which this job leaves alone): ten seconds after
 * start and then every minute, the tables whose rows changed enough since
 * their last ANALYZE are analyzed, one at a time, each in a quiet moment
 * of the serving thread (`ANALYZE_WHEN`; `runOnce`, asked for, does not
 * wait). A pass answers the tables it analyzed.
 */
export class PlannerStatisticsJob extends WaitingPeriodicJob<string[]> {
  constructor(services: Services, timing = { intervalMs: 60 * 1000, firstRunAfterMs: 10 * 1000 }, when: QuietMoment = ANALYZE_WHEN) {
    // Only the embedded database needs it: Postgres runs autovacuum.
    const enabled = services.config.databaseUrl === undefined;
    super(
      enabled,
      async ({ scheduled, stopping }) => {
        if (!enabled) return [];
        const due = await tablesDueForAnalyze(services.db);
        const analyzed: string[] = [];
        for (const table of due) {
          if (scheduled && !(await quietMoment(when, stopping))) break;
          await analyzeTable(services.db, table);
          analyzed.push(table);
        }
        if (analyzed.length > 0) services.log.debug({ tables: analyzed }, 'planner statistics refreshed');
        return analyzed;
      },
      (error) => services.log.warn({ err: error }, 'planner statistics pass failed'),
      timing,
    );
  }
}
