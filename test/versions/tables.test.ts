import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { deleteRow, insertRow, listRows, updateRowCells } from '../../src/model/table/document';
import { acknowledged, eventually, synced, type SyncClient } from '../helpers/sync';
import { addMembership, createWorkspace, insertKey } from '../workspaces/helpers';
import { useVersionsApp } from './helpers';

/**
 * Version history of sheets over the real app: sessions of REST writers and
 * sync clients, showing a sheet as it was, comparing, restoring while
 * clients stay connected, row PATCH with a base version, and retention by
 * plan.
 */

const v = useVersionsApp();

async function tableWorkspace(slug: string) {
  const ws = await createWorkspace(v.t, v.ada, { name: slug, slug });
  return { id: ws.id as string, surfaceId: ws.primarySurface.id as string, documentName: ws.primarySurface.syncDocument as string, base: `/api/workspaces/${slug}` };
}

async function addRow(base: string, data: Record<string, unknown>): Promise<string> {
  const res = await v.t.request('POST', `${base}/rows`, { as: v.ada.as, body: { data } });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

async function versions(base: string) {
  const res = await v.t.request('GET', `${base}/surfaces/table/versions`, { as: v.ada.as });
  expect(res.status, res.text).toBe(200);
  return res.body as { versions: any[]; nextCursor: string | null; history: { since: string | null; retentionDays: number | null } };
}

/** The sheet as GET /rows shows it: ids and cells in order. */
async function sheet(base: string) {
  const res = await v.t.request('GET', `${base}/rows?limit=500`, { as: v.ada.as });
  expect(res.status).toBe(200);
  return res.body.rows.map((r: any) => ({ id: r.id, data: r.data }));
}

function clientSheet(client: SyncClient, surfaceId: string) {
  return listRows(client.doc, { surfaceId, limit: 500 }).rows.map((r) => ({ id: r.id, data: r.data }));
}

describe('versions of a sheet', () => {
  it('are made for editing sessions of REST writers and sync clients, and show the sheet as it was', async () => {
    const ws = await tableWorkspace('sheet-sessions');
    const agent = await insertKey(v.t, v.ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'counter' });
    const first = await addRow(ws.base, { title: 'One', status: 'todo' });
    await addRow(ws.base, { title: 'Two' });
    await v.ageLog(ws.documentName, 30);

    const client = v.connect(ws.documentName, { token: (agent.as as { bearer: string }).bearer });
    await synced(client);
    insertRow(client.doc, { id: 'from-sync', surfaceId: ws.surfaceId, data: { title: 'Three' } }, null);
    updateRowCells(client.doc, first, { status: 'doing' }, null);
    await acknowledged(client);

    const list = await versions(ws.base);
    expect(list.history).toEqual({ since: null, retentionDays: 30 });
    expect(list.versions.map((v) => ({ by: v.createdBy.name, editors: v.editors.map((e: any) => e.principal.name), changes: v.changes }))).toEqual([
      { by: 'counter', editors: ['counter'], changes: { unit: 'rows', added: 1, removed: 0, changed: 1, columnsChanged: false } },
      { by: 'ada', editors: ['ada'], changes: { unit: 'rows', added: 2, removed: 0, changed: 0, columnsChanged: true } },
    ]);

    // The older version, shaped as GET /rows shapes rows, paged.
    const older = list.versions[1];
    const shown = await v.t.request('GET', `${ws.base}/surfaces/table/versions/${older.id}?limit=1`, { as: v.ada.as });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.headers.get('etag')).toBe(older.etag);
    expect(shown.body.columns.map((c: any) => c.key)).toEqual(['title', 'status', 'notes']);
    expect(shown.body.rows).toEqual([{ id: first, workspaceId: ws.id, surfaceId: ws.surfaceId, position: 0, data: { title: 'One', status: 'todo' } }]);
    const next = await v.t.request('GET', `${ws.base}/surfaces/table/versions/${older.id}?limit=1&after=${shown.body.nextCursor}`, { as: v.ada.as });
    expect(next.body.rows.map((r: any) => [r.position, r.data.title])).toEqual([[1, 'Two']]);
    expect(next.body.nextCursor).toBeNull();
    expect((await v.t.request('GET', `${ws.base}/surfaces/table/versions/${older.id}?after=bm90LWEtbnVtYmVy`, { as: v.ada.as })).status).toBe(400);
  });

  it('record a CSV import of many rows into the sheet it went into, and into no other sheet', async () => {
    const ws = await tableWorkspace('sheet-import');
    await setPlan(ws.id, 'pro');
    await addRow(ws.base, { title: 'Before' });
    const bugs = await v.t.request('POST', `${ws.base}/surfaces`, { as: v.ada.as, body: { kind: 'table', name: 'Bugs', slug: 'bugs' } });
    expect(bugs.status, bugs.text).toBeLessThan(300);
    await v.ageLog(ws.documentName, 30);
    const tableBefore = (await versions(ws.base)).versions.map((version) => version.id);

    // More rows than one transaction of an import holds: several transactions that only create rows.
    const form = new FormData();
    form.append('file', new Blob(['title,notes\n' + Array.from({ length: 1200 }, (_, i) => `Imported ${i},note ${i}`).join('\n') + '\n'], { type: 'text/csv' }), 'rows.csv');
    const imported = await fetch(`${v.t.url}${ws.base}/rows/import?surface=bugs`, { method: 'POST', body: form, headers: { cookie: `svc-session=${v.ada.cookie}` } });
    expect(imported.status, await imported.clone().text()).toBe(200);
    expect(((await imported.json()) as { imported: number }).imported).toBe(1200);

    const list = await v.t.request('GET', `${ws.base}/surfaces/bugs/versions`, { as: v.ada.as });
    expect(list.status, list.text).toBe(200);
    const newest = list.body.versions[0];
    expect({ by: newest.createdBy.name, added: newest.changes.added, removed: newest.changes.removed, changed: newest.changes.changed }).toEqual({ by: 'ada', added: 1200, removed: 0, changed: 0 });
    const shown = await v.t.request('GET', `${ws.base}/surfaces/bugs/versions/${newest.id}?limit=1000`, { as: v.ada.as });
    expect(shown.body.rows.slice(0, 2).map((r: any) => r.data)).toEqual([
      { title: 'Imported 0', notes: 'note 0' },
      { title: 'Imported 1', notes: 'note 1' },
    ]);
    expect((await versions(ws.base)).versions.map((version) => version.id)).toEqual(tableBefore);
  });

  it('compares two versions: rows added, removed and changed cells', async () => {
    const ws = await tableWorkspace('sheet-diff');
    const keep = await addRow(ws.base, { title: 'Keep', status: 'todo' });
    const drop = await addRow(ws.base, { title: 'Drop' });
    await v.ageLog(ws.documentName, 30);
    expect((await v.t.request('PATCH', `${ws.base}/rows/${keep}`, { as: v.ada.as, body: { data: { status: 'done' } } })).status).toBe(200);
    expect((await v.t.request('DELETE', `${ws.base}/rows/${drop}`, { as: v.ada.as })).status).toBe(200);
    const added = await addRow(ws.base, { title: 'New' });
    const [latest, first] = (await versions(ws.base)).versions;
    const res = await v.t.request('GET', `${ws.base}/surfaces/table/versions/${first.id}/diff?to=${latest.id}`, { as: v.ada.as });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changes).toEqual({ unit: 'rows', added: 1, removed: 1, changed: 1, columnsChanged: false });
    expect(res.body.diff.rows).toEqual({
      added: [{ id: added, position: 1, data: { title: 'New' } }],
      removed: [{ id: drop, position: 1, data: { title: 'Drop' } }],
      changed: [{ id: keep, position: 0, cells: { status: { before: 'todo', after: 'done' } } }],
    });
    expect((await v.t.request('GET', `${ws.base}/surfaces/table/versions/${first.id}/diff?to=ver_nope`, { as: v.ada.as })).status).toBe(404);
  });
});

