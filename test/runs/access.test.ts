import { describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { addMembership, createWorkspace, insertKey } from '../workspaces/helpers';
import { bearerOf, ok, useRunsApp } from './helpers';

/**
 * Who may do what with runs (issue 35): whoever can read the workspace lists
 * runs and reads their changes; reverting needs write access to every
 * surface the run touched, or being the run's own principal; a suggest-only
 * key may not revert; a write naming a run that is not the caller's open
 * run of this workspace is refused and writes nothing.
 */

const r = useRunsApp();

async function setUp(slug: string) {
  const { t, ada } = r;
  const ws = await createWorkspace(t, ada, { name: slug, slug });
  const base = `/api/workspaces/${slug}`;
  const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'worker' });
  const { run } = await ok(r.call('POST', `${base}/runs`, agent.as, { name: 'Some work' }), 201);
  await ok(r.call('POST', `${base}/rows`, agent.as, { data: { title: 'by the run' } }, run.id));
  return { ws, base, agent, run };
}

async function rowCount(base: string) {
  return (await ok(r.call('GET', `${base}/rows`, r.ada.as))).rows.length;
}

describe('runs: who may', () => {
  it('lets readers list runs and read changes, and only writers of every surface (or the run’s own principal) revert', async () => {
    const { t, bob } = r;
    const s = await setUp('who');
    await addMembership(t, s.ws.id, bob.userId, 'viewer');
    expect((await ok(r.call('GET', `${s.base}/runs`, bob.as))).runs.map((run: { id: string }) => run.id)).toEqual([s.run.id]);
    expect((await ok(r.call('GET', `${s.base}/runs/${s.run.id}/changes`, bob.as))).changes).toHaveLength(1);
    // A viewer starts nothing and reverts nothing.
    expect((await r.call('POST', `${s.base}/runs`, bob.as, { name: 'mine' })).status).toBe(403);
    expect((await r.call('POST', `${s.base}/runs/${s.run.id}/revert?dryRun=true`, bob.as)).status).toBe(403);
    // A commenter may start runs of their own but not revert someone else's.
    await t.services.db.updateTable('memberships').set({ role: 'commenter' }).where('workspaceId', '=', s.ws.id).where('principalId', '=', bob.userId).execute();
    await ok(r.call('POST', `${s.base}/runs`, bob.as, { name: 'comments' }), 201);
    const refused = await r.call('POST', `${s.base}/runs/${s.run.id}/revert`, bob.as);
    expect(refused.status).toBe(403);
    expect(await rowCount(s.base)).toBe(1);
    // A stranger does not see the workspace at all.
    const stranger = await (await import('../workspaces/helpers')).signInUser(t, 'stranger@example.com');
    expect((await r.call('GET', `${s.base}/runs/${s.run.id}/changes`, stranger.as)).status).toBe(404);
    // An editor may revert anyone's run.
    await t.services.db.updateTable('memberships').set({ role: 'editor' }).where('workspaceId', '=', s.ws.id).where('principalId', '=', bob.userId).execute();
    expect((await ok(r.call('POST', `${s.base}/runs/${s.run.id}/revert`, bob.as))).reverted.rowsRemoved).toBe(1);
    expect(await rowCount(s.base)).toBe(0);
  });

  it('lets a run’s own principal revert it, never a suggest-only key', async () => {
    const { t, ada } = r;
    const s = await setUp('own');
    expect((await ok(r.call('POST', `${s.base}/runs/${s.run.id}/revert`, s.agent.as))).reverted.rowsRemoved).toBe(1);

    const suggester = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: s.ws.id, agentName: 'careful', suggestOnly: true });
    const { run } = await ok(r.call('POST', `${s.base}/runs`, suggester.as, { name: 'proposals' }), 201);
    await ok(r.call('POST', `${s.base}/rows?mode=suggest`, suggester.as, { data: { title: 'a proposal' } }, run.id), 202);
    const own = await r.call('POST', `${s.base}/runs/${run.id}/revert`, suggester.as);
    expect(own.status).toBe(403);
    const others = await r.call('POST', `${s.base}/runs/${s.run.id}/revert?dryRun=true`, suggester.as);
    expect(others.status).toBe(403);
    expect(others.body.error.message).toMatch(/suggest/);
  });

  it('refuses a write naming a run that is not the caller’s open run here, and writes nothing', async () => {
    const { t, ada, bob } = r;
    const s = await setUp('named');
    const elsewhere = await setUp('elsewhere');
    const other = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: s.ws.id, agentName: 'other' });
    const before = await rowCount(s.base);
    const attempt = async (as: typeof other.as, run: string) => t.request('POST', `${s.base}/rows`, { as, body: { data: { title: 'refused' } }, headers: { 'trellis-run': run } });

    for (const [as, run, why] of [
      [other.as, s.run.id, 'another principal started it'],
      [s.agent.as, elsewhere.run.id, 'it belongs to another workspace'],
      [s.agent.as, 'run_doesnotexist', 'it does not exist'],
      [ada.as, s.run.id, 'a person naming an agent’s run'],
    ] as const) {
      const res = await attempt(as, run);
      expect(res.status, why).toBe(404);
      expect(res.body.error.code, why).toBe('run_not_found');
    }
    // Over MCP the same refusal is the tool's error result.
    const mcp = await r.mcp(bearerOf(other.as));
    const result = await mcp.callTool({ name: 'create_row', arguments: { slug: 'named', data: { title: 'refused' }, run: s.run.id } });
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ status: 404, error: { code: 'run_not_found' } });

    // An ended run: 409, for the principal that owns it too; only it ends its run.
    expect((await r.call('PATCH', `${s.base}/runs/${s.run.id}`, other.as, { status: 'ended' })).status).toBe(403);
    const ended = await ok(r.call('PATCH', `${s.base}/runs/${s.run.id}`, s.agent.as, { status: 'ended' }));
    expect(ended.run.status).toBe('ended');
    const late = await attempt(s.agent.as, s.run.id);
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('run_ended');
    expect(await rowCount(s.base)).toBe(before);

    // A sync connection naming a run is checked when it authenticates.
    const endedSync = r.connect(tablesDocumentName(s.ws.id), { token: bearerOf(s.agent.as) }, s.run.id);
    expect(await endedSync.authenticationFailed).toBe('run_ended');
    await addMembership(t, s.ws.id, bob.userId, 'editor');
    const bobSync = r.connect(tablesDocumentName(s.ws.id), { cookie: bob.cookie }, s.run.id);
    expect(await bobSync.authenticationFailed).toBe('run_not_found');
  });
});
