import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addMembership, createWorkspace, elevate, insertKey, signInUser, type TestUser } from './helpers';

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

async function eventsOf(workspaceId: string, event?: string) {
  let query = t.services.db.selectFrom('events').select(['event', 'record']).where('workspaceId', '=', workspaceId);
  if (event) query = query.where('event', '=', event);
  const rows = await query.orderBy('seq').execute();
  return rows.map((r) => ({ event: r.event, ...(r.record as any) }));
}

describe('workspace detail', () => {
  it('carries the Workspace fields plus columns, member count, surfaces and the org name', async () => {
    const created = await createWorkspace(t, ada, { name: 'Detail', slug: 'detail' });
    const res = await t.request('GET', '/api/workspaces/detail', { as: ada.as });
    expect(res.status).toBe(200);
    const org = await t.services.db.selectFrom('orgs').select('name').where('id', '=', ada.orgId).executeTakeFirstOrThrow();
    expect(res.body).toEqual({
      ...created,
      org: { slug: ada.orgSlug, name: org.name },
      columns: expect.any(Array),
      memberCount: 1,
      surfaces: [created.primarySurface],
    });
    // A table workspace starts with the default columns of its table surface.
    expect(res.body.columns.map((c: any) => [c.key, c.type, c.position])).toEqual([
      ['title', 'text', 0],
      ['status', 'status', 1],
      ['notes', 'longtext', 2],
    ]);
    const doc = await createWorkspace(t, ada, { name: 'Doc only', slug: 'doc-only', mode: 'doc' });
    expect((await t.request('GET', `/api/workspaces/${doc.id}`, { as: ada.as })).body.columns).toEqual([]);
  });

  it('is served at the canonical org path and by id', async () => {
    const canonical = await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/detail`, { as: ada.as });
    expect(canonical.status).toBe(200);
    const byId = await t.request('GET', `/api/workspaces/${canonical.body.id}`, { as: ada.as });
    expect(byId.body.slug).toBe('detail');
    const wrongOrg = await t.request('GET', '/api/orgs/no-such-org/workspaces/detail', { as: ada.as });
    expect(wrongOrg.status).toBe(404);
  });

  it('counts every membership row', async () => {
    const created = await createWorkspace(t, ada, { name: 'Crowd', slug: 'crowd' });
    const bob = await signInUser(t, 'bob@example.com');
    await addMembership(t, created.id, bob.userId, 'commenter');
    const res = await t.request('GET', '/api/workspaces/crowd', { as: ada.as });
    expect(res.body.memberCount).toBe(2);
    const asBob = await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/crowd`, { as: bob.as });
    expect(asBob.body.role).toBe('commenter');
  });
});

