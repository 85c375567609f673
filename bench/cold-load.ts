/**
 * The first sync after a restart, alone and repeatable (goal 6): seeds a
 * table over REST once (as bench/cold-sync.ts's `--rest` part does), waits
 * until the server is idle, keeps its data directory, then restarts on a
 * fresh copy of it `--restarts` times and times one fresh client's sync on
 * each (the load is part of it), with the server's CPU meanwhile.
 * `--data-dir DIR --token T --document D` reuses a seed kept by an earlier
 * run (so two branches load the same stored state). Profile the restarts
 * with `BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof"`
 * (only the restarted servers get it).
 *
 *   npx tsx bench/cold-load.ts [--rows 50000] [--restarts 3] [--data-dir DIR --token T --document D]
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { csvOf } from './csv';
import { settle, syncs, usageOf, type RestInfo } from './cold-sync';
import { pinThisProcess, spawnBenchServer, stopBenchServer } from './spawn-server';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const rows = Number(arg('--rows') ?? 50_000);
const restarts = Number(arg('--restarts') ?? 3);
const profileOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
delete process.env.BENCH_SERVER_NODE_OPTIONS;
pinThisProcess(1);
console.log(`load average at start ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);

let seed = { dataDir: arg('--data-dir'), token: arg('--token'), documentName: arg('--document') };
if (!seed.dataDir) {
  const seeded = await spawnBenchServer<RestInfo>('cold-sync-server.ts', 'trellis-rest', `bench_coldload_${process.pid}`, { pinned: true });
  const { info } = seeded;
  try {
    const form = new FormData();
    form.append('file', new Blob([csvOf(rows)], { type: 'text/csv' }), 'seed.csv');
    const before = { at: performance.now(), cpuMs: (await usageOf(info)).cpuMs };
    const imported = await fetch(`${info.url}/api/workspaces/welcome/rows/import`, { method: 'POST', body: form, headers: { authorization: `Bearer ${info.token}` } });
    if (!imported.ok) throw new Error(`import answered ${imported.status}`);
    await settle(info, before);
  } finally {
    await stopBenchServer(seeded.child);
  }
  seed = { dataDir: info.dataDir, token: info.token, documentName: info.documentName };
  console.log(`seed kept: --data-dir ${seed.dataDir} --token ${seed.token} --document ${seed.documentName}`);
}

if (profileOptions) process.env.BENCH_SERVER_NODE_OPTIONS = profileOptions;
for (let i = 0; i < restarts; i++) {
  const copy = mkdtempSync(path.join(tmpdir(), 'trellis-coldload-'));
  cpSync(seed.dataDir!, copy, { recursive: true });
  const restarted = await spawnBenchServer<RestInfo>('cold-sync-server.ts', 'trellis-rest', `bench_coldload_${process.pid}_${i}`, { pinned: true, env: { BENCH_DATA_DIR: copy, BENCH_TOKEN: seed.token! } });
  try {
    const run = await syncs(restarted.info, seed.documentName!, { token: seed.token }, rows, 2);
    console.log(`restart ${i}: first sync ${Math.round(run.ms[0]!)} ms (server CPU ${Math.round(run.cpuMs[0]!)} ms; wait / apply ${Math.round(run.waitMs[0]!)} / ${Math.round(run.applyMs[0]!)}), second ${Math.round(run.ms[1]!)} ms (CPU ${Math.round(run.cpuMs[1]!)}); ${run.received[0]}`);
  } finally {
    await stopBenchServer(restarted.child);
    rmSync(copy, { recursive: true, force: true });
  }
}
console.log(`load average at end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
process.exit(0);
