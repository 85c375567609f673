/**
 * Sync-core figures (issue 4): REST row latency on a warm document against
 * a bare Fastify route, bulk update, cold load of a 50,000-row table from
 * the log and from a snapshot, and fan-out of one write to many sync
 * clients against a bare Hocuspocus. Prints figures; asserts nothing.
 */
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { Agent, request as undiciRequest } from 'undici';
import * as Y from 'yjs';
import { compact, loadInto } from '../src/sync/document-store';
import { append } from '../src/sync/document-store';
import { ensureSheet, getRow, insertRows, scaffoldDefaultColumns } from '../src/model/table/document';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { connectClient, eventually, synced, type SyncClient } from '../test/helpers/sync';
import { spawnBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;

export function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function timeEach(n: number, fn: (i: number) => Promise<void>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

/** Requests per second with `connections` concurrent keep-alive clients for `ms`. */
async function throughput(url: string, init: { method: string; headers: Record<string, string>; body: () => string }, ms: number, connections = 10) {
  const dispatcher = new Agent({ connections, pipelining: 1 });
  let done = 0;
  let failed = 0;
  const deadline = performance.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const res = await undiciRequest(url, { method: init.method as 'POST', headers: init.headers, body: init.body(), dispatcher });
        await res.body.text();
        if (res.statusCode < 300) done++;
        else failed++;
      }
    }),
  );
  await dispatcher.close();
  return { rps: done / (ms / 1000), failed };
}

