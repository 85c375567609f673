/**
 * `npm run bench`: every benchmark, printing figures (no pass/fail). Run
 * with `--expose-gc` (the npm script does) for heap figures. Name parts to
 * run only those: `npm run bench -- tables doc`. `--help` lists them.
 *
 * For every part: `--server-cores 0,1` pins the servers it starts, and the
 * floors they are compared with, to those cores (taskset's list) instead of
 * core 0 alone; the load and the clients stay on core 1. On a 2-core
 * machine, `0,1` lets a server's own threads (the embedded database's,
 * `EMBEDDED_DATABASE_THREAD`) run beside its serving thread, which pinning
 * to one core withholds.
 *
 * Servers run compiled by esbuild, as `npm start` runs them
 * (bench/spawn-server.ts); `BENCH_SERVERS=source` runs them through tsx,
 * for CPU profiles grouped by source file.
 */
import os from 'node:os';
import { benchServers, benchServersCleanedUp, setServerCores } from './spawn-server';
import { removeTemplate } from '../test/helpers/database';

type Figures = Record<string, number | string>;

/** A numeric `--name value` or `--name=value` flag of a part. */
function flag(name: string): number | undefined {
  if (!name.startsWith('--')) name = `--${name}`;
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  const raw = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  return raw === undefined ? undefined : Number(raw);
}
/** A string `--name value` or `--name=value` flag of a part. */
function text(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}
/** `optIn`: runs only when named (long runs). */
type Part = { name: string; run: () => Promise<Figures>; optIn?: boolean };

const parts: Part[] = [
  { name: 'table-load', run: async () => (await import('./table-load')).runTableLoadBench() },
  { name: 'tables', run: async () => (await import('./tables')).runTablesBench() },
  { name: 'table-queries', run: async () => (await import('./table-queries')).runTableQueriesBench() },
  { name: 'windows', run: async () => (await import('./windows')).runWindowsBench() },
  { name: 'formulas', run: async () => (await import('./formulas')).runFormulasBench() },
  { name: 'rest', run: async () => (await import('./rest')).runRestBench() },
  { name: 'cold-sync', run: async () => (await import('./cold-sync')).runColdSyncBench() },
  { name: 'cold-sync-rest', run: async () => (await import('./cold-sync')).runColdSyncRestBench({ rows: flag('rows') }) },
  { name: 'doc', run: async () => (await import('./doc')).runDocBench({ prefill: flag('prefill') ?? 0 }) },
  { name: 'mcp', run: async () => (await import('./mcp')).runMcpBench() },
  { name: 'comments', run: async () => (await import('./comments')).runCommentsBench() },
  { name: 'files', run: async () => (await import('./files')).runFilesBench() },
  { name: 'web', run: async () => (await import('./web')).runWebBench() },
  { name: 'webhooks', run: async () => (await import('./webhooks')).runWebhooksBench() },
  { name: 'versions', run: async () => (await import('./versions')).runVersionsBench() },
  { name: 'search', run: async () => (await import('./search')).runSearchBench() },
  { name: 'csv', run: async () => (await import('./csv')).runCsvBench() },
  { name: 'docs-io', run: async () => (await import('./docs-io')).runDocsIoBench({ only: text('only') }) },
  { name: 'csv-import', run: async () => (await import('./csv-import')).runCsvImportBench() },
  {
    name: 'write-path',
    run: async () =>
      (await import('./write-path')).runWritePathBench({
        edits: flag('edits'),
        prefill: flag('prefill'),
        seconds: flag('seconds'),
        docs: flag('docs'),
        connections: flag('connections'),
        typistRate: flag('typist-rate'),
        databaseUrl: text('database-url'),
        only: text('only')?.split(','),
        databases: text('databases')?.split(','),
        databaseThread: (await import('./write-path')).parseDatabaseThread(text('database-thread')),
      }),
  },
  { name: 'durability', run: async () => (await import('./durability')).runDurabilityBench({ rounds: flag('rounds') }) },
  { name: 'runs', run: async () => (await import('./runs')).runRunsBench({ edits: flag('edits'), seconds: flag('seconds'), changes: flag('changes') }) },
  { name: 'attribution', run: async () => (await import('./attribution')).runAttributionBench({ updates: flag('updates') }) },
  { name: 'aging', run: async () => (await import('./aging')).runAgingBench({ traces: flag('--traces'), restAppends: flag('--rest'), edits: flag('--edits') }), optIn: true },
  { name: 'soak', run: async () => (await import('./soak')).runSoakBench(), optIn: true },
];

function print(name: string, figures: Figures) {
  console.log(`\n## ${name}`);
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(58)} ${value}`);
}

if (process.argv.includes('--help')) {
  console.log(`npm run bench -- [part ...] [--server-cores 0,1] [part flags]

parts: ${parts.map((part) => part.name + (part.optIn ? ' (only when named)' : '')).join(', ')}
--server-cores LIST   the cores (taskset -c LIST) servers and their floors run on; 0 by default, the load on core 1
write-path:           --only trace,rest,footprint (or typist: REST creates beside a typist only; --typist-rate N: N keystrokes a second at most) --edits N --prefill N --seconds N --database-url URL --databases pglite,postgres
                      --database-thread off,on (PGlite's Trellis servers with the database in the serving thread, then in its own)
see each part's file in bench/ for its flags`);
  process.exit(0);
}
const cores = text('server-cores');
if (cores) setServerCores(cores);

// `--name=value` flags belong to the parts (e.g. `soak --minutes=2`).
const wanted = process.argv.slice(2).filter((arg, i, args) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
console.log(`# Trellis benchmarks, ${new Date().toISOString()}`);
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(`servers: ${benchServers}`);
for (const part of parts) {
  if (wanted.length > 0 ? !wanted.includes(part.name) : part.optIn) continue;
  const started = performance.now();
  try {
    print(part.name, await part.run());
  } catch (error) {
    console.log(`\n## ${part.name}\nfailed: ${error instanceof Error ? error.stack : error}`);
    process.exitCode = 1;
  }
  console.log(`(${part.name} took ${Math.round((performance.now() - started) / 1000)} s)`);
}
await benchServersCleanedUp();
// The template the in-process benches made (test/helpers/database.ts prepareTemplate), under this process's run.
await removeTemplate();
process.exit(process.exitCode ?? 0);
