/**
 * A server for the CSV import benchmark (bench/csv-import.ts), in its own
 * process so its memory and event loop are measured alone: the real app,
 * one signed-in user. Prints one JSON line when ready.
 *
 * A side port (not the app's, whose limit hooks would count these calls)
 * answers the parent:
 * - `GET /plan?name=free|pro|scale`: sets the organisation's plan;
 * - `GET /mark`: a full GC, then starts a fresh event-loop delay histogram;
 * - `GET /delay`: the histogram since the mark (`maxMs`, `p99Ms`);
 * - `GET /memory`: after a full GC, `process.memoryUsage()` (what RSS holds beyond the JavaScript heap).
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';

process.on('SIGTERM', () => {
  console.error(`csv import bench server: SIGTERM at ${new Date().toISOString()} (ignored)`);
});
process.on('exit', (code) => console.error(`csv import bench server: exit ${code}`));
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

await prepareTemplate();
const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
const { cookie } = await signIn(t, 'csv-import-bench@example.com');

let delay = monitorEventLoopDelay({ resolution: 5 });
const side = http.createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://side');
  let body: unknown = { ok: true };
  if (url.pathname === '/plan') {
    await t.services.db.updateTable('orgs').set({ plan: url.searchParams.get('name') as 'free' | 'pro' | 'scale' }).execute();
  } else if (url.pathname === '/mark') {
    gc();
    delay.disable();
    delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
  } else if (url.pathname === '/memory') {
    gc();
    const usage = process.memoryUsage();
    body = { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers };
  } else if (url.pathname === '/stop') {
    setImmediate(() => process.exit(0));
  } else if (url.pathname === '/delay') {
    body = { maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 };
  }
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
});
await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
console.log(JSON.stringify({ url: t.url, side: `http://127.0.0.1:${(side.address() as { port: number }).port}`, cookie, pid: process.pid }));
