/**
 * A server for the cold-sync benchmark (bench/cold-sync.ts), in its own
 * process. Reads a table document's state (V1 update) from the file
 * BENCH_STATE_FILE names. Prints one JSON line when ready.
 *
 * - `trellis`: the real app; the state is written to the document's log and
 *   compacted into a snapshot, as a large table is stored, and the server
 *   restarted so that nothing is loaded:
 *   the first client's sync loads it (cold).
 * - `bare`: an in-memory Hocuspocus (`flushDelay: false`) holding the same
 *   state already loaded, with the same websocket wiring.
 * - `bare-load`: the same Hocuspocus with nothing loaded: a connection's
 *   `onLoadDocument` reads the state from the file and applies it, as a
 *   bare Hocuspocus with a storage extension loads a document before it
 *   answers (the file standing in for the cheapest possible store); it
 *   unloads when its last client leaves, so each sync loads.
 *
 * - `trellis-rest`: the real app, empty (a welcome workspace, an editor
 *   key), for the parent to seed over REST (`POST /rows/import`) and sync;
 *   with BENCH_DATA_DIR it restarts on that seeded data, nothing loaded.
 *   On SIGTERM it closes the app (the data stays for the restart).
 *
 * Both answer `GET {stats}/heap` with the heap in use after a full GC;
 * `GET {stats}/usage` answers this process's CPU time so far (all threads,
 * and the serving thread's alone) and its resident memory now and at its
 * peak (no GC).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Hocuspocus } from '@hocuspocus/server';
import * as Y from 'yjs';
import { appendUpdates } from '../src/persistence/document-log';
import { tablesDocumentName } from '../src/model/document-names';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { insertKey, signInUser } from '../test/workspaces/helpers';
import { listenBare } from './bare-hocuspocus';
import { mainThreadCpuMs } from './spawn-server';

const mode = process.argv[2];
const stateFile = process.env.BENCH_STATE_FILE!;
process.on('SIGTERM', () => process.exit(0));
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Resident memory now and at its peak (MB), from the kernel's view of this process. */
function residentMb(): { rssMb: number; peakRssMb: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/**
 * CPU time of the serving thread alone (the kernel's count for the main
 * thread, in 10-ms ticks): process CPU also counts V8's GC helpers and
 * libuv's pool, which work on without holding back any request.
 */
async function startStats(): Promise<string> {
  const server = http.createServer((request, response) => {
    if (request.url === '/usage') {
      const cpu = process.cpuUsage();
      // Closed after each answer: a kept-alive socket the server times out races the client's next request.
      response.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, mainCpuMs: mainThreadCpuMs() ?? undefined, ...residentMb() }));
      return;
    }
    gc();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ heapMb: process.memoryUsage().heapUsed / 2 ** 20 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function trellis() {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  const { cookie } = await signIn(t, 'bench@example.com');
  await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
  const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  const documentName = tablesDocumentName(ws.id);
  await appendUpdates(t.services.db, [{ document: documentName, update: readFileSync(stateFile), author: null, derived: true }]);
  await t.services.sync.compactNow(documentName);
  // A restart on the same database: nothing is loaded (signing in wrote to, and so holds, the table document).
  await t.close();
  const restarted = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' }, dataDir: t.store.dataDir, databaseUrl: t.store.databaseUrl });
  console.log(JSON.stringify({ url: restarted.url, cookie, documentName, stats: await startStats() }));
}

async function trellisRest() {
  const restart = process.env.BENCH_DATA_DIR;
  if (!restart) await prepareTemplate();
  const env = { API_WRITES_PER_MINUTE: '1000000' };
  const t = restart ? await startTestApp({ env, dataDir: restart }) : await startTestApp({ env });
  process.removeAllListeners('SIGTERM');
  process.on('SIGTERM', () => void t.close().finally(() => process.exit(0)));
  const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirst();
  let editor = process.env.BENCH_TOKEN;
  if (!restart) {
    const owner = await signInUser(t, 'bench@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    editor = ((await insertKey(t, owner, { role: 'editor' })).as as { bearer: string }).bearer;
  }
  const welcome = ws ?? (await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow());
  console.log(JSON.stringify({ url: t.url, token: editor, documentName: tablesDocumentName(welcome.id), dataDir: t.store.dataDir, stats: await startStats() }));
}

async function bare() {
  const state = new Uint8Array(readFileSync(stateFile));
  const hocuspocus = new Hocuspocus({
    quiet: true,
    flushDelay: false,
    onLoadDocument: async ({ document }) => Y.applyUpdate(document, state),
  });
  const documentName = 'bench/tables';
  // Loaded before any client comes: this baseline serves the state from memory.
  await hocuspocus.openDirectConnection(documentName, {});
  const server = http.createServer();
  const url = await listenBare(hocuspocus, server);
  console.log(JSON.stringify({ url, documentName, stats: await startStats() }));
}

async function bareLoad() {
  const hocuspocus = new Hocuspocus({
    quiet: true,
    flushDelay: false,
    onLoadDocument: async ({ document }) => Y.applyUpdate(document, new Uint8Array(await readFile(stateFile))),
  });
  const server = http.createServer();
  const url = await listenBare(hocuspocus, server);
  console.log(JSON.stringify({ url, documentName: 'bench/tables', stats: await startStats() }));
}

await (mode === 'bare' ? bare() : mode === 'bare-load' ? bareLoad() : mode === 'trellis-rest' ? trellisRest() : trellis());
