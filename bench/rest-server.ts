/**
 * A server for the REST benchmark (bench/rest.ts), in its own process so
 * the load generator in the parent does not share its core (the parent
 * starts it pinned with `taskset`). Prints one JSON line when ready.
 *
 * - `trellis`: the real app with production durability (PGlite, or Postgres
 *   when TEST_DATABASE_URL is set), a warm table document, an editor key
 *   and a viewer key. The write limit is whatever API_WRITES_PER_MINUTE says.
 * - `bare`: a Fastify `POST` route echoing its JSON body, nothing else.
 * - `bare-db` (BENCH_BARE_GROUPED=1 for group commit): the database's own
 *   speed for what a row create must store. A bare Fastify `POST` route on
 *   the same database as `trellis` (migrated, one org and workspace) that
 *   writes per request a ~200-byte log append, a projection row and an event
 *   row, in hand-written SQL, and answers after the commit: one transaction
 *   per request, or (grouped) the requests that arrive in one turn of the
 *   event loop share one transaction of multi-row inserts. `PATCH
 *   /bare/{id}` does a patch's writes in one transaction (a log append, an
 *   event row, the projection row's cells updated) on rows it made at start.
 *
 * Both count their own CPU time between two marks (`cpu` in the info), so
 * the parent can report server CPU per request, which a shared machine
 * disturbs less than wall time, and the main thread's part of it (the rest is
 * V8's GC and compiler threads). BENCH_PROFILE_DIR=/tmp/prof writes a CPU
 * profile of each measured scenario there (with BENCH_HEAP_PROFILE=1 also a
 * sampling heap profile of the same window). COMPACT_AFTER_UPDATES=N is passed
 * to the Trellis server (by count, the tables document's first compaction
 * falls in the patch window of a quiet write-path run: PERFORMANCE.md, h9-rest).
 */
import diagnostics from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { CompiledQuery } from 'kysely';
import { createTableId } from '../src/model/table/ids';
import { tablesDocumentName } from '../src/model/document-names';
import { startTestApp } from '../test/helpers/app';
import { databaseThreadFromBench, mainThreadCpuMs } from './spawn-server';
import { prepareTemplate } from '../test/helpers/database';
import { insertKey, signInUser } from '../test/workspaces/helpers';

const mode = process.argv[2];
// Exit cleanly on the parent's SIGTERM (a --cpu-prof profile is written on exit).
process.on('SIGTERM', () => process.exit(0));

/**
 * CPU counting on a port of its own: the app's limit hooks would throttle
 * these calls like any other (an IP refused 50 times is throttled). With
 * BENCH_PROFILE_DIR set, a V8 CPU profile is taken between the mark and the
 * reading (one file per scenario), so it holds the measured requests only.
 */
