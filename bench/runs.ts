/**
 * Runs (issue 35, docs/RUNS.md): what recording runs costs the write path,
 * and how long reading and reverting a big run takes. Prints figures.
 *
 * 1. REST creates per second (`POST /rows`, 10 keep-alive connections, the
 *    server in its own process pinned to core 0, bench/rest.ts's driver)
 *    by a person's session, whose writes join no run, and by the same
 *    session naming a run (`Trellis-Run`), whose writes are recorded.
 *    Alternated, best of each, so the shared machine's drift hits both.
 * 2. The typing trace (automerge-paper, one Y transaction per edit through
 *    one provider, bench/doc.ts's replay) without a run and with the
 *    connection in a run (`?run=`). A prefix of the trace by default
 *    (`--edits`, 0 = all of it): the whole trace takes minutes per replay
 *    on two shared cores.
 * 3. A run of 10,000 row changes (PGlite unless TEST_DATABASE_URL is set; 5,000 cells of rows a person
 *    made, 5,000 rows created, written through a sync connection in the
 *    run): `GET /runs/{id}/changes`, the dry-run preview, and the revert.
 *
 *   npm run bench -- runs
 *   npx tsx bench/runs.ts --edits 20000 --seconds 5
 */
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as Y from 'yjs';
import { tablesDocumentName } from '../src/model/document-names';
import { orderOf, rowsRoot, sheetMapOf } from '../src/model/table/layout';
import type { CellValue } from '../src/model/table/types';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { acknowledged, connectClient, synced } from '../test/helpers/sync';
import { createWorkspace, signInUser } from '../test/workspaces/helpers';
import { expectedText, loadTrace, replay } from './doc';
import { drive, withServer, type Scenario } from './rest';
import { pinThisProcess } from './spawn-server';

type Figures = Record<string, number | string>;

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const percentApart = (a: number, b: number) => round((Math.abs(a - b) / Math.min(a, b)) * 100, 1);

async function restFigures(seconds: number, rounds: number): Promise<Figures> {
  return withServer('trellis', { TEST_DATABASE_URL: '' }, async (info) => {
    const headers = { 'content-type': 'application/json', cookie: info.session! };
    const create = (run: boolean): Scenario => ({
      method: 'POST',
      path: () => info.rowsPath,
      headers: run ? { ...headers, 'trellis-run': info.runId! } : headers,
      body: (i) => JSON.stringify({ data: { title: `row ${i}`, status: 'todo' } }),
    });
    const without: number[] = [];
    const within: number[] = [];
    const cpu: Record<'without' | 'within', number[]> = { without: [], within: [] };
    for (let i = 0; i < rounds; i++) {
      for (const inRun of [false, true]) {
        const result = await drive(info, create(inRun), seconds);
        (inRun ? within : without).push(result.rps);
        cpu[inRun ? 'within' : 'without'].push(result.cpuMicrosPerRequest);
      }
    }
    const least = (list: number[]) => Math.min(...list);
    const best = (list: number[]) => Math.max(...list);
    return {
      'REST POST /rows req/s, no run (best of rounds)': Math.round(best(without)),
      'REST POST /rows req/s, in a run (best of rounds)': Math.round(best(within)),
      'REST rounds, no run | in a run': `${without.map(Math.round).join(' ')} | ${within.map(Math.round).join(' ')}`,
      'REST no run vs in a run, % apart (goal <= 5)': percentApart(best(without), best(within)),
      'REST server CPU µs/request, no run | in a run (least of rounds)': `${Math.round(least(cpu.without))} | ${Math.round(least(cpu.within))}`,
      'REST server CPU no run vs in a run, % apart': percentApart(least(cpu.without), least(cpu.within)),
    };
  });
}

async function traceFigures(limit: number): Promise<Figures> {
  const trace = loadTrace();
  const edits = limit > 0 ? Math.min(limit, trace.txns.length) : trace.txns.length;
  const expected = expectedText(trace, edits);
  const figures: Figures = { 'trace edits replayed': `${edits} of ${trace.txns.length}${edits < trace.txns.length ? ' (a prefix: --edits 0 replays all)' : ''}` };
  const times: Record<'without' | 'within', number[]> = { without: [], within: [] };
  const cpu: Record<'without' | 'within', number[]> = { without: [], within: [] };
  // Alternated twice: a replay takes long enough for the shared machine's load to move between them.
  for (let i = 0; i < 2; i++) {
    for (const inRun of [false, true]) {
      const result = await replay('trellis', trace, edits, 0, false, inRun ? { BENCH_RUN: '1' } : {});
      if (result.stats.text !== expected || result.clientText !== expected) throw new Error(`the replay ${inRun ? 'in a run' : 'without a run'} did not end in the trace's text`);
      times[inRun ? 'within' : 'without'].push(result.ackedMs / 1000);
      cpu[inRun ? 'within' : 'without'].push(result.stats.cpuMs / 1000);
    }
  }
  const best = (list: number[]) => Math.min(...list);
  return {
    ...figures,
    'typing trace s, no run (best of 2)': round(best(times.without)),
    'typing trace s, in a run (best of 2)': round(best(times.within)),
    'typing trace replays s, no run | in a run': `${times.without.map((s) => round(s)).join(' ')} | ${times.within.map((s) => round(s)).join(' ')}`,
    'typing trace server CPU s, no run | in a run': `${cpu.without.map((s) => round(s)).join(' ')} | ${cpu.within.map((s) => round(s)).join(' ')}`,
    'typing trace no run vs in a run, % apart (goal <= 5)': percentApart(best(times.without), best(times.within)),
  };
}