async function restFigures(): Promise<Figures> {
  // The spec's 300 writes/minute per key would cap the load test itself; the benchmark measures the server.
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const { cookie } = await signIn(t, 'bench@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const rowsUrl = `${t.url}/api/workspaces/welcome/rows`;
    // Warm the document and the routes.
    for (let i = 0; i < 50; i++) await t.request('POST', '/api/workspaces/welcome/rows', { body: { data: { title: `warm ${i}` } }, as: { cookie } });
    const ids: string[] = [];
    const create = await timeEach(500, async (i) => {
      const res = await undiciRequest(rowsUrl, { method: 'POST', headers, body: JSON.stringify({ data: { title: `row ${i}`, status: 'todo' } }) });
      ids.push(((await res.body.json()) as { id: string }).id);
    });
    const patch = await timeEach(500, async (i) => {
      const res = await undiciRequest(`${rowsUrl}/${ids[i]}`, { method: 'PATCH', headers, body: JSON.stringify({ data: { status: 'doing' } }) });
      await res.body.text();
    });
    const bulkUnique = JSON.stringify({ updates: ids.slice(0, 500).map((id, i) => ({ id, data: { notes: `bulk ${i}` } })) });
    const bulkTimes = await timeEach(5, async () => {
      const res = await undiciRequest(`${t.url}/api/workspaces/welcome/rows/bulk`, { method: 'PATCH', headers, body: bulkUnique });
      await res.body.text();
    });
    const trellis = await throughput(rowsUrl, { method: 'POST', headers, body: () => JSON.stringify({ data: { title: 'load' } }) }, 3000);

    const bare = Fastify();
    bare.post('/bare', async (request) => ({ id: 'x', data: (request.body as { data: unknown }).data }));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/bare`;
    const bareFigures = await throughput(bareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: () => JSON.stringify({ data: { title: 'load' } }) }, 3000);
    await bare.close();
    return {
      'REST create p50 ms': round(percentile(create, 50)),
      'REST create p99 ms': round(percentile(create, 99)),
      'REST patch p50 ms': round(percentile(patch, 50)),
      'REST patch p99 ms': round(percentile(patch, 99)),
      'bulk update of 500 rows ms (median of 5)': round(percentile(bulkTimes, 50)),
      'REST create req/s (10 conns)': Math.round(trellis.rps),
      'bare Fastify POST req/s (10 conns)': Math.round(bareFigures.rps),
      'REST create / bare ratio': round(trellis.rps / bareFigures.rps, 3),
      database: t.services.database.kind,
    };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

/** 50,000 rows written to the log as 50 updates of 1,000, then loaded cold from the log and from a snapshot. */
async function coldLoadFigures(rows = 50_000): Promise<Figures> {
  const t = await startTestApp();
  try {
    const name = 'bench/cold';
    const writer = new Y.Doc();
    const updates: Uint8Array[] = [];
    writer.on('update', (u: Uint8Array) => updates.push(u));
    ensureSheet(writer, 'sheet', null);
    scaffoldDefaultColumns(writer, 'sheet', null);
    for (let batch = 0; batch < rows / 1000; batch++) {
      insertRows(
        writer,
        Array.from({ length: 1000 }, (_, i) => {
          const n = batch * 1000 + i;
          return { id: `r${n.toString(36).padStart(6, '0')}`, surfaceId: 'sheet', data: { title: `Task number ${n} for the bench`, status: 'todo', notes: `Some notes about row ${n}, long enough to look like real text in a cell.`, estimate: n % 13, done: n % 2 === 0 } };
        }),
        null,
      );
    }
    for (const u of updates) await append(t.services.db, name, u, null);
    const measure = async () => {
      globalThis.gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      const doc = new Y.Doc();
      const start = performance.now();
      await loadInto(t.services.db, name, doc);
      const ms = performance.now() - start;
      const check = getRow(doc, 'r000000');
      globalThis.gc?.();
      const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
      doc.destroy();
      if (!check) throw new Error('row missing after load');
      return { ms, heapMb };
    };
    const fromLog = await measure();
    const compacted = await compact(t.services.db, name, new Date());
    const fromSnapshot = await measure();
    return {
      'cold load 50k rows from log ms': round(fromLog.ms, 0),
      'cold load 50k rows from log heap MB': globalThis.gc ? round(fromLog.heapMb, 1) : 'run with --expose-gc',
      'cold load 50k rows from snapshot ms': round(fromSnapshot.ms, 0),
      'cold load 50k rows from snapshot heap MB': globalThis.gc ? round(fromSnapshot.heapMb, 1) : 'run with --expose-gc',
      'snapshot bytes (V2)': compacted?.bytes ?? 0,
      'log bytes (V1 updates)': updates.reduce((s, u) => s + u.byteLength, 0),
    };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

type ServerInfo = { url: string; documentName: string; rowsPath: string; cookie?: string };

function spawnServer(mode: 'trellis' | 'bare') {
  return spawnBenchServer<ServerInfo>('fanout-server.ts', mode, `bench_${mode}_${process.pid}`);
}

/** Median time from one server-side write until every connected client has it. */
async function fanOut(mode: 'trellis' | 'bare', clients: number, rounds = 5): Promise<number> {
  const { info, child } = await spawnServer(mode);
  const connected: SyncClient[] = [];
  try {
    for (let i = 0; i < clients; i++) connected.push(connectClient(info.url, info.documentName, { cookie: info.cookie }));
    await Promise.all(connected.map((c) => synced(c, 60_000)));
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(info.cookie ? { cookie: `svc-session=${info.cookie}` } : {}) };
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const id = `fan-${mode}-${r}`;
      const start = performance.now();
      const body = mode === 'trellis' ? { data: { title: id } } : { id };
      const res = await fetch(info.url + info.rowsPath, { method: 'POST', headers, body: JSON.stringify(body) });
      const created = (await res.json()) as { id?: string };
      const rowId = mode === 'trellis' ? created.id! : id;
      await eventually(() => connected.every((c) => getRow(c.doc, rowId)), 60_000, 1);
      times.push(performance.now() - start);
    }
    return percentile(times.sort((a, b) => a - b), 50);
  } finally {
    for (const c of connected) c.destroy();
    child.kill('SIGKILL');
  }
}

async function fanOutFigures(): Promise<Figures> {
  const figures: Figures = {};
  for (const clients of [100, 1000]) {
    const bare = await fanOut('bare', clients);
    console.error(`  bare fan-out to ${clients}: ${round(bare, 1)} ms`);
    const trellis = await fanOut('trellis', clients);
    console.error(`  trellis fan-out to ${clients}: ${round(trellis, 1)} ms`);
    figures[`fan-out to ${clients} clients, bare Hocuspocus ms`] = round(bare, 1);
    figures[`fan-out to ${clients} clients, Trellis (REST write) ms`] = round(trellis, 1);
    figures[`fan-out to ${clients} clients, ratio`] = round(trellis / bare, 2);
  }
  return figures;
}

export async function runTablesBench(only?: string[]): Promise<Figures> {
  await prepareTemplate();
  const parts: Array<[string, () => Promise<Figures>]> = [
    ['rest', restFigures],
    ['cold', () => coldLoadFigures()],
    ['fanout', fanOutFigures],
  ];
  const figures: Figures = {};
  for (const [name, run] of parts) {
    if (only && only.length > 0 && !only.includes(name)) continue;
    console.error(`tables bench: ${name}...`);
    Object.assign(figures, await run());
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const figures = await runTablesBench(process.argv.slice(2));
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(52)} ${value}`);
  process.exit(0);
}