async function startCpuCounter(): Promise<string> {
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const session = profileDir ? new Session() : null;
  session?.connect();
  await session?.post('Profiler.enable');
  await session?.post('Profiler.setSamplingInterval', { interval: 200 });
  // BENCH_HEAP_PROFILE=1 beside BENCH_PROFILE_DIR: a sampling heap profile of the same window (what the requests allocate).
  const heap = profileDir && process.env.BENCH_HEAP_PROFILE === '1';
  let mark = process.cpuUsage();
  let mainMark = mainThreadCpuMs();
  let profiles = 0;
  const requests = new RequestTimes();
  const server = http.createServer(async (request, response) => {
    if (request.url === '/mark') {
      requests.reset();
      mark = process.cpuUsage();
      mainMark = mainThreadCpuMs();
      await session?.post('Profiler.start');
      if (heap) await session!.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    }
    const used = process.cpuUsage(mark);
    const main = mainThreadCpuMs();
    if (request.url === '/cpu' && session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path.join(profileDir!, `${process.argv[2]}-${process.pid}-${++profiles}.cpuprofile`), JSON.stringify(profile));
      if (heap) {
        const sampled = await session.post('HeapProfiler.stopSampling');
        writeFileSync(path.join(profileDir!, `${process.argv[2]}-${process.pid}-${profiles}.heapprofile`), JSON.stringify(sampled.profile));
      }
    }
    const figures: CpuReading = { cpuMs: (used.user + used.system) / 1000, mainCpuMs: main === null || mainMark === null ? undefined : main - mainMark, server: requests.read() };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(figures));
  });
  requests.skip(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** What `GET {cpu}/cpu` answers: CPU since the mark, and the server's own view of the requests answered since. */
export type CpuReading = {
  cpuMs: number;
  mainCpuMs?: number;
  /**
   * Percentiles (p50, p90, p99, max; ms) over the requests answered since the mark, as this server saw them: `wall`
   * from its `request` event to the response's finish (what the client's time holds less the client's own
   * event loop and the connection), `cpu` this process's CPU over the same span (its own work and whatever
   * else the process ran meanwhile: the other connections' requests, a typist's messages; a busy machine
   * inflates `wall`, not `cpu`); and this process's event-loop delay over the window (p50, p99, max).
   */
  server: { requests: number; wall: number[]; cpu: number[]; loopDelay: number[] };
};

/**
 * Each request's time in this server (Node's `http.server.request.start` and
 * `http.server.response.finish` diagnostics channels, so no app code is
 * touched) and the process's CPU over it, between the bench's mark and reading.
 */
class RequestTimes {
  private walls: number[] = [];
  private cpus: number[] = [];
  private readonly started = new WeakMap<object, [number, NodeJS.CpuUsage]>();
  private readonly delay = monitorEventLoopDelay({ resolution: 1 });
  private readonly skipped = new WeakSet<object>();

  constructor() {
    this.delay.enable();
    diagnostics.subscribe('http.server.request.start', (message) => {
      const { server, response } = message as { server: object; response: object };
      if (!this.skipped.has(server)) this.started.set(response, [performance.now(), process.cpuUsage()]);
    });
    diagnostics.subscribe('http.server.response.finish', (message) => {
      const { response } = message as { response: object };
      const start = this.started.get(response);
      if (!start) return;
      this.walls.push(performance.now() - start[0]);
      const cpu = process.cpuUsage(start[1]);
      this.cpus.push((cpu.user + cpu.system) / 1000);
    });
  }

  /** The CPU counter's own server: its calls are not the bench's requests. */
  skip(server: object) {
    this.skipped.add(server);
  }

  reset() {
    this.walls = [];
    this.cpus = [];
    this.delay.reset();
  }

  read(): CpuReading['server'] {
    const round = (n: number) => Math.round(n * 10) / 10;
    const percentiles = (values: number[]) => {
      const sorted = values.slice().sort((a, b) => a - b);
      const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
      return [at(50), at(90), at(99), sorted.at(-1) ?? 0].map(round);
    };
    return {
      requests: this.walls.length,
      wall: percentiles(this.walls),
      cpu: percentiles(this.cpus),
      loopDelay: [this.delay.percentile(50) / 1e6, this.delay.percentile(99) / 1e6, this.delay.max / 1e6].map(round),
    };
  }
}

/** COMPACT_AFTER_UPDATES from the bench's environment: a run can move the tables document's compaction into or out of a window. */
function compactionFromBench(): Record<string, string> {
  return process.env.COMPACT_AFTER_UPDATES ? { COMPACT_AFTER_UPDATES: process.env.COMPACT_AFTER_UPDATES } : {};
}

export type RestServerInfo = {
  url: string;
  /** `GET {cpu}/mark` starts counting; `GET {cpu}/cpu` answers a `CpuReading` since the mark (the process's CPU, its main thread's alone: the rest is V8's GC and compiler threads; and the requests' times as the server saw them). */
  cpu: string;
  database: string;
  /** `Authorization` header values. */
  editor: string;
  viewer: string;
  rowsPath: string;
  /** Rows that exist, for PATCH. */
  rowIds: string[];
  /** The table document and its sheet (the `mixed` scenario's sync client). */
  documentName?: string;
  surfaceId?: string;
  /** The owner's session (`Cookie` header value): a person's writes join no run unless they name one (bench/runs.ts). */
  session?: string;
  /** An open run of the owner's, for the session's writes that name one. */
  runId?: string;
};

async function trellis() {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: process.env.API_WRITES_PER_MINUTE ?? '1000000', ...databaseThreadFromBench(), ...compactionFromBench() } });
  const owner = await signInUser(t, 'bench@example.com');
  // Scale: the row cap would stop a long run on a smaller plan.
  await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
  const editor = await insertKey(t, owner, { role: 'editor' });
  const viewer = await insertKey(t, owner, { role: 'viewer' });
  const editorHeader = `Bearer ${(editor.as as { bearer: string }).bearer}`;
  const rowIds: string[] = [];
  // Fewer under a low write limit (the 429 scenario), which the warm-up must not exhaust.
  const warmRows = Number(process.env.BENCH_WARM_ROWS ?? 200);
  for (let i = 0; i < warmRows; i++) {
    const res = await t.request('POST', '/api/workspaces/welcome/rows', { as: editor.as, body: { data: { title: `warm ${i}`, status: 'todo' } } });
    if (res.status !== 200) throw new Error(`warm-up write answered ${res.status}: ${res.text}`);
    rowIds.push(res.body.id);
  }
  const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  const sheet = await t.request('GET', `/api/workspaces/welcome/rows/${rowIds[0]}`, { as: editor.as });
  const started = await t.request('POST', '/api/workspaces/welcome/runs', { as: owner.as, body: { name: 'bench' } });
  if (started.status !== 201) throw new Error(`could not start a run: ${started.status} ${started.text}`);
  const info: RestServerInfo = {
    url: t.url,
    cpu: await startCpuCounter(),
    database: t.services.database.kind,
    editor: editorHeader,
    viewer: `Bearer ${(viewer.as as { bearer: string }).bearer}`,
    rowsPath: '/api/workspaces/welcome/rows',
    rowIds,
    documentName: tablesDocumentName(ws.id),
    surfaceId: sheet.body?.surfaceId,
    session: `svc-session=${owner.cookie}`,
    runId: started.body.run.id,
  };
  console.log(JSON.stringify(info));
}