describe('PATCH /api/workspaces/{slug}', () => {
  it('changes name, mode, visibility and commentsOnPublicShare and records workspace.updated', async () => {
    const created = await createWorkspace(t, ada, { name: 'Before', slug: 'patchable' });
    const res = await t.request('PATCH', '/api/workspaces/patchable', {
      as: ada.as,
      body: { name: 'After', mode: 'doc', visibility: 'unlisted', commentsOnPublicShare: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'After', mode: 'doc', visibility: 'unlisted', commentsOnPublicShare: true, role: 'owner' });
    // The mode is a hint: the table surface stays the only (and so the primary) surface.
    expect(res.body.primarySurface.kind).toBe('table');
    const [updated] = await eventsOf(created.id, 'workspace.updated');
    expect(updated.data).toEqual({
      changes: {
        name: { from: 'Before', to: 'After' },
        mode: { from: 'table', to: 'doc' },
        visibility: { from: 'private', to: 'unlisted' },
        commentsOnPublicShare: { from: false, to: true },
      },
    });
    expect(updated.principal.id).toBe(ada.userId);
  });

  it('an unchanged value changes nothing and records nothing', async () => {
    const created = await createWorkspace(t, ada, { name: 'Same', slug: 'same' });
    const res = await t.request('PATCH', '/api/workspaces/same', { as: ada.as, body: { name: 'Same' } });
    expect(res.status).toBe(200);
    expect(await eventsOf(created.id, 'workspace.updated')).toEqual([]);
  });

  it('validates the body strictly', async () => {
    await createWorkspace(t, ada, { name: 'Strict', slug: 'strict' });
    expect((await t.request('PATCH', '/api/workspaces/strict', { as: ada.as, body: { slug: 'renamed' } })).status).toBe(400);
    expect((await t.request('PATCH', '/api/workspaces/strict', { as: ada.as, body: { commentsOnPublicShare: 'yes' } })).status).toBe(400);
    expect((await t.request('PATCH', '/api/workspaces/strict', { as: ada.as, body: { name: '' } })).status).toBe(422);
    const after = await t.request('GET', '/api/workspaces/strict', { as: ada.as });
    expect(after.body.name).toBe('Strict');
  });

  it('a commenter can neither rename nor share', async () => {
    const created = await createWorkspace(t, ada, { name: 'Guarded', slug: 'guarded' });
    const carol = await signInUser(t, 'carol@example.com');
    await addMembership(t, created.id, carol.userId, 'commenter');
    const path = `/api/orgs/${ada.orgSlug}/workspaces/guarded`;
    expect((await t.request('PATCH', path, { as: carol.as, body: { name: 'Mine' } })).status).toBe(403);
    expect((await t.request('PATCH', path, { as: carol.as, body: { visibility: 'public' } })).status).toBe(403);
    expect((await t.request('PATCH', path, { as: carol.as, body: {} })).status).toBe(403);
  });
});

describe('archive and unarchive', () => {
  it('DELETE needs elevation for workspace_delete, then archives and answers the archived record', async () => {
    const user = await signInUser(t, 'archiver@example.com');
    const created = await createWorkspace(t, user, { name: 'Old', slug: 'old' });

    const refused = await t.request('DELETE', '/api/workspaces/old', { as: user.as });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'elevation_required', details: { requiredScope: 'workspace_delete' } });
    expect((await t.request('GET', '/api/workspaces/old', { as: user.as })).body.archivedAt).toBeNull();

    await elevate(t, user);
    const archived = await t.request('DELETE', '/api/workspaces/old', { as: user.as });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({
      id: created.id,
      archivedAt: expect.any(String),
      archivedByPrincipalId: user.userId,
      archivedByPrincipalType: 'user',
    });
    const [event] = await eventsOf(created.id, 'workspace.archived');
    expect(event.data).toEqual({ archivedAt: archived.body.archivedAt });

    // Repeating changes nothing.
    const again = await t.request('DELETE', '/api/workspaces/old', { as: user.as });
    expect(again.status).toBe(200);
    expect(again.body.archivedAt).toBe(archived.body.archivedAt);
    expect(await eventsOf(created.id, 'workspace.archived')).toHaveLength(1);

    // Kept and readable by members, listed only with archived=1.
    const detail = await t.request('GET', '/api/workspaces/old', { as: user.as });
    expect(detail.status).toBe(200);
    expect(detail.body.archivedAt).toBe(archived.body.archivedAt);
    const live = await t.request('GET', '/api/workspaces', { as: user.as });
    expect(live.body.workspaces.map((w: any) => w.slug)).toEqual(['welcome']);
    const archivedList = await t.request('GET', '/api/workspaces?archived=1', { as: user.as });
    expect(archivedList.status).toBe(200);
    expect(archivedList.body.workspaces).toEqual([
      expect.objectContaining({ slug: 'old', archivedAt: archived.body.archivedAt, archivedByPrincipalId: user.userId, role: 'owner' }),
    ]);
    // Writes to an archived workspace wait for unarchive.
    expect((await t.request('PATCH', '/api/workspaces/old', { as: user.as, body: { name: 'x' } })).status).toBe(409);
  });

  it('API keys cannot archive (sensitive actions are for sessions)', async () => {
    const user = await signInUser(t, 'keyarchiver@example.com');
    await createWorkspace(t, user, { name: 'Kept', slug: 'kept' });
    const key = await insertKey(t, user, { role: 'editor' });
    const res = await t.request('DELETE', '/api/workspaces/kept', { as: key.as });
    expect(res.status).toBe(403);
    expect((await t.request('GET', '/api/workspaces/kept', { as: user.as })).body.archivedAt).toBeNull();
  });

  it('a viewer cannot archive (403) even when elevated', async () => {
    const owner = await signInUser(t, 'owner2@example.com');
    const created = await createWorkspace(t, owner, { name: 'Watched', slug: 'watched' });
    const viewer = await signInUser(t, 'viewer2@example.com');
    await addMembership(t, created.id, viewer.userId, 'viewer');
    await elevate(t, viewer);
    expect((await t.request('DELETE', `/api/orgs/${owner.orgSlug}/workspaces/watched`, { as: viewer.as })).status).toBe(403);
  });

  it('unarchive is idempotent and records workspace.unarchived with the previous archive time', async () => {
    const user = await signInUser(t, 'restorer@example.com');
    const created = await createWorkspace(t, user, { name: 'Back', slug: 'back' });
    const live = await t.request('POST', '/api/workspaces/back/unarchive', { as: user.as });
    expect(live.status).toBe(200);
    expect(live.body.archivedAt).toBeNull();
    expect(await eventsOf(created.id, 'workspace.unarchived')).toEqual([]);

    await elevate(t, user);
    const archived = await t.request('DELETE', '/api/workspaces/back', { as: user.as });
    const restored = await t.request('POST', '/api/workspaces/back/unarchive', { as: user.as });
    expect(restored.status).toBe(200);
    expect(restored.body.archivedAt).toBeNull();
    expect(restored.body).not.toHaveProperty('archivedByPrincipalId');
    const again = await t.request('POST', '/api/workspaces/back/unarchive', { as: user.as });
    expect(again.status).toBe(200);

    const events = await eventsOf(created.id, 'workspace.unarchived');
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({ previousArchivedAt: archived.body.archivedAt });
    expect(events[0].principal).toMatchObject({ principalType: 'user', id: user.userId });
    expect(events[0].workspace).toEqual({ id: created.id, slug: 'back', org: { slug: user.orgSlug } });
  });

  it('unarchive is 409 when a live workspace reclaimed the slug', async () => {
    const user = await signInUser(t, 'reclaimer@example.com');
    const first = await createWorkspace(t, user, { name: 'First', slug: 'reused' });
    await elevate(t, user);
    expect((await t.request('DELETE', '/api/workspaces/reused', { as: user.as })).status).toBe(200);
    const second = await createWorkspace(t, user, { name: 'Second', slug: 'reused' });
    expect(second.id).not.toBe(first.id);

    // By slug, unarchive addresses the archived one; reads address the live one.
    const bySlug = await t.request('POST', '/api/workspaces/reused/unarchive', { as: user.as });
    expect(bySlug.status).toBe(409);
    expect(bySlug.body.error.code).toBe('conflict');
    const byId = await t.request('POST', `/api/workspaces/${first.id}/unarchive`, { as: user.as });
    expect(byId.status).toBe(409);
    expect((await t.request('GET', '/api/workspaces/reused', { as: user.as })).body.id).toBe(second.id);
    expect((await t.request('GET', `/api/workspaces/${first.id}`, { as: user.as })).body.archivedAt).not.toBeNull();

    // Freed again, it comes back.
    expect((await t.request('DELETE', '/api/workspaces/reused', { as: user.as })).status).toBe(200);
    const restored = await t.request('POST', `/api/workspaces/${first.id}/unarchive`, { as: user.as });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: first.id, archivedAt: null });
  });
});

