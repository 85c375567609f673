/**
 * Soak: many sync clients connecting, editing and leaving, in churn, against
 * one Trellis process (the real server, `src/main.ts`, on embedded PGlite),
 * for 10 minutes by default. Every 30 s it prints the server's heap and RSS
 * (read from its own /metrics), loaded documents and open sockets; at the
 * end, the documents still loaded once every client has left (should be 0)
 * and every error the server logged.
 *
 *   npm run bench -- soak                       10 minutes, 500 clients
 *   npm run bench -- soak --minutes=2 --clients=200
 *
 * Heap: every 30 s the server is asked for a full garbage collection
 * (SIGUSR2, handled by bench/gc-probe.mjs, preloaded into the server for
 * this run only) and then scraped, so the figure is what the server really
 * keeps, not the young generation's garbage of the moment ("heap now" is
 * the reading just before).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { tablesDocumentName } from '../src/model/document-names';
import { deleteRow, insertRow, updateRowCells } from '../src/model/table/document';
import { signInThroughOutboxFile, startServerProcess } from '../test/helpers/server-process';

type Figures = Record<string, number | string>;

const WORKSPACES = 10;
const REPORT_MS = 30_000;

function flag(name: string): number | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg ? Number(arg.split('=')[1]) : undefined;
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : NaN;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoakBench(): Promise<Figures> {
  const minutes = flag('minutes') ?? 10;
  const clientCount = flag('clients') ?? 500;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-soak-'));
  const server = await startServerProcess(
    {
      DATA_DIR: dataDir,
      API_WRITES_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${path.resolve(import.meta.dirname, 'gc-probe.mjs')}`.trim(),
    },
    { startTimeoutMs: 120_000 },
  );
  // Never leave the server behind, whatever ends this process.
  const orphanGuard = () => server.child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  try {
    const cookie = await signInThroughOutboxFile(server.url, dataDir, 'soak@example.com');
    const headers = { 'content-type': 'application/json', cookie: `svc-session=${cookie}` };
    const slugs = ['welcome'];
    for (let i = 1; i < WORKSPACES; i++) {
      const res = await fetch(`${server.url}/api/workspaces`, { method: 'POST', headers, body: JSON.stringify({ mode: 'table', name: `Soak ${i}`, slug: `soak-${i}` }) });
      if (!res.ok) throw new Error(`creating a workspace answered ${res.status}: ${await res.text()}`);
      slugs.push(`soak-${i}`);
    }
    const documents: Array<{ name: string; surfaceId: string }> = [];
    for (const slug of slugs) {
      const detail = (await (await fetch(`${server.url}/api/workspaces/${slug}`, { headers })).json()) as { id: string; primarySurface: { id: string } };
      documents.push({ name: tablesDocumentName(detail.id), surfaceId: detail.primarySurface.id });
    }

    class CookieWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { cookie: `svc-session=${cookie}` } });
        // A client that leaves while still connecting: ws reports it as an error, and the session already counts it.
        this.on('error', () => {});
      }
    }

    let sessions = 0;
    let edits = 0;
    let clientErrors = 0;
    const failures = new Map<string, number>();
    let running = true;
    const live = new Set<Promise<void>>();

    /** One client's life: connect, add a row, edit it every 2–4 s, delete it, leave after 15–45 s. */
    async function session(n: number) {
      const target = documents[n % documents.length]!;
      const socket = new HocuspocusProviderWebsocket({ url: `${server.url.replace(/^http/, 'ws')}/api/sync`, WebSocketPolyfill: CookieWebSocket });
      const doc = new Y.Doc();
      const provider = new HocuspocusProvider({ websocketProvider: socket, name: target.name, document: doc, token: '' });
      provider.attach();
      try {
        await waitFor(() => provider.isSynced, 30_000, 'not synced within 30 s');
        const rowId = `soak-${n}`;
        insertRow(doc, { id: rowId, surfaceId: target.surfaceId, data: { title: `client ${n}` } }, null);
        const leaveAt = Date.now() + 15_000 + Math.random() * 30_000;
        while (running && Date.now() < leaveAt) {
          await sleep(2_000 + Math.random() * 2_000);
          updateRowCells(doc, rowId, { title: `client ${n} edit ${++edits}` }, null);
        }
        deleteRow(doc, rowId, null);
        await waitFor(() => provider.unsyncedChanges === 0, 10_000, 'last edits not acknowledged within 10 s');
        sessions++;
      } catch (error) {
        clientErrors++;
        const reason = error instanceof Error ? error.message : String(error);
        failures.set(reason, (failures.get(reason) ?? 0) + 1);
      } finally {
        provider.destroy();
        socket.destroy();
        doc.destroy();
      }
    }

    let spawned = 0;
    function spawnSession() {
      const run = session(spawned++).finally(() => {
        live.delete(run);
        if (running) spawnSession();
      });
      live.add(run);
    }

    const scrape = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return {
        heap: metric(text, 'trellis_nodejs_heap_size_used_bytes'),
        rss: metric(text, 'trellis_process_resident_memory_bytes'),
        documents: metric(text, 'trellis_documents_loaded'),
        sockets: metric(text, 'trellis_sync_connections'),
        serverLagMaxMs: metric(text, 'trellis_nodejs_eventloop_lag_max_seconds') * 1000,
      };
    };

    // Clients arrive over the first 30 s, then each one that leaves is replaced.
    const started = Date.now();
    for (let i = 0; i < clientCount; i++) {
      spawnSession();
      await sleep(30_000 / clientCount);
    }
    console.log(`soak: ${clientCount} clients on ${documents.length} documents for ${minutes} min; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    // The clients share one process: when it stalls, they time out, whatever the server does. Both loops' worst stall per window is shown.
    const clientLag = monitorEventLoopDelay({ resolution: 20 });
    clientLag.enable();
    console.log('minute   heap after GC MiB   heap now MiB   rss MiB   documents   sockets   sessions done   edits   server / client stall max ms');
    const reports: Array<{ minute: number; heapAfterGc: number; rss: number }> = [];
    let nextReport = started + REPORT_MS;
    while (Date.now() - started < minutes * 60_000) {
      await sleep(Math.max(0, nextReport - Date.now()));
      nextReport += REPORT_MS;
      const before = await scrape();
      server.child.kill('SIGUSR2');
      await sleep(1_000);
      const sample = await scrape();
      const minute = (Date.now() - started) / 60_000;
      reports.push({ minute, heapAfterGc: sample.heap, rss: sample.rss });
      console.log(
        `${minute.toFixed(1).padStart(6)}   ${mib(sample.heap).padStart(17)}   ${mib(before.heap).padStart(12)}   ${mib(sample.rss).padStart(7)}   ${String(sample.documents).padStart(9)}   ${String(sample.sockets).padStart(7)}   ${String(sessions).padStart(13)}   ${String(edits).padStart(5)}   ${before.serverLagMaxMs.toFixed(0)} / ${(clientLag.max / 1e6).toFixed(0)}`,
      );
      clientLag.reset();
    }

    running = false;
    await Promise.all([...live]);
    // Every client has left: documents unload once their last connection closes.
    const leftAt = Date.now();
    let after = await scrape();
    while (after.documents > 0 && Date.now() - leftAt < 30_000) {
      await sleep(500);
      after = await scrape();
    }

    const fromMinute2 = reports.filter((r) => r.minute >= 2);
    const baseline = fromMinute2[0]?.heapAfterGc;
    const drift = baseline ? Math.max(...fromMinute2.map((r) => Math.abs(r.heapAfterGc - baseline) / baseline)) : NaN;
    const logged = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => {
        try {
          return JSON.parse(line) as { level: number; msg: string };
        } catch {
          return null;
        }
      })
      .filter((entry): entry is { level: number; msg: string } => entry !== null);
    const errors = logged.filter((entry) => entry.level >= 50);
    return {
      'clients (concurrent)': clientCount,
      'duration (min)': minutes,
      'client sessions completed': sessions,
      'client sessions failed': clientErrors,
      ...(failures.size ? { 'why they failed': [...failures].map(([reason, n]) => `${n} × ${reason}`).join('; ') } : {}),
      'edits sent': edits,
      'heap after GC at minute 2 (MiB)': baseline ? mib(baseline) : 'n/a (run at least 2.5 min)',
      'heap after GC at the end (MiB)': reports.length ? mib(reports.at(-1)!.heapAfterGc) : 'n/a',
      'largest heap drift from minute 2 (%)': Number.isFinite(drift) ? (drift * 100).toFixed(1) : 'n/a',
      'rss at the end (MiB)': reports.length ? mib(reports.at(-1)!.rss) : 'n/a',
      'documents loaded after every client left': after.documents,
      [`(seconds until then)`]: ((Date.now() - leftAt) / 1000).toFixed(1),
      'warnings logged': logged.filter((entry) => entry.level === 40).length,
      'errors logged': errors.length,
      ...(errors.length ? { 'first errors': [...new Set(errors.map((e) => e.msg))].slice(0, 5).join(' | ') } : {}),
    };
  } finally {
    await server.kill('SIGTERM');
    process.off('exit', orphanGuard);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(what);
    await sleep(50);
  }
}
