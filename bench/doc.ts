/**
 * Doc figures (issue 5). Prints figures; asserts only that the replayed
 * trace ends in the trace's own final text.
 *
 * 1. `PUT /doc` of a ~1 MB Markdown document through the real app (first
 *    write into an empty doc, the same body again, one paragraph changed),
 *    and reading it back as Markdown and as ProseMirror JSON.
 * 2. The real editing trace ../shared/data/editing-traces/automerge-paper
 *    (259,778 single-character edits) replayed through ONE real
 *    @hocuspocus/provider into a doc surface's body, one Y transaction (so
 *    one update, one websocket message) per edit, until the server has
 *    acknowledged every one: against the real server (auth, the durable
 *    log written before each acknowledgement, events, projections) and
 *    against a bare in-memory Hocuspocus (`flushDelay: false`) with the
 *    same websocket wiring, each in its own process. Then the stored bytes
 *    of that document (log + snapshot after a compaction) against
 *    `Y.encodeStateAsUpdate` of the final document.
 *
 *   npx tsx bench/doc.ts                    (whole trace)
 *   npx tsx bench/doc.ts --edits 20000      (a prefix of the trace, for a quick look)
 *   npx tsx bench/doc.ts --trace-only --prefill=100000   (also on a server whose org already
 *                                           holds 100,000 rows and their events in another document;
 *                                           --no-fresh skips the fresh server;
 *                                           --no-compaction: no compaction during the trace, which
 *                                           isolates the per-message write path)
 *
 * Per run: time per tenth of the trace (bare and Trellis side by side), the
 * server's longest event-loop pause, and the final text checked.
 *
 * `runDocBench()` returns the same figures for bench/run.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import * as Y from 'yjs';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../test/helpers/sync';
import { pinThisProcess, spawnBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
export type Trace = { startContent: string; endContent: string; txns: Array<{ patches: Array<[number, number, string]> }> };

export type DocBenchOptions = {
  edits?: number;
  skipPut?: boolean;
  skipTrace?: boolean;
  /** Rows (and their events) written into another document of the org before the trace: 0 runs on a fresh server only. */
  prefill?: number;
  /** Also run Trellis on a fresh server beside the prefilled one (default when prefilling). */
  fresh?: boolean;
  /** No compaction (nor version-index pass) during the trace: the per-message write path alone. */
  noCompaction?: boolean;
};

// The shared data folder sits beside the checkout (/work/main) or beside the worktrees' folder (/work/wt/<name>).
const TRACE_FILE = ['../../shared', '../../../shared']
  .map((up) => path.resolve(import.meta.dirname, up, 'data/editing-traces/automerge-paper.json.gz'))
  .find((file) => existsSync(file))!;

export async function runDocBench(options: DocBenchOptions = {}): Promise<Figures> {
  const figures: Figures = {};
  if (!options.skipPut) Object.assign(figures, await putFigures());
  if (!options.skipTrace) Object.assign(figures, await traceFigures(options.edits, options.prefill ?? 0, options.fresh ?? true, options.noCompaction ?? false));
  return figures;
}

// ------------------------------------------------------------------ PUT /doc

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A deterministic ~`bytes` Markdown document with the constructs people write: headings, prose with marks and links, lists, tasks, code, tables, quotes. */
export function makeMarkdown(bytes: number): string {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const words = 'the a server client document edit merge replica update text field block list table heading cursor offline sync node mark link image review agent draft'.split(' ');
  const word = () => words[Math.floor(random() * words.length)]!;
  const sentence = () => {
    const n = 6 + Math.floor(random() * 14);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const w = word();
      const r = random();
      parts.push(r < 0.04 ? `**${w}**` : r < 0.08 ? `*${w}*` : r < 0.1 ? `\`${w}\`` : r < 0.12 ? `[${w}](https://example.com/${w})` : w);
    }
    const text = parts.join(' ');
    return text[0]!.toUpperCase() + text.slice(1) + '.';
  };
  const blocks: string[] = [];
  let size = 0;
  let section = 0;
  while (size < bytes) {
    const r = random();
    let block: string;
    if (blocks.length % 12 === 0) block = `${'#'.repeat(1 + (section++ % 3))} Section ${section}: ${word()} ${word()} ${word()}`;
    else if (r < 0.55) block = [sentence(), sentence(), sentence()].join(' ');
    // Two lists in a row would read back as one list: a paragraph always separates them.
    else if (r < 0.78 && blocks.at(-1)?.startsWith('- ')) block = sentence();
    else if (r < 0.7) block = Array.from({ length: 4 }, () => `- ${sentence()}`).join('\n');
    else if (r < 0.78) block = Array.from({ length: 3 }, (_, i) => `- [${i === 0 ? 'x' : ' '}] ${sentence()}`).join('\n');
    else if (r < 0.85) block = '```ts\n' + Array.from({ length: 5 }, (_, i) => `const ${word()}${i} = "${word()}";`).join('\n') + '\n```';
    else if (r < 0.92) block = '| Name | Status | Notes |\n| --- | :-: | --- |\n' + Array.from({ length: 4 }, () => `| ${word()} | ${word()} | ${sentence()} |`).join('\n');
    else block = `> ${sentence()} ${sentence()}`;
    blocks.push(block);
    size += block.length + 2;
  }
  return blocks.join('\n\n') + '\n';
}

