/**
 * A year-old document (issue 21, goals 1 and 3). Builds one document the
 * way real use does, through the real server: the automerge-paper typing
 * trace (259,778 edits) typed `--traces` times (default 4, about 1,040,000
 * updates) by one sync client, each into a paragraph of its own, with REST
 * appends (`POST /doc/sections`) between the traces. Prints, per trace, the
 * time per tenth (each tenth acknowledged before the next), the unfolded log
 * at its end and the heap; after the last acknowledgement, how long until
 * the log is folded and compaction idle (no backlog) and the event loop's
 * longest pause meanwhile; the stored log; versions list, get, compare and
 * restore on the warm server; then, after a restart, the cold load time and
 * heap and the same version timings cold.
 *
 * The server runs in this process with the client (heap figures are the
 * whole process after a full GC: an upper bound on the server's).
 *
 *   npm run bench -- aging
 *   npx tsx --expose-gc bench/aging.ts --traces 2     (the two-traces scenario only)
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import * as Y from 'yjs';
import { startTestApp, type TestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { connectClient, eventually, synced } from '../test/helpers/sync';
import { createWorkspace, signInUser } from '../test/workspaces/helpers';

type Figures = Record<string, number | string>;
type Trace = { startContent: string; endContent: string; txns: Array<{ patches: Array<[number, number, string]> }> };

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => round(bytes / 2 ** 20);

function traceFile(): string {
  const candidates = [
    process.env.TRACE_FILE,
    path.resolve(import.meta.dirname, '../../shared/data/editing-traces/automerge-paper.json.gz'),
    path.resolve(import.meta.dirname, '../../../shared/data/editing-traces/automerge-paper.json.gz'),
    '/work/shared/data/editing-traces/automerge-paper.json.gz',
  ];
  const found = candidates.find((file): file is string => !!file && existsSync(file));
  if (!found) throw new Error('automerge-paper.json.gz not found: set TRACE_FILE');
  return found;
}

function heapAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

async function ok(t: TestApp, method: string, url: string, options: Parameters<TestApp['request']>[2]) {
  const res = await t.request(method, url, options);
  if (res.status !== 200) throw new Error(`${method} ${url} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

async function logRows(t: TestApp, document: string): Promise<{ rows: number; logBytes: number; snapshotBytes: number; versions: number; versionBytes: number }> {
  const log = await sql<{ rows: number; bytes: number }>`select count(*)::int as rows, coalesce(sum(octet_length(update)), 0)::bigint as bytes from document_updates where document = ${document}`.execute(t.services.db);
  const snap = await sql<{ bytes: number }>`select coalesce(sum(octet_length(state)), 0)::bigint as bytes from document_snapshots where document = ${document}`.execute(t.services.db);
  const versions = await sql<{ n: number; bytes: number }>`select count(*)::int as n, coalesce(sum(octet_length(content)), 0)::bigint as bytes from surface_versions where document = ${document}`.execute(t.services.db);
  return {
    rows: Number(log.rows[0]!.rows),
    logBytes: Number(log.rows[0]!.bytes),
    snapshotBytes: Number(snap.rows[0]!.bytes),
    versions: Number(versions.rows[0]!.n),
    versionBytes: Number(versions.rows[0]!.bytes),
  };
}

/** Rows in the unfolded log (a count only: on the embedded database a statement holds the event loop while it runs). */
async function logCount(t: TestApp, document: string): Promise<number> {
  const row = await sql<{ rows: number }>`select count(*)::int as rows from document_updates where document = ${document}`.execute(t.services.db);
  return Number(row.rows[0]!.rows);
}

