import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
let surface: { id: string; syncDocument: string };
const page = '/api/workspaces/site/surfaces/page/html';

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  workspaceId = (await createWorkspace(t, ada, { name: 'Site', slug: 'site', mode: 'doc' })).id;
  const res = await t.request('POST', '/api/workspaces/site/surfaces', { as: ada.as, body: { kind: 'html', slug: 'page', name: 'Page' } });
  surface = res.body;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function docEvents() {
  const rows = await t.services.db.selectFrom('events').select('record').where('workspaceId', '=', workspaceId).where('event', '=', 'doc.updated').orderBy('seq').execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record));
}

describe('html surfaces', () => {
  it('starts empty, stores sanitised HTML on PUT and reads it back', async () => {
    expect((await t.request('GET', page, { as: ada.as })).body).toEqual({ surfaceId: surface.id, html: '' });
    const dirty =
      '<style>h1 { color: teal }</style><h1 onclick="steal()">Report</h1>' +
      '<p>Hi <a href="javascript:alert(1)">bad</a> <a href="https://example.com" target="_blank">good</a></p>' +
      '<script>alert(1)</script><iframe src="https://evil.example"></iframe>' +
      '<form action="https://evil.example"><input name="password"></form><img src="x" onerror="alert(1)">';
    const put = await t.request('PUT', page, { as: ada.as, body: { html: dirty } });
    expect(put.status).toBe(200);
    const clean =
      '<style>h1 { color: teal }</style><h1>Report</h1>' +
      '<p>Hi <a>bad</a> <a href="https://example.com" target="_blank" rel="noopener noreferrer">good</a></p><img src="x">';
    expect(put.body).toEqual({ surfaceId: surface.id, html: clean });
    expect((await t.request('GET', page, { as: ada.as })).body.html).toBe(clean);
    expect((await t.request('GET', `/api/workspaces/site/surfaces/${surface.id}/html`, { as: ada.as })).body.html).toBe(clean);
  });

  it('lives in its own Y document as the Y.Text `html`, and emits doc.updated for REST and sync edits', async () => {
    const sse = openSse(`${t.url}/api/workspaces/site/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    await sse.ready;
    const client = connectClient(t.url, surface.syncDocument, { cookie: ada.cookie });
    await synced(client);
    expect(surface.syncDocument).toBe(`${workspaceId}/html/${surface.id}`);
    await t.request('PUT', page, { as: ada.as, body: { html: '<p>Version two</p>' } });
    await eventually(() => client.doc.getText('html').toString() === '<p>Version two</p>');
    const rest = await eventually(() => sse.frames.find((f) => f.event === 'doc.updated' && f.data.data.text?.includes('two')));
    expect(rest.data).toMatchObject({ surface: { id: surface.id, slug: 'page' }, principal: { id: ada.userId }, data: { surfaceId: surface.id } });

    client.doc.getText('html').insert('<p>Version two'.length, ', edited live');
    await acknowledged(client);
    expect((await t.request('GET', page, { as: ada.as })).body.html).toBe('<p>Version two, edited live</p>');
    await eventually(() => sse.frames.find((f) => f.event === 'doc.updated' && f.data.data.text?.includes('edited live')));
    client.destroy();
    sse.close();

    const before = (await docEvents()).length;
    await t.request('PUT', page, { as: ada.as, body: { html: '<p>Version two, edited live</p>' } });
    expect(await docEvents()).toHaveLength(before); // unchanged: no transaction, no event
  });

  it('needs edit_doc to write, and 404s for surfaces that are not html', async () => {
    const viewer = await signInUser(t, 'viewer@example.com');
    await addMembership(t, workspaceId, viewer.userId, 'viewer');
    expect((await t.request('GET', page, { as: viewer.as })).status).toBe(200);
    expect((await t.request('PUT', page, { as: viewer.as, body: { html: '<p>x</p>' } })).status).toBe(403);
    expect((await t.request('GET', '/api/workspaces/site/surfaces/doc/html', { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', '/api/workspaces/site/surfaces/nope/html', { as: ada.as })).status).toBe(404);
    expect((await t.request('PUT', page, { as: ada.as, body: { markdown: 'x' } })).status).toBe(400);
  });
});