async function putFigures(): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp();
  try {
    const { cookie } = await signIn(t, 'bench@example.com');
    const as = { cookie };
    const markdown = makeMarkdown(1_000_000);
    const lines = markdown.split('\n\n');
    const figures: Figures = { docMarkdownBytes: Buffer.byteLength(markdown), docBlocks: lines.length };
    const first: number[] = [];
    const same: number[] = [];
    const onePara: number[] = [];
    const getMd: number[] = [];
    const getJson: number[] = [];
    for (let round_ = 0; round_ < 3; round_++) {
      const slug = `big-${round_}`;
      const created = await t.request('POST', '/api/workspaces', { as, body: { name: slug, slug, mode: 'doc' } });
      if (created.status !== 200) throw new Error(created.text);
      const base = `/api/workspaces/${slug}/doc`;
      const timed = async (into: number[], method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
        const start = performance.now();
        const res = await t.request(method, url, { as, body, headers });
        into.push(performance.now() - start);
        if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${res.text.slice(0, 300)}`);
        return res;
      };
      await timed(first, 'PUT', base, { markdown });
      await timed(same, 'PUT', base, { markdown });
      const edited = [...lines];
      const target = lines.findIndex((block, i) => i > lines.length / 2 && /^[A-Z]/.test(block));
      edited[target] = `${edited[target]} One more sentence.`;
      await timed(onePara, 'PUT', base, { markdown: edited.join('\n\n') });
      const md = await timed(getMd, 'GET', `${base}?format=markdown`);
      if (md.body.markdown !== edited.join('\n\n')) figures.docRoundTrip = 'differs (see docs/MARKDOWN.md for what Markdown normalises)';
      await timed(getJson, 'GET', base);
      if (round_ === 0) {
        const name = created.body.primarySurface.syncDocument as string;
        await t.services.sync.compactNow(name);
        const updates = await t.services.db
          .selectFrom('documentUpdates')
          .select((eb) => eb.fn.sum<number>(eb.fn('octet_length', ['update'])).as('bytes'))
          .where('document', '=', name)
          .executeTakeFirst();
        const snapshot = await t.services.db
          .selectFrom('documentSnapshots')
          .select((eb) => eb.fn.sum<number>(eb.fn('octet_length', ['state'])).as('bytes'))
          .where('document', '=', name)
          .executeTakeFirst();
        figures.docStoredBytesAfterCompaction = Number(updates?.bytes ?? 0) + Number(snapshot?.bytes ?? 0);
      }
    }
    figures.docRoundTrip ??= 'identical';
    Object.assign(figures, {
      docPut1MBFirstMs: round(median(first)),
      docPut1MBUnchangedMs: round(median(same)),
      docPut1MBOneParagraphMs: round(median(onePara)),
      docGet1MBMarkdownMs: round(median(getMd)),
      docGet1MBJsonMs: round(median(getJson)),
    });
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

// --------------------------------------------------------------- the trace

type ServerInfo = { url: string; documentName: string; cookie?: string; runId?: string };
type ServerStats = {
  text: string;
  stateV1Bytes: number;
  stateV2Bytes: number;
  cpuMs: number;
  storedBytes?: number;
  storedRows?: number;
  drainMs?: number;
  drainCpuMs?: number;
  events?: number;
  loopMaxMs?: number;
  loopMaxCpuMs?: number;
  prefilledRows?: number;
  /** bare-durable: group commits and the updates they held. */
  commits?: number;
  updates?: number;
  /** BENCH_COUNT_STATEMENTS=1: the statements sent between mark and stats, by their first words. */
  statements?: Record<string, { count: number; ms: number; max: number }>;
};

export function loadTrace(): Trace {
  return JSON.parse(gunzipSync(readFileSync(TRACE_FILE)).toString('utf8')) as Trace;
}

export type TraceServerMode = 'trellis' | 'bare' | 'bare-durable';

function spawnServer(mode: TraceServerMode, prefill: number, noCompaction: boolean, extraEnv: Record<string, string> = {}) {
  // The server on core 0, this replaying client on core 1 (pinned in traceFigures).
  const env = { ...extraEnv, BENCH_PREFILL: String(prefill), BENCH_NO_COMPACTION: noCompaction ? '1' : '0' };
  return spawnBenchServer<ServerInfo>('doc-trace-server.ts', mode, `bench_doc_${mode.replace(/-/g, '_')}_${process.pid}`, { pinned: true, env });
}

/** The text a trace prefix leaves, applied like Array.prototype.splice. */
export function expectedText(trace: Trace, edits: number): string {
  if (edits >= trace.txns.length) return trace.endContent;
  const chars = [...trace.startContent];
  for (let i = 0; i < edits; i++) for (const [pos, del, ins] of trace.txns[i]!.patches) chars.splice(pos, del, ...ins);
  return chars.join('');
}

/** One replay of the trace's first `edits` through one provider against a server of `mode` in its own process (`env`: its database). */
/** Syncs `client` and gives its doc the documented layout, one paragraph whose Y.XmlText (returned) takes the trace's edits, acknowledged. */
export async function traceParagraph(client: SyncClient, trace: Trace): Promise<Y.XmlText> {
  await synced(client, 60_000);
  const text = new Y.XmlText();
  client.doc.transact(() => {
    const paragraph = new Y.XmlElement('paragraph');
    client.doc.getXmlFragment('default').insert(0, [paragraph]);
    paragraph.insert(0, [text]);
    if (trace.startContent) text.insert(0, trace.startContent);
  });
  await acknowledged(client, 60_000);
  return text;
}

export async function replay(mode: TraceServerMode, trace: Trace, edits: number, prefill = 0, noCompaction = false, env: Record<string, string> = {}) {
  const { info, child } = await spawnServer(mode, prefill, noCompaction, env);
  try {
    const client = connectClient(info.url, info.documentName, { cookie: info.cookie }, info.runId ? { run: info.runId } : {});
    const text = await traceParagraph(client, trace);

    // When each tenth of the trace's patches is acknowledged: acknowledged = sent - still unsynced.
    const total = trace.txns.slice(0, edits).reduce((n, txn) => n + txn.patches.length, 0);
    const tenthsAt: number[] = [];
    let sent = 0;
    client.provider.on('unsyncedChanges', ({ number }: { number: number }) => {
      const acked = sent - number;
      while (tenthsAt.length < 10 && acked >= Math.ceil(((tenthsAt.length + 1) * total) / 10)) tenthsAt.push(performance.now());
    });
    await fetch(`${info.url}/bench/mark`);
    const started = performance.now();
    let patches = 0;
    for (let i = 0; i < edits; i++) {
      for (const [pos, del, ins] of trace.txns[i]!.patches) {
        // Each patch its own transaction: its own update, its own message.
        client.doc.transact(() => {
          if (del > 0) text.delete(pos, del);
          if (ins) text.insert(pos, ins);
        });
        patches++;
        sent = patches;
      }
      // Let the socket drain now and then, as a typist's event loop would.
      if (i % 2000 === 1999) await new Promise((resolve) => setImmediate(resolve));
    }
    const sentMs = performance.now() - started;
    await eventually(() => client.provider.unsyncedChanges === 0, 3_600_000, 5);
    const ackedMs = performance.now() - started;
    const clientText = text.toString();
    // Asked while the client is still connected: the bare server unloads the document when it leaves.
    const stats = (await (await fetch(`${info.url}/bench/stats`)).json()) as ServerStats;
    client.destroy();
    const tenthsMs = tenthsAt.map((at, i) => at - (i === 0 ? started : tenthsAt[i - 1]!));
    return { patches, sentMs, ackedMs, stats, clientText, tenthsMs };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

async function traceFigures(limit: number | undefined, prefill: number, fresh: boolean, noCompaction: boolean): Promise<Figures> {
  const trace = loadTrace();
  const edits = Math.min(limit ?? trace.txns.length, trace.txns.length);
  const expected = expectedText(trace, edits);
  const figures: Figures = { traceEdits: edits, compactionDuringTrace: String(!noCompaction), pinned: String(pinThisProcess(1)), loadAverageAtStart: os.loadavg()[0]!.toFixed(1) };
  const bare = await replay('bare', trace, edits);
  const runs: Array<[string, Awaited<ReturnType<typeof replay>>]> = [['bare', bare]];
  if (prefill === 0 || fresh) runs.push(['trellis', await replay('trellis', trace, edits, 0, noCompaction)]);
  if (prefill > 0) runs.push([`trellisPrefilled${prefill}`, await replay('trellis', trace, edits, prefill, noCompaction)]);
  for (const [name, run] of runs) {
    const matches = run.stats.text === expected && run.clientText === expected;
    figures[`${name}FinalTextEqualsEndContent`] = String(matches);
    if (!matches) throw new Error(`${name}: the final text differs from the trace's endContent (${run.stats.text.length} vs ${expected.length} chars)`);
    figures[`${name}ReplaySeconds`] = round(run.ackedMs / 1000, 2);
    figures[`${name}EditsPerSecond`] = Math.round(run.patches / (run.ackedMs / 1000));
    figures[`${name}ClientSendSeconds`] = round(run.sentMs / 1000, 2);
    figures[`${name}ServerCpuSeconds`] = round(run.stats.cpuMs / 1000, 2);
    figures[`${name}ServerCpuMicrosPerEdit`] = Math.round((run.stats.cpuMs * 1000) / run.patches);
    figures[`${name}LongestEventLoopPauseMs`] = round(run.stats.loopMaxMs ?? 0);
    figures[`${name}LastTenthVsFirst`] = round(run.tenthsMs.at(-1)! / run.tenthsMs[0]!, 2);
    figures[`${name}WorstTenthVsFirst`] = round(Math.max(...run.tenthsMs) / run.tenthsMs[0]!, 2);
    if (name !== 'bare') {
      figures[`${name}VsBareTime`] = round(run.ackedMs / bare.ackedMs, 2);
      figures[`${name}VsBareServerCpu`] = round(run.stats.cpuMs / bare.stats.cpuMs, 2);
      figures[`${name}EventsRecorded`] = run.stats.events ?? 'n/a';
      figures[`${name}QueueDrainAfterAckMs`] = round(run.stats.drainMs ?? 0);
    }
  }
  // Seconds per tenth of the trace (time between the acknowledgements that end each tenth), side by side.
  figures['tenths (s): ' + runs.map(([name]) => name).join(' | ')] = '';
  for (let i = 0; i < 10; i++) {
    figures[`  tenth ${String(i + 1).padStart(2)}`] = runs.map(([, run]) => (run.tenthsMs[i] === undefined ? '-' : (run.tenthsMs[i]! / 1000).toFixed(2))).join(' | ');
  }
  const real = runs.find(([name]) => name === 'trellis')?.[1];
  const prefilled = runs.find(([name]) => name.startsWith('trellisPrefilled'))?.[1];
  if (real && prefilled) figures.prefilledVsFreshTime = round(prefilled.ackedMs / real.ackedMs, 2);
  const last = (prefilled ?? real)!;
  Object.assign(figures, {
    finalTextChars: expected.length,
    storedBytesAfterCompaction: last.stats.storedBytes ?? 'n/a',
    storedLogRowsAfterCompaction: last.stats.storedRows ?? 'n/a',
    stateAsUpdateV1Bytes: last.stats.stateV1Bytes,
    stateAsUpdateV2Bytes: last.stats.stateV2Bytes,
    storedVsStateV1: round((last.stats.storedBytes ?? 0) / last.stats.stateV1Bytes, 3),
  });
  return figures;
}

const isEntryPoint = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;

if (isEntryPoint) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const edits = arg('--edits');
  const prefill = process.argv.find((a) => a.startsWith('--prefill='))?.split('=')[1] ?? arg('--prefill');
  const figures = await runDocBench({
    edits: edits ? Number(edits) : undefined,
    prefill: prefill ? Number(prefill) : 0,
    fresh: !process.argv.includes('--no-fresh'),
    noCompaction: process.argv.includes('--no-compaction'),
    skipPut: process.argv.includes('--trace-only'),
    skipTrace: process.argv.includes('--put-only'),
  });
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(40)} ${value}`);
  process.exit(0);
}
