/**
 * A server for the durability benchmark (bench/durability.ts): the real app
 * over embedded PGlite stored as `shipped` (PGlite's own `-F` and no-op
 * fsync) or `durable` (src/persistence/durable-fs.ts, the default), with a
 * warm table document and an editor key. Prints one JSON line when ready.
 */
import http from 'node:http';
import { usePGliteStorage } from '../src/persistence/database';
import { DurableNodeFS, durableStorage, shippedStorage } from '../src/persistence/durable-fs';
import { tablesDocumentName } from '../src/model/document-names';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate, removeTemplate } from '../test/helpers/database';
import { insertKey, signInUser } from '../test/workspaces/helpers';

const mode = process.argv[2];

/** Flushes and the wall time spent in them: what durability adds, less disturbed by a busy CPU than throughput. */
const flushes = { count: 0, ms: 0 };
class CountingDurableFS extends DurableNodeFS {
  protected override flush(fd: number, directory: boolean) {
    const started = performance.now();
    super.flush(fd, directory);
    flushes.count++;
    flushes.ms += performance.now() - started;
  }
}
usePGliteStorage(mode === 'shipped' ? shippedStorage : { ...durableStorage, filesystem: (dir) => new CountingDurableFS(dir) });

export type DurabilityServerInfo = {
  url: string;
  editor: string;
  rowsPath: string;
  documentName: string;
  surfaceId: string;
  storage: string;
  /** GET answers `{ count, ms }`: flushes so far and the milliseconds spent in them. */
  flushes: string;
};

const stats = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(flushes)));
await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));

await prepareTemplate();
const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
process.on('SIGTERM', () => {
  void t.close().then(removeTemplate).finally(() => process.exit(0));
});
const owner = await signInUser(t, 'bench@example.com');
// Scale: the row cap would stop the run on a smaller plan.
await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
const editor = await insertKey(t, owner, { role: 'editor' });
const first = await t.request('POST', '/api/workspaces/welcome/rows', { as: editor.as, body: { data: { title: 'warm' } } });
if (first.status !== 200) throw new Error(`warm-up write answered ${first.status}`);
const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
const info: DurabilityServerInfo = {
  url: t.url,
  editor: `Bearer ${(editor.as as { bearer: string }).bearer}`,
  rowsPath: '/api/workspaces/welcome/rows',
  documentName: tablesDocumentName(ws.id),
  surfaceId: first.body.surfaceId,
  storage: mode ?? 'durable',
  flushes: `http://127.0.0.1:${(stats.address() as { port: number }).port}`,
};
console.log(JSON.stringify(info));