async function versionTimings(t: TestApp, as: { cookie: string }, base: string, label: string, figures: Figures) {
  const first = await timed(() => ok(t, 'GET', `${base}/surfaces/doc/versions?limit=200`, { as }));
  const list = first.value.body.versions as Array<{ id: string }>;
  const newest = list[0]!.id;
  const oldest = list.at(-1)!.id;
  figures[`${label}: versions listed (first page)`] = list.length;
  figures[`${label}: list, first, ms`] = round(first.ms);
  figures[`${label}: list again, ms`] = round((await timed(() => ok(t, 'GET', `${base}/surfaces/doc/versions`, { as }))).ms);
  figures[`${label}: get the newest version, ms`] = round((await timed(() => ok(t, 'GET', `${base}/surfaces/doc/versions/${newest}?format=markdown`, { as }))).ms);
  figures[`${label}: get the oldest version, ms`] = round((await timed(() => ok(t, 'GET', `${base}/surfaces/doc/versions/${oldest}`, { as }))).ms);
  figures[`${label}: compare oldest -> current, ms`] = round((await timed(() => ok(t, 'GET', `${base}/surfaces/doc/versions/${oldest}/diff`, { as }))).ms);
  figures[`${label}: name the current state, ms`] = round((await timed(() => ok(t, 'POST', `${base}/surfaces/doc/versions`, { as, body: { name: `${label} mark` } }))).ms);
  figures[`${label}: restore the newest version, ms`] = round((await timed(() => ok(t, 'POST', `${base}/surfaces/doc/versions/${newest}/restore`, { as }))).ms);
}

/** BENCH_WATCHDOG=1: prints every event-loop gap over 300 ms with its hrtime window (to match a --cpu-prof profile). */
function watchdog(): () => void {
  if (!process.env.BENCH_WATCHDOG) return () => {};
  let last = process.hrtime.bigint();
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    if (now - last > 300_000_000n) process.stderr.write(`gap ${(now - last) / 1_000_000n} ms from ${(last / 1000n).toString()} to ${(now / 1000n).toString()} us\n`);
    last = now;
  }, 10);
  return () => clearInterval(timer);
}

