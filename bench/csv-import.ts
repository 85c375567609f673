/**
 * CSV import responsiveness and memory (issue 33 item 3): a 25 MB file sent
 * to `POST /rows/import` on a server in its own process (pinned to one core,
 * this client on the other where taskset exists), while this process asks
 * `GET /api/health` back to back (10 ms apart) as another client would.
 * For each import: its answer and time, the server's peak resident memory
 * over its idle memory just before (after a full GC), the longest
 * event-loop delay inside the server (monitorEventLoopDelay, 5 ms
 * resolution), and the health check's slowest and 99th-percentile answer.
 *
 *   npm run bench -- csv-import
 *   npx tsx bench/csv-import.ts
 *
 * Files: 2,097,152 short lines (`r0000001,1`, 22 MB, as in the issue) into a
 * free-plan workspace that can take 500 rows, with and without
 * `partial=true`, and three of them at once into three workspaces of one
 * organisation; on the scale plan, 49,999 rows of about 520 bytes with a
 * malformed last line (read whole, nothing written), the short file into a number column
 * where one line in 1,000 holds a number (`partial=true`: read whole twice,
 * 2,097 rows written), and 50,000 rows of about 520 bytes (24 MB), every
 * row written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Agent, FormData, fetch as undiciFetch } from 'undici';
import { pinThisProcess, spawnBenchServer, stopBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
type ServerInfo = { url: string; side: string; cookie: string; pid: number };

const MB = 2 ** 20;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** `lines` lines of `r0000001,1` (11 bytes); `n` is `x` (not a number) except on every `numberEvery`-th line. */
function shortLines(lines: number, options: { numberEvery?: number } = {}): Buffer {
  const every = options.numberEvery ?? 1;
  const parts = ['title,n\n'];
  for (let i = 1; i < lines; i++) parts.push(`r${String(i).padStart(7, '0')},${i % every === 0 ? i % 10 : 'x'}\n`);
  return Buffer.from(parts.join(''));
}

function wideRows(rows: number, bytes: number, last = ''): Buffer {
  const parts = ['title,status,estimate,notes\n'];
  const statuses = ['todo', 'doing', 'done'];
  const filler = 'lorem ipsum dolor sit amet, '.repeat(Math.ceil(bytes / 28)).slice(0, bytes - 40);
  for (let i = 0; i < rows; i++) parts.push(`Task ${i},${statuses[i % 3]},${i % 13},"${i} ${filler}"\n`);
  parts.push(last);
  return Buffer.from(parts.join(''));
}

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  if (!status.includes('VmRSS')) throw new Error(`the server (pid ${pid}) is gone`);
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Resets the process's peak RSS (VmHWM) where the kernel lets us; sampling covers the rest. */
function resetPeak(pid: number) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Sampling alone then.
  }
}

async function sideCall<T>(info: ServerInfo, path: string): Promise<T> {
  return (await (await fetch(`${info.side}${path}`)).json()) as T;
}

/** GET /api/health back to back, 10 ms apart, until stopped: every latency in ms. */
function healthProbe(url: string) {
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      await (await fetch(`${url}/api/health`)).arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      const sorted = [...latencies].sort((a, b) => a - b);
      return { count: sorted.length, max: sorted.at(-1) ?? 0, p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0 };
    },
  };
}

/** No timeouts: a large import on a busy machine answers after fetch's default five minutes. */
const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

async function importFile(info: ServerInfo, slug: string, file: Buffer, query: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file)], { type: 'text/csv' }), 'bench.csv');
  const url = `${info.url}/api/workspaces/${slug}/rows/import${query}`;
  const response = await undiciFetch(url, { method: 'POST', body: form, headers: { cookie: `svc-session=${info.cookie}` }, dispatcher: patient });
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body };
}

