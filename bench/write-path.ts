/**
 * `npm run bench -- write-path` (issue 38): every write against its durable
 * floor, in one invocation, on PGlite and (when TEST_DATABASE_URL or
 * `--database-url` is given) on Postgres, and the footprint of an empty
 * server. Every server runs in its own process pinned to core 0 (taskset),
 * the load on core 1; `--server-cores 0,1` gives the servers, floors
 * included, both cores of a 2-core machine (the load then shares core 1),
 * which is what the embedded database's own thread is for.
 *
 * - Keystrokes: the automerge-paper trace (259,778 edits; `--edits N` for a
 *   prefix) through one provider, as bench/doc.ts replays it, against the
 *   floor: a bare Hocuspocus that group-commits every update to the same
 *   database before it applies and acknowledges it (one multi-row INSERT in
 *   flight, the next batch collecting meanwhile: bench/durable-floor.ts;
 *   PGlite on the durable file layer the server uses). On PGlite also a
 *   server that first took a REST burst and holds `--prefill` rows (100,000),
 *   and the in-memory bare Hocuspocus for reference. Printed: whole trace,
 *   ratio, last tenth / first tenth, and the longest event-loop pause
 *   (monitorEventLoopDelay, inside each server process).
 * - REST: row create and patch at 10 connections against a bare durable
 *   Fastify route doing the same writes (a log row, an event row, the
 *   projection row) in one transaction a request (bench/rest-server.ts
 *   `bare-db`). Printed: req/s, p99, ratio, server CPU per request; then
 *   creates again while one sync client types the trace into a doc of the
 *   same server (a transaction a keystroke, at most 200 unacknowledged), the
 *   typist in a process of its own on the load core (bench/typist-client.ts)
 *   so that its Yjs work does not delay this process's REST connections.
 * - Footprint: the compiled server (dist/server/main.js, built if stale) on
 *   an empty DATA_DIR and again on the same one, on an empty Postgres
 *   database too: seconds to health, resident memory at health, 5 s later
 *   and at its peak; then, on the embedded database, resident memory per
 *   open document (`--docs` of ~100 KB of Markdown each) and per idle sync
 *   connection (`--connections`).
 *
 *   npm run bench -- write-path [--edits 20000] [--seconds 5] [--prefill 100000] [--database-url postgres://...]
 *     [--server-cores 0,1] [--database-thread off,on]
 *   npx tsx bench/write-path.ts --only footprint|trace|rest|typist (typist: only REST creates beside a typist)
 *
 * `--database-thread off,on` runs the Trellis servers on PGlite once with
 * the embedded database in the serving thread and once in its own
 * (EMBEDDED_DATABASE_THREAD), back to back against the same floors;
 * without it they run with the server's default. The footprint follows
 * EMBEDDED_DATABASE_THREAD in this process's environment.
 *
 * Timing figures need a quiet machine; the load average is printed with
 * them. Resident memory is little disturbed by load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { buildServer, buildTemplate, SERVER_BUNDLE } from '../scripts/build';
import { connectClient, synced, type SyncClient } from '../test/helpers/sync';
import { freePort, signInThroughOutboxFile } from '../test/helpers/server-process';
import { expectedText, loadTrace, makeMarkdown, replay } from './doc';
import { bareScenario, drive, trellisScenarios, withServer, type Result, type Scenario } from './rest';
import type { RestServerInfo } from './rest-server';
import { canPin, onServerCores, pinnedServerCores, pinThisProcess, setServerCores } from './spawn-server';
import { TYPIST_AHEAD, type TypistReport } from './typist-client';

type Figures = Record<string, number | string>;
type Database = { name: 'pglite' | 'postgres'; env: Record<string, string>; url?: string };

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

export type WritePathOptions = {
  edits?: number;
  prefill?: number;
  seconds?: number;
  databaseUrl?: string;
  only?: string[];
  docs?: number;
  connections?: number;
  /** Only these of the databases (pglite, postgres; both by default, Postgres where a URL is given): `--databases postgres` for a shorter run. */
  databases?: string[];
  /** `--only typist`: the typist's keystrokes a second at most (a person types about 5-10); without it, as fast as acknowledgements come (200 in flight). */
  typistRate?: number;
  /** PGlite's Trellis servers once per entry, the database in its own thread or not; [] for the server's default. */
  databaseThread?: Array<'on' | 'off'>;
};

