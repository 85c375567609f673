import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { touchKeyLastUsed } from '../../src/persistence/keys';
import { ManualClock, startTestApp } from '../helpers/app';
import { createWorkspace, elevateForKeys, joinOrg, mint, signInPerson } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;

describe('what a key reaches, and revocation', () => {
  let t: Started;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('a workspace created with an unscoped editor key is attributed to the agent', async () => {
    const ada = await signInPerson(t, 'ada@example.com');
    await elevateForKeys(t, ada);
    const { key, as } = await mint(t, ada, { agentName: 'planner', role: 'editor' });
    const res = await t.request('POST', '/api/workspaces', { as, body: { name: 'Roadmap', slug: 'roadmap', mode: 'table' } });
    expect(res.status).toBe(200);
    expect(res.body.createdBy).toEqual({ principalType: 'agent', id: key.agent.id, name: 'planner', avatarUrl: null });
  });

  it('a viewer key reads but gets 403 on a write', async () => {
    const bea = await signInPerson(t, 'bea@example.com');
    await elevateForKeys(t, bea);
    const { as } = await mint(t, bea, { role: 'viewer' });
    expect((await t.request('GET', '/api/workspaces/welcome', { as })).status).toBe(200);
    const write = await t.request('PATCH', '/api/workspaces/welcome', { as, body: { name: 'Renamed' } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('forbidden');
  });

  it('a key scoped to one workspace gets 404 on another', async () => {
    const cal = await signInPerson(t, 'cal@example.com');
    await elevateForKeys(t, cal);
    await createWorkspace(t, cal, { slug: 'inside' });
    const { as } = await mint(t, cal, { agentName: 'scoped', scopeSlug: 'inside', role: 'editor' });
    expect((await t.request('GET', '/api/workspaces/inside', { as })).status).toBe(200);
    const other = await t.request('GET', '/api/workspaces/welcome', { as });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
  });

  it('a revoked key is 401 on the very next request', async () => {
    const dan = await signInPerson(t, 'dan@example.com');
    await elevateForKeys(t, dan);
    const { key, as } = await mint(t, dan, { role: 'editor' });
    expect((await t.request('GET', '/api/me', { as })).status).toBe(200);

    const revoked = await t.request('DELETE', `/api/keys/${key.id}`, { as: dan.as });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ok: true });
    const after = await t.request('GET', '/api/me', { as });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');

    const listed = await t.request('GET', '/api/keys', { as: dan.as });
    expect(listed.body.keys[0]).toMatchObject({ id: key.id, revokedAt: clock.now().toISOString() });
    // Idempotent: a second revocation succeeds and keeps the first time.
    clock.advance(1000);
    expect((await t.request('DELETE', `/api/keys/${key.id}`, { as: dan.as })).status).toBe(200);
    expect((await t.request('GET', '/api/keys', { as: dan.as })).body.keys[0].revokedAt).toBe(listed.body.keys[0].revokedAt);
  });

  it('a key may revoke itself, but no other key', async () => {
    const eve = await signInPerson(t, 'eve@example.com');
    await elevateForKeys(t, eve);
    const first = await mint(t, eve, { agentName: 'one' });
    const second = await mint(t, eve, { agentName: 'two' });
    expect((await t.request('DELETE', `/api/keys/${second.key.id}`, { as: first.as })).status).toBe(403);
    expect((await t.request('DELETE', `/api/keys/${first.key.id}`, { as: first.as })).status).toBe(200);
    expect((await t.request('GET', '/api/me', { as: first.as })).status).toBe(401);
    expect((await t.request('GET', '/api/me', { as: second.as })).status).toBe(200);
  });

  it('the key owner and the org owner may revoke; other members get 403; unknown or foreign keys are 404', async () => {
    const boss = await signInPerson(t, 'boss@example.com');
    const staff = await signInPerson(t, 'staff@example.com');
    const peer = await signInPerson(t, 'peer@example.com');
    const stranger = await signInPerson(t, 'stranger@example.com');
    await joinOrg(t, staff, boss.orgId, 'editor');
    await joinOrg(t, peer, boss.orgId, 'editor');
    for (const person of [boss, staff, stranger]) await elevateForKeys(t, person);
    const staffKey = await mint(t, staff, { agentName: 'staff-bot' });
    const bossKey = await mint(t, boss, { agentName: 'boss-bot' });
    const strangerKey = await mint(t, stranger, { agentName: 'far-bot' });

    // Listing: members see their own keys, the org owner sees all of the org's.
    const staffList = await t.request('GET', '/api/keys', { as: staff.as });
    expect(staffList.body.keys.map((k: { id: string }) => k.id)).toEqual([staffKey.key.id]);
    const bossList = await t.request('GET', '/api/keys', { as: boss.as });
    expect(bossList.body.keys.map((k: { id: string }) => k.id).sort()).toEqual([staffKey.key.id, bossKey.key.id].sort());
    expect(bossList.text).not.toContain(strangerKey.key.id);

    expect((await t.request('DELETE', `/api/keys/${bossKey.key.id}`, { as: peer.as })).status).toBe(403);
    expect((await t.request('DELETE', `/api/keys/${bossKey.key.id}`, { as: staff.as })).status).toBe(403);
    expect((await t.request('DELETE', `/api/keys/${strangerKey.key.id}`, { as: boss.as })).status).toBe(404);
    expect((await t.request('DELETE', '/api/keys/key_doesnotexist', { as: boss.as })).status).toBe(404);
    expect((await t.request('DELETE', `/api/keys/${staffKey.key.id}`, { as: boss.as })).status).toBe(200);
    expect((await t.request('GET', '/api/me', { as: staffKey.as })).status).toBe(401);
    expect((await t.request('GET', '/api/me', { as: strangerKey.as })).status).toBe(200);
  });

  it('records key.created and key.revoked in the scoped workspace audit log, never the secret', async () => {
    const fay = await signInPerson(t, 'fay@example.com');
    await elevateForKeys(t, fay);
    const ws = await createWorkspace(t, fay, { slug: 'audited' });
    const { key, secret } = await mint(t, fay, { agentName: 'auditor', scopeSlug: 'audited', role: 'viewer' });
    await t.request('DELETE', `/api/keys/${key.id}`, { as: fay.as });
    const events = await t.services.db.selectFrom('events').select(['event', 'record']).where('workspaceId', '=', ws.id).where('subjectId', '=', key.id).orderBy('seq').execute();
    expect(events.map((e) => e.event)).toEqual(['key.created', 'key.revoked']);
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('last use is stamped at most once a minute (for the authentication hook to call)', async () => {
    const gus = await signInPerson(t, 'gus@example.com');
    await elevateForKeys(t, gus);
    const { key } = await mint(t, gus, { agentName: 'stamped' });
    const db = t.services.db;
    const lastUsed = async () => (await db.selectFrom('apiKeys').select('lastUsedAt').where('id', '=', key.id).executeTakeFirstOrThrow()).lastUsedAt;
    const first = clock.now();
    await touchKeyLastUsed(db, { keyId: key.id, agentId: key.agent.id, at: first });
    await touchKeyLastUsed(db, { keyId: key.id, agentId: key.agent.id, at: new Date(first.getTime() + 30_000) });
    expect(await lastUsed()).toEqual(first);
    const later = new Date(first.getTime() + 61_000);
    await touchKeyLastUsed(db, { keyId: key.id, agentId: key.agent.id, at: later });
    expect(await lastUsed()).toEqual(later);
    const listed = await t.request('GET', '/api/keys', { as: gus.as });
    expect(listed.body.keys[0].lastUsedAt).toBe(later.toISOString());
  });

  it('a request with a key stamps its last use after the request, with the time of the use', async () => {
    const hal = await signInPerson(t, 'hal@example.com');
    await elevateForKeys(t, hal);
    const { key, as } = await mint(t, hal, { agentName: 'late-stamped', role: 'viewer' });
    const db = t.services.db;
    const lastUsed = async () => (await db.selectFrom('apiKeys').select('lastUsedAt').where('id', '=', key.id).executeTakeFirstOrThrow()).lastUsedAt;
    clock.advance(120_000);
    const usedAt = clock.now();
    expect((await t.request('GET', '/api/workspaces/welcome', { as })).status).toBe(200);
    // The stamp is written a moment after the answer (it does not queue ahead of the request's own statements), still with the use's time.
    clock.advance(5_000);
    await expect.poll(lastUsed, { timeout: 10_000, interval: 100 }).toEqual(usedAt);
  });
});
