import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeholderContent } from '../../src/domain/workspace-content';
import { createWorkspaceFor } from '../../src/domain/workspaces';
import { actorFromSessionToken } from '../../src/access/callers';
import { startTestApp } from '../helpers/app';
import { createWorkspace, elevate, insertKey, signInUser, type TestUser } from './helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function workspaceCount(orgId: string): Promise<number> {
  const rows = await t.services.db.selectFrom('workspaces').select('id').where('orgId', '=', orgId).execute();
  return rows.length;
}

describe('POST /api/workspaces', () => {
  let ada: TestUser;
  beforeAll(async () => {
    ada = await signInUser(t, 'ada@example.com');
  });

  it('creates a workspace the caller owns, answering 200 with the Workspace record', async () => {
    const res = await t.request('POST', '/api/workspaces', { as: ada.as, body: { name: 'Roadmap', slug: 'roadmap', mode: 'table' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ws_/),
      slug: 'roadmap',
      name: 'Roadmap',
      mode: 'table',
      visibility: 'private', // the org default
      createdAt: expect.any(String),
      archivedAt: null,
      pinnedAt: null,
      role: 'owner',
      createdBy: { principalType: 'user', id: ada.userId, name: 'ada', avatarUrl: null },
      org: { slug: ada.orgSlug },
      primarySurface: {
        id: expect.stringMatching(/^sf_/),
        slug: 'table',
        formerSlugs: [],
        kind: 'table',
        name: 'Table',
        position: 0,
        parentId: null,
        createdAt: expect.any(String),
        syncDocument: `${res.body.id}/tables`,
      },
      commentsOnPublicShare: false,
      timeZone: 'UTC',
    });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
  });

  it('records workspace.created in the audit log', async () => {
    const created = await createWorkspace(t, ada, { name: 'Audited', slug: 'audited' });
    const events = await t.services.db
      .selectFrom('events')
      .select(['event', 'record'])
      .where('workspaceId', '=', created.id)
      .where('event', 'like', 'workspace.%')
      .execute();
    expect(events.map((e) => e.event)).toEqual(['workspace.created']);
    const record = events[0]!.record as any;
    expect(record.workspace).toEqual({ id: created.id, slug: 'audited', org: { slug: ada.orgSlug } });
    expect(record.principal).toMatchObject({ principalType: 'user', id: ada.userId });
    expect(record.data).toMatchObject({ name: 'Audited', mode: 'table', visibility: 'private' });
  });

  it('inherits the org default visibility and accepts an explicit one', async () => {
    await t.request('PATCH', '/api/me/org', { as: ada.as, body: { defaultWorkspaceVisibility: 'org' } });
    const inherited = await createWorkspace(t, ada, { name: 'Team', slug: 'team' });
    expect(inherited.visibility).toBe('org');
    const explicit = await createWorkspace(t, ada, { name: 'Open', slug: 'open', visibility: 'public' });
    expect(explicit.visibility).toBe('public');
    await t.request('PATCH', '/api/me/org', { as: ada.as, body: { defaultWorkspaceVisibility: 'private' } });
  });

  it('initialMarkdown forces mode doc with only a doc surface', async () => {
    const res = await t.request('POST', '/api/workspaces', {
      as: ada.as,
      body: { name: 'Notes', slug: 'notes', mode: 'table', initialMarkdown: '# Hello\n\nWorld' },
    });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('doc');
    expect(res.body.primarySurface).toMatchObject({ slug: 'doc', kind: 'doc', syncDocument: `${res.body.id}/doc/${res.body.primarySurface.id}` });
    const detail = await t.request('GET', '/api/workspaces/notes', { as: ada.as });
    expect(detail.body.surfaces.map((s: any) => s.kind)).toEqual(['doc']);
  });

  const rejected: Array<[string, unknown, number, string, string[]]> = [
    ['a slug breaking the pattern', { name: 'X', slug: 'Not_Kebab', mode: 'table' }, 422, 'validation', ['slug']],
    ['a slug with a trailing hyphen', { name: 'X', slug: 'bad-', mode: 'table' }, 422, 'validation', ['slug']],
    ['an empty name', { name: '  ', slug: 'empty-name', mode: 'table' }, 422, 'validation', ['name']],
    ['an unknown field', { name: 'X', slug: 'unknown-field', mode: 'table', colour: 'red' }, 400, 'bad_request', []],
    ['a wrong type', { name: 42, slug: 'wrong-type', mode: 'table' }, 400, 'bad_request', ['name']],
    ['an unknown mode', { name: 'X', slug: 'bad-mode', mode: 'kanban' }, 400, 'bad_request', ['mode']],
    ['a missing slug', { name: 'X', mode: 'table' }, 400, 'bad_request', ['slug']],
    ['an unknown visibility', { name: 'X', slug: 'bad-vis', mode: 'table', visibility: 'secret' }, 400, 'bad_request', ['visibility']],
  ];
  for (const [what, body, status, code, path] of rejected) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      const before = await workspaceCount(ada.orgId);
      const res = await t.request('POST', '/api/workspaces', { as: ada.as, body });
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      if (path.length) expect(res.body.error.details.map((d: any) => d.path)).toContainEqual(path);
      expect(await workspaceCount(ada.orgId)).toBe(before);
    });
  }

  it('refuses a slug taken in the org with 409 and writes nothing', async () => {
    const before = await workspaceCount(ada.orgId);
    const res = await t.request('POST', '/api/workspaces', { as: ada.as, body: { name: 'Again', slug: 'roadmap', mode: 'doc' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(await workspaceCount(ada.orgId)).toBe(before);
  });

  it('hands the committed workspace and initialMarkdown to the content hook for seeding', async () => {
    const seeded: unknown[] = [];
    const content = {
      ...placeholderContent,
      seedWorkspace: async (workspace: { id: string }, surfaces: unknown, seed: unknown) => {
        // Called after commit: the workspace is already visible outside the transaction.
        const row = await t.services.db.selectFrom('workspaces').select('slug').where('id', '=', workspace.id).executeTakeFirst();
        seeded.push({ slug: row?.slug, surfaces, seed });
      },
    };
    const actor = (await actorFromSessionToken(t.services, ada.cookie))!;
    await createWorkspaceFor(t.services, actor, { name: 'Seeded', slug: 'seeded', mode: 'table', initialMarkdown: '# Hi' }, content);
    expect(seeded).toEqual([{ slug: 'seeded', surfaces: [{ id: expect.any(String), slug: 'doc', kind: 'doc' }], seed: { initialMarkdown: '# Hi' } }]);
  });

  it('allows the same slug in another org', async () => {
    const bob = await signInUser(t, 'bob@example.com');
    const res = await t.request('POST', '/api/workspaces', { as: bob.as, body: { name: 'Roadmap', slug: 'roadmap', mode: 'table' } });
    expect(res.status).toBe(200);
    expect(res.body.org).toEqual({ slug: bob.orgSlug });
  });

  it('needs credentials', async () => {
    const res = await t.request('POST', '/api/workspaces', { body: { name: 'X', slug: 'anon', mode: 'table' } });
    expect(res.status).toBe(401);
  });
});

describe('creating with API keys', () => {
  let kay: TestUser;
  beforeAll(async () => {
    kay = await signInUser(t, 'kay@example.com');
  });

  it('an unscoped editor key creates: the agent is attributed and enrolled as editor, its owner owns it', async () => {
    const key = await insertKey(t, kay, { role: 'editor', agentName: 'builder' });
    const res = await t.request('POST', '/api/workspaces', { as: key.as, body: { name: 'By agent', slug: 'by-agent', mode: 'table' } });
    expect(res.status).toBe(200);
    expect(res.body.createdBy).toEqual({ principalType: 'agent', id: key.agentId, name: 'builder', avatarUrl: null });
    expect(res.body.role).toBe('editor');
    const members = await t.services.db.selectFrom('memberships').select(['principalId', 'role']).where('workspaceId', '=', res.body.id).execute();
    expect(members).toEqual(expect.arrayContaining([{ principalId: kay.userId, role: 'owner' }, { principalId: key.agentId, role: 'editor' }]));
    const asOwner = await t.request('GET', '/api/workspaces/by-agent', { as: kay.as });
    expect(asOwner.body.role).toBe('owner');
  });

  it('a viewer or commenter key gets 403 and nothing is written', async () => {
    for (const role of ['viewer', 'commenter'] as const) {
      const key = await insertKey(t, kay, { role });
      const before = await workspaceCount(kay.orgId);
      const res = await t.request('POST', '/api/workspaces', { as: key.as, body: { name: 'No', slug: `no-${role}`, mode: 'table' } });
      expect(res.status).toBe(403);
      expect(await workspaceCount(kay.orgId)).toBe(before);
    }
  });

  it('a key scoped to one workspace cannot create others (403)', async () => {
    const home = await createWorkspace(t, kay, { name: 'Home', slug: 'home' });
    const key = await insertKey(t, kay, { role: 'editor', scopeWorkspaceId: home.id });
    const res = await t.request('POST', '/api/workspaces', { as: key.as, body: { name: 'No', slug: 'scoped-no', mode: 'table' } });
    expect(res.status).toBe(403);
  });
});

describe('the workspace plan cap', () => {
  it('the 21st live workspace on the free plan is 402 with the spec body; archiving frees the slot', async () => {
    const cap = await signInUser(t, 'cap@example.com');
    // The welcome workspace counts: 19 more reach the free cap of 20.
    for (let i = 1; i <= 19; i++) await createWorkspace(t, cap, { name: `W${i}`, slug: `w-${i}` });
    const over = await t.request('POST', '/api/workspaces', { as: cap.as, body: { name: 'One too many', slug: 'w-21', mode: 'table' } });
    expect(over.status).toBe(402);
    expect(over.body).toEqual({
      code: 'over_limit',
      limit: 'workspaces',
      current: 20,
      cap: 20,
      message: expect.any(String),
      upgrade_url: expect.stringMatching(/^http/),
      details: { upgrade: expect.objectContaining({ plan: 'pro' }), increase: expect.any(Object) },
      requestId: over.headers.get('x-request-id'),
    });
    expect(await workspaceCount(cap.orgId)).toBe(20);

    await elevate(t, cap);
    expect((await t.request('DELETE', '/api/workspaces/w-1', { as: cap.as })).status).toBe(200);
    const retried = await t.request('POST', '/api/workspaces', { as: cap.as, body: { name: 'Fits now', slug: 'w-21', mode: 'table' } });
    expect(retried.status).toBe(200);

    // The archived one cannot come back while the plan is full.
    const unarchive = await t.request('POST', '/api/workspaces/w-1/unarchive', { as: cap.as });
    expect(unarchive.status).toBe(402);
    expect(unarchive.body.code).toBe('over_limit');
  });
});