describe('pins', () => {
  it('pin and unpin are per principal, idempotent and order the list', async () => {
    const user = await signInUser(t, 'pinner@example.com');
    await createWorkspace(t, user, { name: 'Alpha', slug: 'alpha' });
    const beta = await createWorkspace(t, user, { name: 'Beta', slug: 'beta' });

    const pinned = await t.request('POST', '/api/workspaces/alpha/pin', { as: user.as });
    expect(pinned.status).toBe(200);
    expect(pinned.body).toEqual({ workspaceId: expect.any(String), slug: 'alpha', pinnedAt: expect.any(String) });
    const again = await t.request('POST', '/api/workspaces/alpha/pin', { as: user.as });
    expect(again.body.pinnedAt).toBe(pinned.body.pinnedAt);

    const list = await t.request('GET', '/api/workspaces', { as: user.as });
    expect(list.body.workspaces.map((w: any) => [w.slug, w.pinnedAt])).toEqual([
      ['alpha', pinned.body.pinnedAt],
      ['beta', null],
      ['welcome', null],
    ]);
    expect(list.body.workspaces[1]).toMatchObject({ id: beta.id, role: 'owner', createdBy: { id: user.userId } });

    // Another member's pin is theirs alone.
    const friend = await signInUser(t, 'friend@example.com');
    const alphaId = pinned.body.workspaceId;
    await addMembership(t, alphaId, friend.userId, 'viewer');
    const seenByFriend = await t.request('GET', `/api/workspaces/${alphaId}`, { as: friend.as });
    expect(seenByFriend.body.pinnedAt).toBeNull();
    expect((await t.request('POST', `/api/workspaces/${alphaId}/pin`, { as: friend.as })).status).toBe(200);

    const unpinned = await t.request('DELETE', '/api/workspaces/alpha/pin', { as: user.as });
    expect(unpinned.status).toBe(200);
    expect(unpinned.body).toEqual({ workspaceId: alphaId, slug: 'alpha', pinnedAt: null });
    const unpinnedAgain = await t.request('DELETE', '/api/workspaces/alpha/pin', { as: user.as });
    expect(unpinnedAgain.status).toBe(200);
    expect(unpinnedAgain.body.pinnedAt).toBeNull();
    expect((await t.request('GET', `/api/workspaces/${alphaId}`, { as: friend.as })).body.pinnedAt).not.toBeNull();
  });
});

