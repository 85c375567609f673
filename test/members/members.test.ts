import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/persistence/schema';
import { startTestApp } from '../helpers/app';
import { addMember, as, enrolAgent, eventsNamed, membershipRole, person, seedAgent, seedKey, wsPath, type Person } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;

describe('workspace members', () => {
  let t: Started;
  let ada: Person; // owner of ada/welcome
  let bob: Person; // editor there
  let carol: Person; // a stranger to it
  let bobsAgent: string; // auto-enrolled on ada/welcome through bob

  beforeAll(async () => {
    t = await startTestApp();
    ada = await person(t, 'ada@example.com');
    bob = await person(t, 'bob@example.com');
    carol = await person(t, 'carol@example.com');
    await addMember(t, ada, bob, 'editor');
    bobsAgent = await seedAgent(t, bob, 'bob-bot');
    await seedKey(t, { agentId: bobsAgent, orgId: bob.orgId, ownerUserId: bob.userId, scopeWorkspaceId: ada.welcomeId, role: 'editor' });
    await enrolAgent(t, ada.welcomeId, bobsAgent, bob.userId, 'editor');
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('lists humans and agents at both paths; users carry inheritedAgents, auto-enrolled agents viaUserId', async () => {
    // An unscoped live key makes an agent inherit through its owner, even from another org.
    const inheriting = await seedAgent(t, bob, 'bob-helper');
    await seedKey(t, { agentId: inheriting, orgId: bob.orgId, ownerUserId: bob.userId });
    // Neither a revoked key nor a key scoped elsewhere makes an agent inherit.
    const revoked = await seedAgent(t, bob, 'bob-retired');
    await seedKey(t, { agentId: revoked, orgId: bob.orgId, ownerUserId: bob.userId, revoked: true });
    const scopedElsewhere = await seedAgent(t, bob, 'bob-home');
    await seedKey(t, { agentId: scopedElsewhere, orgId: bob.orgId, ownerUserId: bob.userId, scopeWorkspaceId: bob.welcomeId });

    const canonical = await t.request('GET', wsPath(ada, '/members'), { as: as(bob) });
    expect(canonical.status, canonical.text).toBe(200);
    const byId = await t.request('GET', `/api/workspaces/${ada.welcomeId}/members`, { as: as(ada) });
    expect(byId.body).toEqual(canonical.body);

    const members = canonical.body.members as any[];
    expect(members.map((m) => [m.id, m.principalType, m.role])).toEqual([
      [ada.userId, 'user', 'owner'],
      [bob.userId, 'user', 'editor'],
      [bobsAgent, 'agent', 'editor'],
    ]);
    const [adaMember, bobMember, agentMember] = members;
    expect(adaMember).toEqual({
      id: ada.userId,
      principalType: 'user',
      principal: { principalType: 'user', id: ada.userId, name: 'ada', avatarUrl: null },
      role: 'owner',
      email: 'ada@example.com',
      joinedAt: expect.any(String),
      inheritedAgents: [],
    });
    expect(bobMember.inheritedAgents).toEqual([{ principalType: 'agent', id: inheriting, name: 'bob-helper', avatarUrl: null }]);
    expect(agentMember).toEqual({
      id: bobsAgent,
      principalType: 'agent',
      principal: { principalType: 'agent', id: bobsAgent, name: 'bob-bot', avatarUrl: null },
      role: 'editor',
      joinedAt: expect.any(String),
      viaUserId: bob.userId,
    });
  });

  it('answers 404 to a non-member on every member route of a private workspace', async () => {
    const list = await t.request('GET', wsPath(ada, '/members'), { as: as(carol) });
    const patch = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(carol), body: { role: 'viewer' } });
    const remove = await t.request('DELETE', wsPath(ada, `/members/${bob.userId}`), { as: as(carol) });
    for (const res of [list, patch, remove]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await t.request('GET', wsPath(ada, '/members'))).status).toBe(401);
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('editor');
  });

  it('lets only the owner change roles or remove members', async () => {
    const patch = await t.request('PATCH', wsPath(ada, `/members/${ada.userId}`), { as: as(bob), body: { role: 'viewer' } });
    expect(patch.status).toBe(403);
    expect(patch.body.error.code).toBe('forbidden');
    const remove = await t.request('DELETE', wsPath(ada, `/members/${ada.userId}`), { as: as(bob) });
    expect(remove.status).toBe(403);
    expect(await membershipRole(t, ada.welcomeId, ada.userId)).toBe('owner');
  });

  it('applies a user role change to their auto-enrolled agents and records member.role_changed', async () => {
    const res = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role: 'commenter' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.cascadedAgentIds).toEqual([bobsAgent]);
    expect(res.body.member).toMatchObject({ id: bob.userId, role: 'commenter', email: 'bob@example.com' });
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('commenter');
    expect(await membershipRole(t, ada.welcomeId, bobsAgent)).toBe('commenter');

    const [event] = (await eventsNamed(t, 'member.role_changed')).slice(-1);
    expect(event!.principal.id).toBe(ada.userId);
    expect(event!.data).toEqual({ memberId: bob.userId, principalType: 'user', role: 'commenter', previousRole: 'editor', cascadedAgentIds: [bobsAgent] });
  });

  it('caps cascaded agent roles at editor: keys are never owners', async () => {
    const promoted = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role: 'owner' } });
    expect(promoted.status, promoted.text).toBe(200);
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('owner');
    expect(await membershipRole(t, ada.welcomeId, bobsAgent)).toBe('editor');

    const agentOwner = await t.request('PATCH', wsPath(ada, `/members/${bobsAgent}`), { as: as(ada), body: { role: 'owner' } });
    expect(agentOwner.status).toBe(422);
    expect(agentOwner.body.error.details).toEqual([expect.objectContaining({ path: ['role'] })]);

    const agentOnly = await t.request('PATCH', wsPath(ada, `/members/${bobsAgent}`), { as: as(ada), body: { role: 'viewer' } });
    expect(agentOnly.status).toBe(200);
    expect(agentOnly.body).toMatchObject({ member: { id: bobsAgent, role: 'viewer', viaUserId: bob.userId }, cascadedAgentIds: [] });
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('owner');

    const back = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role: 'editor' } });
    expect(back.body.cascadedAgentIds).toEqual([bobsAgent]);
    expect(await membershipRole(t, ada.welcomeId, bobsAgent)).toBe('editor');
  });

  it('never lets a reader see a user and their agent with different roles during role changes', async () => {
    // One statement reads both rows from one snapshot, over and over, while
    // roles flip. Were the agent updated in a separate commit, some sample
    // would catch the user and the agent disagreeing.
    const samples: Array<{ user: Role; agent: Role }> = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const rows = await t.services.db
          .selectFrom('memberships')
          .select(['principalId', 'role'])
          .where('workspaceId', '=', ada.welcomeId)
          .where('principalId', 'in', [bob.userId, bobsAgent])
          .execute();
        const role = (id: string) => rows.find((r) => r.principalId === id)!.role;
        samples.push({ user: role(bob.userId), agent: role(bobsAgent) });
        // PGlite answers without touching the event loop: yield, or the HTTP requests never run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const roles: Role[] = ['viewer', 'commenter', 'editor', 'viewer', 'editor', 'commenter', 'viewer', 'editor'];
    try {
      for (const role of roles) {
        const res = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role } });
        expect(res.status, res.text).toBe(200);
        expect(res.body.cascadedAgentIds).toEqual([bobsAgent]);
      }
    } finally {
      polling = false;
      await poller;
    }
    expect(samples.length).toBeGreaterThan(roles.length);
    expect(samples.filter((s) => s.user !== s.agent)).toEqual([]);
    expect(new Set(samples.map((s) => s.user)).size).toBeGreaterThan(1);
  });

  it('protects the sole owner from demotion and removal (409) and allows it once another owner exists', async () => {
    const demote = await t.request('PATCH', wsPath(ada, `/members/${ada.userId}`), { as: as(ada), body: { role: 'editor' } });
    expect(demote.status).toBe(409);
    expect(demote.body.error.code).toBe('conflict');
    const remove = await t.request('DELETE', wsPath(ada, `/members/${ada.userId}`), { as: as(ada) });
    expect(remove.status).toBe(409);
    expect(await membershipRole(t, ada.welcomeId, ada.userId)).toBe('owner');

    // Same role again is allowed: the owner stays owner.
    expect((await t.request('PATCH', wsPath(ada, `/members/${ada.userId}`), { as: as(ada), body: { role: 'owner' } })).status).toBe(200);

    expect((await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role: 'owner' } })).status).toBe(200);
    const stepDown = await t.request('PATCH', wsPath(ada, `/members/${ada.userId}`), { as: as(ada), body: { role: 'editor' } });
    expect(stepDown.status).toBe(200);
    const bobNowAlone = await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(bob), body: { role: 'viewer' } });
    expect(bobNowAlone.status).toBe(409);
    // Restore: bob hands ownership back and returns to editor.
    expect((await t.request('PATCH', wsPath(ada, `/members/${ada.userId}`), { as: as(bob), body: { role: 'owner' } })).status).toBe(200);
    expect((await t.request('PATCH', wsPath(ada, `/members/${bob.userId}`), { as: as(ada), body: { role: 'editor' } })).status).toBe(200);
  });

  it('refuses bad input without writing anything', async () => {
    const before = await t.services.db.selectFrom('memberships').selectAll().where('workspaceId', '=', ada.welcomeId).orderBy('principalId').execute();
    const path = wsPath(ada, `/members/${bob.userId}`);
    const unknownField = await t.request('PATCH', path, { as: as(ada), body: { role: 'viewer', admin: true } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.code).toBe('bad_request');
    const badRole = await t.request('PATCH', path, { as: as(ada), body: { role: 'superuser' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.details[0].path).toEqual(['role']);
    const missing = await t.request('PATCH', path, { as: as(ada), body: {} });
    expect(missing.status).toBe(400);
    const notJson = await t.request('PATCH', path, { as: as(ada), rawBody: '{"role":' });
    expect(notJson.status).toBe(400);
    const unknownMember = await t.request('PATCH', wsPath(ada, '/members/usr_nobody'), { as: as(ada), body: { role: 'viewer' } });
    expect(unknownMember.status).toBe(404);
    const after = await t.services.db.selectFrom('memberships').selectAll().where('workspaceId', '=', ada.welcomeId).orderBy('principalId').execute();
    expect(after).toEqual(before);
  });

  it('removes a user together with their auto-enrolled agents, after which the user is a stranger', async () => {
    const res = await t.request('DELETE', wsPath(ada, `/members/${bob.userId}`), { as: as(ada) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ok: true, cascadedAgentIds: [bobsAgent] });
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBeNull();
    expect(await membershipRole(t, ada.welcomeId, bobsAgent)).toBeNull();
    const [event] = (await eventsNamed(t, 'member.removed')).slice(-1);
    expect(event!.data).toEqual({ memberId: bob.userId, principalType: 'user', previousRole: 'editor', cascadedAgentIds: [bobsAgent] });

    expect((await t.request('GET', wsPath(ada, '/members'), { as: as(bob) })).status).toBe(404);
    expect((await t.request('DELETE', wsPath(ada, `/members/${bob.userId}`), { as: as(ada) })).status).toBe(404);
  });

  it('removes an agent on its own, without touching its owner', async () => {
    await addMember(t, ada, carol, 'viewer');
    const carolsAgent = await seedAgent(t, carol, 'carol-bot');
    await enrolAgent(t, ada.welcomeId, carolsAgent, carol.userId, 'viewer');
    const res = await t.request('DELETE', wsPath(ada, `/members/${carolsAgent}`), { as: as(ada) });
    expect(res.body).toEqual({ ok: true, cascadedAgentIds: [] });
    expect(await membershipRole(t, ada.welcomeId, carol.userId)).toBe('viewer');
    expect(await membershipRole(t, ada.welcomeId, carolsAgent)).toBeNull();
  });
});