/** The Trellis servers to run on `database`: a name suffix and their environment. */
function trellisVariants(database: Database, options: WritePathOptions): Array<{ suffix: string; env: Record<string, string> }> {
  const modes = database.name === 'pglite' ? (options.databaseThread ?? []) : [];
  if (modes.length === 0) return [{ suffix: '', env: database.env }];
  return modes.map((mode) => ({ suffix: ` (database thread ${mode})`, env: { ...database.env, EMBEDDED_DATABASE_THREAD: mode === 'on' ? 'true' : 'false' } }));
}

/** `off,on` from the command line. */
export function parseDatabaseThread(value: string | undefined): Array<'on' | 'off'> | undefined {
  if (value === undefined) return undefined;
  const modes = value.split(',');
  if (!modes.every((mode) => mode === 'on' || mode === 'off')) throw new Error(`--database-thread: on, off or both (off,on), got ${JSON.stringify(value)}`);
  return modes as Array<'on' | 'off'>;
}

export async function runWritePathBench(options: WritePathOptions = {}): Promise<Figures> {
  const figures: Figures = { [`pinned (servers cores ${pinnedServerCores()}, load core 1)`]: String(pinThisProcess(1)), 'load average at start': load() };
  const url = options.databaseUrl ?? process.env.TEST_DATABASE_URL;
  const databases: Database[] = [{ name: 'pglite', env: { TEST_DATABASE_URL: '' } }];
  if (url) databases.push({ name: 'postgres', env: { TEST_DATABASE_URL: url }, url });
  if (options.databases) databases.splice(0, databases.length, ...databases.filter((database) => options.databases!.includes(database.name)));
  const wanted = (part: string) => !options.only || options.only.includes(part);
  if (wanted('trace')) for (const database of databases) Object.assign(figures, await traceRows(database, options));
  if (wanted('rest')) for (const database of databases) Object.assign(figures, await restRows(database, options));
  if (wanted('typist') && !wanted('rest')) for (const database of databases) Object.assign(figures, await typistRows(database, options));
  if (wanted('footprint')) Object.assign(figures, await footprint(url, options));
  figures['load average at end'] = load();
  return figures;
}

// ------------------------------------------------------------- keystrokes