async function bare() {
  const app = Fastify();
  app.post('/bare', async (request) => ({ id: 'x', data: (request.body as { data: unknown }).data }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const info: RestServerInfo = { url: `http://127.0.0.1:${port}`, cpu: await startCpuCounter(), database: 'none', editor: '', viewer: '', rowsPath: '/bare', rowIds: [] };
  console.log(JSON.stringify(info));
}

/** The three writes of a row patch: a log append, an event row, the projection row's cells. */
function barePatchWrites(id: string, ids: { workspaceId: string; orgId: string; surfaceId: string }, data: unknown) {
  const update = Buffer.alloc(200, 7).toString('base64');
  const at = new Date();
  return [
    CompiledQuery.raw(`insert into document_updates (document, update) values ($1, decode($2, 'base64')) returning seq`, [`tables/${ids.workspaceId}`, update]),
    CompiledQuery.raw(`update table_rows set data = data || $2::jsonb, updated_at = $3 where id = $1`, [id, JSON.stringify(data ?? {}), at]),
    CompiledQuery.raw(`insert into events (org_id, workspace_id, event, subject_id, record, created_at) values ($1, $2, 'row.updated', $3, $4, $5) returning seq`, [
      ids.orgId,
      ids.workspaceId,
      id,
      JSON.stringify({ event: 'row.updated', data }),
      at,
    ]),
  ];
}

/** The three writes of a row create for `count` requests: one statement per table, rows in request order (`rowIds`: given ids). */
function bareWrites(count: number, ids: { workspaceId: string; orgId: string; surfaceId: string }, bodies: unknown[], rowIds?: string[]) {
  const update = Buffer.alloc(200, 7).toString('base64');
  const log: unknown[] = [];
  const rows: unknown[] = [];
  const events: unknown[] = [];
  const at = new Date();
  for (let i = 0; i < count; i++) {
    const id = rowIds?.[i] ?? createTableId();
    log.push(`tables/${ids.workspaceId}`, update);
    rows.push(id, ids.workspaceId, ids.surfaceId, JSON.stringify((bodies[i] as { data?: unknown }).data ?? {}), at);
    events.push(ids.orgId, ids.workspaceId, id, JSON.stringify({ event: 'row.created', data: bodies[i] }), at);
  }
  const values = (per: number, shape: (p: (k: number) => string) => string) =>
    Array.from({ length: count }, (_, i) => shape((k) => `$${i * per + k}`)).join(', ');
  return [
    CompiledQuery.raw(
      `insert into document_updates (document, update) values ${values(2, (p) => `(${p(1)}, decode(${p(2)}, 'base64'))`)} returning seq`,
      log,
    ),
    CompiledQuery.raw(
      `insert into table_rows (id, workspace_id, surface_id, position, data, created_at, updated_at) values ${values(5, (p) => `(${p(1)}, ${p(2)}, ${p(3)}, 0, ${p(4)}, ${p(5)}, ${p(5)})`)}`,
      rows,
    ),
    CompiledQuery.raw(
      `insert into events (org_id, workspace_id, event, subject_id, record, created_at) values ${values(5, (p) => `(${p(1)}, ${p(2)}, 'row.created', ${p(3)}, ${p(4)}, ${p(5)})`)} returning seq`,
      events,
    ),
  ];
}

async function bareDb() {
  const grouped = process.env.BENCH_BARE_GROUPED === '1';
  await prepareTemplate();
  // The floor is PGlite in the serving thread, whatever the server's default.
  const t = await startTestApp({ env: { EMBEDDED_DATABASE_THREAD: 'false' } });
  const owner = await signInUser(t, 'bench@example.com');
  void owner;
  const ws = await t.services.db.selectFrom('workspaces').select(['id', 'orgId']).where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  const surface = await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', ws.id).executeTakeFirstOrThrow();
  const ids = { workspaceId: ws.id, orgId: ws.orgId, surfaceId: surface.id };
  const db = t.services.db;
  const commit = (bodies: unknown[]) =>
    db.transaction().execute(async (tx) => {
      for (const query of bareWrites(bodies.length, ids, bodies)) await tx.executeQuery(query);
    });
  let waiting: Array<{ body: unknown; done: (error?: unknown) => void }> = [];
  const grouped_ = (body: unknown) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ body, done: (error) => (error ? reject(error) : resolve()) });
      if (waiting.length > 1) return;
      // One turn of the event loop: requests whose bytes arrived meanwhile join this commit.
      setImmediate(() => {
        const batch = waiting;
        waiting = [];
        commit(batch.map((w) => w.body)).then(
          () => batch.forEach((w) => w.done()),
          (error) => batch.forEach((w) => w.done(error)),
        );
      });
    });
  // A patch's writes: a log append, an event row and the projection row updated in place (rows made here first).
  const patchable = Array.from({ length: 200 }, () => createTableId());
  await db.transaction().execute(async (tx) => {
    for (const query of bareWrites(patchable.length, ids, patchable.map(() => ({ data: { title: 'warm' } })), patchable)) await tx.executeQuery(query);
  });
  const app = Fastify();
  app.post('/bare', async (request) => {
    await (grouped ? grouped_(request.body) : commit([request.body]));
    return { id: 'x', data: (request.body as { data: unknown }).data };
  });
  app.patch('/bare/:id', async (request) => {
    const { id } = request.params as { id: string };
    const data = (request.body as { data: unknown }).data;
    await db.transaction().execute(async (tx) => {
      for (const query of barePatchWrites(id, ids, data)) await tx.executeQuery(query);
    });
    return { id, data };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const info: RestServerInfo = { url: `http://127.0.0.1:${port}`, cpu: await startCpuCounter(), database: t.services.database.kind, editor: '', viewer: '', rowsPath: '/bare', rowIds: patchable };
  console.log(JSON.stringify(info));
}

await (mode === 'bare' ? bare() : mode === 'bare-db' ? bareDb() : trellis());