async function bigRunFigures(changes: number): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const ada = await signInUser(t, 'ada@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const ws = await createWorkspace(t, ada, { name: 'Big run', slug: 'big-run', mode: 'table' });
    const base = '/api/workspaces/big-run';
    const documentName = tablesDocumentName(ws.id);
    const surfaceId = ws.primarySurface.id as string;
    const half = Math.floor(changes / 2);
    const insert = (doc: Y.Doc, prefix: string, from: number, count: number) => {
      const order = orderOf(sheetMapOf(doc, surfaceId)!)!;
      const ids: string[] = [];
      for (let i = from; i < from + count; i++) {
        const row = new Y.Map<CellValue>();
        row.set('title', `${prefix} ${i}`);
        const id = `${prefix}${i.toString(36).padStart(7, '0')}`;
        rowsRoot(doc).set(id, row);
        ids.push(id);
      }
      order.push(ids);
      return ids;
    };
    // Ada's rows, outside any run, 500 a transaction.
    const person = connectClient(t.url, documentName, { cookie: ada.cookie });
    await synced(person, 60_000);
    const hers: string[] = [];
    for (let from = 0; from < half; from += 500) person.doc.transact(() => hers.push(...insert(person.doc, 'ada', from, Math.min(500, half - from))));
    await acknowledged(person, 120_000);
    person.destroy();

    const { run } = (await t.request('POST', `${base}/runs`, { as: ada.as, body: { name: 'Ten thousand changes' } })).body;
    const agent = connectClient(t.url, documentName, { cookie: ada.cookie }, { run: run.id });
    await synced(agent, 60_000);
    for (let from = 0; from < half; from += 500) {
      agent.doc.transact(() => {
        for (const id of hers.slice(from, from + 500)) rowsRoot(agent.doc).get(id)!.set('title', `changed ${id}`);
      });
    }
    for (let from = 0; from < changes - half; from += 500) agent.doc.transact(() => insert(agent.doc, 'run', from, Math.min(500, changes - half - from)));
    await acknowledged(agent, 120_000);
    agent.destroy();
    await t.services.sync.drain();

    const timed = async (method: string, url: string) => {
      const started = performance.now();
      const res = await t.request(method, url, { as: ada.as });
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${res.text.slice(0, 300)}`);
      return { ms, body: res.body };
    };
    const read = await timed('GET', `${base}/runs/${run.id}/changes`);
    const preview = await timed('POST', `${base}/runs/${run.id}/revert?dryRun=true`);
    const revert = await timed('POST', `${base}/runs/${run.id}/revert`);
    return {
      'big run: database': t.services.database.kind,
      'big run: row changes recorded': `${read.body.changes.length} (${half} rows updated, ${changes - half} created)`,
      'big run: GET /runs/{id}/changes s (goal < 5)': round(read.ms / 1000),
      'big run: revert preview (dryRun) s': round(preview.ms / 1000),
      'big run: revert s (goal < 5)': round(revert.ms / 1000),
      'big run: reverted': `${revert.body.reverted.rowsRemoved} rows removed, ${revert.body.reverted.cellsRestored} cells restored, ${revert.body.conflicts.length} conflicts`,
    };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

export async function runRunsBench(options: { edits?: number; seconds?: number; changes?: number } = {}): Promise<Figures> {
  const figures: Figures = { 'pinned (server core 0, client core 1)': String(pinThisProcess(1)), 'load average at start': os.loadavg()[0]!.toFixed(1) };
  Object.assign(figures, await restFigures(options.seconds ?? 5, 3));
  Object.assign(figures, await traceFigures(options.edits ?? 20_000));
  Object.assign(figures, await bigRunFigures(options.changes ?? 10_000));
  figures['load average at end'] = os.loadavg()[0]!.toFixed(1);
  return figures;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const figures = await runRunsBench({ edits: arg('--edits'), seconds: arg('--seconds'), changes: arg('--changes') });
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(64)} ${value}`);
  process.exit(0);
}
