import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow, insertRow, listRows } from '../../src/model/table/document';
import { rowMapOf } from '../../src/model/table/layout';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string; orgSlug: string };
let userId: string;
let workspaceId: string;
let surfaceId: string;
const base = '/api/workspaces/welcome';

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'rows@example.com');
  const ws = await t.services.db
    .selectFrom('workspaces')
    .innerJoin('surfaces', 'surfaces.workspaceId', 'workspaces.id')
    .select(['workspaces.id', 'surfaces.id as surfaceId', 'workspaces.createdById'])
    .where('workspaces.slug', '=', 'welcome')
    .executeTakeFirstOrThrow();
  workspaceId = ws.id;
  surfaceId = ws.surfaceId;
  userId = ws.createdById!;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const as = () => ({ as: { cookie: owner.cookie } });

async function eventCount() {
  const row = await t.services.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('workspaceId', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('rows over REST on the shared Y document', () => {
  it('seeds the default columns on a new table workspace', async () => {
    const res = await t.request('GET', `${base}/columns`, as());
    expect(res.status).toBe(200);
    expect(res.body.columns.map((c: any) => [c.key, c.type, c.position])).toEqual([
      ['title', 'text', 0],
      ['status', 'status', 1],
      ['notes', 'longtext', 2],
    ]);
  });

  it('a REST-created row reaches a connected client and the SSE stream', async () => {
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    await synced(client);
    const sse = openSse(`${t.url}${base}/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    expect(await sse.ready).toBe(200);

    const created = await t.request('POST', `${base}/rows`, { body: { data: { title: 'Write spec', status: 'todo' } }, ...as() });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      workspaceId,
      surfaceId,
      position: 0,
      data: { title: 'Write spec', status: 'todo' },
      createdByPrincipalId: userId,
      updatedByPrincipalId: null,
    });
    await eventually(() => getRow(client.doc, created.body.id)?.data.title === 'Write spec');
    const frame = await eventually(() => sse.frames.find((f) => f.event === 'row.created' && f.data.data.id === created.body.id));
    expect(frame.data).toMatchObject({
      event: 'row.created',
      workspace: { id: workspaceId, slug: 'welcome', org: { slug: owner.orgSlug } },
      principal: { principalType: 'user', id: userId },
      data: { id: created.body.id, data: { title: 'Write spec', status: 'todo' }, position: 0, surfaceId },
    });
    expect(frame.id).toBe(frame.data.eventId);
    sse.close();
    client.destroy();
  });

  it('a row a client writes in the documented layout appears in REST and on SSE, attributed to the client', async () => {
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    await synced(client);
    const sse = openSse(`${t.url}${base}/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    await sse.ready;
    insertRow(client.doc, { id: 'client-row-1', surfaceId, data: { title: 'From the browser' } }, null);
    await acknowledged(client);
    const listed = await eventually(async () => {
      const res = await t.request('GET', `${base}/rows`, as());
      return res.body.rows.find((r: any) => r.id === 'client-row-1');
    });
    expect(listed).toMatchObject({ data: { title: 'From the browser' }, createdByPrincipalId: userId });
    const frame = await eventually(() => sse.frames.find((f) => f.event === 'row.created' && f.data.data.id === 'client-row-1'));
    expect(frame.data.principal.id).toBe(userId);
    sse.close();
    client.destroy();
  });

  it('checks values against column types (422 naming the column) and seeds text columns for unknown keys', async () => {
    const before = await eventCount();
    const bad = await t.request('POST', `${base}/rows`, { body: { data: { status: 'nonsense' } }, ...as() });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('validation');
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: ['data', 'status'] })]);
    expect(await eventCount()).toBe(before);

    const seeded = await t.request('POST', `${base}/rows`, { body: { data: { title: 'x', estimate: '3d' } }, ...as() });
    expect(seeded.status).toBe(200);
    const columns = await t.request('GET', `${base}/columns`, as());
    expect(columns.body.columns.at(-1)).toMatchObject({ key: 'estimate', type: 'text', position: 3 });
  });

  it('rejects malformed bodies with 400 and writes nothing', async () => {
    const before = await eventCount();
    for (const body of [{}, { data: 'x' }, { data: {}, extra: 1 }]) {
      const res = await t.request('POST', `${base}/rows`, { body, ...as() });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
    }
    const notJson = await t.request('POST', `${base}/rows`, { rawBody: '{"data":', ...as() });
    expect(notJson.status).toBe(400);
    expect(await eventCount()).toBe(before);
  });

  it('patches as a partial merge and deletes', async () => {
    const created = await t.request('POST', `${base}/rows`, { body: { data: { title: 'a', notes: 'keep me' } }, ...as() });
    const patched = await t.request('PATCH', `${base}/rows/${created.body.id}`, { body: { data: { title: 'b' } }, ...as() });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({ title: 'b', notes: 'keep me' });
    expect(patched.body.updatedByPrincipalId).toBe(userId);
    const deleted = await t.request('DELETE', `${base}/rows/${created.body.id}`, as());
    expect(deleted.body).toEqual({ ok: true });
    expect((await t.request('GET', `${base}/rows/${created.body.id}`, as())).status).toBe(404);
    const history = await t.request('GET', `${base}/rows/${created.body.id}/history`, as());
    expect(history.body.events.map((e: any) => e.event)).toEqual(['row.created', 'row.updated', 'row.deleted']);
  });

  it("a patch reads the row's cells twice, for its answer and for the projection, and answers what a second reader sees", async () => {
    const created = await t.request('POST', `${base}/rows`, { body: { data: { title: 'once', notes: 'kept' } }, ...as() });
    const id = created.body.id;
    // Every read of a row's cells walks its map's entries (layout.ts readRowData); count the walks of this row's.
    let reads = 0;
    await t.services.sync.read(tablesDocumentName(workspaceId), (doc) => {
      const entries = rowMapOf(doc, id)!._map;
      const walk = entries[Symbol.iterator];
      entries[Symbol.iterator] = function () {
        reads++;
        return walk.call(this);
      };
    });
    const patched = await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { title: 'twice' } }, ...as() });
    expect(patched.status).toBe(200);
    expect(reads).toBe(2);
    const again = await t.request('GET', `${base}/rows/${id}`, as());
    expect(patched.body).toEqual(again.body);
    expect(patched.body.data).toEqual({ title: 'twice', notes: 'kept' });
    expect((await t.request('PATCH', `${base}/rows/no-such-row`, { body: { data: { title: 'x' } }, ...as() })).status).toBe(404);
  });

  it('bulk update is all-or-nothing', async () => {
    const a = await t.request('POST', `${base}/rows`, { body: { data: { title: 'bulk a' } }, ...as() });
    const before = await eventCount();
    const failed = await t.request('PATCH', `${base}/rows/bulk`, {
      body: { updates: [{ id: a.body.id, data: { title: 'changed' } }, { id: 'no-such-row', data: { title: 'x' } }] },
      ...as(),
    });
    expect(failed.status).toBe(404);
    expect((await t.request('GET', `${base}/rows/${a.body.id}`, as())).body.data.title).toBe('bulk a');
    expect(await eventCount()).toBe(before);

    const ok = await t.request('PATCH', `${base}/rows/bulk`, { body: { updates: [{ id: a.body.id, data: { title: 'changed' } }] }, ...as() });
    expect(ok.status).toBe(200);
    expect(ok.body.rows[0].data.title).toBe('changed');
    expect(await eventCount()).toBe(before + 1);
  });

  it('pages with nextCursor, visiting every row once', async () => {
    const all = await t.request('GET', `${base}/rows?limit=1000`, as());
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.request('GET', `${base}/rows?limit=2${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`, as());
      expect(page.status).toBe(200);
      seen.push(...page.body.rows.map((r: any) => r.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.body.rows.map((r: any) => r.id));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('resumes SSE with Last-Event-ID with exactly the missed events', async () => {
    const audit = await t.request('GET', `${base}/events?limit=1`, as());
    const lastSeen = audit.body.events[0].eventId;
    const r1 = await t.request('POST', `${base}/rows`, { body: { data: { title: 'missed 1' } }, ...as() });
    const r2 = await t.request('POST', `${base}/rows`, { body: { data: { title: 'missed 2' } }, ...as() });
    const sse = openSse(`${t.url}${base}/subscribe`, { cookie: `svc-session=${owner.cookie}`, 'last-event-id': lastSeen });
    await sse.ready;
    await eventually(() => sse.frames.length >= 2);
    const live = await t.request('POST', `${base}/rows`, { body: { data: { title: 'live' } }, ...as() });
    await eventually(() => sse.frames.length >= 3);
    expect(sse.frames.map((f) => f.data.data.id)).toEqual([r1.body.id, r2.body.id, live.body.id]);
    sse.close();
  });

  it('the audit log filters by action and pages newest first', async () => {
    const res = await t.request('GET', `${base}/events?action=row.deleted`, as());
    expect(res.status).toBe(200);
    expect(res.body.events.every((e: any) => e.event === 'row.deleted')).toBe(true);
    const page = await t.request('GET', `${base}/events?limit=2`, as());
    expect(Number(page.body.events[0].eventId)).toBeGreaterThan(Number(page.body.events[1].eventId));
    const next = await t.request('GET', `${base}/events?limit=2&before=${page.body.nextCursor}`, as());
    expect(Number(next.body.events[0].eventId)).toBeLessThan(Number(page.body.events[1].eventId));
  });

  it('columns: contiguous positions, 409 on an existing key', async () => {
    const current = (await t.request('GET', `${base}/columns`, as())).body.columns;
    const gap = await t.request('PUT', `${base}/columns`, { body: { columns: current.map((c: any, i: number) => ({ ...c, position: i * 2 })) }, ...as() });
    expect(gap.status).toBe(400);
    const dup = await t.request('POST', `${base}/columns`, { body: { column: { key: 'title', label: 'Again', type: 'text' } }, ...as() });
    expect(dup.status).toBe(409);
    const added = await t.request('POST', `${base}/columns`, { body: { column: { key: 'due', label: 'Due', type: 'date', position: 0, custom: 'kept' } }, ...as() });
    expect(added.status).toBe(200);
    expect(added.body.column).toMatchObject({ key: 'due', position: current.length, custom: 'kept' });
    const renamed = await t.request('PUT', `${base}/columns`, {
      body: { columns: added.body.columns.map((c: any) => (c.key === 'title' ? { ...c, key: 'name' } : c)) },
      ...as(),
    });
    expect(renamed.status).toBe(200);
    const rows = await t.services.sync.read(tablesDocumentName(workspaceId), (doc) => listRows(doc).rows);
    expect(rows.some((r) => 'name' in r.data)).toBe(true);
    expect(rows.some((r) => 'title' in r.data)).toBe(false);
  });
});

describe('a doc-only workspace', () => {
  it('gets its first sheet on its first row write, recorded as surface.created', async () => {
    const created = await t.request('POST', '/api/workspaces', { ...as(), body: { name: 'Notes', slug: 'notes-only', mode: 'doc' } });
    expect(created.status).toBe(200);
    expect((await t.request('GET', '/api/workspaces/notes-only/columns', as())).body).toEqual({ columns: [] });
    const row = await t.request('POST', '/api/workspaces/notes-only/rows', { ...as(), body: { data: { title: 'first' } } });
    expect(row.status).toBe(200);
    const surfaces = (await t.request('GET', '/api/workspaces/notes-only/surfaces', as())).body.surfaces;
    expect(surfaces.map((s: any) => s.kind).sort()).toEqual(['doc', 'table']);
    const events = (await t.request('GET', '/api/workspaces/notes-only/events?action=surface.created', as())).body.events;
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ kind: 'table', slug: 'table' });
    expect((await t.request('GET', '/api/workspaces/notes-only/columns', as())).body.columns.map((c: any) => c.key)).toEqual(['title']);
  });
});
