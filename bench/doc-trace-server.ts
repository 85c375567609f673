/**
 * A server for the editing-trace replay of bench/doc.ts, in its own process
 * so the replaying client in the parent does not share its core. `trellis`
 * runs the real app (auth, the durable update log, the observer's events
 * and projections); `bare` runs an in-memory Hocuspocus with
 * `flushDelay: false` and the same websocket wiring, nothing else;
 * `bare-durable` the same with every update group-committed to the
 * database before it is applied (the floor of bench/write-path.ts). Prints
 * one JSON line when ready: `{ url, documentName, cookie? }`.
 *
 * `GET /bench/stats` (after the client has its acknowledgements) waits for
 * the server's queued work, compacts the document's log and answers the
 * server document's text and sizes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Hocuspocus } from '@hocuspocus/server';
import { sql } from 'kysely';
import * as Y from 'yjs';
import { readDocBody } from '../src/model/doc/body';
import { tablesDocumentName } from '../src/model/document-names';
import { findPrincipals } from '../src/persistence/workspaces';
import { serverOrigin } from '../src/sync/origins';
import { insertRows } from '../src/model/table/document';
import { startTestApp } from '../test/helpers/app';
import { freshDataStore, prepareTemplate } from '../test/helpers/database';
import { openDatabase } from '../src/persistence/database';
import { documentUpdateOf } from '../src/sync/update-message';
import { GroupCommitLog } from './durable-floor';
import { signIn } from '../test/helpers/sign-in';
import { listenBare } from './bare-hocuspocus';
import { databaseThreadFromBench } from './spawn-server';

const mode = process.argv[2];
// Exit cleanly on the parent's SIGTERM (a --cpu-prof profile is written on exit).
process.on('SIGTERM', () => process.exit(0));

type Stats = {
  text: string;
  stateV1Bytes: number;
  stateV2Bytes: number;
  /** CPU time (user + system) this process spent since `/bench/mark`, up to the stats request. */
  cpuMs?: number;
  storedBytes?: number;
  storedRows?: number;
  drainMs?: number;
  /** CPU time the process spent in that drain (work the server put off past the trace: queued commits, compactions, folded rows' deletes). */
  drainCpuMs?: number;
  events?: number;
  /** The event loop's longest pause since `/bench/mark` (ms). */
  loopMaxMs?: number;
  /** The most CPU time the process spent between two turns of the event loop since `/bench/mark` (ms): the longest pause less the time other processes took the core, which load does not inflate. */
  loopMaxCpuMs?: number;
  /** Rows (and their events) written into another document of the org before the trace. */
  prefilledRows?: number;
};

// The longest pause of the event loop: a stall every user of the server feels.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const loopMaxMs = () => loopDelay.max / 1e6;

