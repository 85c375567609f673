/**
 * Preloaded into a bench server to sample what its serving thread allocates,
 * collected or not (V8's sampling heap profiler with the objects the
 * scavenger and the mark-compactor freed kept in the profile), so the
 * allocation behind its scavenges can be read by function:
 *
 *   BENCH_ALLOCATION_DIR=/tmp/alloc BENCH_SERVER_NODE_OPTIONS="--import ./bench/allocation-sampling.mjs" \
 *     npm run bench -- write-path --only trace --prefill 0 --databases pglite
 *   npx tsx bench/allocation-summary.ts /tmp/alloc/<pid>.heapprofile [--top 30] [--callers Map]
 *
 * The profile is written BENCH_ALLOCATION_MS (40,000) after the server
 * starts, one file per server process.
 */
import { writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_ALLOCATION_DIR ?? '/tmp';
const session = new inspector.Session();
session.connect();
session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
setTimeout(() => {
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error) return void console.error('allocation sampling:', error.message);
    writeFileSync(path.join(dir, `${process.pid}.heapprofile`), JSON.stringify(result.profile));
  });
}, Number(process.env.BENCH_ALLOCATION_MS ?? 40_000)).unref();
