import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Credential } from '../helpers/app';
import { addOrgMember, createWorkspace, elevate, signInUser, type TestUser } from './helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: TestUser;
let stranger: TestUser;
beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'owner@example.com');
  stranger = await signInUser(t, 'stranger@example.com');
  await elevate(t, stranger);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** Every route this module adds under a workspace, with a body that would otherwise be valid. */
function workspaceRoutes(base: string): Array<[string, string, unknown?]> {
  return [
    ['GET', base],
    ['PATCH', base, { name: 'Taken over' }],
    ['PATCH', base, { visibility: 'public' }],
    ['DELETE', base],
    ['POST', `${base}/unarchive`],
    ['POST', `${base}/pin`],
    ['DELETE', `${base}/pin`],
    ['GET', `${base}/surfaces`],
    ['GET', `${base}/surfaces/table`],
    ['POST', `${base}/surfaces`, { kind: 'doc', slug: 'intruder', name: 'Intruder' }],
    ['PATCH', `${base}/surfaces/table`, { name: 'Renamed' }],
    ['DELETE', `${base}/surfaces/table?force=1`],
  ];
}

async function call(method: string, path: string, body: unknown, as?: Credential) {
  return t.request(method, path, { as, ...(body === undefined ? {} : { body }) });
}

describe('a private workspace', () => {
  it('is 404 for a signed-in non-member on every route, at both addresses, and nothing changes', async () => {
    const secret = await createWorkspace(t, owner, { name: 'Secret', slug: 'secret', visibility: 'private' });
    for (const base of ['/api/workspaces/secret', `/api/orgs/${owner.orgSlug}/workspaces/secret`, `/api/workspaces/${secret.id}`]) {
      for (const [method, path, body] of workspaceRoutes(base)) {
        const res = await call(method, path, body, stranger.as);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    const after = await t.request('GET', '/api/workspaces/secret', { as: owner.as });
    expect(after.body).toMatchObject({ name: 'Secret', visibility: 'private', archivedAt: null });
    expect(after.body.surfaces.map((s: any) => s.slug)).toEqual(['table']);
    const list = await t.request('GET', '/api/workspaces', { as: stranger.as });
    expect(list.body.workspaces.map((w: any) => w.slug)).toEqual(['welcome']);
  });

  it('reads without credentials as 404, writes as 401', async () => {
    expect((await t.request('GET', '/api/workspaces/secret')).status).toBe(404);
    expect((await t.request('GET', '/api/workspaces/secret/surfaces')).status).toBe(404);
    expect((await t.request('PATCH', '/api/workspaces/secret', { body: { name: 'x' } })).status).toBe(401);
    expect((await t.request('GET', '/api/workspaces')).status).toBe(401);
  });
});

describe('an org-visibility workspace', () => {
  it('an org member is a virtual editor: reads and renames, but cannot pin', async () => {
    const team = await createWorkspace(t, owner, { name: 'Team', slug: 'team', visibility: 'org' });
    const colleague = await signInUser(t, 'colleague@example.com');
    await addOrgMember(t, owner.orgId, colleague.userId, 'viewer');
    const base = `/api/orgs/${owner.orgSlug}/workspaces/team`;

    const detail = await t.request('GET', base, { as: colleague.as });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: team.id, role: 'editor', pinnedAt: null });
    const listed = await t.request('GET', '/api/workspaces', { as: colleague.as });
    expect(listed.body.workspaces.map((w: any) => [w.slug, w.role])).toContainEqual(['team', 'editor']);

    const renamed = await t.request('PATCH', base, { as: colleague.as, body: { name: 'Team space' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Team space', role: 'editor' });

    const pin = await t.request('POST', `${base}/pin`, { as: colleague.as });
    expect(pin.status).toBe(403);
    expect(pin.body.error.code).toBe('forbidden');
    expect((await t.request('DELETE', `${base}/pin`, { as: colleague.as })).status).toBe(403);

    // Someone outside the org still sees nothing.
    expect((await t.request('GET', base, { as: stranger.as })).status).toBe(404);
  });
});

describe('unlisted and public workspaces', () => {
  it('unlisted: a signed-in stranger reads as viewer but every write is 403', async () => {
    await createWorkspace(t, owner, { name: 'Link only', slug: 'link-only', visibility: 'unlisted' });
    const base = `/api/orgs/${owner.orgSlug}/workspaces/link-only`;
    const read = await t.request('GET', base, { as: stranger.as });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ role: 'viewer', pinnedAt: null, visibility: 'unlisted' });
    expect((await t.request('GET', `${base}/surfaces`, { as: stranger.as })).status).toBe(200);

    for (const [method, path, body] of workspaceRoutes(base).filter(([method]) => method !== 'GET')) {
      const res = await call(method, path, body, stranger.as);
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // Not listed: only reachable by its address.
    const list = await t.request('GET', '/api/workspaces', { as: stranger.as });
    expect(list.body.workspaces.map((w: any) => w.slug)).not.toContain('link-only');
    const after = await t.request('GET', base, { as: owner.as });
    expect(after.body).toMatchObject({ name: 'Link only', archivedAt: null, visibility: 'unlisted' });
  });

  it('public: readable with no credentials at all', async () => {
    await createWorkspace(t, owner, { name: 'Published', slug: 'published', visibility: 'public' });
    const base = `/api/orgs/${owner.orgSlug}/workspaces/published`;
    const read = await t.request('GET', base);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ slug: 'published', role: 'viewer', pinnedAt: null, memberCount: 1 });
    const surfaces = await t.request('GET', `${base}/surfaces`);
    expect(surfaces.status).toBe(200);
    expect(surfaces.body.surfaces).toHaveLength(1);
    expect((await t.request('PATCH', base, { body: { name: 'x' } })).status).toBe(401);
  });

  it('an archived public workspace is no longer public', async () => {
    await createWorkspace(t, owner, { name: 'Gone', slug: 'gone', visibility: 'public' });
    await elevate(t, owner);
    expect((await t.request('DELETE', '/api/workspaces/gone', { as: owner.as })).status).toBe(200);
    expect((await t.request('GET', `/api/orgs/${owner.orgSlug}/workspaces/gone`)).status).toBe(404);
  });
});

