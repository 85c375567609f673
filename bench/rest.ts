/**
 * REST write path (issue 12), measured from outside: the server runs in its
 * own process pinned to core 0 (bench/rest-server.ts), this process drives
 * it from core 1 with 10 keep-alive connections. In the same run, a bare
 * Fastify JSON POST route is measured the same way, and figures are given
 * as ratios to it. Trellis runs with production durability: every answered
 * write is committed (PGlite, or Postgres with fsync when TEST_DATABASE_URL
 * is set).
 *
 *   npx tsx bench/rest.ts                 (PGlite, and Postgres if TEST_DATABASE_URL is set)
 *   npx tsx bench/rest.ts --seconds 5
 *   npx tsx bench/rest.ts pglite --scenarios create,patch   (create patch 403 404 401 429 mixed)
 *
 * Anchors for POST /rows: a bare Fastify route on the same database doing
 * the writes a create needs (a ~200-byte log append, a projection row, an
 * event row; bench/rest-server.ts `bare-db`), once with a transaction per
 * request and once group-committed; POST /rows is given as a ratio of both
 * (req/s and p99). `mixed`: 8 REST writers beside one sync client inserting
 * 200 rows a second (16-row transactions) into the same table.
 *
 * Figures per scenario: requests per second, latency p50 / p99 (ms), and
 * server CPU per request (µs; process.cpuUsage of the server between two
 * marks, so other processes on the machine disturb it less than wall time).
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { Agent, request as undiciRequest } from 'undici';
import * as Y from 'yjs';
import { orderOf, rowsRoot, sheetMapOf } from '../src/model/table/layout';
import type { CellValue } from '../src/model/table/types';
import type { CpuReading, RestServerInfo } from './rest-server';
import { pinThisProcess, spawnBenchServer, stopBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
export type Scenario = { method: 'GET' | 'POST' | 'PATCH'; path: (i: number) => string; headers: Record<string, string>; body?: (i: number) => string };
export type Result = {
  rps: number;
  p50: number;
  p99: number;
  cpuMicrosPerRequest: number;
  mainCpuMicrosPerRequest?: number;
  statuses: Record<string, number>;
  /** The server's own view of the same requests (bench/rest-server.ts `CpuReading`). */
  server?: CpuReading['server'];
};

