/**
 * The real server (src/main.ts) over the power-cut file system
 * (power-cut-fs.ts), for test/sync/power-loss.test.ts. POWER_CUT_IMAGE_DIR
 * is the durable image of DATA_DIR/pglite. POWER_CUT_SHIPPED=1 runs PGlite
 * as it ships (`-F`, fsync a no-op) to see the test fail without the fix.
 */
import { usePGliteStorage } from '../../src/persistence/database';
import { durableStorage, shippedStorage } from '../../src/persistence/durable-fs';
import { PowerCutFS } from './power-cut-fs';

const imageDir = process.env.POWER_CUT_IMAGE_DIR;
if (!imageDir) throw new Error('POWER_CUT_IMAGE_DIR is required');
const shipped = process.env.POWER_CUT_SHIPPED === '1';
usePGliteStorage({
  filesystem: (dir) => new PowerCutFS(dir, imageDir, { fsync: !shipped }),
  startParams: (shipped ? shippedStorage : durableStorage).startParams,
});
await import('../../src/main');
