/**
 * What durability costs on embedded PGlite (issue 26 item 1). In one run,
 * alternating, the real app over PGlite as it ships (`-F`, NODEFS fsync a
 * no-op: an acknowledged write survives a killed process but not a power
 * cut) and over src/persistence/durable-fs.ts (the default: every commit
 * before an acknowledgement is fsynced). The server runs in its own process
 * pinned to core 0 (bench/durability-server.ts), this one drives it from core 1.
 *
 * - REST creates: 8 concurrent writers, POST /rows, creates per second.
 * - sync appends, 1 client: insert a row, wait for the server's
 *   acknowledgement, repeat (the latency of one durable append).
 * - sync appends, 8 clients: the same on 8 providers at once (group commit
 *   shares one commit, and one fsync, between them).
 *
 *   npm run bench -- durability [--rounds 2]
 */
import os from 'node:os';
import { insertRow } from '../src/model/table/document';
import { connectClient, synced, type SyncClient } from '../test/helpers/sync';
import type { DurabilityServerInfo } from './durability-server';
import { pinThisProcess, spawnBenchServer, stopBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function restCreates(info: DurabilityServerInfo, total: number, writers: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < total) {
        const i = next++;
        const res = await fetch(info.url + info.rowsPath, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: info.editor },
          body: JSON.stringify({ data: { title: `bench ${i}` } }),
        });
        if (res.status !== 200) throw new Error(`create answered ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

/** Resolves when the server has acknowledged every local change (event-driven: a poll would pace the loop). */
function acknowledgedNow(client: SyncClient): Promise<void> {
  return new Promise((resolve) => {
    if (client.provider.unsyncedChanges === 0) return resolve();
    const onChange = ({ number }: { number: number }) => {
      if (number !== 0) return;
      client.provider.off('unsyncedChanges', onChange);
      resolve();
    };
    client.provider.on('unsyncedChanges', onChange);
  });
}

async function syncAppends(info: DurabilityServerInfo, clients: number, perClient: number, tag: string): Promise<number> {
  const token = info.editor.replace(/^Bearer /, '');
  const connected = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = connectClient(info.url, info.documentName, { token });
      await synced(client, 30_000);
      return client;
    }),
  );
  const started = performance.now();
  await Promise.all(
    connected.map(async (client, c) => {
      for (let i = 0; i < perClient; i++) {
        insertRow(client.doc, { id: `${tag}-${c}-${i}`, surfaceId: info.surfaceId, data: { title: `sync ${i}` } }, null);
        await acknowledgedNow(client);
      }
    }),
  );
  const perSecond = (clients * perClient) / ((performance.now() - started) / 1000);
  for (const client of connected) client.destroy();
  return perSecond;
}

type Flushes = { count: number; ms: number };
type Measured = { rate: number; flushesPerOp: number; msPerFlush: number };

/** Runs `ops` operations through `run` (which answers their rate) and reads the server's flush counter around it. */
async function withFlushes(info: DurabilityServerInfo, ops: number, run: () => Promise<number>): Promise<Measured> {
  const read = async (): Promise<Flushes> => (await fetch(info.flushes)).json() as Promise<Flushes>;
  const before = await read();
  const rate = await run();
  const after = await read();
  const count = after.count - before.count;
  return { rate, flushesPerOp: count / ops, msPerFlush: count > 0 ? (after.ms - before.ms) / count : 0 };
}

async function measure(storage: 'shipped' | 'durable', runId: string) {
  const { info, child } = await spawnBenchServer<DurabilityServerInfo>('durability-server.ts', storage, runId, { pinned: true });
  try {
    await restCreates(info, 50, 4); // warm-up
    const rest = await withFlushes(info, 600, () => restCreates(info, 600, 8));
    const sync1 = await withFlushes(info, 150, () => syncAppends(info, 1, 150, `${runId}-a`));
    const sync8 = await withFlushes(info, 480, () => syncAppends(info, 8, 60, `${runId}-b`));
    return { rest, sync1, sync8 };
  } finally {
    await stopBenchServer(child);
  }
}

export async function runDurabilityBench(options: { rounds?: number } = {}): Promise<Figures> {
  pinThisProcess(1);
  const loadBefore = os.loadavg()[0]!.toFixed(1);
  const rounds = options.rounds ?? 2;
  const results: Record<'shipped' | 'durable', Record<'rest' | 'sync1' | 'sync8', Measured>[]> = { shipped: [], durable: [] };
  for (let r = 0; r < rounds; r++) {
    for (const storage of ['shipped', 'durable'] as const) results[storage].push(await measure(storage, `durability_${process.pid}_${storage}_${r}`));
  }
  const mean = (storage: 'shipped' | 'durable', key: 'rest' | 'sync1' | 'sync8', figure: keyof Measured = 'rate') =>
    results[storage].reduce((sum, x) => sum + x[key][figure], 0) / rounds;
  const figures: Figures = { rounds, 'load average before': loadBefore };
  const labels = { rest: 'REST creates/s (8 writers)', sync1: 'sync appends/s (1 client, wait for each ack)', sync8: 'sync appends/s (8 clients)' } as const;
  for (const key of ['rest', 'sync1', 'sync8'] as const) {
    figures[`${labels[key]}, shipped (-F, no fsync)`] = `${round(mean('shipped', key))} (${results.shipped.map((x) => round(x[key].rate)).join(', ')})`;
    figures[`${labels[key]}, durable (fsync)`] = `${round(mean('durable', key))} (${results.durable.map((x) => round(x[key].rate)).join(', ')})`;
    figures[`${labels[key]}, durable / shipped`] = round(mean('durable', key) / mean('shipped', key), 2);
    figures[`${labels[key]}, durable: flushes per write, ms per flush`] = `${round(mean('durable', key, 'flushesPerOp'), 2)}, ${round(mean('durable', key, 'msPerFlush'), 2)}`;
  }
  figures['load average after'] = os.loadavg()[0]!.toFixed(1);
  return figures;
}