describe('restoring a sheet', () => {
  it('gives back exactly the old rows and columns while two clients stay connected and converge', async () => {
    const ws = await tableWorkspace('sheet-restore');
    const a = await addRow(ws.base, { title: 'Alpha', status: 'todo', notes: 'first' });
    const b = await addRow(ws.base, { title: 'Beta', status: 'doing' });
    const c = await addRow(ws.base, { title: 'Gamma' });
    const original = (await versions(ws.base)).versions[0];
    const wanted = await sheet(ws.base);
    await v.ageLog(ws.documentName, 30);

    const agent = await insertKey(v.t, v.ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'shuffler' });
    const first = v.connect(ws.documentName, { cookie: v.ada.cookie });
    const second = v.connect(ws.documentName, { token: (agent.as as { bearer: string }).bearer });
    await Promise.all([synced(first), synced(second)]);
    // The agent deletes a row, edits and clears cells, adds rows and reorders.
    deleteRow(second.doc, a, null);
    updateRowCells(second.doc, b, { title: 'Beta!', status: 'done', extra: 'new column' }, null);
    insertRow(second.doc, { id: 'late-row', surfaceId: ws.surfaceId, data: { title: 'Late' } }, null);
    await acknowledged(second);
    expect((await v.t.request('PATCH', `${ws.base}/rows/late-row`, { as: agent.as, body: { position: 0 } })).status).toBe(200);
    await eventually(() => clientSheet(first, ws.surfaceId).length === 3 && clientSheet(first, ws.surfaceId)[0]!.id === 'late-row');

    const res = await v.t.request('POST', `${ws.base}/surfaces/table/versions/${original.id}/restore`, { as: v.ada.as });
    expect(res.status, res.text).toBe(200);
    expect(await sheet(ws.base)).toEqual(wanted);
    const columns = await v.t.request('GET', `${ws.base}/columns`, { as: v.ada.as });
    expect(columns.body.columns.map((c: any) => c.key)).toEqual(['title', 'status', 'notes']);
    await eventually(() => JSON.stringify(clientSheet(first, ws.surfaceId)) === JSON.stringify(wanted) && JSON.stringify(clientSheet(second, ws.surfaceId)) === JSON.stringify(wanted));
    // The row deleted since comes back under its old id, and the usual row events say so, attributed to the caller.
    const events = await v.t.request('GET', `${ws.base}/events?limit=20`, { as: v.ada.as });
    const restoredEvents = events.body.events.filter((e: any) => e.principal?.id === v.ada.userId && ['row.created', 'row.deleted', 'version.restored'].includes(e.event));
    expect(restoredEvents.map((e: any) => [e.event, e.data.id ?? e.data.versionId])).toEqual(
      expect.arrayContaining([
        ['row.created', a],
        ['row.deleted', 'late-row'],
        ['version.restored', original.id],
      ]),
    );

    // Clients keep editing on top; the restore is undone by restoring its undo version.
    updateRowCells(first.doc, b, { notes: 'after the restore' }, null);
    await acknowledged(first);
    await eventually(() => clientSheet(second, ws.surfaceId).find((r) => r.id === b)?.data.notes === 'after the restore');
    const undo = await v.t.request('POST', `${ws.base}/surfaces/table/versions/${res.body.undo.id}/restore`, { as: v.ada.as });
    expect(undo.status).toBe(200);
    // Both restores are listed as restores of the versions they brought back.
    const restores = (await versions(ws.base)).versions.filter((version) => version.restoredFrom !== null);
    expect(restores.map((version) => version.restoredFrom.versionId)).toEqual([res.body.undo.id, original.id]);
    expect(restores[1].restoredFrom.createdAt).toBe(original.createdAt);
    expect(await sheet(ws.base)).toEqual([
      { id: 'late-row', data: { title: 'Late' } },
      { id: b, data: { title: 'Beta!', status: 'done', extra: 'new column' } },
      { id: c, data: { title: 'Gamma' } },
    ]);
  });

  it('is for editors only', async () => {
    const ws = await tableWorkspace('sheet-guard');
    await addRow(ws.base, { title: 'Only' });
    const [version] = (await versions(ws.base)).versions;
    await addMembership(v.t, ws.id, v.bob.userId, 'viewer');
    expect((await v.t.request('POST', `${ws.base}/surfaces/table/versions/${version.id}/restore`, { as: v.bob.as })).status).toBe(403);
    expect((await v.t.request('GET', `${ws.base}/surfaces/table/versions/${version.id}`, { as: v.bob.as })).status).toBe(403);
  });
});