async function traceRows(database: Database, options: WritePathOptions): Promise<Figures> {
  const trace = loadTrace();
  const edits = Math.min(options.edits ?? trace.txns.length, trace.txns.length);
  const expected = expectedText(trace, edits);
  const label = `trace (${edits.toLocaleString('en')} edits), ${database.name}`;
  const figures: Figures = { [`${label}: load average`]: load() };
  type Run = Awaited<ReturnType<typeof replay>>;
  const check = (name: string, run: Run) => {
    if (run.stats.text !== expected || run.clientText !== expected) throw new Error(`${label}, ${name}: the final text differs from the trace's`);
  };
  const seconds = (run: Run) => round(run.ackedMs / 1000, 1);
  const tenths = (run: Run) => round(run.tenthsMs.at(-1)! / run.tenthsMs[0]!, 2);
  const pause = (run: Run) => Math.round(run.stats.loopMaxMs ?? 0);
  const cpuPause = (run: Run) => Math.round(run.stats.loopMaxCpuMs ?? 0);
  const floor = await replay('bare-durable', trace, edits, 0, false, database.env);
  check('floor', floor);
  figures[`${label}: floor, bare Hocuspocus group-committing every update (s)`] = seconds(floor);
  figures[`${label}: floor: commits, updates per commit`] = `${floor.stats.commits}, ${round((floor.stats.updates ?? 0) / Math.max(1, floor.stats.commits ?? 1), 1)}`;
  // The floor applies a commit's updates back to back, as Hocuspocus does: its own pause says how much of ours the guarantee alone costs.
  figures[`${label}: floor: longest event-loop pause ms`] = pause(floor);
  figures[`${label}: floor: serving thread's most CPU between two turns ms`] = cpuPause(floor);
  if (database.name === 'pglite') {
    const memory = await replay('bare', trace, edits);
    check('in-memory bare', memory);
    figures[`${label}: in-memory bare Hocuspocus (s), for reference`] = seconds(memory);
  }
  const runs: Array<[string, Run]> = [];
  for (const variant of trellisVariants(database, options)) {
    runs.push([`Trellis${variant.suffix}`, await replay('trellis', trace, edits, 0, false, variant.env)]);
    if (database.name === 'pglite' && (options.prefill ?? 100_000) > 0) {
      runs.push([`Trellis${variant.suffix} after a REST burst, ${(options.prefill ?? 100_000).toLocaleString('en')} rows held`, await replay('trellis', trace, edits, options.prefill ?? 100_000, false, variant.env)]);
    }
  }
  for (const [name, run] of runs) {
    check(name, run);
    figures[`${label}: ${name} (s)`] = seconds(run);
    figures[`${label}: ${name} / floor (goal <= 1.3)`] = round(run.ackedMs / floor.ackedMs, 2);
    figures[`${label}: ${name}: last tenth / first (goal <= 1.2)`] = tenths(run);
    figures[`${label}: ${name}: each tenth acknowledged, s`] = run.tenthsMs.map((ms) => (ms / 1000).toFixed(2)).join(' ');
    figures[`${label}: ${name}: longest event-loop pause ms (goal <= 50; floor ${pause(floor)})`] = pause(run);
    // The same pause less other processes' turns: what load does not inflate.
    figures[`${label}: ${name}: serving thread's most CPU between two turns ms (floor ${cpuPause(floor)})`] = cpuPause(run);
    figures[`${label}: ${name}: server CPU µs per edit (floor ${Math.round((floor.stats.cpuMs * 1000) / floor.patches)})`] = Math.round((run.stats.cpuMs * 1000) / run.patches);
    // What the server put off past the trace (its drain at /bench/stats): not in the figure above, so shown beside it.
    if (run.stats.drainCpuMs !== undefined) figures[`${label}: ${name}: server CPU µs per edit put off to the drain after the trace (floor ${Math.round(((floor.stats.drainCpuMs ?? 0) * 1000) / floor.patches)})`] = Math.round((run.stats.drainCpuMs * 1000) / run.patches);
    if (run.stats.statements) {
      // BENCH_COUNT_STATEMENTS=1: the floor sends one statement a commit.
      const shapes = Object.entries(run.stats.statements);
      const total = shapes.reduce((sum, [, entry]) => sum + entry.count, 0);
      figures[`${label}: ${name}: statements an edit (floor ${round((floor.stats.commits ?? 0) / floor.patches, 4)})`] = round(total / run.patches, 4);
      for (const [shape, entry] of shapes.slice(0, 40)) figures[`${label}: ${name}: statement ${shape}`] = `${entry.count}, ${entry.ms} ms CPU, longest ${entry.max} ms`;
    }
  }
  return figures;
}

// ------------------------------------------------------------------- REST

