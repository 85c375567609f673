/**
 * A fresh sync client's cold sync of a 50,000-row table (issue 12): the time
 * from connecting until the client holds every row, against a bare
 * Hocuspocus that serves the same state from memory, each server in its own
 * process pinned to core 0, the client on core 1. On Trellis the document is
 * stored (snapshot) and not loaded, so its load is part of the sync; the
 * server's heap after the sync is reported for both.
 *
 *   npx tsx bench/cold-sync.ts [--rows 50000]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as Y from 'yjs';
import { countRows, ensureSheet, insertRows, scaffoldDefaultColumns } from '../src/model/table/document';
import { connectClient, synced } from '../test/helpers/sync';
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
  const { info, child } = await spawnBenchServer<Info>('cold-sync-server.ts', mode, `bench_cold_${mode}_${process.pid}`, { core: 0, env: { BENCH_STATE_FILE: stateFile } });
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

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const i = process.argv.indexOf('--rows');
  const figures = await runColdSyncBench({ rows: i >= 0 ? Number(process.argv[i + 1]) : undefined });
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(56)} ${value}`);
  process.exit(0);
}
