import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { sql } from 'kysely';
import { deleteRow, ensureSheet, insertRow } from '../../src/model/table/document';
import { startTestApp, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Row ids are chosen by whoever writes the table document, sync clients
 * included, so the same id may exist in two workspaces. Each workspace's
 * row is its own: a row made in one never changes, shows or counts in
 * another (the row projection is keyed by workspace and row id).
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let alice: TestUser;
let bob: TestUser;
const clients: SyncClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  alice = await signInUser(t, 'alice@row-ids.test');
  bob = await signInUser(t, 'bob@row-ids.test');
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

async function tableWorkspace(user: TestUser, slug: string) {
  const workspace = await createWorkspace(t, user, { name: slug, slug });
  const surface = await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', workspace.id).executeTakeFirstOrThrow();
  return { id: workspace.id as string, rows: `/api/orgs/${user.orgSlug}/workspaces/${slug}/rows`, surfaceId: surface.id, docName: tablesDocumentName(workspace.id) };
}

const search = (user: TestUser, q: string) => t.request('GET', `/api/search?q=${encodeURIComponent(q)}`, { as: user.as });
const rowsOf = async (user: TestUser, workspaceId: string) =>
  ((await t.request('GET', '/api/billing', { as: user.as })).body.fullestWorkspaces as Array<{ id: string; rows: number }>).find((w) => w.id === workspaceId)?.rows ?? 0;

describe('a row id taken in another workspace', { timeout: 120_000 }, () => {
  it("a sync client of workspace B writing a row with the id of workspace A's row: A's row, search and count stay A's; B's row reads, searches and counts in B", async () => {
    const a = await tableWorkspace(alice, 'alpha');
    const b = await tableWorkspace(bob, 'bravo');
    const created = await t.request('POST', a.rows, { as: alice.as, body: { data: { title: 'Alpha ledger original', notes: 'kept by A' } } });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const before = (await t.request('GET', `${a.rows}/${id}`, { as: alice.as })).body;
    const bRowsBefore = await rowsOf(bob, b.id);

    // Bob, a member of B only, writes B's table over sync with the same row id.
    const client = connectClient(t.url, b.docName, { cookie: bob.cookie });
    clients.push(client);
    await synced(client);
    insertRow(client.doc, { id, surfaceId: b.surfaceId, data: { title: 'Bravo intruder text', notes: 'written by B' } }, null);
    await acknowledged(client);
    await t.services.sync.changesCommitted(b.docName);

    // A's row reads back unchanged, attribution and timestamps included.
    const afterA = await t.request('GET', `${a.rows}/${id}`, { as: alice.as });
    expect(afterA.status).toBe(200);
    expect(afterA.body).toEqual(before);
    // A's search finds A's row as it was, and nothing of B's text.
    expect((await search(alice, 'Bravo intruder')).body.hits).toEqual([]);
    const alphaHits = (await search(alice, 'Alpha ledger')).body.hits;
    expect(alphaHits).toHaveLength(1);
    expect(alphaHits[0]).toMatchObject({ id: `row:${id}`, title: 'Alpha ledger original', workspace: { id: a.id } });

    // B's row is B's: it reads over REST as written by Bob, B's search finds it, B's count holds it.
    const afterB = await t.request('GET', `${b.rows}/${id}`, { as: bob.as });
    expect(afterB.status).toBe(200);
    expect(afterB.body).toMatchObject({ id, workspaceId: b.id, data: { title: 'Bravo intruder text' }, createdByPrincipalId: bob.userId });
    const bravoHits = (await search(bob, 'Bravo intruder')).body.hits;
    expect(bravoHits).toHaveLength(1);
    expect(bravoHits[0]).toMatchObject({ id: `row:${id}`, title: 'Bravo intruder text', workspace: { id: b.id } });
    expect((await search(bob, 'Alpha ledger')).body.hits).toEqual([]);
    expect(await rowsOf(bob, b.id)).toBe(bRowsBefore + 1);

    // B deleting its row leaves A's alone.
    deleteRow(client.doc, id, null);
    await acknowledged(client);
    await t.services.sync.changesCommitted(b.docName);
    expect((await t.request('GET', `${b.rows}/${id}`, { as: bob.as })).status).toBe(404);
    expect(await rowsOf(bob, b.id)).toBe(bRowsBefore);
    expect((await t.request('GET', `${a.rows}/${id}`, { as: alice.as })).body).toEqual(before);
    expect((await search(alice, 'Alpha ledger')).body.hits.map((h: { id: string }) => h.id)).toEqual([`row:${id}`]);

    // A's row is still A's to edit, comment on and delete over REST.
    const patched = await t.request('PATCH', `${a.rows}/${id}`, { as: alice.as, body: { data: { title: 'Alpha ledger edited' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, workspaceId: a.id, data: { title: 'Alpha ledger edited' }, createdByPrincipalId: alice.userId });
    const comment = await t.request('POST', `${a.rows}/${id}/comments`, { as: alice.as, body: { body: 'about the ledger' } });
    expect(comment.status).toBe(200);
    expect((await t.request('DELETE', `${a.rows}/${id}`, { as: alice.as })).status).toBe(200);
    expect((await search(alice, 'Alpha ledger')).body.hits).toEqual([]);
  });

  it("a sync client of workspace B naming a sheet with the id of workspace A's sheet: nothing of it shows in A's versions, search or comments", async () => {
    const a = await tableWorkspace(alice, 'alpha-sheet');
    const b = await tableWorkspace(bob, 'bravo-sheet');
    const aRow = (await t.request('POST', a.rows, { as: alice.as, body: { data: { title: 'Alpha sheet row' } } })).body.id as string;
    const aVersions = `/api/orgs/${alice.orgSlug}/workspaces/alpha-sheet/surfaces/table/versions`;
    const bVersions = `/api/orgs/${bob.orgSlug}/workspaces/bravo-sheet/surfaces/table/versions`;
    const before = await t.request('GET', aVersions, { as: alice.as });
    expect(before.status).toBe(200);

    const client = connectClient(t.url, b.docName, { cookie: bob.cookie });
    clients.push(client);
    await synced(client);
    client.doc.transact(() => {
      ensureSheet(client.doc, a.surfaceId, null);
      insertRow(client.doc, { id: 'planted', surfaceId: a.surfaceId, data: { title: 'Planted by bravo' } }, null);
      insertRow(client.doc, { id: aRow, surfaceId: a.surfaceId, data: { title: 'Planted over alpha' } }, null);
    });
    await acknowledged(client);
    await t.services.sync.changesCommitted(b.docName);
    // Close B's editing session, and have B's history indexed (listing B's versions does it).
    await sql`update document_updates set created_at = created_at - interval '30 minutes' where document = ${b.docName}`.execute(t.services.db);
    expect((await t.request('GET', bVersions, { as: bob.as })).status).toBe(200);

    const after = await t.request('GET', aVersions, { as: alice.as });
    expect(after.status).toBe(200);
    expect(after.body.versions.map((v: { id: string }) => v.id)).toEqual(before.body.versions.map((v: { id: string }) => v.id));
    for (const version of after.body.versions as Array<{ id: string }>) {
      const shown = await t.request('GET', `${aVersions}/${version.id}`, { as: alice.as });
      expect(JSON.stringify(shown.body)).not.toContain('Planted');
    }
    expect((await search(alice, 'Planted')).body.hits).toEqual([]);
    expect((await t.request('GET', `${a.rows}/${aRow}`, { as: alice.as })).body.data).toEqual({ title: 'Alpha sheet row' });
    // B's comment on its planted row names no sheet of A.
    const comment = await t.request('POST', `${b.rows}/planted/comments`, { as: bob.as, body: { body: 'mine' } });
    expect(comment.status).toBe(200);
    const listed = await t.request('GET', `/api/orgs/${bob.orgSlug}/workspaces/bravo-sheet/comments`, { as: bob.as });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(a.surfaceId);
  });
});