async function restRows(database: Database, options: WritePathOptions): Promise<Figures> {
  const seconds = options.seconds ?? 5;
  const label = `REST, 10 connections, ${database.name}`;
  const figures: Figures = { [`${label}: load average`]: load() };
  const json = { 'content-type': 'application/json' };
  const floors = await withServer('bare-db', { ...database.env, BENCH_BARE_GROUPED: '0' }, async (info) => {
    const patch: Scenario = { method: 'PATCH', path: (i) => `/bare/${info.rowIds[i % info.rowIds.length]}`, headers: json, body: (i) => JSON.stringify({ data: { title: `edit ${i}` } }) };
    return { create: await drive(info, bareScenario, seconds), patch: await drive(info, patch, seconds) };
  });
  for (const variant of trellisVariants(database, options)) {
    const trellis = await withServer('trellis', variant.env, async (info) => {
      const scenarios = trellisScenarios(info);
      const run = async (key: string) => drive(info, scenarios.find((s) => s.key === key)!.scenario, seconds);
      const create = await run('create');
      const patch = await run('patch');
      const typist = await startTypist(info);
      const createTyping = await run('create');
      const typed = await typist.stop();
      return { create, patch, createTyping, typed };
    });
    const name = `Trellis${variant.suffix}`;
    const row = (what: string, floor: Result, real: Result) => {
      figures[`${label}: row ${what}: floor req/s, p99 ms (a transaction a request)`] = `${Math.round(floor.rps)}, ${round(floor.p99, 1)}`;
      figures[`${label}: row ${what}: ${name} req/s, p99 ms (goal p99 < 25)`] = `${Math.round(real.rps)}, ${round(real.p99, 1)}`;
      figures[`${label}: row ${what}: ${name} / floor req/s (goal >= 0.6)`] = round(real.rps / floor.rps, 2);
      figures[`${label}: row ${what}: server CPU µs per request, floor / ${name}`] = `${Math.round(floor.cpuMicrosPerRequest)} / ${Math.round(real.cpuMicrosPerRequest)}`;
    };
    row('create', floors.create, trellis.create);
    row('patch', floors.patch, trellis.patch);
    figures[`${label}: row create with a sync client typing the trace: ${name} req/s, p99 ms (goal p99 < 50)`] = `${Math.round(trellis.createTyping.rps)}, ${round(trellis.createTyping.p99, 1)}`;
    figures[`${label}: row create with a sync client typing: ${name} / floor req/s; keystrokes acknowledged meanwhile`] = `${round(trellis.createTyping.rps / floors.create.rps, 2)}; ${trellis.typed.typed.toLocaleString('en')}`;
  }
  return figures;
}

/**
 * Only REST creates, alone and then beside a typist, in one Trellis server (`--only typist`): no floors, no patches.
 * The typist runs in a process of its own on the load core; this process's event-loop delay while it drives
 * the REST connections is printed, and the typist's own, with its keystrokes' time to acknowledgement.
 */
