import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestResponse } from '../helpers/app';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * The sheet or doc a request addresses can be named in the query
 * (`?surface=<slug>` or `?surfaceId=<id>`) on every doc, column and row
 * route, and in the body where the route takes it. One test per route, each
 * showing the query reached the non-primary surface.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let bugs: { id: string; slug: string };
let appendix: { id: string; slug: string };
const base = '/api/workspaces/multi';

function ok(res: TestResponse) {
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function newRow(surface: 'table' | 'bugs', title: string): Promise<string> {
  return ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title }, surface } })).id;
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  await createWorkspace(t, ada, { name: 'Multi', slug: 'multi', mode: 'table' });
  bugs = ok(await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'table', slug: 'bugs', name: 'Bugs' } }));
  await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'main', name: 'Main' } });
  appendix = ok(await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'appendix', name: 'Appendix' } }));
  ok(await t.request('PUT', `${base}/doc?surface=main`, { as: ada.as, body: { markdown: 'Main doc.' } }));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('doc routes take the surface in the query', () => {
  it('PUT /doc?surface=appendix', async () => {
    const put = ok(await t.request('PUT', `${base}/doc?surface=appendix`, { as: ada.as, body: { markdown: 'Appendix text.' } }));
    expect(put.surfaceId).toBe(appendix.id);
    expect(ok(await t.request('GET', `${base}/doc?format=text`, { as: ada.as })).text).toBe('Main doc.');
  });

  it('GET /doc?surfaceId=<id>', async () => {
    const got = ok(await t.request('GET', `${base}/doc?format=text&surfaceId=${appendix.id}`, { as: ada.as }));
    expect(got).toEqual({ surfaceId: appendix.id, text: expect.stringContaining('Appendix') });
  });

  it('POST /doc/sections?surface=appendix', async () => {
    const appended = ok(await t.request('POST', `/api/orgs/${ada.orgSlug}/workspaces/multi/doc/sections?surface=appendix`, { as: ada.as, body: { markdown: '## More' } }));
    expect(appended).toEqual({ surfaceId: appendix.id, appendedBlocks: 1 });
    expect((await t.request('POST', `${base}/doc/sections?surface=nope`, { as: ada.as, body: { markdown: 'x' } })).status).toBe(404);
  });
});

describe('column routes take the surface in the query', () => {
  it('POST /columns?surface=bugs', async () => {
    const added = ok(await t.request('POST', `${base}/columns?surface=bugs`, { as: ada.as, body: { column: { key: 'severity', label: 'Severity', type: 'text' } } }));
    expect(added.columns.map((c: { key: string }) => c.key)).toContain('severity');
    const primary = ok(await t.request('GET', `${base}/columns`, { as: ada.as })).columns;
    expect(primary.map((c: { key: string }) => c.key)).not.toContain('severity');
  });

  it('GET /columns?surfaceId=<id>', async () => {
    const columns = ok(await t.request('GET', `${base}/columns?surfaceId=${bugs.id}`, { as: ada.as })).columns;
    expect(columns.map((c: { key: string }) => c.key)).toContain('severity');
  });

  it('PUT /columns?surface=bugs', async () => {
    const current = ok(await t.request('GET', `${base}/columns?surface=bugs`, { as: ada.as })).columns;
    const next = current.map((c: { key: string; label: string }) => (c.key === 'severity' ? { ...c, label: 'Sev' } : c));
    const put = ok(await t.request('PUT', `${base}/columns?surface=bugs`, { as: ada.as, body: { columns: next } }));
    expect(put.columns.find((c: { key: string }) => c.key === 'severity').label).toBe('Sev');
  });
});