// Every 5 ms the event loop is due a turn; a turn that came late was a pause. Its own CPU time is the pause
// as an idle core would have seen it: on a shared machine, wall time also counts other processes' turns.
// The serving thread's own CPU where Linux says it (schedstat): with a second core, the process's also
// counts its other threads (the embedded database's, the history pass's), which hold no turn.
// BENCH_PAUSES_DIR: every pause of the event loop over 40 ms since `/bench/mark`, written at exit as
// [start, end, CPU ms, ms waiting for the core] in the monotonic microseconds a --cpu-prof profile's timestamps use
// (`npx tsx bench/profile-summary.ts CPU...<pid>...cpuprofile --pauses pauses.<pid>.json` says what each was made of).
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const threadCpuKnown = (() => {
  try {
    readFileSync(schedstat);
    return true;
  } catch {
    return false;
  }
})();
/** The serving thread's CPU and how long it was ready to run but waited for the core (schedstat's first two fields), in ms; one read. */
function servingThreadTimes(): { cpuMs: number; waitMs: number } {
  if (threadCpuKnown) {
    const [cpu, wait] = readFileSync(schedstat, 'utf8').split(' ');
    return { cpuMs: Number(cpu) / 1e6, waitMs: Number(wait) / 1e6 };
  }
  const cpu = process.cpuUsage();
  return { cpuMs: (cpu.user + cpu.system) / 1000, waitMs: 0 };
}
const servingThreadCpuMs = () => servingThreadTimes().cpuMs;
let pauses: Array<[number, number, number, number]> = [];
let loopMaxCpuMs = 0;
let stopRecordingPauses = () => {};
{
  const recordPauses = Boolean(process.env.BENCH_PAUSES_DIR);
  let last = process.hrtime.bigint();
  let { cpuMs: lastCpu, waitMs: lastWait } = servingThreadTimes();
  const recorder = setInterval(() => {
    const now = process.hrtime.bigint();
    const { cpuMs: cpu, waitMs: wait } = servingThreadTimes();
    const used = cpu - lastCpu;
    loopMaxCpuMs = Math.max(loopMaxCpuMs, used);
    if (recordPauses && now - last > 40_000_000n) pauses.push([Number(last / 1000n), Number(now / 1000n), used, wait - lastWait]);
    last = now;
    lastCpu = cpu;
    lastWait = wait;
  }, 5).unref();
  // The stats request's own work (reading the whole document) is not the trace's.
  stopRecordingPauses = () => clearInterval(recorder);
  if (recordPauses) process.on('exit', () => writeFileSync(path.join(process.env.BENCH_PAUSES_DIR!, `pauses.${process.pid}.json`), JSON.stringify(pauses)));
  // Where performance.now()'s zero is in those monotonic microseconds: `--trace-gc` lines count from about there.
  if (recordPauses) writeFileSync(path.join(process.env.BENCH_PAUSES_DIR!, `clock.${process.pid}.json`), JSON.stringify({ monotonicUsAtZero: Number(process.hrtime.bigint() / 1000n) - Math.round(performance.now() * 1000) }));
}

// CPU is the fairer figure on a shared machine: wall time also counts other processes' turns.
let cpuMark = process.cpuUsage();
const cpuSinceMark = () => {
  const used = process.cpuUsage(cpuMark);
  return (used.user + used.system) / 1000;
};

// BENCH_COUNT_STATEMENTS=1: every statement the server sends to its database between `/bench/mark` and
// `/bench/stats`, by its first words, with the serving thread's CPU milliseconds from send to answer (on PGlite, the
// statement's own run in the serving thread, plus whatever ran ahead of its answer). Counts beat wall time on a shared machine.
type StatementCount = { count: number; ms: number; max: number };
let statementCounts: Map<string, StatementCount> | null = null;
async function countStatements() {
  if (process.env.BENCH_COUNT_STATEMENTS !== '1') return;
  statementCounts = new Map();
  const shapeOf = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 90);
  const wrap = (owner: { query: (...args: any[]) => any }) => {
    const original = owner.query;
    owner.query = function (this: unknown, ...args: any[]) {
      const text = typeof args[0] === 'string' ? args[0] : String(args[0]?.text ?? '');
      const started = servingThreadCpuMs();
      const result = original.apply(this, args);
      const counts = statementCounts;
      if (counts && result && typeof result.then === 'function') {
        void result.then(
          () => {
            const shape = shapeOf(text);
            const entry = counts.get(shape) ?? { count: 0, ms: 0, max: 0 };
            entry.count++;
            const ms = servingThreadCpuMs() - started;
            entry.ms += ms;
            entry.max = Math.max(entry.max, ms);
            counts.set(shape, entry);
          },
          () => {},
        );
      }
      return result;
    };
  };
  const { PGlite } = await import('@electric-sql/pglite');
  let proto = PGlite.prototype as object | null;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'query')) proto = Object.getPrototypeOf(proto);
  if (proto) wrap(proto as never);
  const pg = (await import('pg')).default;
  wrap(pg.Client.prototype as never);
}
const statementFigures = () =>
  statementCounts ? { statements: Object.fromEntries([...statementCounts].sort((a, b) => b[1].count - a[1].count).map(([shape, entry]) => [shape, { count: entry.count, ms: Math.round(entry.ms), max: Math.round(entry.max * 10) / 10 }])) } : {};
await countStatements();

function docStats(doc: Y.Doc): Stats {
  return { text: readDocBody(doc).textContent, stateV1Bytes: Y.encodeStateAsUpdate(doc).byteLength, stateV2Bytes: Y.encodeStateAsUpdateV2(doc).byteLength };
}

let compactWhenAsked: ((name: string) => Promise<void>) | undefined;

