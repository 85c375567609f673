import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Credential, type TestApp } from '../helpers/app';
import { insertKey } from '../workspaces/helpers';
import { addMember, as, latestInviteToken, person, type Person } from './fixtures';

/**
 * `GET /api/me/orgs`: the organisations a person belongs to, their own
 * first, and those of workspaces shared with them (role null), so a client
 * can label each workspace truthfully.
 */
describe('GET /api/me/orgs', () => {
  let t: TestApp;
  let ann: Person;
  let greta: Person;
  let cleo: Person;

  beforeAll(async () => {
    t = await startTestApp();
    [ann, greta, cleo] = [await person(t, 'ann@example.com'), await person(t, 'greta@example.com'), await person(t, 'cleo@example.com')];
  }, 60_000);

  afterAll(async () => t?.close());

  const orgsOf = async (credential: Credential) => {
    const listed = await t.request('GET', '/api/me/orgs', { as: credential });
    expect(listed.status, listed.text).toBe(200);
    return listed.body.orgs as Array<{ slug: string; name: string; role: string | null; primary: boolean }>;
  };

  it('lists the person’s own organisation, as primary', async () => {
    expect(await orgsOf(as(greta))).toEqual([{ id: greta.orgId, slug: 'greta', name: "greta's workspace", role: 'owner', primary: true }]);
  });

  it('lists the organisation of a workspace shared with her, without a role, after her own', async () => {
    await addMember(t, ann, greta, 'editor');
    expect(await orgsOf(as(greta))).toEqual([
      { id: greta.orgId, slug: 'greta', name: "greta's workspace", role: 'owner', primary: true },
      { id: ann.orgId, slug: 'ann', name: "ann's workspace", role: null, primary: false },
    ]);
  });

  it('lists an organisation she joins with its role, among hers, by name after her own', async () => {
    const invited = await t.request('POST', `/api/orgs/${cleo.orgSlug}/invites`, { as: as(cleo), body: { email: greta.email, role: 'viewer' } });
    expect(invited.status, invited.text).toBe(200);
    expect((await t.request('POST', `/api/org-invites/${await latestInviteToken(t, greta.email, 'org-invites')}`, { as: as(greta) })).status).toBe(200);
    expect((await orgsOf(as(greta))).map((org) => [org.slug, org.role, org.primary])).toEqual([
      ['greta', 'owner', true],
      ['cleo', 'viewer', false],
      ['ann', null, false],
    ]);
  });

  it('caps a key’s role by the key’s, and a key scoped to one workspace belongs to no organisation', async () => {
    const owner = { ...greta, as: as(greta), orgSlug: greta.orgSlug, orgId: greta.orgId, userId: greta.userId };
    const unscoped = await insertKey(t, owner, { role: 'viewer' });
    expect((await orgsOf(unscoped.as)).map((org) => [org.slug, org.role])).toEqual([
      ['greta', 'viewer'],
      ['cleo', 'viewer'],
      ['ann', null],
    ]);
    const scoped = await insertKey(t, owner, { role: 'editor', scopeWorkspaceId: greta.welcomeId });
    expect((await orgsOf(scoped.as)).map((org) => [org.slug, org.role])).toEqual([['greta', null]]);
    expect((await t.request('GET', '/api/me/orgs')).status).toBe(401);
  });
});