describe('row routes take the surface in the query', () => {
  it('POST /rows?surface=bugs, and a body naming another sheet is 400', async () => {
    const row = ok(await t.request('POST', `${base}/rows?surface=bugs`, { as: ada.as, body: { data: { title: 'from the query' } } }));
    expect(row.surfaceId).toBe(bugs.id);
    const same = ok(await t.request('POST', `${base}/rows?surface=bugs`, { as: ada.as, body: { data: { title: 'both' }, surface: 'bugs' } }));
    expect(same.surfaceId).toBe(bugs.id);
    const clash = await t.request('POST', `${base}/rows?surface=bugs`, { as: ada.as, body: { data: { title: 'clash' }, surface: 'table' } });
    expect(clash.status).toBe(400);
    expect(clash.body.error.details[0].code).toBe('conflicting_surface');
  });

  it('GET /rows?surface=bugs', async () => {
    const id = await newRow('bugs', 'listed');
    const rows = ok(await t.request('GET', `${base}/rows?surface=bugs`, { as: ada.as })).rows;
    expect(rows.every((r: { surfaceId: string }) => r.surfaceId === bugs.id)).toBe(true);
    expect(rows.map((r: { id: string }) => r.id)).toContain(id);
  });

  it('GET /rows/{id}?surface=bugs (404 on another sheet)', async () => {
    const id = await newRow('bugs', 'one');
    expect(ok(await t.request('GET', `${base}/rows/${id}?surface=bugs`, { as: ada.as })).id).toBe(id);
    expect((await t.request('GET', `${base}/rows/${id}?surface=table`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${base}/rows/${id}?surface=nope`, { as: ada.as })).status).toBe(404);
  });

  it('PATCH /rows/{id}?surface=bugs moves the row like the body field does', async () => {
    const id = await newRow('table', 'to move');
    const moved = ok(await t.request('PATCH', `${base}/rows/${id}?surfaceId=${bugs.id}`, { as: ada.as, body: { data: { title: 'moved' } } }));
    expect(moved).toMatchObject({ surfaceId: bugs.id, data: { title: 'moved' } });
    expect((await t.request('PATCH', `${base}/rows/${id}?surface=bugs`, { as: ada.as, body: { surface: 'table' } })).status).toBe(400);
  });

  it('DELETE /rows/{id}?surface=bugs (404 and nothing deleted on another sheet)', async () => {
    const id = await newRow('bugs', 'to delete');
    expect((await t.request('DELETE', `${base}/rows/${id}?surface=table`, { as: ada.as })).status).toBe(404);
    expect(ok(await t.request('GET', `${base}/rows/${id}`, { as: ada.as })).id).toBe(id);
    ok(await t.request('DELETE', `${base}/rows/${id}?surface=bugs`, { as: ada.as }));
    expect((await t.request('GET', `${base}/rows/${id}`, { as: ada.as })).status).toBe(404);
  });

  it('PATCH /rows/bulk?surface=bugs (all or nothing: a row of another sheet is not found)', async () => {
    const onBugs = await newRow('bugs', 'bulk a');
    const onTable = await newRow('table', 'bulk b');
    const refused = await t.request('PATCH', `${base}/rows/bulk?surface=bugs`, {
      as: ada.as,
      body: { updates: [{ id: onBugs, data: { title: 'x' } }, { id: onTable, data: { title: 'y' } }] },
    });
    expect(refused.status).toBe(404);
    expect(ok(await t.request('GET', `${base}/rows/${onBugs}`, { as: ada.as })).data.title).toBe('bulk a');
    const done = ok(await t.request('PATCH', `${base}/rows/bulk?surface=bugs`, { as: ada.as, body: { updates: [{ id: onBugs, data: { title: 'x' } }] } }));
    expect(done.rows[0].data.title).toBe('x');
  });

  it('POST /rows/move?surface=bugs (the target sheet in the query)', async () => {
    const id = await newRow('table', 'mover');
    const moved = ok(await t.request('POST', `${base}/rows/move?surface=bugs`, { as: ada.as, body: { rowIds: [id] } }));
    expect(moved).toEqual({ moved: [id], skipped: 0 });
    expect((await t.request('POST', `${base}/rows/move`, { as: ada.as, body: { rowIds: [id] } })).status).toBe(400);
    expect((await t.request('POST', `${base}/rows/move?surface=bugs`, { as: ada.as, body: { rowIds: [id], surface: 'table' } })).status).toBe(400);
  });

  it('GET /rows/{id}/history?surface=bugs', async () => {
    const id = await newRow('bugs', 'historic');
    const events = ok(await t.request('GET', `${base}/rows/${id}/history?surface=bugs`, { as: ada.as })).events;
    expect(events.map((e: { event: string }) => e.event)).toEqual(['row.created']);
    expect((await t.request('GET', `${base}/rows/${id}/history?surface=table`, { as: ada.as })).status).toBe(404);
  });

  it('unknown query fields are still refused', async () => {
    const res = await t.request('GET', `${base}/rows/x?sheet=bugs`, { as: ada.as });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toMatchObject({ path: ['querystring', 'sheet'], code: 'unrecognized_keys' });
  });
});
