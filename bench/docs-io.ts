/**
 * Documents in and out (issue 39, docs/IMPORT-EXPORT.md): import and export
 * times of a 1 MB doc (Markdown and Word in; Word, PDF and HTML out), and
 * of a workspace of 100 docs and 10 tables of 5,000 rows as a folder (zip
 * out, then the same zip imported as a new workspace through its job).
 * Memory is sampled in this process, which is the server, every 10 ms; the
 * event loop's longest stall is measured over each step (a long hold would
 * stall every other request of the instance).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { round } from './tables';

type Figures = Record<string, number | string>;
const MB = 2 ** 20;
const DOCS = 100;
const TABLES = 10;
const ROWS = 5_000;

/** About `bytes` of Markdown: headings, paragraphs with marks and links, lists and a table now and then. */
function markdownOf(bytes: number, seed = 0): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block =
      i % 20 === 0
        ? `## Section ${seed}.${i}\n\n`
        : i % 7 === 0
          ? `- first point ${i}\n- second with **bold** and *italic*\n  - nested ${i}\n\n`
          : i % 31 === 0
            ? `| Name | Value |\n| --- | --- |\n| row ${i} | ${i * 3} |\n| other | Zürich 報告 |\n\n`
            : `Paragraph ${i} of doc ${seed}: the quick brown fox jumps over the lazy dog, with a [link](https://example.com/${i}) and some **strong words** to set. Ünïcödé text, кириллица and 中文 too.\n\n`;
    parts.push(block);
    size += Buffer.byteLength(block);
  }
  return parts.join('');
}

function csvOf(rows: number, table: number): string {
  const lines = ['title,status,estimate,due,done'];
  for (let i = 0; i < rows; i++) lines.push(`Task ${table}.${i},${['todo', 'doing', 'done'][i % 3]},${i % 13},2026-12-${String((i % 28) + 1).padStart(2, '0')},${i % 2 === 0}`);
  return `${lines.join('\r\n')}\r\n`;
}

/** Runs `work` with this process's memory sampled and the event loop's longest stall measured. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; heapMb: number; rssMb: number; stallMs: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed;
  let peakRss = before.rss;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
  }, 10);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const start = performance.now();
  const result = await work();
  const ms = performance.now() - start;
  delay.disable();
  clearInterval(sampler);
  return { result, ms, heapMb: round((peakHeap - before.heapUsed) / MB, 1), rssMb: round((peakRss - before.rss) / MB, 1), stallMs: round(delay.max / 1e6, 0) };
}

/** `only`: `doc` for the 1 MB doc's steps alone, `workspace` for the workspace's. */
export async function runDocsIoBench(options: { only?: string } = {}): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  const figures: Figures = {};
  try {
    const { cookie } = await signIn(t, 'docs-io-bench@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const headers = { cookie: `svc-session=${cookie}` };
    const as = { cookie };
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await t.request(method, url, { as, ...(body !== undefined ? { body } : {}) });
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text.slice(0, 300)}`);
      return res.body;
    };
    const upload = async (url: string, parts: Array<[string, string | Blob, string?]>) => {
      const form = new FormData();
      for (const [name, value, filename] of parts) (typeof value === 'string' ? form.append(name, value) : form.append(name, value, filename));
      const res = await fetch(`${t.url}${url}`, { method: 'POST', body: form, headers });
      const body = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return body;
    };
    const read = async (url: string) => {
      const res = await fetch(`${t.url}${url}`, { headers });
      if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      return Buffer.from(await res.arrayBuffer());
    };

    // A 1 MB doc: in as Markdown, out as Word, PDF and HTML, and the Word file in again.
    if (options.only !== 'workspace') {
      await call('POST', '/api/workspaces', { name: 'One doc', slug: 'one-doc', mode: 'doc', initialMarkdown: '# Start\n' });
      const markdown = markdownOf(MB);
      const base = '/api/workspaces/one-doc';
      const mdIn = await measured(() => upload(`${base}/doc/import?surface=doc`, [['file', new Blob([markdown], { type: 'text/markdown' }), 'big.md']]));
      figures[`1 MB doc: import Markdown (${round(markdown.length / MB, 2)} MB): ms`] = Math.round(mdIn.ms);
      let docx = Buffer.alloc(0);
      for (const format of ['docx', 'pdf', 'html'] as const) {
        const out = await measured(() => read(`${base}/doc?format=${format}&surface=doc`));
        if (format === 'docx') docx = out.result;
        figures[`1 MB doc: export ${format} (${round(out.result.length / MB, 2)} MB): ms`] = Math.round(out.ms);
        figures[`1 MB doc: export ${format}: peak heap over the start, MB / longest event-loop stall, ms`] = `${out.heapMb} / ${out.stallMs}`;
      }
      const wordIn = await measured(() => upload(`${base}/doc/import?surface=doc`, [['file', new Blob([docx]), 'big.docx']]));
      figures['1 MB doc: import the Word file: ms'] = Math.round(wordIn.ms);
      figures['1 MB doc: import the Word file: longest event-loop stall, ms'] = wordIn.stallMs;
    }
    if (options.only === 'doc') return figures;

    // A workspace of 100 docs and 10 tables of 5,000 rows.
    await call('POST', '/api/workspaces', { name: 'Big', slug: 'big', mode: 'doc', initialMarkdown: '# Home\n' });
    const big = '/api/workspaces/big';
    for (let i = 0; i < DOCS - 1; i++) {
      const surface = await call('POST', `${big}/surfaces`, { kind: 'doc', name: `Doc ${i + 1}` });
      await call('PUT', `${big}/doc?surface=${surface.slug}`, { markdown: markdownOf(8 * 1024, i) });
    }
    for (let i = 0; i < TABLES; i++) {
      const surface = await call('POST', `${big}/surfaces`, { kind: 'table', name: `Table ${i + 1}` });
      await upload(`${big}/rows/import?surface=${surface.slug}`, [['file', new Blob([csvOf(ROWS, i)], { type: 'text/csv' }), 'rows.csv']]);
    }
    await t.services.sync.drain();
    const zipOut = await measured(() => read(`${big}/export.zip`));
    const zip = zipOut.result;
    figures[`workspace of ${DOCS} docs, ${TABLES} tables of ${ROWS.toLocaleString()} rows: export zip (${round(zip.length / MB, 1)} MB): ms`] = Math.round(zipOut.ms);
    figures['workspace export: peak heap over the start, MB'] = zipOut.heapMb;
    figures['workspace export: peak RSS over the start, MB'] = zipOut.rssMb;
    figures['workspace export: longest event-loop stall, ms'] = zipOut.stallMs;

    const zipIn = await measured(async () => {
      const { job } = await upload('/api/workspaces/import', [['slug', 'big-again'], ['file', new Blob([zip], { type: 'application/zip' }), 'big.zip']]);
      for (;;) {
        const { job: now } = await call('GET', `/api/jobs/${job.id}`);
        if (now.status !== 'running') return now;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    if (zipIn.result.status !== 'done' || zipIn.result.errors.length) throw new Error(`import: ${JSON.stringify(zipIn.result).slice(0, 500)}`);
    figures['workspace import of that zip (job to done): ms'] = Math.round(zipIn.ms);
    figures['workspace import: peak heap over the start, MB'] = zipIn.heapMb;
    figures['workspace import: peak RSS over the start, MB'] = zipIn.rssMb;
    figures['workspace import: longest event-loop stall, ms'] = zipIn.stallMs;
  } finally {
    await t.close();
    await (t as unknown as { store: { dispose(): Promise<void> } }).store.dispose();
  }
  return figures;
}
