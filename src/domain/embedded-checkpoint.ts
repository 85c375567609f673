import { WaitingPeriodicJob } from '../lib/periodic-job';
import { quietMoment, type QuietMoment } from '../lib/quiet-moment';
import { checkpoint, walSinceCheckpoint } from '../persistence/statistics';
import { ANALYZE_WHEN } from './planner-statistics';
import type { Services } from './services';

/**
 * WAL since the last checkpoint past which a pass checkpoints: a real
 * Postgres's checkpointer does it every `checkpoint_timeout` (5 minutes) or
 * `max_wal_size` (1 GB); a small embedded server should not keep a
 * gigabyte of WAL on disk nor replay it after a crash.
 */
export const CHECKPOINT_AFTER_WAL_BYTES = 64 * 1024 * 1024;

/**
 * The checkpoints the embedded database does not start itself. PGlite runs
 * Postgres as one single-user backend: no checkpointer process, and a
 * backend checkpoints on its WAL's volume only under a postmaster. So
 * nothing checkpointed between a start and a clean shutdown: `pg_wal` grew
 * by 16 MB every 16 MB written (about 80 MB under a 60,000-keystroke typing
 * trace) until a restart, and a crash would replay all of it
 * (docs/PERFORMANCE.md, session 20). Every minute, once the WAL since the
 * last checkpoint passes `afterWalBytes`, a pass checkpoints in a quiet
 * moment of the serving thread (the checkpoint is one synchronous call
 * there, as ANALYZE is: `ANALYZE_WHEN`); `runOnce` does not wait for quiet.
 * A checkpoint also recycles the old segments into the next ones, which
 * Postgres then need not make. Postgres (DATABASE_URL) runs its own
 * checkpointer; the job stays off there. A pass answers whether it
 * checkpointed.
 */
export class EmbeddedCheckpointJob extends WaitingPeriodicJob<boolean> {
  constructor(
    services: Services,
    timing = { intervalMs: 60 * 1000, firstRunAfterMs: 30 * 1000 },
    afterWalBytes = CHECKPOINT_AFTER_WAL_BYTES,
    when: QuietMoment = ANALYZE_WHEN,
  ) {
    const enabled = services.config.databaseUrl === undefined;
    super(
      enabled,
      async ({ scheduled, stopping }) => {
        if (!enabled) return false;
        const written = await walSinceCheckpoint(services.db);
        if (written < afterWalBytes) return false;
        if (scheduled && !(await quietMoment(when, stopping))) return false;
        await checkpoint(services.db);
        services.log.debug({ walBytes: written }, 'embedded database checkpointed');
        return true;
      },
      (error) => services.log.warn({ err: error }, 'embedded database checkpoint failed'),
      timing,
    );
  }
}