describe('ambiguous slugs', () => {
  it('a member of two orgs with the same slug gets 400 ambiguous_slug with the canonical paths; those work', async () => {
    const a = await signInUser(t, 'orga@example.com');
    const b = await signInUser(t, 'orgb@example.com');
    const inA = await createWorkspace(t, a, { name: 'Shared A', slug: 'shared', visibility: 'org' });
    const inB = await createWorkspace(t, b, { name: 'Shared B', slug: 'shared', visibility: 'org' });
    const both = await signInUser(t, 'both@example.com');
    await addOrgMember(t, a.orgId, both.userId, 'editor');
    await addOrgMember(t, b.orgId, both.userId, 'editor');

    const ambiguous = await t.request('GET', '/api/workspaces/shared', { as: both.as });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.code).toBe('ambiguous_slug');
    expect(ambiguous.body.error.details.hint.sort()).toEqual(
      [`/api/orgs/${a.orgSlug}/workspaces/shared`, `/api/orgs/${b.orgSlug}/workspaces/shared`].sort(),
    );
    // Every route under the bare slug is ambiguous too.
    expect((await t.request('GET', '/api/workspaces/shared/surfaces', { as: both.as })).status).toBe(400);
    expect((await t.request('PATCH', '/api/workspaces/shared', { as: both.as, body: { name: 'x' } })).status).toBe(400);

    const inOrgA = await t.request('GET', `/api/orgs/${a.orgSlug}/workspaces/shared`, { as: both.as });
    expect(inOrgA.status).toBe(200);
    expect(inOrgA.body).toMatchObject({ id: inA.id, name: 'Shared A', org: { slug: a.orgSlug } });
    const renamed = await t.request('PATCH', `/api/orgs/${b.orgSlug}/workspaces/shared`, { as: both.as, body: { name: 'Shared B2' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.id).toBe(inB.id);

    // Each owner reaches only their own, so the bare slug is not ambiguous for them.
    expect((await t.request('GET', '/api/workspaces/shared', { as: a.as })).body.id).toBe(inA.id);
  });
});