const CONNECTIONS = 10;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** `CONNECTIONS` clients in closed loops for `seconds`, after a short warm-up. */
export async function drive(info: RestServerInfo, scenario: Scenario, seconds: number, connections = CONNECTIONS): Promise<Result> {
  const url = info.url;
  const dispatcher = new Agent({ connections, pipelining: 1, keepAliveTimeout: 60_000 });
  let counter = 0;
  const once = async (record: (ms: number, status: number) => void) => {
    const i = counter++;
    const started = performance.now();
    try {
      const res = await undiciRequest(url + scenario.path(i), { method: scenario.method, headers: scenario.headers, body: scenario.body?.(i), dispatcher, headersTimeout: 60_000 });
      await res.body.text();
      record(performance.now() - started, res.statusCode);
    } catch {
      // A request unanswered within a minute counts as one, at its time, rather than ending the run.
      record(performance.now() - started, 0);
    }
  };
  const loop = async (until: number, record: (ms: number, status: number) => void) => {
    while (performance.now() < until) await once(record);
  };
  const warmUntil = performance.now() + 500;
  await Promise.all(Array.from({ length: connections }, () => loop(warmUntil, () => {})));
  await fetch(`${info.cpu}/mark`);
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, () =>
      loop(until, (ms, status) => {
        times.push(ms);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  const { cpuMs, mainCpuMs, server } = (await (await fetch(`${info.cpu}/cpu`)).json()) as CpuReading;
  await dispatcher.close();
  times.sort((a, b) => a - b);
  return { rps: times.length / elapsed, p50: percentile(times, 50), p99: percentile(times, 99), cpuMicrosPerRequest: (cpuMs * 1000) / times.length, mainCpuMicrosPerRequest: mainCpuMs === undefined ? undefined : (mainCpuMs * 1000) / times.length, statuses, server };
}

export function describe(name: string, result: Result, bare?: Result, anchors: Array<[string, Result]> = []): Figures {
  const figures: Figures = {
    [`${name} req/s`]: Math.round(result.rps),
    [`${name} p50 / p99 ms`]: `${round(result.p50)} / ${round(result.p99)}`,
    [`${name} server CPU µs/request`]: Math.round(result.cpuMicrosPerRequest),
    ...(result.mainCpuMicrosPerRequest === undefined ? {} : { [`${name} server main-thread CPU µs/request`]: Math.round(result.mainCpuMicrosPerRequest) }),
    [`${name} statuses`]: Object.entries(result.statuses)
      .map(([status, n]) => `${status}x${n}`)
      .join(' '),
  };
  if (bare) figures[`${name} / bare req/s`] = round(result.rps / bare.rps, 3);
  for (const [anchor, of] of anchors) {
    figures[`${name} / ${anchor} req/s`] = round(result.rps / of.rps, 3);
    figures[`${name} / ${anchor} p99`] = round(result.p99 / of.p99, 2);
  }
  return figures;
}

const json = { 'content-type': 'application/json' };

export async function withServer<T>(mode: 'trellis' | 'bare' | 'bare-db', env: Record<string, string>, run: (info: RestServerInfo) => Promise<T>): Promise<T> {
  const { info, child } = await spawnBenchServer<RestServerInfo>('rest-server.ts', mode, `bench_rest_${mode.replace(/-/g, '_')}_${process.pid}`, { pinned: true, env });
  try {
    return await run(info);
  } finally {
    await stopBenchServer(child);
  }
}

export const bareScenario: Scenario = { method: 'POST', path: () => '/bare', headers: json, body: () => JSON.stringify({ data: { title: 'load', status: 'todo' } }) };

/** The scenarios on one Trellis server, in order (bad credentials last: they get the IP throttled). */
export function trellisScenarios(info: RestServerInfo): Array<{ key: string; name: string; scenario: Scenario; ratio?: boolean }> {
  const editor = { ...json, authorization: info.editor };
  return [
    {
      key: 'create',
      name: 'POST /rows',
      ratio: true,
      scenario: { method: 'POST', path: () => info.rowsPath, headers: editor, body: (i) => JSON.stringify({ data: { title: `row ${i}`, status: 'todo' } }) },
    },
    {
      key: 'patch',
      name: 'PATCH /rows/{id}',
      ratio: true,
      scenario: { method: 'PATCH', path: (i) => `${info.rowsPath}/${info.rowIds[i % info.rowIds.length]}`, headers: editor, body: (i) => JSON.stringify({ data: { title: `edit ${i}` } }) },
    },
    {
      key: '403',
      name: 'refused 403 (viewer key writes)',
      scenario: { method: 'POST', path: () => info.rowsPath, headers: { ...json, authorization: info.viewer }, body: () => '{"data":{"title":"no"}}' },
    },
    { key: '404', name: 'refused 404 (unknown workspace)', scenario: { method: 'GET', path: () => '/api/workspaces/no-such-workspace/rows', headers: { authorization: info.editor } } },
    {
      key: '401',
      name: 'refused 401 (unknown key, 429 once the IP is throttled)',
      scenario: { method: 'GET', path: () => info.rowsPath, headers: { authorization: 'Bearer svc_live_not-a-key' } },
    },
  ];
}

/**
 * 8 REST writers (closed loops) while one sync client inserts 200 rows a
 * second into the same table document, 16 rows per transaction: REST p99
 * must not starve behind the sync writes.
 */
async function mixed(database: string, info: RestServerInfo, seconds: number): Promise<Figures> {
  const { connectClient, synced } = await import('../test/helpers/sync');
  const client = connectClient(info.url, info.documentName!, { token: info.editor.replace(/^Bearer /, '') });
  await synced(client, 60_000);
  const surfaceId = info.surfaceId!;
  if (!sheetMapOf(client.doc, surfaceId)) throw new Error('the table sheet did not reach the sync client');
  let inserted = 0;
  let stop = false;
  const started = performance.now();
  const typer = (async () => {
    // 200 rows a second in 16-row transactions: one every 80 ms, as a script (or a paste) would.
    while (!stop) {
      const due = started + (inserted / 200) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      client.doc.transact(() => {
        const order = orderOf(sheetMapOf(client.doc, surfaceId)!)!;
        const ids: string[] = [];
        for (let i = 0; i < 16; i++) {
          const id = `mx${(inserted + i).toString(36).padStart(8, '0')}`;
          const row = new Y.Map<CellValue>();
          row.set('title', `sync ${inserted + i}`);
          rowsRoot(client.doc).set(id, row);
          ids.push(id);
        }
        order.push(ids);
      });
      inserted += 16;
    }
  })();
  const editor = { ...json, authorization: info.editor };
  const scenario: Scenario = { method: 'POST', path: () => info.rowsPath, headers: editor, body: (i) => JSON.stringify({ data: { title: `mixed ${i}`, status: 'todo' } }) };
  const result = await drive(info, scenario, seconds, 8);
  stop = true;
  await typer;
  const syncRowsPerSecond = inserted / ((performance.now() - started) / 1000);
  const { eventually } = await import('../test/helpers/sync');
  await eventually(() => client.provider.unsyncedChanges === 0, 120_000, 20).catch(() => {});
  client.destroy();
  return {
    ...describe(`${database}: mixed, 8 REST writers POST /rows`, result),
    [`${database}: mixed, sync rows inserted per second`]: Math.round(syncRowsPerSecond),
  };
}

/** One database: the bare route, then each scenario on a Trellis server; the 429s on a server with a write limit of 10 a minute. */
async function runFor(database: 'pglite' | 'postgres', seconds: number, wanted: (scenario: string) => boolean): Promise<Figures> {
  const databaseEnv: Record<string, string> = database === 'pglite' ? { TEST_DATABASE_URL: '' } : {};
  const figures: Figures = { [`${database}: load average at start`]: os.loadavg()[0]!.toFixed(1) };
  const bare = await withServer('bare', {}, (info) => drive(info, bareScenario, seconds));
  Object.assign(figures, describe(`${database}: bare Fastify POST`, bare));
  // The database's own speed for a create's writes (log append, projection row, event row), per request and grouped.
  const anchors: Array<[string, Result]> = [];
  if (wanted('create')) {
    for (const [label, grouped] of [
      ['bare db, tx/request', '0'],
      ['bare db, grouped', '1'],
    ] as const) {
      const result = await withServer('bare-db', { ...databaseEnv, BENCH_BARE_GROUPED: grouped }, (info) => drive(info, bareScenario, seconds));
      Object.assign(figures, describe(`${database}: ${label}`, result));
      anchors.push([label, result]);
    }
  }
  await withServer('trellis', databaseEnv, async (info) => {
    for (const { key, name, scenario, ratio } of trellisScenarios(info)) {
      if (!wanted(key)) continue;
      Object.assign(figures, describe(`${database}: ${name}`, await drive(info, scenario, seconds), ratio ? bare : undefined, key === 'create' ? anchors : []));
    }
  });
  if (wanted('mixed')) await withServer('trellis', databaseEnv, async (info) => Object.assign(figures, await mixed(database, info, seconds)));
  if (!wanted('429')) return figures;
  await withServer('trellis', { ...databaseEnv, API_WRITES_PER_MINUTE: '10', BENCH_WARM_ROWS: '3' }, async (info) => {
    const scenario: Scenario = { method: 'POST', path: () => info.rowsPath, headers: { ...json, authorization: info.editor }, body: (i) => JSON.stringify({ data: { title: `row ${i}` } }) };
    Object.assign(figures, describe(`${database}: refused 429 (POST /rows over the write limit)`, await drive(info, scenario, seconds)));
  });
  return figures;
}

export async function runRestBench(options: { seconds?: number; databases?: Array<'pglite' | 'postgres'>; scenarios?: string[] } = {}): Promise<Figures> {
  const wanted = (scenario: string) => !options.scenarios || options.scenarios.includes(scenario);
  const pinned = pinThisProcess(1);
  const figures: Figures = { 'pinned (server core 0, load core 1)': String(pinned) };
  const databases = options.databases ?? (process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']);
  for (const database of databases) Object.assign(figures, await runFor(database, options.seconds ?? 5, wanted));
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const i = process.argv.indexOf('--seconds');
  const only = process.argv.filter((a) => a === 'pglite' || a === 'postgres') as Array<'pglite' | 'postgres'>;
  const s = process.argv.indexOf('--scenarios');
  const figures = await runRestBench({
    seconds: i >= 0 ? Number(process.argv[i + 1]) : undefined,
    databases: only.length ? only : undefined,
    scenarios: s >= 0 ? process.argv[s + 1]!.split(',') : undefined,
  });
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(64)} ${value}`);
  process.exit(0);
}
