/**
 * A fresh sync client's cold sync of a 50,000-row table (issue 12): the time
 * from connecting until the client holds every row, against a bare
 * Hocuspocus that serves the same state from memory, each server in its own
 * process pinned to core 0, the client on core 1. On Trellis the document is
 * stored (snapshot) and not loaded, so its load is part of the sync; the
 * server's heap after the sync is reported for both.
 *
 * The same table seeded over REST (`runColdSyncRestBench`, part
 * `cold-sync-rest`): a CSV through `POST /rows/import` into an empty
 * server; at once three fresh providers one after another on that server
 * (warm: the import still holds the document), then how long the server
 * stays busy after the seed (until a 2-s window under 5 % of a core) and
 * its peak resident memory; then three more providers after a restart on
 * the same data (cold: the first loads it). Each sync with the server's CPU
 * time meanwhile (less disturbed by a loaded machine than wall time). The bare Hocuspocus serves the state the
 * Trellis client received, from memory, three providers in a fresh process
 * (its first sync is its cold one); then a bare Hocuspocus that loads that
 * state from storage (a file) at each sync, the cold sync of a bare server
 * with a store, against which Trellis's first cold sync is also set. Each
 * sync's client apply is printed with the client's own CPU for it: the
 * same document from either server, so the same work (bench/apply-state.ts
 * measures it alone). `BENCH_KEEP_STATE=FILE` keeps the state the warm
 * client held.
 *
 *   npx tsx bench/cold-sync.ts [--rows 50000] [--rest]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as Y from 'yjs';
import { countRows, ensureSheet, insertRows, scaffoldDefaultColumns } from '../src/model/table/document';
import { connectClient, synced } from '../test/helpers/sync';
import { csvOf } from './csv';
import { pinThisProcess, spawnBenchServer, stopBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
type Info = { url: string; documentName: string; cookie?: string; stats: string };

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The same cells as bench/tables.ts's cold load: title, status, notes, a number, a checkbox. */
function tableState(rows: number): Uint8Array {
  const doc = new Y.Doc();
  ensureSheet(doc, 'sheet', null);
  scaffoldDefaultColumns(doc, 'sheet', null);
  for (let batch = 0; batch * 1000 < rows; batch++) {
    const count = Math.min(1000, rows - batch * 1000);
    insertRows(
      doc,
      Array.from({ length: count }, (_, i) => {
        const n = batch * 1000 + i;
        const data = { title: `Task number ${n} for the bench`, status: 'todo', notes: `Some notes about row ${n}, long enough to look like real text in a cell.`, estimate: n % 13, done: n % 2 === 0 };
        return { id: `r${n.toString(36).padStart(6, '0')}`, surfaceId: 'sheet', data };
      }),
      null,
    );
  }
  return Y.encodeStateAsUpdate(doc);
}

async function coldSync(mode: 'trellis' | 'bare', stateFile: string, rows: number): Promise<{ ms: number; heapMb: number }> {
  const { info, child } = await spawnBenchServer<Info>('cold-sync-server.ts', mode, `bench_cold_${mode}_${process.pid}`, { pinned: true, env: { BENCH_STATE_FILE: stateFile } });
  try {
    const started = performance.now();
    const client = connectClient(info.url, info.documentName, { cookie: info.cookie });
    await synced(client, 120_000);
    const ms = performance.now() - started;
    const held = countRows(client.doc);
    if (held !== rows) throw new Error(`${mode}: the client holds ${held} rows, not ${rows}`);
    // While the client is connected: the document is loaded.
    const { heapMb } = (await (await fetch(`${info.stats}/heap`)).json()) as { heapMb: number };
    client.destroy();
    return { ms, heapMb };
  } finally {
    await stopBenchServer(child);
  }
}

