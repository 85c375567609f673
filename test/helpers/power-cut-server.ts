/**
 * The real server (src/main.ts) over the power-cut file system
 * (power-cut-fs.ts), for test/sync/power-loss.test.ts.
 *
 * - POWER_CUT_IMAGE_DIR: the durable image of DATA_DIR/pglite (required).
 * - POWER_CUT_CHECKPOINT_MS: run a CHECKPOINT this often, so cuts land
 *   between checkpoints too (single-user Postgres has no checkpointer; on
 *   its own it checkpoints after max_wal_size of WAL).
 * - POWER_CUT_SHIPPED=1: PGlite as it ships (`-F`, fsync a no-op), to see
 *   the test fail without the fix; POWER_CUT_FSYNC=wal: fsync reaches the
 *   WAL only, to see that checkpoints need the data files flushed.
 */
import { usePGliteStorage } from '../../src/persistence/database';
import { durableStorage, shippedStorage } from '../../src/persistence/durable-fs';
import { PowerCutFS } from './power-cut-fs';

const imageDir = process.env.POWER_CUT_IMAGE_DIR;
if (!imageDir) throw new Error('POWER_CUT_IMAGE_DIR is required');
const shipped = process.env.POWER_CUT_SHIPPED === '1';
const fsync = shipped ? 'none' : process.env.POWER_CUT_FSYNC === 'wal' ? 'wal' : 'all';
const checkpointMs = Number(process.env.POWER_CUT_CHECKPOINT_MS ?? 0);
usePGliteStorage({
  filesystem: (dir) => {
    const filesystem = new PowerCutFS(dir, imageDir, { fsync });
    if (checkpointMs > 0) {
      // CHECKPOINT may run inside another session's transaction block (PGlite has one session); it does not end it.
      setInterval(() => void filesystem.database?.exec('CHECKPOINT').catch(() => {}), checkpointMs).unref();
    }
    return filesystem;
  },
  startParams: (shipped ? shippedStorage : durableStorage).startParams,
});
await import('../../src/main');
