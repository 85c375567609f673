import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { addRowSuggestion } from '../../src/model/table/suggestions';
import { startTestApp, type TestResponse } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { bearerOf } from '../mcp/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Table suggestions through the routes (issue 25 item 2): `mode=suggest` on
 * POST, PATCH and DELETE /rows answers 202 and changes no row; the
 * suggestion is listed with its change and conflicts, and accepting it is a
 * normal row change attributed to the decider, with the suggestion events.
 * A suggest-only key's plain row write over sync is refused.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let agent: { as: { bearer: string }; agentId: string };
let suggester: { as: { bearer: string }; agentId: string };
let workspaceId: string;
let sheetId: string;
const base = '/api/workspaces/board';
const clients: SyncClient[] = [];

function ok(res: TestResponse, status = 200) {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

async function eventsOf(event: string) {
  const rows = await t.services.db.selectFrom('events').select(['record']).where('workspaceId', '=', workspaceId).where('event', '=', event).orderBy('seq').execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record));
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@rows-suggest.test');
  const workspace = await createWorkspace(t, ada, { name: 'Board', slug: 'board', mode: 'table' });
  workspaceId = workspace.id;
  sheetId = workspace.primarySurface.id;
  agent = (await insertKey(t, ada, { role: 'editor', agentName: 'planner' })) as typeof agent;
  suggester = (await insertKey(t, ada, { role: 'editor', agentName: 'careful', suggestOnly: true })) as typeof suggester;
  ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'estimate', label: 'Estimate', type: 'number' } } }));
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

