/**
 * A server for the REST benchmark (bench/rest.ts), in its own process so
 * the load generator in the parent does not share its core (the parent
 * starts it pinned with `taskset`). Prints one JSON line when ready.
 *
 * - `trellis`: the real app with production durability (PGlite, or Postgres
 *   when TEST_DATABASE_URL is set), a warm table document, an editor key
 *   and a viewer key. The write limit is whatever API_WRITES_PER_MINUTE says.
 * - `bare`: a Fastify `POST` route echoing its JSON body, nothing else.
 *
 * Both count their own CPU time between two marks (`cpu` in the info), so
 * the parent can report server CPU per request, which a shared machine
 * disturbs less than wall time. BENCH_PROFILE_DIR=/tmp/prof writes a CPU
 * profile of each measured scenario there.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import Fastify from 'fastify';
import { tablesDocumentName } from '../src/sync/document-names';
import { startTestApp } from '../test/helpers/app';
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
  let mark = process.cpuUsage();
  let profiles = 0;
  const server = http.createServer(async (request, response) => {
    if (request.url === '/mark') {
      mark = process.cpuUsage();
      await session?.post('Profiler.start');
    }
    const used = process.cpuUsage(mark);
    if (request.url === '/cpu' && session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path.join(profileDir!, `${process.argv[2]}-${process.pid}-${++profiles}.cpuprofile`), JSON.stringify(profile));
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

export type RestServerInfo = {
  url: string;
  /** `GET {cpu}/mark` starts counting; `GET {cpu}/cpu` answers `{ cpuMs }` since the mark. */
  cpu: string;
  database: string;
  /** `Authorization` header values. */
  editor: string;
  viewer: string;
  rowsPath: string;
  /** Rows that exist, for PATCH. */
  rowIds: string[];
};

async function trellis() {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: process.env.API_WRITES_PER_MINUTE ?? '1000000' } });
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
  const info: RestServerInfo & { documentName: string } = {
    url: t.url,
    cpu: await startCpuCounter(),
    database: t.services.database.kind,
    editor: editorHeader,
    viewer: `Bearer ${(viewer.as as { bearer: string }).bearer}`,
    rowsPath: '/api/workspaces/welcome/rows',
    rowIds,
    documentName: tablesDocumentName(ws.id),
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

await (mode === 'bare' ? bare() : trellis());