describe('row PATCH with a base version', () => {
  it('writes the cells nobody changed since, keeps a concurrent client’s cell and reports a conflict', async () => {
    const ws = await tableWorkspace('row-base');
    const id = await addRow(ws.base, { title: 'Draft', status: 'todo', notes: 'n' });
    const read = await v.t.request('GET', `${ws.base}/rows/${id}`, { as: v.ada.as });
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+\.[A-Za-z0-9_-]{8}"$/);
    const client = v.connect(ws.documentName, { cookie: v.ada.cookie });
    await synced(client);
    updateRowCells(client.doc, id, { status: 'doing', notes: 'theirs' }, null);
    await acknowledged(client);

    // Built from the stale read: a new title (nobody else touched it), a status (changed since), and notes equal to theirs.
    const res = await v.t.request('PATCH', `${ws.base}/rows/${id}`, {
      as: v.ada.as,
      headers: { 'if-match': etag },
      body: { data: { title: 'Final', status: 'done', notes: 'theirs' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ title: 'Final', status: 'doing', notes: 'theirs' });
    expect(res.body.conflicts).toEqual([{ column: 'status', base: 'todo', yours: 'done', theirs: 'doing' }]);
    expect(res.headers.get('etag')).not.toBe(etag);
    await eventually(() => listRows(client.doc, { surfaceId: ws.surfaceId }).rows[0]?.data.title === 'Final');

    // A list read's ETag works as well (in the body), and a fresh base writes everything.
    const list = await v.t.request('GET', `${ws.base}/rows`, { as: v.ada.as });
    const fresh = await v.t.request('PATCH', `${ws.base}/rows/${id}`, { as: v.ada.as, body: { baseVersion: list.headers.get('etag'), data: { status: 'done' } } });
    expect(fresh.body).toMatchObject({ data: { status: 'done' }, conflicts: [] });
    const foreign = (await v.t.request('GET', `/api/workspaces/sheet-guard/rows`, { as: v.ada.as })).headers.get('etag')!;
    const refused = await v.t.request('PATCH', `${ws.base}/rows/${id}`, { as: v.ada.as, headers: { 'if-match': foreign }, body: { data: { title: 'x' } } });
    expect(refused.status).toBe(412);
    expect((await v.t.request('GET', `${ws.base}/rows/${id}`, { as: v.ada.as })).body.data.title).toBe('Final');
  });
});

describe('retention', () => {
  it('removes automatic versions past the plan’s window and never a named one', async () => {
    const ws = await tableWorkspace('retained');
    await addRow(ws.base, { title: 'Old' });
    await v.ageLog(ws.documentName, 40 * 24 * 60);
    const named = await v.t.request('POST', `${ws.base}/surfaces/table/versions`, { as: v.ada.as, body: { name: 'Keep forever' } });
    expect(named.status).toBe(200);
    await sql`update surface_versions set created_at = created_at - interval '40 days' where id = ${named.body.id}`.execute(v.t.services.db);
    await addRow(ws.base, { title: 'Recent' });
    const before = await versions(ws.base);
    expect(before.versions.map((v) => v.kind)).toEqual(['auto', 'named', 'auto']);
    // Paged one by one, the list is the same.
    const paged: string[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page: any = await v.t.request('GET', `${ws.base}/surfaces/table/versions?limit=1${cursor ? `&before=${cursor}` : ''}`, { as: v.ada.as });
      paged.push(...page.body.versions.map((v: any) => v.id));
      cursor = page.body.nextCursor;
    }
    expect(paged).toEqual(before.versions.map((v) => v.id));

    // Pro keeps a year: nothing goes.
    await setPlan(ws.id, 'pro');
    await v.t.app.versionRetention.runOnce();
    expect((await versions(ws.base)).versions.map((v) => v.id)).toEqual(before.versions.map((v) => v.id));
    // Free keeps 30 days: the 40-day-old automatic version goes, the named one stays.
    await setPlan(ws.id, 'free');
    await v.t.app.versionRetention.runOnce();
    const after = await versions(ws.base);
    expect(after.versions.map((v) => v.id)).toEqual([before.versions[0].id, named.body.id]);
    const kept = await v.t.request('GET', `${ws.base}/surfaces/table/versions/${named.body.id}`, { as: v.ada.as });
    expect(kept.body.rows.map((r: any) => r.data.title)).toEqual(['Old']);
  });
});

async function setPlan(workspaceId: string, plan: 'free' | 'pro') {
  await sql`update orgs set plan = ${plan} where id = (select org_id from workspaces where id = ${workspaceId})`.execute(v.t.services.db);
}