describe('suggested row changes over REST', () => {
  it('a new row: 202, no row until accepted, then the decider’s row.created and suggestion.accepted', async () => {
    const suggested = ok(await t.request('POST', `${base}/rows?mode=suggest`, { as: agent.as, body: { data: { title: 'Write the launch post', estimate: 3 } } }), 202);
    expect(suggested.suggestion).toMatchObject({ target: 'row', status: 'open', surfaceId: sheetId, author: { id: agent.agentId }, change: { kind: 'create', values: { title: 'Write the launch post', estimate: 3 } } });
    const rowId = suggested.suggestion.rowId as string;
    expect((await t.request('GET', `${base}/rows/${rowId}`, { as: ada.as })).status).toBe(404);

    const listed = ok(await t.request('GET', `${base}/suggestions?surfaceId=${sheetId}`, { as: ada.as }));
    expect(listed.suggestions.map((s: { id: string }) => s.id)).toContain(suggested.suggestion.id);

    const accepted = ok(await t.request('POST', `/api/suggestions/${suggested.suggestion.id}/accept`, { as: ada.as }));
    expect(accepted.suggestion).toMatchObject({ status: 'accepted', decidedBy: { id: ada.userId } });
    expect(ok(await t.request('GET', `${base}/rows/${rowId}`, { as: ada.as }))).toMatchObject({ id: rowId, data: { title: 'Write the launch post', estimate: 3 } });
    const created = (await eventsOf('row.created')).filter((e) => e.data.id === rowId);
    expect(created).toHaveLength(1);
    expect(created[0].principal.id).toBe(ada.userId);
    expect((await eventsOf('suggestion.created')).some((e) => e.data.suggestionId === suggested.suggestion.id && e.principal.id === agent.agentId)).toBe(true);
    expect((await eventsOf('suggestion.accepted')).some((e) => e.data.suggestionId === suggested.suggestion.id && e.principal.id === ada.userId)).toBe(true);
    expect((await t.request('POST', `/api/suggestions/${suggested.suggestion.id}/accept`, { as: ada.as })).status).toBe(409);
  });

  it('new cell values on a base someone changed since show the conflict; rejecting leaves the row as it is', async () => {
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Estimate the work', estimate: 2 } } }));
    const read = await t.request('GET', `${base}/rows/${row.id}`, { as: agent.as });
    const etag = read.headers.get('etag')!;
    ok(await t.request('PATCH', `${base}/rows/${row.id}`, { as: ada.as, body: { data: { estimate: 5 } } }));
    const suggested = ok(await t.request('PATCH', `${base}/rows/${row.id}`, { as: agent.as, headers: { 'if-match': etag }, body: { data: { estimate: 8 }, mode: 'suggest' } }), 202);
    expect(suggested.suggestion.change).toMatchObject({ kind: 'update', values: { estimate: 8 }, previous: { estimate: 5 }, conflicts: [{ column: 'estimate', base: 2, current: 5, suggested: 8 }] });
    const rejected = ok(await t.request('POST', `/api/suggestions/${suggested.suggestion.id}/reject`, { as: ada.as }));
    expect(rejected.suggestion.status).toBe('rejected');
    expect(ok(await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).data.estimate).toBe(5);
  });

  it('a delete: accepted, the row is gone; a suggested move is refused', async () => {
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Old task' } } }));
    const move = await t.request('PATCH', `${base}/rows/${row.id}?mode=suggest`, { as: agent.as, body: { position: 0 } });
    expect(move.status, move.text).toBe(400);
    const suggested = ok(await t.request('DELETE', `${base}/rows/${row.id}?mode=suggest`, { as: agent.as }), 202);
    expect(suggested.suggestion.change.kind).toBe('delete');
    expect((await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).status).toBe(200);
    ok(await t.request('POST', `/api/suggestions/${suggested.suggestion.id}/accept`, { as: ada.as }));
    expect((await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).status).toBe(404);
  });

  it('a suggest-only key: plain row writes 403, suggestions 202', async () => {
    const row = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Guarded' } } }));
    for (const [method, path, body] of [
      ['POST', `${base}/rows`, { data: { title: 'x' } }],
      ['PATCH', `${base}/rows/${row.id}`, { data: { title: 'y' } }],
      ['DELETE', `${base}/rows/${row.id}`, undefined],
      ['POST', `${base}/columns`, { column: { key: 'zz', label: 'Z', type: 'text' } }],
    ] as const) {
      const res = await t.request(method, path, { as: suggester.as, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
    }
    ok(await t.request('PATCH', `${base}/rows/${row.id}?mode=suggest`, { as: suggester.as, body: { data: { title: 'Guarded, renamed' } } }), 202);
    expect(ok(await t.request('GET', `${base}/rows/${row.id}`, { as: ada.as })).data.title).toBe('Guarded');
  });
});

describe('a suggest-only key over sync on a table', () => {
  it('has a plain row refused and its own suggestion entry kept and listed', async () => {
    const documentName = tablesDocumentName(workspaceId);
    const plain = connectClient(t.url, documentName, { token: bearerOf(suggester.as) });
    clients.push(plain);
    await synced(plain);
    insertRow(plain.doc, { id: 'row_sneaky', surfaceId: sheetId, data: { title: 'Sneaky' } }, null);
    await plain.closed;
    expect((await t.request('GET', `${base}/rows/row_sneaky`, { as: ada.as })).status).toBe(404);

    const suggesting = connectClient(t.url, documentName, { token: bearerOf(suggester.as) });
    clients.push(suggesting);
    await synced(suggesting);
    addRowSuggestion(
      suggesting.doc,
      {
        id: 'sug_syncrow000001',
        kind: 'create',
        sheetId,
        rowId: 'row_fromsync01',
        values: { title: 'Proposed over sync' },
        author: { principalType: 'agent', id: suggester.agentId, name: 'careful' },
        at: new Date().toISOString(),
        status: 'open',
      },
      null,
    );
    await acknowledged(suggesting);
    const listed = await eventually(async () => {
      const res = await t.request('GET', `${base}/suggestions`, { as: ada.as });
      return res.body.suggestions.find((s: { id: string }) => s.id === 'sug_syncrow000001');
    });
    expect(listed).toMatchObject({ author: { id: suggester.agentId }, change: { kind: 'create', values: { title: 'Proposed over sync' } } });
    expect((await t.request('GET', `${base}/rows/row_fromsync01`, { as: ada.as })).status).toBe(404);
  });
});
