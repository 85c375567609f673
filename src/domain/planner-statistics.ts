import { analyzeTable, tablesDueForAnalyze } from '../persistence/statistics';
import type { Services } from './services';

/**
 * Keeps the embedded database's planner statistics fresh, as autovacuum
 * does on a real Postgres (which this job leaves alone): a minute after
 * start and then every minute, the tables whose rows changed enough since
 * their last ANALYZE are analyzed, one at a time.
 */
export class PlannerStatisticsJob {
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<string[]> | null = null;

  constructor(
    private readonly services: Services,
    private readonly options: { intervalMs: number; firstRunAfterMs: number } = { intervalMs: 60 * 1000, firstRunAfterMs: 10 * 1000 },
  ) {}

  /** Only the embedded database needs it: Postgres runs autovacuum. */
  get enabled(): boolean {
    return this.services.config.databaseUrl === undefined;
  }

  start() {
    if (this.timer || !this.enabled) return;
    const tick = () => void this.runOnce().catch((error) => this.services.log.warn({ err: error }, 'planner statistics pass failed'));
    this.first = setTimeout(tick, this.options.firstRunAfterMs).unref();
    this.timer = setInterval(tick, this.options.intervalMs).unref();
  }

  /** One pass now (the tables analyzed); a pass under way is joined rather than doubled. */
  runOnce(): Promise<string[]> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop() {
    if (this.first) clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
    this.first = this.timer = null;
    await this.running?.catch(() => {});
  }

  private async pass(): Promise<string[]> {
    if (!this.enabled) return [];
    const due = await tablesDueForAnalyze(this.services.db);
    for (const table of due) await analyzeTable(this.services.db, table);
    if (due.length > 0) this.services.log.debug({ tables: due }, 'planner statistics refreshed');
    return due;
  }
}
