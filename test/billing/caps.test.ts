import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capsFor } from '../../src/limits/plans';
import type { PlanName } from '../../src/persistence/schema';
import { startTestApp, type TestApp } from '../helpers/app';
import { latestInviteToken } from '../members/fixtures';
import { createWorkspace, elevate, signInUser, type TestUser } from '../workspaces/helpers';
import { addAgentsWithKeys, addUsers, addWorkspaces, addWorkspaceWithRows, payThroughCheckout, setPlan } from './helpers';

/**
 * Every plan cap at its boundary on every plan, through the API: the last
 * free slot is taken, the next create is 402 with the documented body, and
 * archiving, revoking or deleting frees a slot at once (docs/LIMITS.md).
 */

let t: TestApp & { store: { dispose(): Promise<void> } };

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const overLimit = (limit: string, cap: number, plan: PlanName) => ({
  code: 'over_limit',
  limit,
  current: cap,
  cap,
  upgrade_url: `${t.url}/settings/billing`,
  details: { upgrade: expect.objectContaining({ api: 'POST /api/billing/upgrade', plan: plan === 'free' ? 'pro' : 'scale' }), increase: expect.any(Object) },
});

const summary = async (user: TestUser) => (await t.request('GET', '/api/billing', { as: user.as })).body;

async function share(owner: TestUser, slug: string, email: string) {
  return t.request('POST', `/api/orgs/${owner.orgSlug}/workspaces/${slug}/share`, { as: owner.as, body: { email, role: 'viewer' } });
}

async function join(owner: TestUser, slug: string, email: string) {
  expect((await share(owner, slug, email)).status).toBe(200);
  const token = await latestInviteToken(t, email);
  const guest = await signInUser(t, email);
  const accepted = await t.request('POST', `/api/invites/${token}`, { as: guest.as });
  expect(accepted.status, accepted.text).toBe(200);
  return guest;
}

async function mintKey(owner: TestUser, agentName: string) {
  return t.request('POST', '/api/keys', { as: owner.as, body: { name: `key for ${agentName}`, agentName, role: 'viewer' } });
}