async function typistRows(database: Database, options: WritePathOptions): Promise<Figures> {
  const seconds = options.seconds ?? 5;
  const label = `REST, 10 connections, ${database.name}`;
  const figures: Figures = { [`${label}: load average`]: load() };
  for (const variant of trellisVariants(database, options)) {
    const { alone, aloneDelay, createTyping, typed, benchDelay } = await withServer('trellis', variant.env, async (info) => {
      const scenario = trellisScenarios(info).find((s) => s.key === 'create')!.scenario;
      // Unmeasured: the server is fresh, and V8 compiles its hot paths in the first seconds of load; the two windows below should both run warm.
      await drive(info, scenario, 2);
      const aloneDelay = monitorEventLoopDelay({ resolution: 1 });
      aloneDelay.enable();
      const alone = await drive(info, scenario, seconds);
      aloneDelay.disable();
      const typist = await startTypist(info, options.typistRate);
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const createTyping = await drive(info, scenario, seconds);
      delay.disable();
      const typed = await typist.stop();
      return { alone, aloneDelay, createTyping, typed, benchDelay: delay };
    });
    const name = `Trellis${variant.suffix}`;
    const ms = (histogram: ReturnType<typeof monitorEventLoopDelay>) =>
      `${round(histogram.percentile(50) / 1e6, 1)}, ${round(histogram.percentile(99) / 1e6, 1)}, ${round(histogram.max / 1e6, 1)}`;
    figures[`${label}: row create alone, the same server just before: ${name} req/s, p99 ms`] = `${Math.round(alone.rps)}, ${round(alone.p99, 1)} (p50 ${round(alone.p50, 1)})`;
    figures[`${label}: row create alone: the bench's own event-loop delay p50, p99, max ms`] = ms(aloneDelay);
    figures[`${label}: row create alone: ${SERVER_VIEW}`] = serverView(alone);
    figures[`${label}: row create with a sync client typing the trace${options.typistRate ? ` at ${options.typistRate} keystrokes a second at most` : ''}: ${name} req/s, p99 ms (goal p99 < 50)`] = `${Math.round(createTyping.rps)}, ${round(createTyping.p99, 1)} (p50 ${round(createTyping.p50, 1)})`;
    figures[`${label}: row create with a sync client typing: ${name} keystrokes acknowledged, a second until the last acknowledgement`] = `${typed.typed.toLocaleString('en')}, ${Math.round((typed.typed * 1000) / typed.typingMs)}`;
    figures[`${label}: row create with a sync client typing: a keystroke's time to acknowledgement p50, p99, max ms (${TYPIST_AHEAD} in flight at most)`] = `${round(typed.ackP50, 1)}, ${round(typed.ackP99, 1)}, ${round(typed.ackMax, 1)}`;
    figures[`${label}: row create with a sync client typing: ${SERVER_VIEW}`] = serverView(createTyping);
    figures[`${label}: row create with a sync client typing: ${name} server CPU µs per request`] = Math.round(createTyping.cpuMicrosPerRequest);
    figures[`${label}: row create with a sync client typing: the bench's own event-loop delay p50, p99, max ms`] = ms(benchDelay);
    figures[`${label}: row create with a sync client typing: the typist process's event-loop delay p50, p99, max ms`] = `${round(typed.loopP50, 1)}, ${round(typed.loopP99, 1)}, ${round(typed.loopMax, 1)}`;
  }
  figures[`${label}: load average at end`] = load();
  return figures;
}

const SERVER_VIEW = "in the server: a request's time p50, p99 ms; the server's CPU over it p50, p99 ms; its event-loop delay p99, max ms";

/** A run's requests as the server saw them (bench/rest-server.ts `CpuReading`): load inflates the times, not the CPU. */
function serverView(result: Result): string {
  const server = result.server;
  if (!server) return 'not reported';
  return `${server.wall[0]}, ${server.wall[2]}; ${server.cpu[0]}, ${server.cpu[2]}; ${server.loopDelay[1]}, ${server.loopDelay[2]}`;
}

/** What the typist's process reported, as `stop` answers it. */
type Typed = TypistReport;

/**
 * One sync client typing the trace into a doc workspace of the server, made
 * by the owner, for as long as the REST load runs, in a process of its own
 * (bench/typist-client.ts) on the load core: the REST connections' event
 * loop no longer takes turns with its Yjs work. `stop` ends the typing, waits
 * for every keystroke's acknowledgement and answers the typist's report.
 */
async function startTypist(info: RestServerInfo, rate?: number): Promise<{ stop(): Promise<Typed> }> {
  const node = [process.execPath, '--import', 'tsx', path.resolve(import.meta.dirname, 'typist-client.ts')];
  const command = canPin ? ['taskset', '-c', '1', ...node] : node;
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the typist's process exited ${code}`))));
  exited.catch(() => {});
  const next = <T>() => Promise.race([new Promise<T>((resolve) => child.once('message', (message) => resolve(message as T))), exited]);
  const ready = next<{ ready: true }>();
  child.send({ url: info.url, session: info.session!, rate });
  await ready;
  return {
    async stop() {
      const report = next<Typed>();
      child.send({ stop: true });
      return report;
    },
  };
}

