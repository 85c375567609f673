import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/secrets';
import { ManualClock, startTestApp } from '../helpers/app';
import { addMember, countRows, createWorkspace, elevateForKeys, joinOrg, mint, postKey, signInPerson } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;
const MINUTE = 60_000;

describe('POST /api/keys', () => {
  let t: Started;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('needs a keys elevation: an older session gets 401 elevation_required, then elevates with the mailed code', async () => {
    const ada = await signInPerson(t, 'ada@example.com');
    clock.advance(16 * MINUTE);

    const refused = await postKey(t, ada, { name: 'ci', agentName: 'builder', role: 'editor' });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'elevation_required', details: { requiredScope: 'keys' } });

    const sent = await t.request('POST', '/api/me/elevate', { as: ada.as, body: { scope: 'keys' } });
    expect(sent.body).toEqual({ status: 'code_sent' });
    const mail = (await t.outbox()).filter((m) => m.to === 'ada@example.com').at(-1)!;
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    const granted = await t.request('POST', '/api/me/elevate', { as: ada.as, body: { scope: 'keys', code } });
    expect(granted.status).toBe(200);
    expect(granted.body.scope).toBe('keys');

    const minted = await postKey(t, ada, { name: 'ci', agentName: 'builder', role: 'editor' });
    expect(minted.status).toBe(200);
  });

  it('a fresh sign-in elevates at once; the secret comes back once and is stored only as a hash', async () => {
    const grace = await signInPerson(t, 'grace@example.com');
    await elevateForKeys(t, grace);
    const res = await postKey(t, grace, { name: 'deploy bot', agentName: 'deployer', role: 'editor' });
    expect(res.status).toBe(200);
    const { key, secret } = res.body;
    expect(secret).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({
      name: 'deploy bot',
      prefix: secret.slice(0, 12),
      scopeSlug: null,
      role: 'editor',
      agent: { principalType: 'agent', name: 'deployer', avatarUrl: null },
      owner: { principalType: 'user', id: grace.userId },
      revokedAt: null,
    });
    expect(key.id).toMatch(/^key_/);
    expect(new Date(key.createdAt).getTime()).toBe(clock.now().getTime());

    const stored = await t.services.db.selectFrom('apiKeys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(stored.secretHash).toBe(hashToken(secret));
    expect(JSON.stringify(stored)).not.toContain(secret);

    const listed = await t.request('GET', '/api/keys', { as: grace.as });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toEqual([key.id]);
    expect(listed.body.keys[0]).not.toHaveProperty('secret');
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain(stored.secretHash);
  });

  it('the key authenticates as its agent, acting for its owner', async () => {
    const lin = await signInPerson(t, 'lin@example.com');
    await elevateForKeys(t, lin);
    const { key, as } = await mint(t, lin, { agentName: 'helper', role: 'commenter' });
    const me = await t.request('GET', '/api/me', { as });
    expect(me.status).toBe(200);
    expect(me.body.principal).toEqual({ principalType: 'agent', id: key.agent.id, name: 'helper', avatarUrl: null });
    expect(me.body.agent).toMatchObject({ id: key.agent.id, keyId: key.id, role: 'commenter', scopeWorkspaceId: null });
    expect(me.body.user.id).toBe(lin.userId);
  });

  it('keys cannot mint keys, list keys, see agents or export: 403', async () => {
    const max = await signInPerson(t, 'max@example.com');
    await elevateForKeys(t, max);
    const { as } = await mint(t, max, { role: 'editor' });
    const attempts = [
      await postKey(t, { as }, { name: 'child', agentName: 'spawn', role: 'viewer' }),
      await t.request('GET', '/api/keys', { as }),
      await t.request('GET', '/api/agents/overview', { as }),
      await t.request('GET', '/api/me/export', { as }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
  });

  it('reuses the agent by name for its owner, and gives another owner their own agent', async () => {
    const ann = await signInPerson(t, 'ann@example.com');
    const bob = await signInPerson(t, 'bob@example.com');
    await joinOrg(t, bob, ann.orgId, 'editor');
    await elevateForKeys(t, ann);
    await elevateForKeys(t, bob);
    const first = await mint(t, ann, { agentName: 'scribe', name: 'laptop' });
    const second = await mint(t, ann, { agentName: 'scribe', name: 'server', role: 'viewer' });
    const bobs = await mint(t, bob, { agentName: 'scribe' });
    expect(second.key.agent.id).toBe(first.key.agent.id);
    expect(bobs.key.agent.id).not.toBe(first.key.agent.id);
    const agent = await t.services.db.selectFrom('agents').selectAll().where('id', '=', first.key.agent.id).executeTakeFirstOrThrow();
    expect(agent).toMatchObject({ orgId: ann.orgId, ownerUserId: ann.userId });
  });

  it('a scoped key enrols its agent in the workspace through its owner, keeping a higher existing role', async () => {
    const cy = await signInPerson(t, 'cy@example.com');
    await elevateForKeys(t, cy);
    const board = await createWorkspace(t, cy, { slug: 'board' });
    const editorKey = await mint(t, cy, { agentName: 'clerk', scopeSlug: 'board', role: 'editor' });
    expect(editorKey.key).toMatchObject({ scopeSlug: 'board', scopeWorkspaceId: board.id });
    const membership = () =>
      t.services.db.selectFrom('memberships').selectAll().where('workspaceId', '=', board.id).where('principalId', '=', editorKey.key.agent.id).executeTakeFirstOrThrow();
    expect(await membership()).toMatchObject({ principalType: 'agent', role: 'editor', viaUserId: cy.userId });

    await mint(t, cy, { agentName: 'clerk', scopeSlug: 'board', role: 'viewer' });
    expect((await membership()).role).toBe('editor');

    // Joining is news to whoever lists the members (the web app's @ picker, webhooks): once, when the agent is new there.
    const joined = await t.services.db.selectFrom('events').select('record').where('workspaceId', '=', board.id).where('event', '=', 'member.added').execute();
    expect(joined.map((e) => (e.record as { data: unknown }).data)).toEqual([
      { memberId: editorKey.key.agent.id, principalType: 'agent', role: 'editor', viaUserId: cy.userId, keyId: editorKey.key.id },
    ]);
  });

  it('never mints a role above the minter: org role for unscoped keys, own membership role for scoped keys', async () => {
    const owner = await signInPerson(t, 'owner@example.com');
    const viewer = await signInPerson(t, 'viewer@example.com');
    await joinOrg(t, viewer, owner.orgId, 'viewer');
    await elevateForKeys(t, owner);
    await elevateForKeys(t, viewer);

    // Org owner: at most editor (keys never own; 'owner' is not even a key role).
    expect((await postKey(t, owner, { name: 'k', agentName: 'a', role: 'owner' })).status).toBe(400);
    // Org viewer, unscoped: viewer only.
    const tooHigh = await postKey(t, viewer, { name: 'k', agentName: 'v', role: 'commenter' });
    expect(tooHigh.status).toBe(403);
    expect(tooHigh.body.error.code).toBe('forbidden');
    expect((await postKey(t, viewer, { name: 'k', agentName: 'v', role: 'viewer' })).status).toBe(200);

    // Scoped: the minter's membership role in that workspace decides, whatever the org role.
    const notes = await createWorkspace(t, owner, { slug: 'notes', visibility: 'private' });
    await addMember(t, notes.id, viewer.userId, 'commenter');
    expect((await postKey(t, viewer, { name: 'k', agentName: 'v', scopeSlug: 'notes', role: 'editor' })).status).toBe(403);
    expect((await postKey(t, viewer, { name: 'k', agentName: 'v', scopeSlug: 'notes', role: 'commenter' })).status).toBe(200);

    // Access through org visibility alone is no membership the agent could be enrolled through.
    await createWorkspace(t, owner, { slug: 'open-plan', visibility: 'org' });
    const virtual = await postKey(t, viewer, { name: 'k', agentName: 'v', scopeSlug: 'open-plan', role: 'viewer' });
    expect(virtual.status).toBe(403);
    // An invisible or unknown workspace does not exist for the minter.
    await createWorkspace(t, owner, { slug: 'secret-plans', visibility: 'private' });
    expect((await postKey(t, viewer, { name: 'k', agentName: 'v', scopeSlug: 'secret-plans', role: 'viewer' })).status).toBe(404);
    expect((await postKey(t, viewer, { name: 'k', agentName: 'v', scopeSlug: 'no-such-thing', role: 'viewer' })).status).toBe(404);
  });

  it('refuses bad input before writing anything', async () => {
    const dee = await signInPerson(t, 'dee@example.com');
    await elevateForKeys(t, dee);
    const before = await countRows(t);
    const cases: Array<[body: Record<string, unknown>, status: number, field: string]> = [
      [{ name: 'k', agentName: 'a', role: 'editor', colour: 'blue' }, 400, ''],
      [{ name: 'k', agentName: 'a', role: 'owner' }, 400, 'role'],
      [{ agentName: 'a', role: 'editor' }, 400, 'name'],
      [{ name: 'k', role: 'editor' }, 400, 'agentName'],
      [{ name: '', agentName: 'a', role: 'editor' }, 422, 'name'],
      [{ name: '   ', agentName: 'a', role: 'editor' }, 422, 'name'],
      [{ name: 'k', agentName: 'a', role: 'editor', scopeSlug: '' }, 422, 'scopeSlug'],
      [{ name: 'x'.repeat(101), agentName: 'a', role: 'editor' }, 422, 'name'],
    ];
    for (const [body, status, field] of cases) {
      const res = await postKey(t, dee, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code).toBe(status === 400 ? 'bad_request' : 'validation');
      if (field) expect(res.body.error.details.map((d: { path: string[] }) => d.path.join('.'))).toContain(field);
    }
    expect(await countRows(t)).toEqual(before);
  });
});
