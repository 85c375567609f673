import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { removeRun, testDatabaseUrl } from '../test/helpers/database';

/** Whether `taskset` is there to pin processes to cores (util-linux). */
function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether servers can be pinned to a core here. */
export const canPin = hasTaskset();

/**
 * The cores pinned servers (and their floors, so a ratio compares like with
 * like) run on: core 0 unless `--server-cores` gives more, e.g. `0,1` for a
 * server whose threads (the embedded database's, the history pass's) can
 * then run beside its serving thread. The load stays on core 1.
 */
let serverCores = '0';
export function setServerCores(cores: string): void {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(cores)) throw new Error(`--server-cores: a taskset core list such as 0 or 0,1 (got ${JSON.stringify(cores)})`);
  serverCores = cores;
}
export const pinnedServerCores = (): string => serverCores;

/** `command` run on the servers' cores where taskset is. */
export function onServerCores(command: string[]): string[] {
  return canPin ? ['taskset', '-c', serverCores, ...command] : command;
}

/**
 * For a bench server built on test/helpers/app.ts (whose configuration is
 * its own, not the process environment): EMBEDDED_DATABASE_THREAD as the
 * bench gave it (`--database-thread`), else the server's default.
 */
export function databaseThreadFromBench(): Record<string, string> {
  const value = process.env.EMBEDDED_DATABASE_THREAD;
  return value ? { EMBEDDED_DATABASE_THREAD: value } : {};
}

/**
 * Pins this process (the load generator, the replaying client) to `core`,
 * so a server started with `spawnBenchServer(..., { pinned: true })` has
 * the other core to itself (unless `--server-cores` shares core 1 with it).
 * Returns false where pinning is not possible.
 */
export function pinThisProcess(core: number): boolean {
  if (!canPin) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether bench servers run as production does, compiled by esbuild (the
 * default), or from the TypeScript sources through tsx (`BENCH_SERVERS=source`,
 * for CPU profiles that bench/profile-summary.ts can group by source file).
 * Through tsx, each worker thread the server starts in a timed run (the
 * history pass's, the embedded database's) compiled its sources in that run:
 * 2.5-2.8 s of CPU on the server's core, which production does not spend.
 */
const compiledServers = process.env.BENCH_SERVERS !== 'source';

/** How bench servers run, for the heading of a bench's figures. */
export const benchServers = compiledServers ? 'compiled by esbuild, as `npm start` runs' : 'from the sources through tsx (BENCH_SERVERS=source)';

const bundles = new Map<string, Promise<string>>();

/**
 * The compiled `script`, bundled once a bench process into
 * dist/bench/<script>-<pid>/ with the worker scripts beside it: a directory
 * of its own, so that two benches at once do not replace each other's
 * chunks, removed when the bench ends.
 */
function compiledServer(script: string): Promise<string> {
  let bundle = bundles.get(script);
  if (!bundle) {
    const name = path.basename(script, '.ts');
    const outdir = path.resolve(import.meta.dirname, '../dist/bench', `${name}-${process.pid}`);
    process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
    bundle = import('../scripts/build').then(async ({ bundleServer }) => {
      await bundleServer({ [name]: path.resolve(import.meta.dirname, script) }, outdir, { devPackages: true });
      return path.join(outdir, `${name}.js`);
    });
    bundles.set(script, bundle);
  }
  return bundle;
}

/**
 * Starts a benchmark server script in its own process (so it does not share
 * the clients' core) and resolves with the JSON line it prints when ready;
 * compiled, unless `BENCH_SERVERS=source`.
 * `pinned` puts it on the servers' cores (core 0 unless `--server-cores`). `BENCH_SERVER_NODE_OPTIONS="--cpu-prof
 * --cpu-prof-dir=/tmp/prof"` profiles it (the profile is written when the
 * child exits on SIGTERM); `BENCH_SERVER_LOG_DIR` keeps its standard output.
 */
export async function spawnBenchServer<Info>(
  script: string,
  mode: string,
  runId: string,
  options: { pinned?: boolean; env?: Record<string, string> } = {},
): Promise<{ info: Info; child: ChildProcess }> {
  const extra = process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const entry = compiledServers ? [await compiledServer(script)] : ['--import', 'tsx', path.resolve(import.meta.dirname, script)];
  const node = [process.execPath, ...extra, ...entry, mode];
  const command = options.pinned ? onServerCores(node) : node;
  const child = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', 'pipe', 'inherit'],
    // Underscores only: the id becomes part of a Postgres template database name.
    env: { ...process.env, ...options.env, TRELLIS_TEST_RUN_ID: runId },
  });
  // BENCH_SERVER_LOG_DIR: each server's standard output (`--trace-gc` lines, say) kept as stdout.<pid>.log.
  const logDir = process.env.BENCH_SERVER_LOG_DIR;
  if (logDir && child.pid) child.stdout!.pipe(createWriteStream(path.join(logDir, `stdout.${child.pid}.log`)));
  // The template and the Postgres databases the server made under its run id go when it stops (awaited by bench/run.ts).
  // The server's own database URL: a bench given `--database-url` has none in its environment (session 23 found seven left).
  child.once('exit', () => cleanups.add(removeRun(runId, options.env?.TEST_DATABASE_URL ?? testDatabaseUrl())));
  const info = await new Promise<Info>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`${script} ${mode} exited ${code}`)));
  });
  return { info, child };
}

const cleanups = new Set<Promise<void>>();

/** Every stopped bench server's databases dropped. */
export async function benchServersCleanedUp(): Promise<void> {
  await Promise.all(cleanups);
}

/** Stops a benchmark server and waits for it (so a --cpu-prof profile is complete). */
export async function stopBenchServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * CPU of this process's main thread (the one serving requests), in ms, from
 * /proc: process.cpuUsage() also counts V8's helper threads (GC marking,
 * compilation). Null where /proc is missing.
 */
export function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