/** A table workspace; with `numbers`, its sheet has a number column `n` (so `x` in it is a bad line). */
async function workspace(info: ServerInfo, slug: string, options: { numbers?: boolean } = {}) {
  const headers = { cookie: `svc-session=${info.cookie}`, 'content-type': 'application/json' };
  const created = await fetch(`${info.url}/api/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: slug, slug, mode: 'table' }) });
  if (created.status !== 200) throw new Error(`workspace ${slug}: ${created.status} ${await created.text()}`);
  if (!options.numbers) return;
  const columns = [
    { key: 'title', label: 'Title', type: 'text', position: 0 },
    { key: 'n', label: 'N', type: 'number', position: 1 },
  ];
  const put = await fetch(`${info.url}/api/workspaces/${slug}/columns`, { method: 'PUT', headers, body: JSON.stringify({ columns }) });
  if (put.status !== 200) throw new Error(`columns ${slug}: ${put.status} ${await put.text()}`);
}

/** Runs `work` with the server marked (GC, fresh delay histogram, peak reset), the health probe and RSS sampling around it. */
async function measured(info: ServerInfo, work: () => Promise<string>) {
  await sideCall(info, '/mark');
  const idle = memoryOf(info.pid).rss;
  resetPeak(info.pid);
  let sampled = idle;
  const sampler = setInterval(() => {
    try {
      sampled = Math.max(sampled, memoryOf(info.pid).rss);
    } catch {
      // A server gone mid-import shows as the import's own failure.
    }
  }, 10);
  const probe = healthProbe(info.url);
  const started = performance.now();
  let outcome: string;
  try {
    outcome = await work();
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const health = await probe.stop();
  const { hwm, rss } = memoryOf(info.pid);
  const delay = await sideCall<{ maxMs: number; p99Ms: number }>(info, '/delay');
  return {
    outcome,
    seconds: round(seconds, 2),
    'peak RSS over idle, MB': round((Math.max(sampled, rss, hwm) - idle) / MB),
    'RSS after, over idle, MB': round((rss - idle) / MB),
    'longest event-loop delay, ms': round(delay.maxMs),
    'health checks': health.count,
    'health: slowest, ms': round(health.max),
    'health: p99, ms': round(health.p99),
  };
}

function summary(result: { status: number; body: Record<string, unknown> }): string {
  const { status, body } = result;
  if (status === 200) return `200 imported ${body.imported}, refused ${body.refused}, ${(body.errors as unknown[]).length} errors listed`;
  const code = (body.error as { code?: string } | undefined)?.code ?? body.code;
  return `${status} ${code}`;
}

export async function runCsvImportBench(): Promise<Figures> {
  const { info, child } = await spawnBenchServer<ServerInfo>('csv-import-server.ts', 'trellis', `bench_csv_import_${process.pid}`, { pinned: true });
  pinThisProcess(1);
  const figures: Figures = {};
  const record = (name: string, result: Record<string, number | string>) => {
    console.error(`${new Date().toISOString()} ${name}: ${result.outcome}`);
    for (const [key, value] of Object.entries(result)) figures[`${name}: ${key}`] = value;
  };
  try {
    const short = shortLines(2_097_152);
    const wide = wideRows(50_000, 520);
    figures['short file'] = `${round(short.length / MB)} MB, 2,097,152 lines`;
    figures['wide file'] = `${round(wide.length / MB)} MB, 50,001 lines`;
    // Warm the route and the table code on a small file first.
    await sideCall(info, '/plan?name=free');
    await workspace(info, 'warm');
    await importFile(info, 'warm', shortLines(100), '');

    await workspace(info, 'free-partial');
    record('free plan, partial=true', await measured(info, async () => summary(await importFile(info, 'free-partial', short, '?partial=true'))));
    await workspace(info, 'free-whole');
    record('free plan, without partial', await measured(info, async () => summary(await importFile(info, 'free-whole', short, ''))));

    for (const slug of ['together-1', 'together-2', 'together-3']) await workspace(info, slug);
    record(
      'free plan, 3 at once in one organisation',
      await measured(info, async () => {
        const results = await Promise.all(['together-1', 'together-2', 'together-3'].map((slug) => importFile(info, slug, short, '?partial=true')));
        return results.map(summary).join('; ');
      }),
    );

    await sideCall(info, '/plan?name=scale');
    // The whole file read (and kept on disk), then refused for its last line: nothing written.
    const malformedLast = wideRows(49_999, 520, 'one field\n');
    await workspace(info, 'scale-bad-last');
    record('scale plan, malformed last line, without partial', await measured(info, async () => summary(await importFile(info, 'scale-bad-last', malformedLast, ''))));
    // The whole file read twice: checked, then read back from disk to write its good lines.
    const mostlyBad = shortLines(2_097_152, { numberEvery: 1000 });
    await workspace(info, 'scale-mostly-bad', { numbers: true });
    record('scale plan, partial=true, 1 line in 1,000 good', await measured(info, async () => summary(await importFile(info, 'scale-mostly-bad', mostlyBad, '?partial=true'))));

    await workspace(info, 'scale-wide');
    record('scale plan, 50,000 wide rows', await measured(info, async () => summary(await importFile(info, 'scale-wide', wide, ''))));
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await sideCall(info, '/stop').catch(() => {});
    await exited;
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await runCsvImportBench();
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(70)} ${value}`);
  process.exit(0);
}