async function trellis() {
  await prepareTemplate();
  let documentName = '';
  let workspaceId = '';
  const t = await startTestApp({
    // The prefill's REST writes would pass the default write limit.
    env: { API_WRITES_PER_MINUTE: '1000000', ...databaseThreadFromBench() },
    routes: (app, services) => {
      app.get('/bench/mark', { config: { auth: 'none', metered: false } }, async () => {
        cpuMark = process.cpuUsage();
        // In the kept standard output (BENCH_SERVER_LOG_DIR): where the trace starts among `--trace-opt` / `--trace-gc` lines.
        if (process.env.BENCH_SERVER_LOG_DIR) console.log('[bench mark]');
        loopDelay.reset();
        loopMaxCpuMs = 0;
        pauses = [];
        statementCounts?.clear();
        return {};
      });
      app.get('/bench/stats', { config: { auth: 'none', metered: false } }, async () => {
        const cpuMs = cpuSinceMark();
        const statements = statementFigures();
        if (process.env.BENCH_SERVER_LOG_DIR) console.log('[bench stats]');
        const loopMax = loopMaxMs();
        stopRecordingPauses();
        const started = performance.now();
        const drainCpu = process.cpuUsage();
        await services.sync.drain();
        const drainMs = performance.now() - started;
        const drainUsed = process.cpuUsage(drainCpu);
        const drainCpuMs = (drainUsed.user + drainUsed.system) / 1000;
        await (compactWhenAsked ?? ((name: string) => services.sync.compactNow(name)))(documentName);
        const stats = await services.sync.read(documentName, docStats);
        const updates = await sql<{ bytes: number | null; rows: number }>`
          select coalesce(sum(octet_length(update)), 0)::int as bytes, count(*)::int as rows from document_updates where document = ${documentName}`.execute(services.db);
        const snapshot = await sql<{ bytes: number | null }>`
          select coalesce(sum(octet_length(state)), 0)::int as bytes from document_snapshots where document = ${documentName}`.execute(services.db);
        const events = await sql<{ n: number }>`select count(*)::int as n from events where workspace_id = ${workspaceId}`.execute(services.db);
        return {
          ...stats,
          cpuMs,
          storedBytes: Number(updates.rows[0]!.bytes) + Number(snapshot.rows[0]!.bytes),
          storedRows: Number(updates.rows[0]!.rows),
          drainMs,
          drainCpuMs,
          events: Number(events.rows[0]!.n),
          loopMaxMs: loopMax,
          loopMaxCpuMs,
          prefilledRows: prefilled,
          ...statements,
        } satisfies Stats & { statements?: object };
      });
    },
  });
  const { cookie } = await signIn(t, 'bench@example.com');
  const prefilled = await prefill(t, cookie, Number(process.env.BENCH_PREFILL ?? 0));
  if (process.env.BENCH_NO_COMPACTION === '1') {
    // Isolates the per-message write path: no compaction (and no version-index pass) until /bench/stats.
    const engine = t.services.sync as unknown as { compactNow(name: string): Promise<void> };
    const compactNow = engine.compactNow.bind(engine);
    engine.compactNow = async () => {};
    compactWhenAsked = compactNow;
  }
  const created = await t.request('POST', '/api/workspaces', { as: { cookie }, body: { name: 'Trace', slug: 'trace', mode: 'doc' } });
  if (created.status !== 200) throw new Error(`could not create the workspace: ${created.text}`);
  documentName = created.body.primarySurface.syncDocument;
  workspaceId = created.body.id;
  // BENCH_RUN=1: the replaying client's writes join a run (bench/runs.ts), recorded as they are derived.
  let runId: string | undefined;
  if (process.env.BENCH_RUN === '1') {
    const started = await t.request('POST', '/api/workspaces/trace/runs', { as: { cookie }, body: { name: 'Typing trace' } });
    if (started.status !== 201) throw new Error(`could not start a run: ${started.text}`);
    runId = started.body.run.id;
  }
  console.log(JSON.stringify({ url: t.url, cookie, documentName, runId }));
}

/**
 * Fills the org with `rows` table rows and their events in another document
 * (the welcome workspace's table), through the engine as REST writes do
 * (log, events, projections), 1,000 rows a transaction so it takes seconds,
 * not the minutes one request a row would.
 */