// -------------------------------------------------------------- footprint

/** Resident memory of a process now and at its peak (MB), from the kernel. */
function resident(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

type Started = { child: ChildProcess; url: string; healthMs: number; atHealth: number; peakWhileStarting: number };

/** Starts the compiled server as `npm start` runs it (on the servers' cores where taskset is) and waits for health, sampling its memory every 20 ms. */
async function startCompiled(env: Record<string, string>, options: { gcProbe?: boolean } = {}): Promise<Started> {
  const port = await freePort();
  // The probe (a full GC on SIGUSR2) only where memory per document is read: the heap then holds what is kept, not young garbage.
  const probe = options.gcProbe ? ['--import', path.resolve(import.meta.dirname, 'gc-probe.mjs')] : [];
  const node = [process.execPath, ...probe, SERVER_BUNDLE];
  const command = onServerCores(node);
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', COOKIE_SECURE: 'false', SMTP_URL: '', REDIS_URL: '', API_WRITES_PER_MINUTE: '100000', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, resident(child.pid!).rss)), 20);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the compiled server exited with ${child.exitCode}`);
      const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (performance.now() - started > 180_000) throw new Error('the compiled server did not answer health within 180 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    clearInterval(sampler);
  }
  const healthMs = performance.now() - started;
  const now = resident(child.pid!);
  return { child, url, healthMs, atHealth: now.rss, peakWhileStarting: Math.max(peak, now.peak) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function footprint(databaseUrl: string | undefined, options: WritePathOptions): Promise<Figures> {
  const figures: Figures = { 'footprint: load average': load(), 'footprint: EMBEDDED_DATABASE_THREAD': process.env.EMBEDDED_DATABASE_THREAD || '(the default)' };
  await buildServer({ ifStale: true });
  await buildTemplate({ ifStale: true });
  const describeStart = (label: string, run: Started, after: number) => {
    figures[`${label}: health after s (goal < 3)`] = round(run.healthMs / 1000, 2);
    figures[`${label}: resident MB at health / 5 s later`] = `${Math.round(run.atHealth)} / ${Math.round(after)}`;
    figures[`${label}: resident MB at its peak while starting`] = Math.round(run.peakWhileStarting);
  };
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-footprint-'));
  try {
    for (const label of ['embedded, empty DATA_DIR (goal < 300 MB, < 400 MB at peak)', 'embedded, the same DATA_DIR again']) {
      const run = await startCompiled({ DATA_DIR: dataDir, DATABASE_URL: '' }, { gcProbe: label.includes('again') });
      try {
        await settle(5000);
        describeStart(`footprint: ${label}`, run, resident(run.child.pid!).rss);
        if (label.includes('again')) Object.assign(figures, await perDocumentAndConnection(run, dataDir, options.docs ?? 15, options.connections ?? 200));
      } finally {
        await stop(run.child);
      }
    }
    if (databaseUrl) {
      const name = `trellis_footprint_${process.pid}`;
      const admin = async (statement: string) => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          await client.query(statement);
        } finally {
          await client.end();
        }
      };
      await admin(`create database ${name}`);
      const target = new URL(databaseUrl);
      target.pathname = `/${name}`;
      try {
        for (const label of ['Postgres, empty database (goal < 150 MB)', 'Postgres, the same database again']) {
          const run = await startCompiled({ DATA_DIR: dataDir, DATABASE_URL: target.toString() });
          try {
            await settle(5000);
            describeStart(`footprint: ${label}`, run, resident(run.child.pid!).rss);
          } finally {
            await stop(run.child);
          }
        }
      } finally {
        await admin(`drop database if exists ${name} with (force)`).catch(() => {});
      }
    }
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}

/** The server's heap in use after a full GC (bench/gc-probe.mjs) and its resident memory, in MB. */
async function kept(run: Started): Promise<{ heap: number; rss: number }> {
  run.child.kill('SIGUSR2');
  await settle(1500);
  const metrics = await (await fetch(`${run.url}/metrics`)).text();
  const heap = Number(/^trellis_nodejs_heap_size_used_bytes (\d+)/m.exec(metrics)?.[1] ?? 0) / 2 ** 20;
  return { heap, rss: resident(run.child.pid!).rss };
}

/**
 * On a running server: `docs` doc workspaces of ~100 KB of Markdown written
 * over REST (held loaded by the server for a minute after, as any
 * document written over REST), then one provider on each (heap and
 * resident memory per document from before the writes), then
 * `connections` more idle providers on the first. Heap (after a full GC)
 * and resident memory per document and per connection.
 */
async function perDocumentAndConnection(run: Started, dataDir: string, docs: number, connections: number): Promise<Figures> {
  const cookie = await signInThroughOutboxFile(run.url, dataDir, 'footprint@example.com');
  const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
  const markdown = makeMarkdown(100_000);
  await settle(3000);
  const empty = await kept(run);
  const names: string[] = [];
  for (let i = 0; i < docs; i++) {
    const slug = `footprint-${i}`;
    const created = await fetch(`${run.url}/api/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: slug, slug, mode: 'doc' }) });
    if (created.status !== 200) throw new Error(`POST /api/workspaces answered ${created.status}: ${await created.text()}`);
    const body = (await created.json()) as { primarySurface: { syncDocument: string } };
    const put = await fetch(`${run.url}/api/workspaces/${slug}/doc`, { method: 'PUT', headers, body: JSON.stringify({ markdown }) });
    if (put.status !== 200) throw new Error(`PUT /doc answered ${put.status}`);
    names.push(body.primarySurface.syncDocument);
  }
  await settle(5000);
  const base = await kept(run);
  const clients: SyncClient[] = [];
  try {
    for (const name of names) {
      const client = connectClient(run.url, name, { cookie });
      await synced(client, 120_000);
      clients.push(client);
    }
    await settle(3000);
    const withDocs = await kept(run);
    for (let i = 0; i < connections; i++) {
      const client = connectClient(run.url, names[0]!, { cookie });
      await synced(client, 120_000);
      clients.push(client);
    }
    await settle(3000);
    const withConnections = await kept(run);
    const per = (from: { heap: number; rss: number }, to: { heap: number; rss: number }, n: number, unit: number) =>
      `${round(((to.heap - from.heap) * unit) / n, 1)} / ${round(((to.rss - from.rss) * unit) / n, 1)}`;
    return {
      [`footprint: heap after GC / resident MB, signed in, nothing written`]: `${round(empty.heap, 1)} / ${Math.round(empty.rss)}`,
      [`footprint: heap after GC / resident MB, ${docs} docs of ~100 KB Markdown written (held loaded)`]: `${round(base.heap, 1)} / ${Math.round(base.rss)}`,
      [`footprint: per open document of ~100 KB Markdown (${docs} loaded, a provider on each): heap / resident MB`]: per(empty, withDocs, docs, 1),
      [`footprint: per idle sync connection (${connections} on one document): heap / resident KB`]: per(withDocs, withConnections, connections, 1024),
    };
  } finally {
    for (const client of clients) client.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const number = (name: string) => (arg(name) === undefined ? undefined : Number(arg(name)));
  const cores = arg('--server-cores');
  if (cores) setServerCores(cores);
  const figures = await runWritePathBench({
    edits: number('--edits'),
    prefill: number('--prefill'),
    seconds: number('--seconds'),
    docs: number('--docs'),
    connections: number('--connections'),
    databaseUrl: arg('--database-url'),
    only: arg('--only')?.split(','),
    databases: arg('--databases')?.split(','),
    databaseThread: parseDatabaseThread(arg('--database-thread')),
  });
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(100)} ${value}`);
  process.exit(0);
}
