import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids';
import { ManualClock, startTestApp } from '../helpers/app';
import {
  addMember,
  as,
  enrolAgent,
  eventsNamed,
  latestInviteToken,
  membershipRole,
  person,
  seedAgent,
  seedKey,
  seedOrgMember,
  type Person,
} from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

describe('organisation members and invites', () => {
  let t: Started;
  const clock = new ManualClock();
  let ada: Person; // owner of the org "ada"
  let bob: Person; // joins as editor
  let carol: Person; // joins as commenter
  let bobsInviteId: string;

  const orgPath = (suffix = '') => `/api/orgs/${ada.orgSlug}${suffix}`;
  const orgRole = async (userId: string) =>
    (await t.services.db.selectFrom('orgMembers').select('role').where('orgId', '=', ada.orgId).where('userId', '=', userId).executeTakeFirst())?.role ?? null;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    ada = await person(t, 'ada@example.com');
    bob = await person(t, 'bob@example.com');
    carol = await person(t, 'carol@example.com');
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('lists org members to members only (404 otherwise)', async () => {
    const res = await t.request('GET', orgPath('/members'), { as: as(ada) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      members: [{ id: ada.userId, name: 'ada', email: 'ada@example.com', role: 'owner', joinedAt: expect.any(String), avatarUrl: null }],
    });
    expect((await t.request('GET', orgPath('/members'), { as: as(bob) })).status).toBe(404);
    expect((await t.request('GET', '/api/orgs/no-such-org/members', { as: as(ada) })).status).toBe(404);
    expect((await t.request('GET', orgPath('/members'))).status).toBe(401);
  });

  it('invites by e-mail; the invited user accepts with their session and joins with the role', async () => {
    const created = await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: bob.email, role: 'editor' } });
    expect(created.status, created.text).toBe(200);
    bobsInviteId = created.body.id;
    expect(created.body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: bob.email,
      role: 'editor',
      org: { id: ada.orgId, slug: ada.orgSlug, name: "ada's workspace" },
      invitedBy: { principalType: 'user', id: ada.userId, name: 'ada', avatarUrl: null },
      createdAt: clock.now().toISOString(),
      lastSentAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
      acceptedAt: null,
    });
    const token = await latestInviteToken(t, bob.email, 'org-invites');

    const preview = await t.request('GET', `/api/org-invites/${token}`);
    expect(preview.body).toEqual({
      email: bob.email,
      role: 'editor',
      org: { slug: ada.orgSlug, name: "ada's workspace" },
      invitedBy: { name: 'ada' },
      expiresAt: created.body.expiresAt,
    });
    // Workspace and org tokens are not interchangeable.
    expect((await t.request('GET', `/api/invites/${token}`)).status).toBe(404);

    const listed = await t.request('GET', orgPath('/invites'), { as: as(ada) });
    expect(listed.body.invites.map((i: any) => i.id)).toEqual([bobsInviteId]);

    expect((await t.request('POST', `/api/org-invites/${token}`, { as: as(carol) })).status).toBe(403);
    const accepted = await t.request('POST', `/api/org-invites/${token}`, { as: as(bob) });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.invite.acceptedAt).toBe(clock.now().toISOString());
    expect(accepted.body.member).toEqual({ id: bob.userId, name: 'bob', email: bob.email, role: 'editor', joinedAt: expect.any(String), avatarUrl: null });
    expect(await orgRole(bob.userId)).toBe('editor');
    expect((await eventsNamed(t, 'org.member_added'))[0]!.data).toMatchObject({ memberId: bob.userId, role: 'editor' });

    expect((await t.request('POST', `/api/org-invites/${token}`, { as: as(bob) })).status).toBe(404);
    expect((await t.request('GET', orgPath('/invites'), { as: as(ada) })).body.invites).toEqual([]);
    const members = await t.request('GET', orgPath('/members'), { as: as(bob) });
    expect(members.body.members.map((m: any) => [m.id, m.role])).toEqual([
      [ada.userId, 'owner'],
      [bob.userId, 'editor'],
    ]);
  });

  it('lets an editor invite up to editor; commenters cannot manage invites; members are 409', async () => {
    const above = await t.request('POST', orgPath('/invites'), { as: as(bob), body: { email: carol.email, role: 'owner' } });
    expect(above.status).toBe(403);
    const invited = await t.request('POST', orgPath('/invites'), { as: as(bob), body: { email: carol.email, role: 'commenter' } });
    expect(invited.status, invited.text).toBe(200);
    expect(invited.body.invitedBy.id).toBe(bob.userId);
    expect((await t.request('POST', `/api/org-invites/${await latestInviteToken(t, carol.email, 'org-invites')}`, { as: as(carol) })).status).toBe(200);

    expect((await t.request('GET', orgPath('/invites'), { as: as(carol) })).status).toBe(403);
    expect((await t.request('POST', orgPath('/invites'), { as: as(carol), body: { email: 'x@example.com', role: 'viewer' } })).status).toBe(403);
    expect((await t.request('GET', orgPath('/members'), { as: as(carol) })).status).toBe(200);

    const member = await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: bob.email, role: 'viewer' } });
    expect(member.status).toBe(409);
    expect(await orgRole(bob.userId)).toBe('editor');
  });

  it('rejects bad invite bodies without writing anything', async () => {
    const before = (await t.services.db.selectFrom('invites').select('id').execute()).length;
    expect((await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: 'y@example.com', role: 'viewer', extra: 1 } })).status).toBe(400);
    expect((await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: 'y@', role: 'viewer' } })).status).toBe(422);
    expect((await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: 'y@example.com', role: 'boss' } })).status).toBe(400);
    expect((await t.services.db.selectFrom('invites').select('id').execute()).length).toBe(before);
  });

  it('revokes an invite: the link stops working; repeating is harmless; accepted or foreign invites cannot be revoked', async () => {
    const created = await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: 'dan@example.com', role: 'viewer' } });
    const token = await latestInviteToken(t, 'dan@example.com', 'org-invites');
    const revoked = await t.request('DELETE', orgPath(`/invites/${created.body.id}`), { as: as(bob) });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ok: true });
    expect((await t.request('GET', `/api/org-invites/${token}`)).status).toBe(404);
    expect((await t.request('DELETE', orgPath(`/invites/${created.body.id}`), { as: as(ada) })).body).toEqual({ ok: true });
    expect((await t.request('GET', orgPath('/invites'), { as: as(ada) })).body.invites).toEqual([]);
    expect((await eventsNamed(t, 'org.invite_revoked')).map((e) => e.data.inviteId)).toEqual([created.body.id]);

    expect((await t.request('DELETE', orgPath(`/invites/${bobsInviteId}`), { as: as(ada) })).status).toBe(409);
    expect((await t.request('DELETE', orgPath('/invites/inv_unknown'), { as: as(ada) })).status).toBe(404);
    // An invite of another organisation is invisible through this one.
    const foreign = await t.request('POST', `/api/orgs/${carol.orgSlug}/invites`, { as: as(carol), body: { email: 'zed@example.com', role: 'viewer' } });
    expect(foreign.status).toBe(200);
    expect((await t.request('DELETE', orgPath(`/invites/${foreign.body.id}`), { as: as(ada) })).status).toBe(404);
  });

  it('re-sends with a fresh link: the old one stops working, the expiry restarts and lastSentAt moves', async () => {
    const created = await t.request('POST', orgPath('/invites'), { as: as(ada), body: { email: 'erin@example.com', role: 'viewer' } });
    const oldToken = await latestInviteToken(t, 'erin@example.com', 'org-invites');
    clock.advance(3 * DAY);
    const resent = await t.request('POST', orgPath(`/invites/${created.body.id}/resend`), { as: as(ada) });
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({
      id: created.body.id,
      createdAt: created.body.createdAt,
      lastSentAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
    });
    const newToken = await latestInviteToken(t, 'erin@example.com', 'org-invites');
    expect(newToken).not.toBe(oldToken);
    expect((await t.outbox()).filter((m) => m.to === 'erin@example.com')).toHaveLength(2);
    expect((await t.request('GET', `/api/org-invites/${oldToken}`)).status).toBe(404);
    expect((await t.request('GET', `/api/org-invites/${newToken}`)).status).toBe(200);

    expect((await t.request('POST', orgPath(`/invites/${bobsInviteId}/resend`), { as: as(ada) })).status).toBe(409);
    await t.request('DELETE', orgPath(`/invites/${created.body.id}`), { as: as(ada) });
    expect((await t.request('POST', orgPath(`/invites/${created.body.id}/resend`), { as: as(ada) })).status).toBe(404);
  });

  it('removes a member only for an elevated owner, taking their workspace memberships, agents and keys with them', async () => {
    // The session signed in days ago (clock moved); sign in again so elevation is granted at once.
    ada = await person(t, ada.email);
    // bob: member of ada/welcome with an auto-enrolled agent, sole owner of another workspace of the org, a live key in the org.
    await addMember(t, ada, bob, 'editor');
    const agent = await seedAgent(t, { userId: bob.userId, orgId: ada.orgId }, 'bob-in-ada');
    await enrolAgent(t, ada.welcomeId, agent, bob.userId, 'editor');
    const key = await seedKey(t, { agentId: agent, orgId: ada.orgId, ownerUserId: bob.userId, scopeWorkspaceId: ada.welcomeId });
    const project = newId('ws');
    await t.services.db
      .insertInto('workspaces')
      .values({ id: project, orgId: ada.orgId, slug: 'bobs-project', name: 'Bob', mode: 'table', visibility: 'private', createdById: bob.userId, createdByType: 'user' })
      .execute();
    await t.services.db.insertInto('memberships').values({ workspaceId: project, principalId: bob.userId, principalType: 'user', role: 'owner' }).execute();
    expect((await t.request('GET', '/api/me', { as: { bearer: key.secret } })).status).toBe(200);

    const byEditor = await t.request('DELETE', orgPath(`/members/${carol.userId}`), { as: as(bob) });
    expect(byEditor.status).toBe(403);

    const unelevated = await t.request('DELETE', orgPath(`/members/${bob.userId}`), { as: as(ada) });
    expect(unelevated.status).toBe(401);
    expect(unelevated.body.error).toMatchObject({ code: 'elevation_required', details: { requiredScope: 'org_members' } });
    expect(await orgRole(bob.userId)).toBe('editor');

    const elevated = await t.request('POST', '/api/me/elevate', { as: as(ada), body: { scope: 'org_members' } });
    expect(elevated.status, elevated.text).toBe(200);
    expect(elevated.body.scope).toBe('org_members');

    const removed = await t.request('DELETE', orgPath(`/members/${bob.userId}`), { as: as(ada) });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({
      ok: true,
      removedFromWorkspaceIds: [ada.welcomeId, project].sort(),
      cascadedAgentIds: [agent],
      revokedKeyIds: [key.id],
      transferredWorkspaceIds: [project],
    });
    expect(await orgRole(bob.userId)).toBeNull();
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBeNull();
    expect(await membershipRole(t, ada.welcomeId, agent)).toBeNull();
    expect(await membershipRole(t, project, bob.userId)).toBeNull();
    expect(await membershipRole(t, project, ada.userId)).toBe('owner');
    expect((await t.request('GET', '/api/me', { as: { bearer: key.secret } })).status).toBe(401);
    expect((await t.request('GET', orgPath('/members'), { as: as(bob) })).status).toBe(404);
    expect((await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/welcome/members`, { as: as(bob) })).status).toBe(404);
    expect((await eventsNamed(t, 'org.member_removed'))[0]!.data).toMatchObject({ memberId: bob.userId, previousRole: 'editor' });

    expect((await t.request('DELETE', orgPath(`/members/${bob.userId}`), { as: as(ada) })).status).toBe(404);
  });

  it("moves a removed user's primary organisation to one they still belong to", async () => {
    const fay = await seedOrgMember(t, ada.orgId, 'fay@example.com');
    await t.services.db.insertInto('orgMembers').values({ orgId: carol.orgId, userId: fay, role: 'viewer' }).execute();
    await t.services.db.updateTable('users').set({ primaryOrgId: ada.orgId }).where('id', '=', fay).execute();
    const removed = await t.request('DELETE', orgPath(`/members/${fay}`), { as: as(ada) });
    expect(removed.status, removed.text).toBe(200);
    const user = await t.services.db.selectFrom('users').select('primaryOrgId').where('id', '=', fay).executeTakeFirstOrThrow();
    expect(user.primaryOrgId).toBe(carol.orgId);
  });

  it('never removes the only owner of the organisation (409)', async () => {
    const res = await t.request('DELETE', orgPath(`/members/${ada.userId}`), { as: as(ada) });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(await orgRole(ada.userId)).toBe('owner');
  });

  it('refuses org membership changes from API keys', async () => {
    const agent = await seedAgent(t, ada, 'ada-bot');
    const key = await seedKey(t, { agentId: agent, orgId: ada.orgId, ownerUserId: ada.userId });
    const remove = await t.request('DELETE', orgPath(`/members/${carol.userId}`), { as: { bearer: key.secret } });
    expect(remove.status).toBe(403);
    const accept = await t.request('POST', '/api/org-invites/anything', { as: { bearer: key.secret } });
    expect(accept.status).toBe(403);
    expect(await orgRole(carol.userId)).toBe('commenter');
  });
});

describe('humans cap and rate limit on organisation invites', () => {
  let t: Started;
  let ada: Person;
  let ivy: Person;
  let bob: Person;

  beforeAll(async () => {
    t = await startTestApp();
    ada = await person(t, 'ada@example.com');
    ivy = await person(t, 'ivy@example.com');
    bob = await person(t, 'bob@example.com');
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('counts org and workspace members once each and refuses the 7th human on the free plan with 402', async () => {
    // ada, 3 seeded org members and bob as a workspace member who is also invited to the org: 5 humans.
    for (const n of [1, 2, 3]) await seedOrgMember(t, ada.orgId, `member${n}@example.com`);
    await addMember(t, ada, bob, 'viewer');
    const bobToOrg = await t.request('POST', `/api/orgs/${ada.orgSlug}/invites`, { as: as(ada), body: { email: bob.email, role: 'viewer' } });
    expect(bobToOrg.status, bobToOrg.text).toBe(200);
    const ivyInvite = await t.request('POST', `/api/orgs/${ada.orgSlug}/invites`, { as: as(ada), body: { email: ivy.email, role: 'viewer' } });
    expect(ivyInvite.status).toBe(200);
    const ivyToken = await latestInviteToken(t, ivy.email, 'org-invites');

    await seedOrgMember(t, ada.orgId, 'member4@example.com'); // 6: full
    const refused = await t.request('POST', `/api/org-invites/${ivyToken}`, { as: as(ivy) });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'over_limit', limit: 'humans', current: 6, cap: 6, upgrade_url: `${t.url}/settings/billing` });
    expect((await t.request('POST', `/api/orgs/${ada.orgSlug}/invites`, { as: as(ada), body: { email: 'new@example.com', role: 'viewer' } })).status).toBe(402);

    // bob is already counted (workspace member): joining the org takes no seat.
    const bobAccepts = await t.request('POST', `/api/org-invites/${await latestInviteToken(t, bob.email, 'org-invites')}`, { as: as(bob) });
    expect(bobAccepts.status, bobAccepts.text).toBe(200);
    const members = await t.request('GET', `/api/orgs/${ada.orgSlug}/members`, { as: as(ada) });
    expect(members.body.members).toHaveLength(6);
  });

  it('allows 20 invite mails per hour per organisation, creates and resends together', async () => {
    const bobsInvites = `/api/orgs/${bob.orgSlug}/invites`;
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', bob.orgId).execute();
    // Strangers are turned away before the budget is touched.
    for (let i = 0; i < 3; i++) {
      expect((await t.request('POST', bobsInvites, { as: as(ivy), body: { email: `p${i}@example.com`, role: 'viewer' } })).status).toBe(404);
    }
    let last = '';
    for (let i = 0; i < 20; i++) {
      const res = await t.request('POST', bobsInvites, { as: as(bob), body: { email: `guest${i}@example.com`, role: 'viewer' } });
      expect(res.status, res.text).toBe(200);
      last = res.body.id;
    }
    const resend = await t.request('POST', `${bobsInvites}/${last}/resend`, { as: as(bob) });
    expect(resend.status).toBe(429);
    expect(resend.body).toMatchObject({ code: 'rate_limited', endpoint: 'org_invites', limit: 20, window: '1h' });
    const create = await t.request('POST', bobsInvites, { as: as(bob), body: { email: 'late@example.com', role: 'viewer' } });
    expect(create.status).toBe(429);
    expect(await t.services.db.selectFrom('invites').select('id').where('email', '=', 'late@example.com').execute()).toEqual([]);
    // Another organisation keeps its own budget.
    expect((await t.request('POST', `/api/orgs/${ivy.orgSlug}/invites`, { as: as(ivy), body: { email: 'late@example.com', role: 'viewer' } })).status).toBe(200);
  });
});
