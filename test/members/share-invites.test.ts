import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/secrets';
import { ManualClock, startTestApp } from '../helpers/app';
import { as, eventsNamed, latestInviteToken, membershipRole, person, seedAgent, seedKey, seedOrgMember, wsPath, type Person } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;

const DAY = 24 * 60 * 60 * 1000;

describe('workspace share invites', () => {
  let t: Started;
  const clock = new ManualClock();
  let ada: Person; // owner of ada/welcome
  let bob: Person;
  let carol: Person;

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

  it('mails a single-use link, shows the invite publicly and makes the invited user a member who can read the workspace', async () => {
    const shared = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'Bob@Example.com', role: 'editor' } });
    expect(shared.status, shared.text).toBe(200);
    expect(shared.body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: 'bob@example.com',
      role: 'editor',
      workspace: { id: ada.welcomeId, slug: 'welcome', name: 'Welcome', org: { slug: ada.orgSlug } },
      invitedBy: { principalType: 'user', id: ada.userId, name: 'ada', avatarUrl: null },
      createdAt: clock.now().toISOString(),
      lastSentAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
      acceptedAt: null,
    });

    const mail = (await t.outbox()).filter((m) => m.to === 'bob@example.com').at(-1)!;
    expect(mail.subject).toBe('ada invited you to Welcome on Trellis');
    expect(mail.text).toContain(`${t.url}/invites/`);
    const token = await latestInviteToken(t, 'bob@example.com');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await t.services.db.selectFrom('invites').select('tokenHash').where('id', '=', shared.body.id).executeTakeFirstOrThrow();
    expect(stored.tokenHash).toBe(hashToken(token));
    expect(JSON.stringify(shared.body)).not.toContain(token);

    const preview = await t.request('GET', `/api/invites/${token}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      email: 'bob@example.com',
      role: 'editor',
      workspace: { slug: 'welcome', name: 'Welcome' },
      invitedBy: { name: 'ada' },
      expiresAt: shared.body.expiresAt,
    });

    expect((await t.request('GET', wsPath(ada, '/members'), { as: as(bob) })).status).toBe(404);
    clock.advance(1000); // members are listed by joinedAt
    const accepted = await t.request('POST', `/api/invites/${token}`, { as: as(bob) });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.invite).toMatchObject({ id: shared.body.id, acceptedAt: clock.now().toISOString() });
    expect(accepted.body.member).toMatchObject({ id: bob.userId, principalType: 'user', role: 'editor', email: 'bob@example.com', inheritedAgents: [] });

    const members = await t.request('GET', wsPath(ada, '/members'), { as: as(bob) });
    expect(members.status).toBe(200);
    expect(members.body.members.map((m: any) => [m.id, m.role])).toEqual([
      [ada.userId, 'owner'],
      [bob.userId, 'editor'],
    ]);
    const [added] = await eventsNamed(t, 'member.added');
    expect(added!.data).toMatchObject({ memberId: bob.userId, role: 'editor', inviteId: shared.body.id });

    // Single use: the link is spent.
    const reused = await t.request('POST', `/api/invites/${token}`, { as: as(bob) });
    expect(reused.status).toBe(404);
    expect(reused.body.error.code).toBe('not_found');
    expect((await t.request('GET', `/api/invites/${token}`)).status).toBe(404);
  });

  it('refuses an invite accepted by another signed-in user (403) and keeps it open for the invited one', async () => {
    await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: carol.email, role: 'viewer' } });
    const token = await latestInviteToken(t, carol.email);
    const forwarded = await t.request('POST', `/api/invites/${token}`, { as: as(bob) });
    expect(forwarded.status).toBe(403);
    expect(forwarded.body.error.code).toBe('forbidden');
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('editor');

    const anonymous = await t.request('POST', `/api/invites/${token}`);
    expect(anonymous.status).toBe(401);

    // An agent's key is not a person: it cannot accept even for its owner's address.
    const agent = await seedAgent(t, carol, 'carol-bot');
    const key = await seedKey(t, { agentId: agent, orgId: carol.orgId, ownerUserId: carol.userId });
    const byKey = await t.request('POST', `/api/invites/${token}`, { as: { bearer: key.secret } });
    expect(byKey.status).toBe(403);

    const accepted = await t.request('POST', `/api/invites/${token}`, { as: as(carol) });
    expect(accepted.status, accepted.text).toBe(200);
    expect(await membershipRole(t, ada.welcomeId, carol.userId)).toBe('viewer');
  });

  it('refuses an expired invite (404)', async () => {
    const dave = await person(t, 'dave@example.com');
    await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: dave.email, role: 'viewer' } });
    const token = await latestInviteToken(t, dave.email);
    clock.advance(7 * DAY + 1000);
    expect((await t.request('GET', `/api/invites/${token}`)).status).toBe(404);
    const late = await t.request('POST', `/api/invites/${token}`, { as: as(dave) });
    expect(late.status).toBe(404);
    expect(await membershipRole(t, ada.welcomeId, dave.userId)).toBeNull();

    // Inviting again revives the same invite with a new link and a new expiry.
    const again = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: dave.email, role: 'commenter' } });
    expect(again.status).toBe(200);
    const fresh = await latestInviteToken(t, dave.email);
    expect(fresh).not.toBe(token);
    expect((await t.request('POST', `/api/invites/${fresh}`, { as: as(dave) })).status).toBe(200);
    expect(await membershipRole(t, ada.welcomeId, dave.userId)).toBe('commenter');
  });

  it('refreshes an open invite instead of piling up links: same id, new role, the old link stops working', async () => {
    const first = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'erin@example.com', role: 'viewer' } });
    const oldToken = await latestInviteToken(t, 'erin@example.com');
    const second = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'erin@example.com', role: 'editor' } });
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.role).toBe('editor');
    const newToken = await latestInviteToken(t, 'erin@example.com');
    expect((await t.request('GET', `/api/invites/${oldToken}`)).status).toBe(404);
    expect((await t.request('GET', `/api/invites/${newToken}`)).body.role).toBe('editor');
    const open = await t.services.db.selectFrom('invites').select('id').where('email', '=', 'erin@example.com').execute();
    expect(open).toHaveLength(1);
  });

  it('answers 409 for an address that is already a member, rather than changing its role', async () => {
    const res = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: bob.email, role: 'owner' } });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual({ memberId: bob.userId });
    expect(await membershipRole(t, ada.welcomeId, bob.userId)).toBe('editor');
  });

  it('lets an editor share up to their own role only, and nobody below editor share at all', async () => {
    const above = await t.request('POST', wsPath(ada, '/share'), { as: as(bob), body: { email: 'frank@example.com', role: 'owner' } });
    expect(above.status).toBe(403);
    const equal = await t.request('POST', wsPath(ada, '/share'), { as: as(bob), body: { email: 'frank@example.com', role: 'editor' } });
    expect(equal.status, equal.text).toBe(200);
    expect(equal.body.invitedBy.id).toBe(bob.userId);
    const viewer = await t.request('POST', wsPath(ada, '/share'), { as: as(carol), body: { email: 'gina@example.com', role: 'viewer' } });
    expect(viewer.status).toBe(403);
    const stranger = await person(t, 'hal@example.com');
    const hidden = await t.request('POST', wsPath(ada, '/share'), { as: as(stranger), body: { email: 'gina@example.com', role: 'viewer' } });
    expect(hidden.status).toBe(404);
    expect(await t.services.db.selectFrom('invites').select('id').where('email', '=', 'gina@example.com').execute()).toEqual([]);
  });

  it('rejects bad input (unknown field 400, bad e-mail 422, bad role 400) without writing or mailing anything', async () => {
    const countInvites = async () => (await t.services.db.selectFrom('invites').select('id').execute()).length;
    const invitesBefore = await countInvites();
    const mailsBefore = (await t.outbox()).length;

    const unknownField = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'x@example.com', role: 'viewer', note: 'hi' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.code).toBe('bad_request');
    const badEmail = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'not-an-email', role: 'viewer' } });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.error.code).toBe('validation');
    expect(badEmail.body.error.details[0].path).toEqual(['email']);
    const badRole = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'x@example.com', role: 'admin' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.details[0].path).toEqual(['role']);
    const missing = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'x@example.com' } });
    expect(missing.status).toBe(400);

    expect(await countInvites()).toBe(invitesBefore);
    expect((await t.outbox()).length).toBe(mailsBefore);
  });
});

describe('humans cap on share invites', () => {
  let t: Started;
  let ada: Person;
  let ivy: Person;

  beforeAll(async () => {
    t = await startTestApp();
    ada = await person(t, 'ada@example.com');
    ivy = await person(t, 'ivy@example.com');
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('refuses invites and acceptances past the free plan\'s 6 humans with the 402 body, and lifts at once on upgrade', async () => {
    // ada + 4 seeded org members = 5 humans: one seat left.
    for (const n of [1, 2, 3, 4]) await seedOrgMember(t, ada.orgId, `member${n}@example.com`);
    const invited = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: ivy.email, role: 'viewer' } });
    expect(invited.status, invited.text).toBe(200);
    const token = await latestInviteToken(t, ivy.email);

    // The last seat goes to someone else before ivy accepts.
    await seedOrgMember(t, ada.orgId, 'member5@example.com');
    const accept = await t.request('POST', `/api/invites/${token}`, { as: as(ivy) });
    expect(accept.status).toBe(402);
    expect(accept.body).toEqual({
      code: 'over_limit',
      limit: 'humans',
      current: 6,
      cap: 6,
      message: expect.stringContaining('6 humans'),
      upgrade_url: `${t.url}/settings/billing`,
      details: {
        upgrade: expect.objectContaining({ mcpTool: 'upgrade_plan', api: 'POST /api/billing/upgrade', plan: 'pro' }),
        increase: { mcpTool: 'request_limit_increase', api: 'POST /api/billing/request-limit-increase' },
      },
      requestId: expect.any(String),
    });
    expect(await membershipRole(t, ada.welcomeId, ivy.userId)).toBeNull();

    const another = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'newcomer@example.com', role: 'viewer' } });
    expect(another.status).toBe(402);
    expect(another.body.limit).toBe('humans');

    // Someone already counted (an org member) takes no new seat.
    const counted = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: 'member1@example.com', role: 'viewer' } });
    expect(counted.status).toBe(200);

    await t.services.db.updateTable('orgs').set({ plan: 'pro' }).where('id', '=', ada.orgId).execute();
    const afterUpgrade = await t.request('POST', `/api/invites/${token}`, { as: as(ivy) });
    expect(afterUpgrade.status, afterUpgrade.text).toBe(200);
    expect(await membershipRole(t, ada.welcomeId, ivy.userId)).toBe('viewer');
  });
});

describe('share invite rate limit', () => {
  let t: Started;
  let ada: Person;
  let bob: Person;

  beforeAll(async () => {
    t = await startTestApp();
    ada = await person(t, 'ada@example.com');
    bob = await person(t, 'bob@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', ada.orgId).execute();
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('allows 20 invites per hour per workspace; strangers do not spend the budget and other workspaces keep theirs', async () => {
    for (let i = 0; i < 3; i++) {
      const probe = await t.request('POST', wsPath(ada, '/share'), { as: as(bob), body: { email: `probe${i}@example.com`, role: 'viewer' } });
      expect(probe.status).toBe(404);
    }
    for (let i = 0; i < 20; i++) {
      const res = await t.request('POST', wsPath(ada, '/share'), { as: as(ada), body: { email: `guest${i}@example.com`, role: 'viewer' } });
      expect(res.status, res.text).toBe(200);
    }
    const limited = await t.request('POST', `/api/workspaces/${ada.welcomeId}/share`, { as: as(ada), body: { email: 'guest20@example.com', role: 'viewer' } });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited', endpoint: 'workspace_share_invites', limit: 20, window: '1h' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await t.services.db.selectFrom('invites').select('id').where('email', '=', 'guest20@example.com').execute()).toEqual([]);

    // Every org has a `welcome`: bob's is a different workspace with its own budget.
    const elsewhere = await t.request('POST', wsPath(bob, '/share'), { as: as(bob), body: { email: 'guest0@example.com', role: 'viewer' } });
    expect(elsewhere.status, elsewhere.text).toBe(200);
  });
});