async function prefill(t: Awaited<ReturnType<typeof startTestApp>>, cookie: string, rows: number): Promise<number> {
  if (rows <= 0) return 0;
  // The scale plan: the row cap of smaller plans is below 100,000.
  await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
  const first = await t.request('POST', '/api/workspaces/welcome/rows', { as: { cookie }, body: { data: { title: 'prefill 0', status: 'todo' } } });
  if (first.status !== 200) throw new Error(`could not write the first prefill row: ${first.text}`);
  const surfaceId = first.body.surfaceId as string;
  const workspace = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  const owner = await t.services.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
  const principal = (await findPrincipals(t.services.db, [owner.id])).get(owner.id)!;
  const documentName = tablesDocumentName(workspace.id);
  for (let from = 1; from < rows; from += 1_000) {
    const chunk = Array.from({ length: Math.min(1_000, rows - from) }, (_, i) => ({
      id: `pf${(from + i).toString(36).padStart(8, '0')}`,
      surfaceId,
      data: { title: `prefill ${from + i}`, status: (from + i) % 3 === 0 ? 'done' : 'todo' },
    }));
    await t.services.sync.transact(documentName, serverOrigin(principal, 'system'), (doc) => insertRows(doc, chunk, null));
  }
  // Then single-row creates through REST, 10 at a time, as the REST benchmark leaves a server: a long tail of small log rows,
  // in a workspace of their own (the welcome workspace is past the scale plan's 50,000-row cap by now).
  const tailWorkspace = await t.request('POST', '/api/workspaces', { as: { cookie }, body: { name: 'Prefill tail', slug: 'prefill-tail', mode: 'table' } });
  if (tailWorkspace.status !== 200) throw new Error(`could not create the prefill tail workspace: ${tailWorkspace.text}`);
  const tail = Math.min(2_000, Math.floor(rows / 10));
  for (let from = 0; from < tail; from += 10) {
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await t.request('POST', '/api/workspaces/prefill-tail/rows', { as: { cookie }, body: { data: { title: `prefill rest ${from + i}`, status: 'todo' } } });
        if (res.status !== 200) throw new Error(`prefill REST write answered ${res.status}: ${res.text}`);
      }),
    );
  }
  await t.services.sync.drain();
  return rows + tail;
}

/**
 * `bare-durable`: the same bare Hocuspocus, but every update is appended to
 * the document log of a migrated database (PGlite on the durable file
 * layer, or Postgres when TEST_DATABASE_URL is set) by a group commit
 * before Hocuspocus applies and acknowledges it (bench/durable-floor.ts).
 */
async function bareDurable() {
  await prepareTemplate();
  const store = await freshDataStore();
  const database = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
  const log = new GroupCommitLog(database.db);
  process.removeAllListeners('SIGTERM');
  process.on('SIGTERM', () => void database.close().then(() => store.dispose()).finally(() => process.exit(0)));
  await bare((message) => {
    const update = documentUpdateOf(message);
    return update ? log.append('bench/doc/trace', update) : null;
  }, () => ({ ...log.stats, database: database.kind }));
}

async function bare(beforeApply?: (message: Uint8Array) => Promise<void> | null, extra: () => object = () => ({})) {
  const hocuspocus = new Hocuspocus({ quiet: true, flushDelay: false });
  const documentName = 'bench/doc/trace';
  const server = http.createServer((request, response) => {
    if (request.url === '/bench/mark') {
      cpuMark = process.cpuUsage();
      loopDelay.reset();
      loopMaxCpuMs = 0;
      pauses = [];
      statementCounts?.clear();
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    const cpuMs = cpuSinceMark();
    stopRecordingPauses();
    const doc = hocuspocus.documents.get(documentName);
    response.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(doc ? JSON.stringify({ ...docStats(doc), cpuMs, loopMaxMs: loopMaxMs(), loopMaxCpuMs, ...extra(), ...statementFigures() }) : '{}');
  });
  const url = await listenBare(hocuspocus, server, { maxPayload: 32 * 1024 * 1024, beforeApply });
  console.log(JSON.stringify({ url, documentName }));
}

await (mode === 'bare' ? bare() : mode === 'bare-durable' ? bareDurable() : trellis());
