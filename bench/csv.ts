/**
 * CSV in and out (issue 24 item 3): `POST /rows/import` rows per second, and
 * `GET /rows.csv` time and memory at 10,000 and 50,000 rows. The export
 * reads a page of 1,000 rows at a time, so its extra memory should stay
 * flat as the table grows (the table itself is in memory either way: the
 * live Y document). Memory is sampled in this process, which is the server,
 * every 10 ms while the export streams; heap after a forced GC before it.
 */
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { round } from './tables';
import { tablesDocumentName } from '../src/model/document-names';

type Figures = Record<string, number | string>;

const SIZES = [10_000, 50_000];
const MB = 2 ** 20;

export function csvOf(rows: number): string {
  const lines = ['title,status,estimate,due,done,tags,notes'];
  const statuses = ['todo', 'doing', 'done'];
  for (let i = 0; i < rows; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    lines.push(`Task ${i},${statuses[i % 3]},${i % 13},2026-12-${day},${i % 2 === 0},"[""t${i % 5}""]","Notes for row ${i}, with a comma and ""quotes"""`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

export async function runCsvBench(): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  const figures: Figures = {};
  try {
    const { cookie } = await signIn(t, 'csv-bench@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const headers = { cookie: `svc-session=${cookie}` };
    for (const [n, rows] of SIZES.entries()) {
      const slug = `csv-bench-${n}`;
      const created = await t.request('POST', '/api/workspaces', { as: { cookie }, body: { name: slug, slug, mode: 'table' } });
      if (created.status !== 200) throw new Error(`workspace: ${created.status} ${created.text}`);
      const base = `${t.url}/api/workspaces/${slug}`;

      const form = new FormData();
      const text = csvOf(rows);
      form.append('file', new Blob([text], { type: 'text/csv' }), 'bench.csv');
      const importStart = performance.now();
      const imported = await fetch(`${base}/rows/import`, { method: 'POST', body: form, headers });
      const report = (await imported.json()) as { imported: number; refused: number };
      const importMs = performance.now() - importStart;
      if (report.imported !== rows) throw new Error(`import: ${imported.status} ${JSON.stringify(report).slice(0, 300)}`);
      figures[`import ${rows.toLocaleString()} rows (${round(text.length / MB, 1)} MB): rows/s`] = Math.round(rows / (importMs / 1000));

      // The export is measured on a settled table: the import's log folded, no background work left.
      const document = tablesDocumentName(created.body.id as string);
      await t.services.sync.changesCommitted(document);
      await t.services.sync.compactNow(document);
      await t.services.sync.drain();
      // Once to warm the routes and the listing, then measured: time and sampled peaks, then the live heap (a GC before each sample).
      await readCsv(`${base}/rows.csv`, headers);
      const timed = await measureExport(`${base}/rows.csv`, headers, false);
      if (timed.lines < rows + 1) throw new Error(`export: ${timed.lines} lines for ${rows} rows`);
      const live = await measureExport(`${base}/rows.csv`, headers, true);
      figures[`export ${rows.toLocaleString()} rows (${round(timed.bytes / MB, 1)} MB): ms`] = Math.round(timed.ms);
      figures[`export ${rows.toLocaleString()} rows: sampled peak heap over the start, MB`] = round(timed.heap! / MB, 1);
      figures[`export ${rows.toLocaleString()} rows: sampled peak RSS over the start, MB`] = round(timed.rss / MB, 1);
      figures[`export ${rows.toLocaleString()} rows: live heap peak (GC before each sample), MB`] = live.heap === null ? 'needs --expose-gc' : round(live.heap / MB, 1);
    }
  } finally {
    await t.close();
    await (t as unknown as { store: { dispose(): Promise<void> } }).store.dispose();
  }
  return figures;
}

/** Reads the answer chunk by chunk as a client would, without keeping it. */
async function readCsv(url: string, headers: Record<string, string>) {
  const response = await fetch(url, { headers });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 0x0a) lines++;
  }
  return { bytes, lines };
}

/**
 * One export with memory sampled every 10 ms in this process (the server).
 * `collect`: a full GC before each sample, so the peak is memory the export
 * holds, not garbage not yet collected (slower; its time is not reported).
 */
async function measureExport(url: string, headers: Record<string, string>, collect: boolean) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (collect && !gc) return { ms: 0, bytes: 0, lines: 0, heap: null as number | null, rss: 0 };
  gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    if (collect) gc!();
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, collect ? 50 : 10);
  const start = performance.now();
  const read = await readCsv(url, headers);
  const ms = performance.now() - start;
  clearInterval(sampler);
  return { ms, ...read, heap: peakHeap - before.heapUsed as number | null, rss: peakRss - before.rss };
}