describe.each(['free', 'pro', 'scale'] as const)('the %s plan', (plan) => {
  const caps = capsFor(plan);
  let owner: TestUser;

  beforeAll(async () => {
    owner = await signInUser(t, `owner-${plan}@caps.test`);
    await setPlan(t, owner.orgId, plan);
    await elevate(t, owner, 'keys');
    await elevate(t, owner, 'workspace_delete');
  });

  it(`humans (cap ${caps.humans}): the last seat is taken, the next is 402; archiving frees a seat at once, unarchiving cannot overshoot`, async () => {
    // The owner plus org members up to one seat short.
    const fillers = await addUsers(t, caps.humans - 2, { orgId: owner.orgId });
    await createWorkspace(t, owner, { name: 'Guests', slug: 'guests' });
    expect((await summary(owner)).activeMembers).toBe(caps.humans - 1);

    await join(owner, 'guests', `guest-${plan}@caps.test`);
    expect((await summary(owner)).activeMembers).toBe(caps.humans);
    const refused = await share(owner, 'welcome', `late-${plan}@caps.test`);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject(overLimit('humans', caps.humans, plan));
    // Someone already counted takes no new seat.
    const fillerEmail = `${fillers[0]!.toLowerCase()}@fill.test`;
    expect((await share(owner, 'welcome', fillerEmail)).status).toBe(200);

    // The guest belongs only to the workspace: archiving it frees the seat.
    expect((await t.request('DELETE', '/api/workspaces/guests', { as: owner.as })).status).toBe(200);
    expect((await summary(owner)).activeMembers).toBe(caps.humans - 1);
    await join(owner, 'welcome', `late-${plan}@caps.test`);
    expect((await summary(owner)).activeMembers).toBe(caps.humans);

    // Bringing the guest's workspace back would make one human too many.
    const unarchive = await t.request('POST', '/api/workspaces/guests/unarchive', { as: owner.as });
    expect(unarchive.status).toBe(402);
    expect(unarchive.body).toMatchObject(overLimit('humans', caps.humans, plan));
    expect((await summary(owner)).activeWorkspaces).toBe(1);
  });

  it(`agents (cap ${caps.agents}): the last agent gets a key, the next is 402; another key for a counted agent is free; revoking frees the slot`, async () => {
    await addAgentsWithKeys(t, owner, caps.agents - 1);
    const last = await mintKey(owner, 'last-one');
    expect(last.status, last.text).toBe(200);
    expect((await summary(owner)).activeAgents).toBe(caps.agents);

    const refused = await mintKey(owner, 'one-too-many');
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject(overLimit('agents', caps.agents, plan));

    const second = await mintKey(owner, 'last-one');
    expect(second.status).toBe(200);
    expect(second.body.key.agent.id).toBe(last.body.key.agent.id);

    for (const key of [last.body.key, second.body.key]) expect((await t.request('DELETE', `/api/keys/${key.id}`, { as: owner.as })).status).toBe(200);
    expect((await summary(owner)).activeAgents).toBe(caps.agents - 1);
    expect((await mintKey(owner, 'one-too-many')).status).toBe(200);
  });

  // A 50,000-row table takes a few seconds to build and load.
  it(`rows (cap ${caps.rowsPerWorkspace} a workspace): the last row is created, the next is 402; edits go on; deleting frees a slot; other workspaces count apart`, async () => {
    const full = await addWorkspaceWithRows(t, owner, 'full', caps.rowsPerWorkspace - 1);
    const rows = `/api/orgs/${owner.orgSlug}/workspaces/full/rows`;
    const last = await t.request('POST', rows, { as: owner.as, body: { data: { title: 'the last row' } } });
    expect(last.status, last.text).toBe(200);

    const refused = await t.request('POST', rows, { as: owner.as, body: { data: { title: 'one too many' } } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject(overLimit('rows', caps.rowsPerWorkspace, plan));

    expect((await t.request('PATCH', `${rows}/${full.rowIds[0]}`, { as: owner.as, body: { data: { title: 'still editable' } } })).status).toBe(200);
    expect((await t.request('POST', `/api/orgs/${owner.orgSlug}/workspaces/welcome/rows`, { as: owner.as, body: { data: { title: 'elsewhere' } } })).status).toBe(200);

    expect((await t.request('DELETE', `${rows}/${last.body.id}`, { as: owner.as })).status).toBe(200);
    expect((await t.request('POST', rows, { as: owner.as, body: { data: { title: 'fits again' } } })).status).toBe(200);
  }, 120_000);

  it(`workspaces (cap ${caps.workspaces}): the last is created, the next is 402; archiving frees the slot, unarchiving into a full plan is 402`, async () => {
    await addWorkspaces(t, owner, caps.workspaces - 1 - (await summary(owner)).activeWorkspaces);
    const last = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Last', slug: 'last', mode: 'table' } });
    expect(last.status, last.text).toBe(200);
    expect((await summary(owner)).activeWorkspaces).toBe(caps.workspaces);

    const refused = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Extra', slug: 'extra', mode: 'doc' } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject(overLimit('workspaces', caps.workspaces, plan));

    expect((await t.request('DELETE', '/api/workspaces/last', { as: owner.as })).status).toBe(200);
    expect((await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Extra', slug: 'extra', mode: 'doc' } })).status).toBe(200);
    const unarchive = await t.request('POST', '/api/workspaces/last/unarchive', { as: owner.as });
    expect(unarchive.status).toBe(402);
    expect(unarchive.body).toMatchObject(overLimit('workspaces', caps.workspaces, plan));
  });
});

describe('a raised plan applies at once to every cap', () => {
  it('a free organisation at every cap can add one of each right after paying for pro', async () => {
    const owner = await signInUser(t, 'raise@caps.test');
    await elevate(t, owner, 'keys');
    const free = capsFor('free');
    await addUsers(t, free.humans - 1, { orgId: owner.orgId });
    await addAgentsWithKeys(t, owner, free.agents);
    await addWorkspaceWithRows(t, owner, 'rows', free.rowsPerWorkspace);
    await addWorkspaces(t, owner, free.workspaces - 2);
    const rows = `/api/orgs/${owner.orgSlug}/workspaces/rows/rows`;

    const attempts = {
      workspace: () => t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'More', slug: 'more', mode: 'table' } }),
      agent: () => mintKey(owner, 'newcomer'),
      human: () => share(owner, 'welcome', 'newcomer@caps.test'),
      row: () => t.request('POST', rows, { as: owner.as, body: { data: { title: 'more' } } }),
    };
    for (const attempt of Object.values(attempts)) expect((await attempt()).status).toBe(402);

    await payThroughCheckout(t, owner, 'pro');
    for (const [what, attempt] of Object.entries(attempts)) {
      const res = await attempt();
      expect(res.status, `${what}: ${res.text}`).toBe(200);
    }
  });
});
