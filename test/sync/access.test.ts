import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow, insertRow, updateRowCells } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { addMember, elevateForKeys, mint, signInPerson, type Person } from '../keys/fixtures';

/**
 * Who may open, read and write a table document over /api/sync, and how
 * fast a change of access reaches a socket that is already open.
 */
let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: Person;
let workspaceId: string;
let surfaceId: string;
let docName: string;
const base = '/api/workspaces/welcome';

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInPerson(t, 'owner@example.com');
  const detail = await t.request('GET', base, { as: owner.as });
  workspaceId = detail.body.id;
  surfaceId = detail.body.primarySurface.id;
  docName = tablesDocumentName(workspaceId);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function rowIds() {
  const res = await t.request('GET', `${base}/rows?limit=1000`, { as: owner.as });
  return res.body.rows.map((r: { id: string }) => r.id) as string[];
}

describe('sync access', () => {
  it("drops a viewer's edits: they never reach the server or other clients", async () => {
    const viewer = await signInPerson(t, 'viewer@example.com');
    await addMember(t, workspaceId, viewer.userId, 'viewer');
    const reader = connectClient(t.url, docName, { cookie: viewer.cookie });
    const writer = connectClient(t.url, docName, { cookie: owner.cookie });
    await Promise.all([synced(reader), synced(writer)]);
    insertRow(reader.doc, { id: 'viewer-row', surfaceId, data: { title: 'should not land' } }, null);
    // The owner's edit after it proves the pipe is flowing.
    insertRow(writer.doc, { id: 'owner-row', surfaceId, data: { title: 'lands' } }, null);
    await acknowledged(writer);
    await eventually(() => getRow(reader.doc, 'owner-row'));
    await new Promise((r) => setTimeout(r, 200));
    expect(getRow(writer.doc, 'viewer-row')).toBeNull();
    expect(await rowIds()).not.toContain('viewer-row');
    expect(await rowIds()).toContain('owner-row');
    reader.destroy();
    writer.destroy();
  });

  it('closes a revoked key’s open connection within a second', async () => {
    await elevateForKeys(t, owner);
    const { key, secret } = await mint(t, owner, { scopeSlug: 'welcome', role: 'editor', agentName: 'bot' });
    const agent = connectClient(t.url, docName, { token: secret });
    await synced(agent);
    const revoked = await t.request('DELETE', `/api/keys/${key.id}`, { as: owner.as });
    expect(revoked.status).toBe(200);
    const started = Date.now();
    await agent.closed;
    expect(Date.now() - started).toBeLessThan(1000);
    // Whatever it sends afterwards is not applied.
    insertRow(agent.doc, { id: 'after-revoke', surfaceId, data: { title: 'x' } }, null);
    await new Promise((r) => setTimeout(r, 300));
    expect(await rowIds()).not.toContain('after-revoke');
    agent.destroy();
  });

  it('makes a lowered role read-only and a removed member closed, within a second', async () => {
    const editor = await signInPerson(t, 'editor@example.com');
    await addMember(t, workspaceId, editor.userId, 'editor');
    const client = connectClient(t.url, docName, { cookie: editor.cookie });
    await synced(client);
    insertRow(client.doc, { id: 'while-editor', surfaceId, data: { title: 'ok' } }, null);
    await acknowledged(client);
    expect(await rowIds()).toContain('while-editor');

    const lowered = await t.request('PATCH', `${base}/members/${editor.userId}`, { as: owner.as, body: { role: 'viewer' } });
    expect(lowered.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    insertRow(client.doc, { id: 'while-viewer', surfaceId, data: { title: 'dropped' } }, null);
    await new Promise((r) => setTimeout(r, 300));
    expect(await rowIds()).not.toContain('while-viewer');

    const removed = await t.request('DELETE', `${base}/members/${editor.userId}`, { as: owner.as });
    expect(removed.status).toBe(200);
    const started = Date.now();
    await client.closed;
    expect(Date.now() - started).toBeLessThan(1000);
    client.destroy();
  });

  it('ends a signed-out session’s connection', async () => {
    const person = await signInPerson(t, 'leaver@example.com');
    await addMember(t, workspaceId, person.userId, 'editor');
    const client = connectClient(t.url, docName, { cookie: person.cookie });
    await synced(client);
    await t.request('DELETE', '/api/me/sessions', { as: person.as });
    const started = Date.now();
    await client.closed;
    expect(Date.now() - started).toBeLessThan(1000);
    client.destroy();
  });

  it('keeps both of two concurrent edits to different cells of one row', async () => {
    const created = await t.request('POST', `${base}/rows`, { as: owner.as, body: { data: { title: 'shared', notes: 'n' } } });
    const a = connectClient(t.url, docName, { cookie: owner.cookie });
    const b = connectClient(t.url, docName, { cookie: owner.cookie });
    await Promise.all([synced(a), synced(b)]);
    await eventually(() => getRow(a.doc, created.body.id) && getRow(b.doc, created.body.id));
    // Both edit before either sees the other's change.
    updateRowCells(a.doc, created.body.id, { title: 'from a' }, null);
    updateRowCells(b.doc, created.body.id, { notes: 'from b' }, null);
    await Promise.all([acknowledged(a), acknowledged(b)]);
    const merged = { title: 'from a', status: undefined, notes: 'from b' };
    await eventually(() => getRow(a.doc, created.body.id)?.data.notes === merged.notes && getRow(b.doc, created.body.id)?.data.title === merged.title);
    const rest = await t.request('GET', `${base}/rows/${created.body.id}`, { as: owner.as });
    expect(rest.body.data).toMatchObject({ title: 'from a', notes: 'from b' });
    a.destroy();
    b.destroy();
  });
});

describe('all-or-nothing moves and the row cap', () => {
  it('a move with one unknown id writes nothing and emits nothing', async () => {
    await t.request('POST', `${base}/surfaces`, { as: owner.as, body: { kind: 'table', slug: 'later', name: 'Later' } });
    const a = await t.request('POST', `${base}/rows`, { as: owner.as, body: { data: { title: 'to move' } } });
    const eventsBefore = (await t.request('GET', `${base}/events?limit=500`, { as: owner.as })).body.events.length;
    const failed = await t.request('POST', `${base}/rows/move`, { as: owner.as, body: { rowIds: [a.body.id, 'missing'], surface: 'later' } });
    expect(failed.status).toBe(404);
    expect((await t.request('GET', `${base}/rows/${a.body.id}`, { as: owner.as })).body.surfaceId).toBe(surfaceId);
    expect((await t.request('GET', `${base}/events?limit=500`, { as: owner.as })).body.events.length).toBe(eventsBefore);

    const moved = await t.request('POST', `${base}/rows/move`, { as: owner.as, body: { rowIds: [a.body.id, a.body.id], surface: 'later' } });
    expect(moved.body).toEqual({ moved: [a.body.id], skipped: 1 });
    const events = (await t.request('GET', `${base}/events?action=row.moved_surface`, { as: owner.as })).body.events;
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ id: a.body.id, fromSurfaceId: surfaceId });
  });

  it('caps rows per workspace on the plan: 402 over REST, removal of the excess over sync', async () => {
    const count = (await rowIds()).length;
    const cap = 500;
    const fill = Array.from({ length: cap - count }, (_, i) => ({ title: `fill ${i}` }));
    // Fill to the cap through the sync path (one transaction), as a client could.
    const filler = connectClient(t.url, docName, { cookie: owner.cookie });
    await synced(filler);
    filler.doc.transact(() => fill.forEach((data, i) => insertRow(filler.doc, { id: `fill-${i}`, surfaceId, data }, null)));
    // Hundreds of rows in one update: generous waits, the machine may be busy.
    await acknowledged(filler, 30_000);
    await eventually(async () => (await rowIds()).length === cap, 30_000);

    const refused = await t.request('POST', `${base}/rows`, { as: owner.as, body: { data: { title: 'one too many' } } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'over_limit', limit: 'rows', current: cap, cap });

    insertRow(filler.doc, { id: 'over-cap', surfaceId, data: { title: 'over' } }, null);
    await acknowledged(filler);
    await eventually(async () => !(await rowIds()).includes('over-cap') && !getRow(filler.doc, 'over-cap'), 30_000);
    expect((await rowIds()).length).toBe(cap);
    // The refusal is a durable event naming the rows and why (docs/LIMITS.md "Rows over sync").
    const refusal = await eventually(async () => {
      const events = (await t.request('GET', `${base}/events?action=row.refused&limit=500`, { as: owner.as })).body.events;
      return events.find((e: any) => e.data.rowIds.includes('over-cap'));
    });
    expect(refusal.principal).toMatchObject({ id: 'system' });
    expect(refusal.data).toMatchObject({ reason: 'over_limit', limit: 'rows', cap });
    filler.destroy();
  });
});