export async function runColdSyncBench(options: { rows?: number } = {}): Promise<Figures> {
  const rows = options.rows ?? 50_000;
  const dir = mkdtempSync(path.join(tmpdir(), 'trellis-cold-'));
  try {
    const stateFile = path.join(dir, 'state.bin');
    writeFileSync(stateFile, tableState(rows));
    const figures: Figures = { rows, 'pinned (server core 0, client core 1)': String(pinThisProcess(1)) };
    const bare = await coldSync('bare', stateFile, rows);
    const trellis = await coldSync('trellis', stateFile, rows);
    figures['bare Hocuspocus (from memory) cold sync ms'] = Math.round(bare.ms);
    figures['Trellis (stored, loaded by the sync) cold sync ms'] = Math.round(trellis.ms);
    figures['cold sync ratio (Trellis / bare)'] = round(trellis.ms / bare.ms, 2);
    figures['bare server heap after sync MB'] = round(bare.heapMb);
    figures['Trellis server heap after sync MB'] = round(trellis.heapMb);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type RestInfo = Info & { token: string; dataDir: string };
type Usage = { cpuMs: number; mainCpuMs?: number; rssMb: number; peakRssMb: number };

/** Fresh providers one after another: each one's time from connecting to holding every row, the server's CPU meanwhile; the last one's document. */
export async function syncs(
  info: { url: string; stats: string },
  documentName: string,
  credential: { token?: string; cookie?: string },
  rows: number,
  count: number,
): Promise<{ ms: number[]; cpuMs: number[]; waitMs: number[]; applyMs: number[]; applyCpuMs: number[]; received: string[]; doc: Y.Doc }> {
  const ms: number[] = [];
  const received: string[] = [];
  const cpuMs: number[] = [];
  const waitMs: number[] = [];
  const applyMs: number[] = [];
  // The client's own CPU for its apply (this process's; it runs nothing else meanwhile): steadier than wall time on a loaded machine.
  const applyCpuMs: number[] = [];
  let doc = new Y.Doc();
  for (let i = 0; i < count; i++) {
    const before = await usageOf(info);
    const started = performance.now();
    const client = connectClient(info.url, documentName, credential);
    // The client's first transaction is the state it is sent (the sync step 2): until it begins the client waits on the server, then it decodes.
    let applying: number | undefined;
    let applied: number | undefined;
    let applyingCpu: NodeJS.CpuUsage | undefined;
    let appliedCpu: NodeJS.CpuUsage | undefined;
    client.doc.on('beforeTransaction', () => {
      applying ??= performance.now();
      applyingCpu ??= process.cpuUsage();
    });
    client.doc.on('afterTransaction', () => {
      applied ??= performance.now();
      appliedCpu ??= process.cpuUsage(applyingCpu);
    });
    // What the server sent until the client synced: the same state should be the same bytes from either server.
    const sizes: number[] = [];
    client.provider.on('message', ({ event }: { event: { data: ArrayBuffer | Uint8Array } }) => void sizes.push(event.data.byteLength));
    await synced(client, 600_000);
    received.push(`${sizes.length} msgs ${Math.round(sizes.reduce((a, b) => a + b, 0) / 1024)} KB (largest ${Math.round(Math.max(0, ...sizes) / 1024)})`);
    ms.push(performance.now() - started);
    waitMs.push((applying ?? started) - started);
    applyMs.push((applied ?? started) - (applying ?? started));
    applyCpuMs.push(appliedCpu ? (appliedCpu.user + appliedCpu.system) / 1000 : 0);
    cpuMs.push((await usageOf(info)).cpuMs - before.cpuMs);
    const held = countRows(client.doc);
    if (held !== rows) throw new Error(`the client holds ${held} rows, not ${rows}`);
    doc = client.doc;
    client.provider.destroy();
  }
  return { ms, cpuMs, waitMs, applyMs, applyCpuMs, received, doc };
}

export const usageOf = async (info: { stats: string }): Promise<Usage> => (await fetch(`${info.stats}/usage`)).json() as Promise<Usage>;

/**
 * Waits until the server's CPU over a 2-s window is under 5 % of a core;
 * answers when that window began (ms after `since`) and the CPU spent from
 * `since` until then. The same for the serving thread alone
 * (`mainIdleAfterMs`, the first such window of its own CPU): the process's
 * count also holds V8's GC helper threads and libuv's pool, which work on
 * a large heap without holding back any request.
 */
export async function settle(info: { stats: string }, since: { at: number; cpuMs: number }, limitMs = 600_000): Promise<{ idleAfterMs: number; cpuMs: number; mainIdleAfterMs?: number }> {
  let last = await usageOf(info);
  let lastAt = performance.now();
  let mainIdleAfterMs: number | undefined;
  while (performance.now() - since.at < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const now = await usageOf(info);
    if (mainIdleAfterMs === undefined && now.mainCpuMs !== undefined && last.mainCpuMs !== undefined && now.mainCpuMs - last.mainCpuMs < 100) mainIdleAfterMs = lastAt - since.at;
    if (now.cpuMs - last.cpuMs < 100) return { idleAfterMs: lastAt - since.at, cpuMs: last.cpuMs - since.cpuMs, mainIdleAfterMs: mainIdleAfterMs ?? lastAt - since.at };
    last = now;
    lastAt = performance.now();
  }
  return { idleAfterMs: limitMs, cpuMs: last.cpuMs - since.cpuMs, mainIdleAfterMs };
}

/** Each sync's wait for its state and its decode on the client: `wait / apply (the apply's client CPU)` a sync. */
const phasesOf = (run: { waitMs: number[]; applyMs: number[]; applyCpuMs: number[] }) =>
  run.waitMs.map((wait, i) => `${Math.round(wait)} / ${Math.round(run.applyMs[i]!)} (${Math.round(run.applyCpuMs[i]!)})`).join(', ');

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function runColdSyncRestBench(options: { rows?: number } = {}): Promise<Figures> {
  const rows = options.rows ?? 50_000;
  const figures: Figures = { rows, 'pinned (server core 0, client core 1)': String(pinThisProcess(1)), 'load average at start': os.loadavg().map((l) => l.toFixed(1)).join(' ') };
  const runId = `bench_coldrest_${process.pid}`;
  const seeded = await spawnBenchServer<RestInfo>('cold-sync-server.ts', 'trellis-rest', runId, { pinned: true });
  let warm: number[];
  let warmCpu: number[];
  let state: Uint8Array;
  const { info } = seeded;
  try {
    const form = new FormData();
    form.append('file', new Blob([csvOf(rows)], { type: 'text/csv' }), 'seed.csv');
    const before = await usageOf(info);
    const seedStarted = performance.now();
    const imported = await fetch(`${info.url}/api/workspaces/welcome/rows/import`, { method: 'POST', body: form, headers: { authorization: `Bearer ${info.token}` } });
    const report = (await imported.json()) as { imported?: number };
    if (report.imported !== rows) throw new Error(`import answered ${imported.status}: ${JSON.stringify(report).slice(0, 300)}`);
    const seeded_ = { at: performance.now(), cpuMs: (await usageOf(info)).cpuMs };
    figures['seed: POST /rows/import s, server CPU s'] = `${round((seeded_.at - seedStarted) / 1000, 1)}, ${round((seeded_.cpuMs - before.cpuMs) / 1000, 1)}`;
    // At once, as a person opens the table they just imported: the document is still held from the import.
    const synced_ = await syncs(info, info.documentName, { token: info.token }, rows, 3);
    warm = synced_.ms;
    warmCpu = synced_.cpuMs;
    figures['Trellis warm: client waits for its state / applies it ms (client CPU)'] = phasesOf(synced_);
    figures['Trellis warm: received until synced'] = synced_.received.join('; ');
    state = Y.encodeStateAsUpdate(synced_.doc);
    // For a look at what a client applies (bench/apply-state.ts): the state the warm client holds.
    if (process.env.BENCH_KEEP_STATE) writeFileSync(process.env.BENCH_KEEP_STATE, state);
    const settled = await settle(info, seeded_);
    const after = await usageOf(info);
    figures['after the seed: busy for s, syncs included (until a 2-s window under 5 % of a core)'] = round(settled.idleAfterMs / 1000, 1);
    figures['after the seed: server CPU s until then'] = round(settled.cpuMs / 1000, 1);
    if (settled.mainIdleAfterMs !== undefined) figures['after the seed: serving thread alone busy for s (its own 2-s window under 5 %)'] = round(settled.mainIdleAfterMs / 1000, 1);
    figures['server RSS peak / after settling MB'] = `${Math.round(after.peakRssMb)} / ${Math.round(after.rssMb)}`;
  } finally {
    await stopBenchServer(seeded.child);
  }
  const restarted = await spawnBenchServer<RestInfo>('cold-sync-server.ts', 'trellis-rest', `${runId}_again`, { pinned: true, env: { BENCH_DATA_DIR: info.dataDir, BENCH_TOKEN: info.token } });
  let cold: number[];
  let coldCpu: number[];
  try {
    const coldRun = await syncs(restarted.info, info.documentName, { token: info.token }, rows, 3);
    cold = coldRun.ms;
    coldCpu = coldRun.cpuMs;
    figures['Trellis cold: client waits for its state / applies it ms (client CPU)'] = phasesOf(coldRun);
    figures['Trellis cold: received until synced'] = coldRun.received.join('; ');
    figures['restarted server RSS peak after cold syncs MB'] = Math.round((await usageOf(restarted.info)).peakRssMb);
  } finally {
    await stopBenchServer(restarted.child);
    rmSync(info.dataDir, { recursive: true, force: true });
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'trellis-coldrest-'));
  let bare: number[];
  let bareCpu: number[];
  let bareLoad: number[];
  let bareLoadCpu: number[];
  try {
    const stateFile = path.join(dir, 'state.bin');
    writeFileSync(stateFile, state);
    const server = await spawnBenchServer<Info>('cold-sync-server.ts', 'bare', `${runId}_bare`, { pinned: true, env: { BENCH_STATE_FILE: stateFile } });
    try {
      const bareRun = await syncs(server.info, server.info.documentName, {}, rows, 3);
      bare = bareRun.ms;
      bareCpu = bareRun.cpuMs;
      figures['bare: client waits for its state / applies it ms (client CPU)'] = phasesOf(bareRun);
      figures['bare: received until synced'] = bareRun.received.join('; ');
    } finally {
      await stopBenchServer(server.child);
    }
    // Cold against cold: a bare Hocuspocus that loads the document from storage (here the file) before it answers, as each of its syncs does.
    const loading = await spawnBenchServer<Info>('cold-sync-server.ts', 'bare-load', `${runId}_bareload`, { pinned: true, env: { BENCH_STATE_FILE: stateFile } });
    try {
      const loadRun = await syncs(loading.info, loading.info.documentName, {}, rows, 3);
      bareLoad = loadRun.ms;
      bareLoadCpu = loadRun.cpuMs;
      figures['bare loading from storage: client waits for its state / applies it ms (client CPU)'] = phasesOf(loadRun);
    } finally {
      await stopBenchServer(loading.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const list = (values: number[]) => values.map((v) => Math.round(v)).join(', ');
  figures['bare Hocuspocus, fresh process: syncs ms (server CPU ms)'] = `${list(bare)} (${list(bareCpu)})`;
  figures['bare Hocuspocus loading from storage at each sync: syncs ms (server CPU ms)'] = `${list(bareLoad)} (${list(bareLoadCpu)})`;
  figures['Trellis warm (right after the seed): syncs ms (server CPU ms)'] = `${list(warm)} (${list(warmCpu)})`;
  figures['Trellis cold (restarted, nothing loaded): syncs ms (server CPU ms)'] = `${list(cold)} (${list(coldCpu)})`;
  // The bare server's first sync in its process is its cold one; its later ones are its warm ones.
  figures['cold: Trellis first / bare first'] = round(cold[0]! / bare[0]!, 2);
  figures['cold: p50 Trellis / p50 bare'] = round(p50(cold) / p50(bare), 2);
  figures['cold against cold: Trellis first / bare loading from storage first'] = round(cold[0]! / bareLoad[0]!, 2);
  figures['warm: p50 Trellis / p50 bare (its later syncs)'] = round(p50(warm) / p50(bare.slice(1)), 2);
  figures['worst single sync / bare p50'] = round(Math.max(...cold, ...warm) / p50(bare), 2);
  figures['load average at end'] = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const i = process.argv.indexOf('--rows');
  const rows = i >= 0 ? Number(process.argv[i + 1]) : undefined;
  const figures = process.argv.includes('--rest') ? await runColdSyncRestBench({ rows }) : await runColdSyncBench({ rows });
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(56)} ${value}`);
  process.exit(0);
}
