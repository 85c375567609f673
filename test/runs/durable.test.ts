import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type Credential, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, insertKey, signInUser } from '../workspaces/helpers';
import { bearerOf, paragraph } from './helpers';

/**
 * What a run changed is the run's own record, written as its updates are
 * derived: it reads the same and reverts after the updates were folded
 * into a snapshot (compaction deletes them) and after a restart, on both
 * databases.
 */

type App = Awaited<ReturnType<typeof startTestApp>>;
const opened: App[] = [];
const clients: SyncClient[] = [];
afterAll(async () => {
  for (const client of clients) client.destroy();
  for (const app of opened) await app.close().catch(() => {});
  await opened[0]?.store.dispose();
});

async function ok(t: TestApp, method: string, path: string, as: Credential, body?: unknown, run?: string) {
  const res = await t.request(method, path, { as, ...(body === undefined ? {} : { body }), ...(run ? { headers: { 'trellis-run': run } } : {}) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
}

describe('a run after compaction and a restart', () => {
  it('reads back the same and reverts, keeping what a person did meanwhile', async () => {
    const first = await startTestApp();
    opened.push(first);
    const ada = await signInUser(first, 'ada@example.com');
    const ws = await createWorkspace(first, ada, { name: 'kept', slug: 'kept' });
    const base = '/api/workspaces/kept';
    const plan = await ok(first, 'POST', `${base}/surfaces`, ada.as, { kind: 'doc', slug: 'plan', name: 'Plan' });
    await ok(first, 'PUT', `${base}/doc?surface=plan`, ada.as, { markdown: 'First line.\n\nSecond line.\n' });
    const kept = await ok(first, 'POST', `${base}/rows`, ada.as, { data: { title: 'Kept', status: 'todo' } });
    const gone = await ok(first, 'POST', `${base}/rows`, ada.as, { data: { title: 'Deleted by the run', status: 'todo' } });
    const agent = await insertKey(first, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'cleaner' });

    const { run } = await ok(first, 'POST', `${base}/runs`, agent.as, { name: 'Cleanup' });
    const made = await ok(first, 'POST', `${base}/rows`, agent.as, { data: { title: 'Made by the run' } }, run.id);
    await ok(first, 'PATCH', `${base}/rows/${kept.id}`, agent.as, { data: { status: 'done', notes: 'by the run' } }, run.id);
    await ok(first, 'DELETE', `${base}/rows/${gone.id}`, agent.as, undefined, run.id);
    // Typed over sync, a keystroke at a time: a typing burst, recorded with its event.
    const typist = connectClient(first.url, plan.syncDocument, { token: bearerOf(agent.as) }, { run: run.id });
    clients.push(typist);
    await synced(typist);
    const line = paragraph(typist.doc, 1);
    for (const char of ' (typed)') line.insert(line.length - 1, char);
    for (let i = 0; i < 'First '.length; i++) paragraph(typist.doc, 0).delete(0, 1);
    await acknowledged(typist);
    typist.destroy();
    // Ada, meanwhile: a cell of the row the run changed, and a word in its paragraph.
    await ok(first, 'PATCH', `${base}/rows/${kept.id}`, ada.as, { data: { title: 'Kept by Ada' } });
    const person = connectClient(first.url, plan.syncDocument, { cookie: ada.cookie });
    clients.push(person);
    await synced(person);
    paragraph(person.doc, 1).insert(0, 'Ada: ');
    await acknowledged(person);
    person.destroy();

    const read = async (t: TestApp) => (await ok(t, 'GET', `${base}/runs/${run.id}/changes`, ada.as)).changes;
    const before = await read(first);
    expect(before).toEqual([
      { surface: 'table', surfaceId: ws.primarySurface.id, kind: 'row.created', rowId: made.id, data: { title: 'Made by the run' } },
      { surface: 'table', surfaceId: ws.primarySurface.id, kind: 'row.updated', rowId: kept.id, cells: { status: { before: 'todo', after: 'done' }, notes: { before: null, after: 'by the run' } } },
      { surface: 'table', surfaceId: ws.primarySurface.id, kind: 'row.deleted', rowId: gone.id, data: { title: 'Deleted by the run', status: 'todo' } },
      { surface: 'plan', surfaceId: plan.id, kind: 'doc.changed', inserted: [' (typed)'], deleted: ['First '] },
    ]);

    // Compaction folds every logged update of both documents into their snapshots (the run's included).
    await first.services.sync.compactNow(ws.primarySurface.syncDocument);
    await first.services.sync.compactNow(plan.syncDocument);
    const logged = await sql<{ n: number }>`select count(*)::int as n from document_updates where run_id = ${run.id}`.execute(first.services.db);
    expect(logged.rows[0]!.n).toBe(0);
    expect(await read(first)).toEqual(before);
    await first.close();

    // A new process on the same data.
    const second = await startTestApp({ dataDir: first.store.dataDir, databaseUrl: first.store.databaseUrl });
    opened.push(second);
    expect(await read(second)).toEqual(before);
    const reverted = await ok(second, 'POST', `${base}/runs/${run.id}/revert`, ada.as);
    expect(reverted.conflicts).toEqual([]);
    expect(reverted.reverted).toMatchObject({ rowsRemoved: 1, rowsRestored: 1, cellsRestored: 2, docsChanged: 1 });
    const rows = (await ok(second, 'GET', `${base}/rows`, ada.as)).rows.map((row: { id: string; data: unknown }) => [row.id, row.data]);
    expect(rows).toEqual([
      [kept.id, { title: 'Kept by Ada', status: 'todo' }],
      [gone.id, { title: 'Deleted by the run', status: 'todo' }],
    ]);
    expect((await ok(second, 'GET', `${base}/doc?surface=plan&format=markdown`, ada.as)).markdown).toBe('First line.\n\nAda: Second line.\n');
  });
});
