import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/secrets';
import { ManualClock, startTestApp } from '../helpers/app';
import { addMember, createWorkspace, elevateForKeys, joinOrg, mint, signInPerson } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;
const HOUR = 60 * 60_000;

describe('GET /api/me/export', () => {
  let t: Started;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('streams a JSON attachment of everything of the user, with no secret, hash or other tenant\'s data', async () => {
    const ada = await signInPerson(t, 'ada@example.com');
    const other = await signInPerson(t, 'other@example.com');
    await elevateForKeys(t, ada);
    await elevateForKeys(t, other);
    const board = await createWorkspace(t, ada, { slug: 'board' });
    const adaKey = await mint(t, ada, { agentName: 'scribe', scopeSlug: 'board', role: 'editor', modelHint: 'gpt' });
    await t.request('DELETE', `/api/keys/${adaKey.key.id}`, { as: ada.as });
    const liveKey = await mint(t, ada, { agentName: 'scribe', name: 'second' });
    const otherKey = await mint(t, other, { agentName: 'spy' });
    const foreign = await createWorkspace(t, other, { slug: 'their-plans' });
    // Ada is a member of one of their workspaces: that membership is hers, the workspace's other data is not.
    const guestIn = await createWorkspace(t, other, { slug: 'guest-room' });
    await addMember(t, guestIn.id, ada.userId, 'viewer');

    const res = await t.request('GET', '/api/me/export', { as: ada.as });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="trellis-export-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('x-request-id')).toBeTruthy();

    const bundle = JSON.parse(res.text);
    expect(Object.keys(bundle)).toEqual(['exportedAt', 'profile', 'organisations', 'workspaces', 'memberships', 'agents', 'keys', 'sessions', 'comments', 'commentReactions', 'webhooks']);
    expect(bundle.exportedAt).toBe(clock.now().toISOString());
    expect(bundle.profile).toMatchObject({ id: ada.userId, email: 'ada@example.com', name: 'ada', primaryOrgId: ada.orgId });
    expect(bundle.organisations).toEqual([expect.objectContaining({ id: ada.orgId, slug: ada.orgSlug, role: 'owner', plan: 'free' })]);
    expect(bundle.workspaces.map((w: { slug: string }) => w.slug).sort()).toEqual(['board', 'guest-room', 'welcome']);
    expect(bundle.memberships).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ workspaceId: board.id, principalType: 'user', principalId: ada.userId, role: 'owner' }),
        expect.objectContaining({ workspaceId: board.id, principalType: 'agent', principalId: adaKey.key.agent.id, viaUserId: ada.userId }),
        expect.objectContaining({ workspaceId: guestIn.id, principalId: ada.userId, role: 'viewer' }),
      ]),
    );
    expect(bundle.memberships.every((m: { principalId: string }) => [ada.userId, adaKey.key.agent.id].includes(m.principalId))).toBe(true);
    expect(bundle.agents).toEqual([expect.objectContaining({ id: adaKey.key.agent.id, name: 'scribe', modelHint: 'gpt' })]);
    expect(bundle.keys.map((k: { id: string }) => k.id).sort()).toEqual([adaKey.key.id, liveKey.key.id].sort());
    expect(bundle.keys.find((k: { id: string }) => k.id === adaKey.key.id).revokedAt).toBe(clock.now().toISOString());
    expect(bundle.sessions).toHaveLength(1);

    for (const secret of [adaKey.secret, liveKey.secret, otherKey.secret]) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(hashToken(secret));
    }
    expect(res.text).not.toContain(ada.cookie);
    expect(res.text).not.toContain(hashToken(ada.cookie));
    expect(res.text).not.toContain('other@example.com');
    expect(res.text).not.toContain(foreign.id);
    expect(res.text).not.toContain(otherKey.key.agent.id);
    expect(res.text).not.toMatch(/secretHash|tokenHash|codeHash/);
  });

  it('allows one export per hour per user: the second is 429 with the spec body', async () => {
    const bo = await signInPerson(t, 'bo@example.com');
    const cy = await signInPerson(t, 'cy@example.com');
    expect((await t.request('GET', '/api/me/export', { as: bo.as })).status).toBe(200);

    const again = await t.request('GET', '/api/me/export', { as: bo.as });
    expect(again.status).toBe(429);
    expect(again.body).toMatchObject({ code: 'rate_limited', endpoint: 'me_export', limit: 1, window: '1h', message: expect.any(String) });
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another user's hour is their own.
    expect((await t.request('GET', '/api/me/export', { as: cy.as })).status).toBe(200);

    clock.advance(HOUR + 1000);
    expect((await t.request('GET', '/api/me/export', { as: bo.as })).status).toBe(200);
  });

  it('refuses key callers (403) without using up their owner\'s hourly export', async () => {
    const dee = await signInPerson(t, 'dee@example.com');
    await elevateForKeys(t, dee);
    const { as } = await mint(t, dee, { agentName: 'nosy' });
    expect((await t.request('GET', '/api/me/export', { as })).status).toBe(403);
    expect((await t.request('GET', '/api/me/export', { as: dee.as })).status).toBe(200);
  });

  it('exports a member of several organisations with their role in each', async () => {
    const host = await signInPerson(t, 'host@example.com');
    const guest = await signInPerson(t, 'guest@example.com');
    const guestOrg = guest.orgId;
    await joinOrg(t, guest, host.orgId, 'commenter');
    const res = await t.request('GET', '/api/me/export', { as: guest.as });
    const bundle = JSON.parse(res.text);
    expect(bundle.organisations.map((o: { id: string; role: string }) => [o.id, o.role]).sort()).toEqual(
      [
        [guestOrg, 'owner'],
        [host.orgId, 'commenter'],
      ].sort(),
    );
    // Belonging to the host org shows the org, not its workspaces the guest is no member of.
    expect(bundle.workspaces.map((w: { orgId: string }) => w.orgId)).toEqual([guestOrg]);
  });
});
