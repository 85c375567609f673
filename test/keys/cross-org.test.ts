import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addMember, createWorkspace, elevateForKeys, mint, postKey, signInPerson, type Person } from './fixtures';

/**
 * A user invited into a workspace of another organisation mints a key
 * scoped to it (SPEC "Member": agents reach workspaces through their owner
 * "even if they live in another organisation"): the role is capped by the
 * user's role there, the agent is enrolled through them, follows their role
 * changes and leaves with them.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: Person; // the guest, in her own organisation
let zed: Person; // owner of the other organisation's workspaces

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInPerson(t, 'ada@example.com');
  zed = await signInPerson(t, 'zed@example.com');
  await elevateForKeys(t, ada);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('minting a key for a workspace of another organisation', () => {
  it('works for an explicit member, capped by her role there; the agent and key stay in her organisation', async () => {
    const shared = await createWorkspace(t, zed, { slug: 'shared' });
    await addMember(t, shared.id, ada.userId, 'commenter');

    const above = await postKey(t, ada, { name: 'k', agentName: 'guest', scopeSlug: 'shared', role: 'editor' });
    expect(above.status).toBe(403);
    const minted = await mint(t, ada, { agentName: 'guest', scopeSlug: 'shared', role: 'commenter' });
    expect(minted.key).toMatchObject({ scopeSlug: 'shared', scopeWorkspaceId: shared.id, role: 'commenter', owner: { id: ada.userId } });
    const agent = await t.services.db.selectFrom('agents').selectAll().where('id', '=', minted.key.agent.id).executeTakeFirstOrThrow();
    expect(agent).toMatchObject({ orgId: ada.orgId, ownerUserId: ada.userId });
    const key = await t.services.db.selectFrom('apiKeys').select('orgId').where('id', '=', minted.key.id).executeTakeFirstOrThrow();
    expect(key.orgId).toBe(ada.orgId);

    // Auto-enrolled through her, and it acts there within its role.
    const members = (await t.request('GET', '/api/workspaces/shared/members', { as: zed.as })).body.members;
    expect(members.find((m: { id: string }) => m.id === minted.key.agent.id)).toMatchObject({ principalType: 'agent', role: 'commenter', viaUserId: ada.userId });
    expect((await t.request('GET', '/api/workspaces/shared/rows', { as: minted.as })).status).toBe(200);
    expect((await t.request('POST', '/api/workspaces/shared/comments', { as: minted.as, body: { target: { type: 'workspace' }, body: 'hello from a guest agent' } })).status).toBe(200);
    expect((await t.request('POST', '/api/workspaces/shared/rows', { as: minted.as, body: { data: { title: 'no' } } })).status).toBe(403);
  });

  it('the agent follows its owner\'s role changes there and leaves with her', async () => {
    const board = await createWorkspace(t, zed, { slug: 'board' });
    await addMember(t, board.id, ada.userId, 'editor');
    const minted = await mint(t, ada, { agentName: 'guest', scopeSlug: 'board', role: 'editor' });
    expect((await t.request('POST', '/api/workspaces/board/rows', { as: minted.as, body: { data: { title: 'yes' } } })).status).toBe(200);

    const demoted = await t.request('PATCH', `/api/workspaces/board/members/${ada.userId}`, { as: zed.as, body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    expect(demoted.body.cascadedAgentIds).toEqual([minted.key.agent.id]);
    expect((await t.request('POST', '/api/workspaces/board/rows', { as: minted.as, body: { data: { title: 'no' } } })).status).toBe(403);
    expect((await t.request('GET', '/api/workspaces/board/rows', { as: minted.as })).status).toBe(200);

    const removed = await t.request('DELETE', `/api/workspaces/board/members/${ada.userId}`, { as: zed.as });
    expect(removed.status).toBe(200);
    expect(removed.body.cascadedAgentIds).toEqual([minted.key.agent.id]);
    expect((await t.request('GET', '/api/workspaces/board/rows', { as: minted.as })).status).toBe(404);
  });

  it('needs an explicit membership: public, unlisted and unknown workspaces elsewhere stay 404', async () => {
    await createWorkspace(t, zed, { slug: 'billboard', visibility: 'public' });
    await createWorkspace(t, zed, { slug: 'hidden-link', visibility: 'unlisted' });
    for (const scopeSlug of ['billboard', 'hidden-link', 'nowhere']) {
      expect((await postKey(t, ada, { name: 'k', agentName: 'x', scopeSlug, role: 'viewer' })).status, scopeSlug).toBe(404);
    }
  });

  it('her own organisation wins a slug both have; the id picks the other; several other organisations are ambiguous', async () => {
    const mine = await createWorkspace(t, ada, { slug: 'twin' });
    const theirs = await createWorkspace(t, zed, { slug: 'twin' });
    await addMember(t, theirs.id, ada.userId, 'editor');
    expect((await mint(t, ada, { agentName: 'guest', scopeSlug: 'twin', role: 'viewer' })).key.scopeWorkspaceId).toBe(mine.id);
    expect((await mint(t, ada, { agentName: 'guest', scopeSlug: theirs.id, role: 'viewer' })).key.scopeWorkspaceId).toBe(theirs.id);

    const kim = await signInPerson(t, 'kim@example.com');
    const first = await createWorkspace(t, zed, { slug: 'dup' });
    const second = await createWorkspace(t, kim, { slug: 'dup' });
    await addMember(t, first.id, ada.userId, 'viewer');
    await addMember(t, second.id, ada.userId, 'viewer');
    const ambiguous = await postKey(t, ada, { name: 'k', agentName: 'guest', scopeSlug: 'dup', role: 'viewer' });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.code).toBe('ambiguous_slug');
    expect(ambiguous.body.error.details.hint.map((h: { scopeSlug: string }) => h.scopeSlug).sort()).toEqual([first.id, second.id].sort());
    expect((await mint(t, ada, { agentName: 'guest', scopeSlug: second.id, role: 'viewer' })).key.scopeWorkspaceId).toBe(second.id);
  });
});
