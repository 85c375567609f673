import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addMembership, createWorkspace, signInUser, type TestUser } from './helpers';

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

async function surfaceEvents(workspaceId: string) {
  const rows = await t.services.db.selectFrom('events').select(['event', 'record']).where('workspaceId', '=', workspaceId).where('event', 'like', 'surface.%').orderBy('seq').execute();
  return rows.map((r) => ({ event: r.event, ...(r.record as any) }));
}

describe('surfaces', () => {
  it('lists, adds after the last, renames and deletes, with events', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Tabs', slug: 'tabs' });
    const base = '/api/workspaces/tabs/surfaces';

    const initial = await t.request('GET', base, { as: ada.as });
    expect(initial.status).toBe(200);
    expect(initial.body.surfaces).toEqual([ws.primarySurface]);

    const notes = await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'notes', name: 'Notes' } });
    expect(notes.status).toBe(200);
    expect(notes.body).toEqual({
      id: expect.stringMatching(/^sf_/),
      slug: 'notes',
      formerSlugs: [],
      kind: 'doc',
      name: 'Notes',
      position: 1,
      parentId: null,
      createdAt: expect.any(String),
      syncDocument: `${ws.id}/doc/${notes.body.id}`,
    });
    const sheet = await t.request('POST', base, { as: ada.as, body: { kind: 'table', slug: 'backlog', name: 'Backlog' } });
    expect(sheet.body).toMatchObject({ position: 2, syncDocument: `${ws.id}/tables` }); // one document for every table surface
    const page = await t.request('POST', base, { as: ada.as, body: { kind: 'html', slug: 'page', name: 'Page' } });
    expect(page.body).toMatchObject({ position: 3, syncDocument: `${ws.id}/html/${page.body.id}` });
    const files = await t.request('POST', base, { as: ada.as, body: { kind: 'files', slug: 'files', name: 'Files' } });
    expect(files.body).toMatchObject({ position: 4, syncDocument: null });

    const renamed = await t.request('PATCH', `${base}/notes`, { as: ada.as, body: { name: 'Meeting notes' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: notes.body.id, slug: 'meeting-notes', formerSlugs: ['notes'], name: 'Meeting notes', position: 1 });

    const removed = await t.request('DELETE', `${base}/page`, { as: ada.as });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ok: true });

    const listed = await t.request('GET', base, { as: ada.as });
    expect(listed.body.surfaces.map((s: any) => [s.slug, s.position])).toEqual([
      ['table', 0],
      ['meeting-notes', 1],
      ['backlog', 2],
      ['files', 4],
    ]);
    // Positions continue after the maximum.
    const more = await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'more', name: 'More' } });
    expect(more.body.position).toBe(5);

    const detail = await t.request('GET', '/api/workspaces/tabs', { as: ada.as });
    expect(detail.body.surfaces.map((s: any) => s.slug)).toEqual(['table', 'meeting-notes', 'backlog', 'files', 'more']);
    expect(detail.body.primarySurface.slug).toBe('table');

    const events = await surfaceEvents(ws.id);
    expect(events.map((e) => [e.event, e.surface.slug])).toEqual([
      ['surface.created', 'notes'],
      ['surface.created', 'backlog'],
      ['surface.created', 'page'],
      ['surface.created', 'files'],
      ['surface.updated', 'meeting-notes'],
      ['surface.deleted', 'page'],
      ['surface.created', 'more'],
    ]);
    expect(events[4].data).toEqual({ changes: { name: { from: 'Notes', to: 'Meeting notes' }, slug: { from: 'notes', to: 'meeting-notes' } } });
    expect(events[0].principal).toMatchObject({ principalType: 'user', id: ada.userId });
  });

  it('a deleted slug can be reused; a live one is 409', async () => {
    await createWorkspace(t, ada, { name: 'Reuse', slug: 'reuse' });
    const base = '/api/workspaces/reuse/surfaces';
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'table', name: 'Dup' } })).status).toBe(409);
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'html', slug: 'draft', name: 'Draft' } })).status).toBe(200);
    expect((await t.request('DELETE', `${base}/draft`, { as: ada.as })).status).toBe(200);
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'draft', name: 'Draft again' } })).status).toBe(200);
  });

  it('the address follows the name: a rename makes a new slug, and the old one still leads to the surface everywhere', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Moves', slug: 'moves' });
    const base = `/api/orgs/${ada.orgSlug}/workspaces/moves`;
    // Without a slug, the address is made from the name, numbered when taken.
    const triage = await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'table', name: 'Bug triage' } });
    expect(triage.status).toBe(200);
    expect(triage.body).toMatchObject({ slug: 'bug-triage', formerSlugs: [], name: 'Bug triage' });
    const twin = await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', name: 'Bug triage' } });
    expect(twin.body.slug).toBe('bug-triage-2');
    expect((await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', name: 'Ünïcödé ✓' } })).body.slug).toBe('unicode');
    expect((await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', name: '✓✓' } })).body.slug).toBe('doc');

    const row = await t.request('POST', `${base}/rows`, { as: ada.as, body: { surface: 'bug-triage', data: { title: 'Login fails' } } });
    expect(row.status).toBe(200);
    const link = await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'bug', label: 'Bug', type: 'link', targetSurface: 'bug-triage' } } });
    expect(link.status).toBe(200);

    const renamed = await t.request('PATCH', `${base}/surfaces/bug-triage`, { as: ada.as, body: { name: 'Incidents' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: triage.body.id, slug: 'incidents', formerSlugs: ['bug-triage'], name: 'Incidents' });

    // The old slug answers for the surface: its own GET (with the current slug), rows, writes, at both addresses.
    for (const prefix of [base, '/api/workspaces/moves']) {
      const found = await t.request('GET', `${prefix}/surfaces/bug-triage`, { as: ada.as });
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({ id: triage.body.id, slug: 'incidents' });
      const rows = await t.request('GET', `${prefix}/rows?surface=bug-triage`, { as: ada.as });
      expect(rows.body.rows.map((r: any) => r.data.title)).toEqual(['Login fails']);
    }
    expect((await t.request('GET', `${base}/surfaces/${triage.body.id}`, { as: ada.as })).body.slug).toBe('incidents');
    expect((await t.request('POST', `${base}/rows`, { as: ada.as, body: { surface: 'bug-triage', data: { title: 'Crash on save' } } })).status).toBe(200);
    // A link column made before the rename names the old slug, and still links to the renamed table's rows.
    const linked = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Customer report', bug: row.body.id } } });
    expect(linked.status).toBe(200);
    expect(linked.body.data.bug).toEqual([row.body.id]);

    // A former slug stays reserved for its surface while it lives: another cannot take it.
    const taken = await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'bug-triage', name: 'Other' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toMatch(/Incidents/);
    expect((await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', name: 'Bug triage' } })).body.slug).toBe('bug-triage-3');
    expect((await t.request('PATCH', `${base}/surfaces/bug-triage-2`, { as: ada.as, body: { slug: 'incidents' } })).status).toBe(409);
    expect((await t.request('PATCH', `${base}/surfaces/bug-triage-2`, { as: ada.as, body: { slug: 'bug-triage' } })).status).toBe(409);

    // Its own former name takes its old address back; a slug given keeps the name.
    const back = await t.request('PATCH', `${base}/surfaces/incidents`, { as: ada.as, body: { name: 'Bug triage' } });
    expect(back.body).toMatchObject({ slug: 'bug-triage', formerSlugs: ['incidents'], name: 'Bug triage' });
    const chosen = await t.request('PATCH', `${base}/surfaces/bug-triage`, { as: ada.as, body: { slug: 'bugs' } });
    expect(chosen.body).toMatchObject({ slug: 'bugs', formerSlugs: ['bug-triage', 'incidents'], name: 'Bug triage' });
    // A new name that makes the same slug keeps the address.
    expect((await t.request('PATCH', `${base}/surfaces/bug-triage-2`, { as: ada.as, body: { name: 'Bug Triage!' } })).body).toMatchObject({ slug: 'bug-triage-2', formerSlugs: [] });

    const updates = (await surfaceEvents(ws.id)).filter((e) => e.event === 'surface.updated');
    expect(updates.map((e) => e.data.changes)).toEqual([
      { name: { from: 'Bug triage', to: 'Incidents' }, slug: { from: 'bug-triage', to: 'incidents' } },
      { name: { from: 'Incidents', to: 'Bug triage' }, slug: { from: 'incidents', to: 'bug-triage' } },
      { slug: { from: 'bug-triage', to: 'bugs' } },
      { name: { from: 'Bug triage', to: 'Bug Triage!' } },
    ]);

    // A deleted surface lets go of its slugs, former ones included.
    expect((await t.request('DELETE', `${base}/surfaces/bugs?force=1`, { as: ada.as })).status).toBe(200);
    expect((await t.request('GET', `${base}/surfaces/incidents`, { as: ada.as })).status).toBe(404);
    expect((await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'incidents', name: 'Incidents' } })).status).toBe(200);
  });

  it('validates bodies and answers 404 for unknown surfaces', async () => {
    await createWorkspace(t, ada, { name: 'Valid', slug: 'valid' });
    const base = '/api/workspaces/valid/surfaces';
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'sheet', slug: 'x', name: 'X' } })).status).toBe(400);
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'Bad Slug', name: 'X' } })).status).toBe(422);
    expect((await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'x', name: 'X', extra: 1 } })).status).toBe(400);
    expect((await t.request('PATCH', `${base}/table`, { as: ada.as, body: {} })).status).toBe(422);
    expect((await t.request('PATCH', `${base}/table`, { as: ada.as, body: { name: 'X', extra: 1 } })).status).toBe(400);
    expect((await t.request('PATCH', `${base}/table`, { as: ada.as, body: { slug: 'Bad Slug' } })).status).toBe(422);
    expect((await t.request('PATCH', `${base}/nope`, { as: ada.as, body: { name: 'X' } })).status).toBe(404);
    expect((await t.request('DELETE', `${base}/nope`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${base}/nope`, { as: ada.as })).status).toBe(404);
    const surfaces = await t.request('GET', base, { as: ada.as });
    expect(surfaces.body.surfaces.map((s: any) => s.slug)).toEqual(['table']);
  });

  it('keeps the last doc surface that holds data unless force=1', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Last', slug: 'last', initialMarkdown: '# Minutes\n\nKept.' });
    const base = '/api/workspaces/last/surfaces';
    const refused = await t.request('DELETE', `${base}/doc`, { as: ada.as });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/force=1/);

    // With a second doc surface, the first is no longer the last of its kind.
    await t.request('POST', base, { as: ada.as, body: { kind: 'doc', slug: 'second', name: 'Second' } });
    await t.request('PUT', '/api/workspaces/last/doc?surface=second', { as: ada.as, body: { markdown: 'Also kept.' } }); // an empty body holds no data
    expect((await t.request('DELETE', `${base}/doc`, { as: ada.as })).status).toBe(200);
    expect((await t.request('DELETE', `${base}/second`, { as: ada.as })).status).toBe(409);

    // Other kinds are never guarded.
    await t.request('POST', base, { as: ada.as, body: { kind: 'files', slug: 'files', name: 'Files' } });
    expect((await t.request('DELETE', `${base}/files`, { as: ada.as })).status).toBe(200);

    const forced = await t.request('DELETE', `${base}/second?force=1`, { as: ada.as });
    expect(forced.status).toBe(200);
    const detail = await t.request('GET', '/api/workspaces/last', { as: ada.as });
    expect(detail.body.surfaces).toEqual([]);
    expect(detail.body).not.toHaveProperty('primarySurface');
    const [deleted] = (await surfaceEvents(ws.id)).filter((e) => e.event === 'surface.deleted' && e.surface.slug === 'second');
    expect(deleted.data).toMatchObject({ forced: true, kind: 'doc' });
  });

  it('guards the last table surface only while it holds rows', async () => {
    await createWorkspace(t, ada, { name: 'Empty', slug: 'empty-table' });
    expect((await t.request('DELETE', '/api/workspaces/empty-table/surfaces/table', { as: ada.as })).status).toBe(200);

    await createWorkspace(t, ada, { name: 'Full', slug: 'full-table' });
    const row = await t.request('POST', '/api/workspaces/full-table/rows', { as: ada.as, body: { data: { title: 'Keep me' } } });
    expect(row.status).toBe(200);
    expect((await t.request('DELETE', '/api/workspaces/full-table/surfaces/table', { as: ada.as })).status).toBe(409);
    expect((await t.request('DELETE', '/api/workspaces/full-table/surfaces/table?force=1', { as: ada.as })).status).toBe(200);
  });

  it('needs an editor to change surfaces; viewers read them', async () => {
    const ws = await createWorkspace(t, ada, { name: 'Roles', slug: 'roles' });
    const vic = await signInUser(t, 'vic@example.com');
    await addMembership(t, ws.id, vic.userId, 'viewer');
    const base = `/api/orgs/${ada.orgSlug}/workspaces/roles/surfaces`;
    expect((await t.request('GET', base, { as: vic.as })).status).toBe(200);
    expect((await t.request('POST', base, { as: vic.as, body: { kind: 'doc', slug: 'v', name: 'V' } })).status).toBe(403);
    expect((await t.request('PATCH', `${base}/table`, { as: vic.as, body: { name: 'V' } })).status).toBe(403);
    expect((await t.request('DELETE', `${base}/table?force=1`, { as: vic.as })).status).toBe(403);
  });
});
