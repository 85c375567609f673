import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateOrg } from '../../src/persistence/accounts';
import { startTestApp } from '../helpers/app';
import { addMember, countRows, createWorkspace, elevateForKeys, joinOrg, mint, postKey, signInPerson } from './fixtures';

type Started = Awaited<ReturnType<typeof startTestApp>>;

describe('agents: the plan cap and the overview', () => {
  let t: Started;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  it('the fourth agent on the free plan is 402 with the spec body; revoking a last key or raising the plan frees a slot at once', async () => {
    const ada = await signInPerson(t, 'ada@example.com');
    await elevateForKeys(t, ada);
    const first = await mint(t, ada, { agentName: 'one' });
    const second = await mint(t, ada, { agentName: 'two' });
    await mint(t, ada, { agentName: 'three' });
    // More keys for an agent that already holds one take no extra slot.
    await mint(t, ada, { agentName: 'one', name: 'second key' });

    const before = await countRows(t);
    const refused = await postKey(t, ada, { name: 'k', agentName: 'four', role: 'editor' });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({
      code: 'over_limit',
      limit: 'agents',
      current: 3,
      cap: 3,
      message: expect.any(String),
      upgrade_url: expect.stringMatching(/^http/),
      details: {
        upgrade: { message: expect.any(String), mcpTool: 'upgrade_plan', api: 'POST /api/billing/upgrade', plan: 'pro' },
        increase: { mcpTool: 'request_limit_increase', api: 'POST /api/billing/request-limit-increase' },
      },
      requestId: refused.headers.get('x-request-id'),
    });
    expect(await countRows(t)).toEqual(before);

    // Agent "two" holds one key: revoking it frees the slot for the next request.
    expect((await t.request('DELETE', `/api/keys/${second.key.id}`, { as: ada.as })).status).toBe(200);
    expect((await postKey(t, ada, { name: 'k', agentName: 'four', role: 'editor' })).status).toBe(200);
    // Agent "one" still holds a key after losing one of its two, so it keeps its slot.
    expect((await t.request('DELETE', `/api/keys/${first.key.id}`, { as: ada.as })).status).toBe(200);
    expect((await postKey(t, ada, { name: 'k', agentName: 'five', role: 'editor' })).status).toBe(402);
    // A revoked agent coming back needs a slot like a new one.
    expect((await postKey(t, ada, { name: 'k', agentName: 'two', role: 'editor' })).status).toBe(402);

    await updateOrg(t.services.db, ada.orgId, { plan: 'pro' });
    expect((await postKey(t, ada, { name: 'k', agentName: 'five', role: 'editor' })).status).toBe(200);
  });

  it('concurrent mints cannot overshoot the cap', async () => {
    const bo = await signInPerson(t, 'bo@example.com');
    await elevateForKeys(t, bo);
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((agentName) => postKey(t, bo, { name: 'k', agentName, role: 'viewer' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 402, 402]);
  });

  it('lists every agent of the org with owner, live keys and model hint', async () => {
    const cy = await signInPerson(t, 'cy@example.com');
    const dee = await signInPerson(t, 'dee@example.com');
    await joinOrg(t, dee, cy.orgId, 'editor');
    await elevateForKeys(t, cy);
    await elevateForKeys(t, dee);
    const cyKey = await mint(t, cy, { agentName: 'writer', modelHint: 'claude' });
    await mint(t, cy, { agentName: 'writer', name: 'spare' });
    const deeKey = await mint(t, dee, { agentName: 'reader', role: 'viewer' });

    const res = await t.request('GET', '/api/agents/overview', { as: dee.as });
    expect(res.status).toBe(200);
    expect(res.body.agents).toEqual([
      {
        agent: cyKey.key.agent,
        owner: { principalType: 'user', id: cy.userId, name: 'cy', avatarUrl: null },
        modelHint: 'claude',
        activeKeys: 2,
        lastUsedAt: null,
        createdAt: expect.any(String),
      },
      {
        agent: deeKey.key.agent,
        owner: { principalType: 'user', id: dee.userId, name: 'dee', avatarUrl: null },
        modelHint: null,
        activeKeys: 1,
        lastUsedAt: null,
        createdAt: expect.any(String),
      },
    ]);

    await t.request('DELETE', `/api/keys/${deeKey.key.id}`, { as: dee.as });
    const after = await t.request('GET', '/api/agents/overview', { as: cy.as });
    expect(after.body.agents.find((a: { agent: { id: string } }) => a.agent.id === deeKey.key.agent.id).activeKeys).toBe(0);
  });

  it('shows one agent with its keys and the memberships the caller may see; other orgs\' agents are 404', async () => {
    const eli = await signInPerson(t, 'eli@example.com');
    const fox = await signInPerson(t, 'fox@example.com');
    const outsider = await signInPerson(t, 'outsider@example.com');
    await joinOrg(t, fox, eli.orgId, 'editor');
    await elevateForKeys(t, eli);
    const shared = await createWorkspace(t, eli, { slug: 'shared', visibility: 'private' });
    const hidden = await createWorkspace(t, eli, { slug: 'hidden', visibility: 'private' });
    await addMember(t, shared.id, fox.userId, 'viewer');
    const inShared = await mint(t, eli, { agentName: 'courier', scopeSlug: 'shared', role: 'editor' });
    await mint(t, eli, { agentName: 'courier', scopeSlug: 'hidden', role: 'commenter' });
    const agentId = inShared.key.agent.id;

    const asOwner = await t.request('GET', `/api/agents/${agentId}`, { as: eli.as });
    expect(asOwner.status).toBe(200);
    expect(asOwner.body).toMatchObject({ agent: inShared.key.agent, owner: { id: eli.userId }, activeKeys: 2 });
    expect(asOwner.body.keys).toHaveLength(2);
    expect(asOwner.body.memberships).toEqual(
      expect.arrayContaining([
        { workspace: { id: shared.id, slug: 'shared', name: 'shared', archivedAt: null }, role: 'editor', viaUserId: eli.userId },
        { workspace: { id: hidden.id, slug: 'hidden', name: 'hidden', archivedAt: null }, role: 'commenter', viaUserId: eli.userId },
      ]),
    );

    // Another org member sees the agent, but neither its owner's keys nor a private workspace they are not in.
    const asFox = await t.request('GET', `/api/agents/${agentId}`, { as: fox.as });
    expect(asFox.status).toBe(200);
    expect(asFox.body.keys).toEqual([]);
    expect(asFox.body.memberships.map((m: { workspace: { slug: string } }) => m.workspace.slug)).toEqual(['shared']);
    expect(asFox.text).not.toContain(hidden.id);

    expect((await t.request('GET', `/api/agents/${agentId}`, { as: outsider.as })).status).toBe(404);
    expect((await t.request('GET', '/api/agents/agt_nothing', { as: eli.as })).status).toBe(404);
  });

  it('the OpenAPI description lists the key, agent and export routes with their schemas', async () => {
    const res = await t.request('GET', '/openapi.json');
    const paths = res.body.paths;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/keys', '/api/keys/{id}', '/api/agents/overview', '/api/agents/{id}', '/api/me/export']));
    expect(paths['/api/keys'].post.requestBody.content['application/json'].schema).toBeDefined();
    expect(paths['/api/keys'].post.responses['200']).toBeDefined();
    expect(paths['/api/keys'].post.responses['402']).toBeDefined();
    expect(paths['/api/me/export'].get.responses['200']).toBeDefined();
    expect(res.body.components.schemas).toHaveProperty('ApiKey');
    expect(res.body.components.schemas).toHaveProperty('AgentDetail');
  });
});