export async function runAgingBench(options: { traces?: number; restAppends?: number; edits?: number } = {}): Promise<Figures> {
  const traces = options.traces ?? 4;
  const restAppends = options.restAppends ?? 500;
  const trace = JSON.parse(gunzipSync(readFileSync(traceFile())).toString('utf8')) as Trace;
  // A prefix of the trace, for a quick look (its end text is then not checked).
  const full = options.edits === undefined || options.edits >= trace.txns.length;
  if (!full) trace.txns = trace.txns.slice(0, options.edits);
  await prepareTemplate();
  let t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  const store = t.store;
  const figures: Figures = {};
  const stopWatchdog = watchdog();
  try {
    const ada = await signInUser(t, 'ada@example.com');
    const as = { cookie: ada.cookie };
    const ws = await createWorkspace(t, ada, { name: 'Aging', slug: 'aging', mode: 'doc', initialMarkdown: '# A year of notes\n' });
    const document = ws.primarySurface.syncDocument as string;
    const base = '/api/workspaces/aging';
    const typist = connectClient(t.url, document, { cookie: ada.cookie });
    await synced(typist, 60_000);
    const acked = () => eventually(() => typist.provider.unsyncedChanges === 0, 3_600_000, 5);
    let updates = 0;
    let expectedTail = '';
    const started = performance.now();
    for (let k = 0; k < traces; k++) {
      const text = new Y.XmlText();
      typist.doc.transact(() => {
        const paragraph = new Y.XmlElement('paragraph');
        const fragment = typist.doc.getXmlFragment('default');
        fragment.insert(fragment.length, [paragraph]);
        paragraph.insert(0, [text]);
        if (trace.startContent) text.insert(0, trace.startContent);
      });
      await acked();
      const tenths: number[] = [];
      const unfoldedAtTenths: number[] = [];
      const tenth = Math.ceil(trace.txns.length / 10);
      let mark = performance.now();
      for (let i = 0; i < trace.txns.length; i++) {
        for (const [pos, del, ins] of trace.txns[i]!.patches) {
          typist.doc.transact(() => {
            if (del > 0) text.delete(pos, del);
            if (ins) text.insert(pos, ins);
          });
          updates++;
        }
        if (i % 2000 === 1999) await new Promise((resolve) => setImmediate(resolve));
        if ((i + 1) % tenth === 0 || i === trace.txns.length - 1) {
          await acked();
          const now = performance.now();
          tenths.push((now - mark) / 1000);
          mark = now;
          unfoldedAtTenths.push(await logCount(t, document));
          process.stderr.write(`aging: trace ${k + 1}, tenth ${tenths.length}: ${tenths.at(-1)!.toFixed(1)} s\n`);
        }
      }
      if (full && text.toString() !== trace.endContent) throw new Error(`trace ${k + 1}: the client's text is not the trace's end`);
      const stored = await logRows(t, document);
      figures[`trace ${k + 1}: seconds per tenth`] = tenths.map((s) => s.toFixed(1)).join(' ');
      figures[`trace ${k + 1}: total seconds`] = round(tenths.reduce((a, b) => a + b, 0), 1);
      figures[`trace ${k + 1}: largest unfolded log while typing (at tenths)`] = Math.max(...unfoldedAtTenths);
      figures[`trace ${k + 1}: unfolded log rows at its last acknowledgement`] = stored.rows;
      // After the last acknowledgement: how long until the log is folded and background work idle.
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const settle = await timed(async () => {
        await eventually(async () => (await logCount(t, document)) <= t.services.config.compactAfterUpdates, 600_000, 100);
        await t.services.sync.drain();
      });
      delay.disable();
      figures[`trace ${k + 1}: no backlog after the last acknowledgement, s`] = round(settle.ms / 1000, 1);
      figures[`trace ${k + 1}: event loop's longest pause meanwhile, ms`] = round(delay.max / 1e6);
      figures[`trace ${k + 1}: heap after GC, MB`] = mb(heapAfterGc());
      // REST appends between traces: small API updates, as an integration would make them.
      const rest = await timed(async () => {
        for (let n = 0; n < restAppends; n++) {
          await ok(t, 'POST', `${base}/doc/sections`, { as, body: { markdown: `Note ${k}.${n} from the API.` } });
          updates++;
        }
      });
      if (restAppends > 0) figures[`trace ${k + 1}: then ${restAppends} REST appends, ms each`] = round(rest.ms / restAppends, 2);
      expectedTail = trace.endContent;
    }
    figures['updates made (sync edits + REST appends)'] = updates;
    figures['build minutes'] = round((performance.now() - started) / 60_000, 1);

    figures['heap after GC once idle, MB'] = mb(heapAfterGc());
    const stored = await logRows(t, document);
    figures['stored: unfolded log rows'] = stored.rows;
    figures['stored: unfolded log KB'] = round(stored.logBytes / 1024);
    figures['stored: snapshot KB'] = round(stored.snapshotBytes / 1024);
    figures['stored: versions (count, gzip KB)'] = `${stored.versions}, ${round(stored.versionBytes / 1024)}`;
    const body = await ok(t, 'GET', `${base}/doc?format=text`, { as });
    figures['doc: text KB'] = round(Buffer.byteLength(body.body.text) / 1024);
    if (full && !body.body.text.includes(expectedTail)) throw new Error("the server's text lacks the last trace's end");
    await versionTimings(t, as, base, 'warm', figures);
    typist.destroy();

    // Cold: a restarted server loads the document on first use.
    await t.close();
    const heapBefore = heapAfterGc();
    t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, env: { API_WRITES_PER_MINUTE: '1000000' } });
    const cold = await timed(() => ok(t, 'GET', `${base}/doc?format=text`, { as }));
    figures['cold load (first GET /doc after a restart), ms'] = round(cold.ms);
    figures['heap held by the loaded document (after GC), MB'] = mb(heapAfterGc() - heapBefore);
    await versionTimings(t, as, base, 'cold', figures);
    return figures;
  } finally {
    stopWatchdog();
    await t.close();
    await store.dispose();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = (flag: string) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const figures = await runAgingBench({ traces: at('--traces'), restAppends: at('--rest'), edits: at('--edits') });
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(60)} ${value}`);
  process.exit(0);
}