describe('listing for API keys', () => {
  it('a scoped key lists its one workspace; an unscoped key what its owner reaches, capped by the key role', async () => {
    const owner = await signInUser(t, 'lister@example.com');
    const one = await createWorkspace(t, owner, { name: 'One', slug: 'one' });
    await createWorkspace(t, owner, { name: 'Two', slug: 'two' });

    const scoped = await insertKey(t, owner, { role: 'commenter', scopeWorkspaceId: one.id });
    const scopedList = await t.request('GET', '/api/workspaces', { as: scoped.as });
    expect(scopedList.status).toBe(200);
    expect(scopedList.body.workspaces.map((w: any) => [w.slug, w.role])).toEqual([['one', 'commenter']]);
    expect((await t.request('GET', '/api/workspaces/two', { as: scoped.as })).status).toBe(404);

    const unscoped = await insertKey(t, owner, { role: 'viewer' });
    const unscopedList = await t.request('GET', '/api/workspaces', { as: unscoped.as });
    expect(unscopedList.body.workspaces.map((w: any) => [w.slug, w.role]).sort()).toEqual([
      ['one', 'viewer'],
      ['two', 'viewer'],
      ['welcome', 'viewer'],
    ]);
    // Inherited access has no membership row: no pin.
    expect((await t.request('POST', '/api/workspaces/two/pin', { as: unscoped.as })).status).toBe(403);
    expect((await t.request('PATCH', '/api/workspaces/two', { as: unscoped.as, body: { name: 'No' } })).status).toBe(403);
  });
});
