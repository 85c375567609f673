import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

it('smoke', async () => {
  const ws = await createWorkspace(t, ada, { name: 'w', slug: 'w' });
  const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'bot' });
  const base = '/api/workspaces/w';
  const person = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'mine' } } });
  expect(person.status, person.text).toBe(200);
  const started = await t.request('POST', `${base}/runs`, { as: agent.as, body: { name: 'tidy' } });
  expect(started.status, started.text).toBe(201);
  const runId = started.body.run.id;
  const created = await t.request('POST', `${base}/rows`, { as: agent.as, body: { data: { title: 'agent row' } }, headers: { 'trellis-run': runId } });
  expect(created.status, created.text).toBe(200);
  expect(created.headers.get('trellis-run')).toBe(runId);
  const upd = await t.request('PATCH', `${base}/rows/${person.body.id}`, { as: agent.as, body: { data: { title: 'agent says' } }, headers: { 'trellis-run': runId } });
  expect(upd.status, upd.text).toBe(200);
  const doc = await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'notes', name: 'Notes' } });
  expect(doc.status, doc.text).toBe(200);
  expect((await t.request('PUT', `${base}/doc?surface=notes`, { as: ada.as, body: { markdown: 'Hello world.\n\nSecond.' } })).status).toBe(200);
  const put = await t.request('PUT', `${base}/doc?surface=notes`, { as: agent.as, body: { markdown: 'Hello big world.\n\nThird.' }, headers: { 'trellis-run': runId } });
  expect(put.status, put.text).toBe(200);
  const changes = await t.request('GET', `${base}/runs/${runId}/changes`, { as: ada.as });
  console.log(JSON.stringify(changes.body, null, 1));
  const dry = await t.request('POST', `${base}/runs/${runId}/revert?dryRun=true`, { as: ada.as });
  console.log(dry.status, JSON.stringify(dry.body));
  const rev = await t.request('POST', `${base}/runs/${runId}/revert`, { as: ada.as });
  console.log(rev.status, JSON.stringify(rev.body), rev.headers.get('trellis-run'));
  const rows = await t.request('GET', `${base}/rows`, { as: ada.as });
  console.log(JSON.stringify(rows.body.rows.map((r: any) => r.data)));
  console.log((await t.request('GET', `${base}/doc?surface=notes&format=markdown`, { as: ada.as })).body.markdown);
  const list = await t.request('GET', `${base}/runs`, { as: ada.as });
  console.log(JSON.stringify(list.body, null, 1));
});
