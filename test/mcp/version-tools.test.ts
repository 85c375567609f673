import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { grantTokens } from '../oauth/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { bearerOf, checkedClients, refusal, rpcError, type ToolResult } from './helpers';

/**
 * The version tools through the SDK's own client: each answers what its
 * REST twin answers, a restore is seen by the next REST read and is itself
 * undone by restoring its `undo`, and only editors may restore.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let agent: { as: { bearer: string }; agentId: string };
let mcp: Client;
const clients = checkedClients(() => t);
const client = (bearer: string) => clients.open(bearer);
const base = '/api/workspaces/launch';
const doc = { slug: 'launch', surfaceSlug: 'doc' };

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'owner@mcp-versions.test');
  await createWorkspace(t, owner, { name: 'Launch', slug: 'launch', mode: 'doc', initialMarkdown: '# Launch\n\nFirst draft.\n' });
  agent = (await insertKey(t, owner, { role: 'editor', agentName: 'scribe' })) as typeof agent;
  mcp = await client(bearerOf(agent.as));
});

afterAll(async () => {
  await clients.closeAll();
  await t.close();
  await t.store.dispose();
});

async function call(name: string, args: Record<string, unknown>, by = mcp): Promise<ToolResult> {
  const result = await by.callTool({ name, arguments: args });
  if (!result.isError) expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(result.structuredContent);
  return result;
}

const output = async (name: string, args: Record<string, unknown>, by = mcp) => {
  const result = await call(name, args, by);
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, any>;
};

const rest = (method: string, path: string, body?: unknown) => t.request(method, path, { as: owner.as, body });
const docMarkdown = async () => (await rest('GET', `${base}/doc?format=markdown`)).body.markdown as string;

describe('a doc through the version tools', () => {
  let named: Record<string, any>;

  it('name_version, then list_versions answers what GET …/versions answers', async () => {
    named = await output('name_version', { ...doc, name: 'Before the rewrite' });
    expect(named).toMatchObject({ kind: 'named', name: 'Before the rewrite', createdBy: { principalType: 'agent', id: agent.agentId } });
    await output('replace_doc', { slug: 'launch', markdown: '# Launch\n\nRewritten by the scribe.\n' });

    const listed = await output('list_versions', doc);
    expect(listed).toEqual((await rest('GET', `${base}/surfaces/doc/versions`)).body);
    expect(listed.versions.map((v: any) => v.id)).toContain(named.id);
    const paged = await output('list_versions', { ...doc, limit: 1 });
    expect(paged.versions).toHaveLength(1);
    expect(paged.nextCursor).toEqual(expect.any(String));
  });

  it('get_version and compare_versions answer what their REST twins answer; the version token is in the result', async () => {
    const shown = await output('get_version', { ...doc, versionId: named.id, format: 'markdown' });
    const viaRest = await rest('GET', `${base}/surfaces/doc/versions/${named.id}?format=markdown`);
    expect(shown).toEqual(viaRest.body);
    expect(shown.markdown).toBe('# Launch\n\nFirst draft.\n');
    // REST sends the token as ETag; over MCP it is `version.etag`.
    expect(shown.version.etag).toBe(viaRest.headers.get('etag'));
    expect(await output('get_version', { ...doc, versionId: named.id })).toEqual((await rest('GET', `${base}/surfaces/doc/versions/${named.id}`)).body);

    const diff = await output('compare_versions', { ...doc, versionId: named.id });
    expect(diff).toEqual((await rest('GET', `${base}/surfaces/doc/versions/${named.id}/diff?to=current`)).body);
    expect(diff.diff.blocks).toEqual([expect.objectContaining({ op: 'changed', before: expect.objectContaining({ markdown: 'First draft.\n' }) })]);
    // `to.etag` is the current state's token (REST: GET /doc's ETag), a base for replace_doc.
    expect(diff.to.etag).toBe((await rest('GET', `${base}/doc`)).headers.get('etag'));
  });

  it('restore_version brings the old content back for the next REST read, attributed to the agent; restoring `undo` undoes it', async () => {
    const restored = await output('restore_version', { ...doc, versionId: named.id });
    expect(restored.restored.id).toBe(named.id);
    expect(await docMarkdown()).toBe('# Launch\n\nFirst draft.\n');
    const events = (await rest('GET', `${base}/events?action=version.restored`)).body.events;
    expect(events[0]).toMatchObject({ principal: { principalType: 'agent', id: agent.agentId }, data: { versionId: named.id, undoVersionId: restored.undo.id } });

    await output('restore_version', { ...doc, versionId: restored.undo.id });
    expect(await docMarkdown()).toBe('# Launch\n\nRewritten by the scribe.\n');
  });

  it('only editors may list or restore: a viewer’s or commenter’s key is refused (403) and nothing changes', async () => {
    for (const role of ['viewer', 'commenter'] as const) {
      const key = await insertKey(t, owner, { role, agentName: role });
      const limited = await client(bearerOf(key.as));
      expect(refusal(await call('restore_version', { ...doc, versionId: named.id }, limited)), role).toMatchObject({ error: { code: 'forbidden' }, status: 403 });
      expect(refusal(await call('list_versions', doc, limited)).status, role).toBe(403);
    }
    expect(await docMarkdown()).toBe('# Launch\n\nRewritten by the scribe.\n');
  });

  it('OAuth: the read scope lists versions; restoring needs write', async () => {
    const readOnly = await client((await grantTokens(t, owner.cookie, { grant: {} })).tokens.access_token);
    expect((await output('list_versions', doc, readOnly)).versions.length).toBeGreaterThan(1);
    expect(refusal(await call('restore_version', { ...doc, versionId: named.id }, readOnly))).toMatchObject({
      error: { code: 'forbidden', message: expect.stringContaining('"write" scope') },
      status: 403,
    });
    expect(await docMarkdown()).toBe('# Launch\n\nRewritten by the scribe.\n');
    const writer = await client((await grantTokens(t, owner.cookie)).tokens.access_token);
    await output('restore_version', { ...doc, versionId: named.id }, writer);
    expect(await docMarkdown()).toBe('# Launch\n\nFirst draft.\n');
  });

  it('hostile or wrong arguments are -32602 (or 404 for an unknown version) and change nothing', async () => {
    const before = await docMarkdown();
    for (const args of [
      { ...doc, versionId: 42 },
      { ...doc, versionId: ['a'] },
      { ...doc, versionId: 'x'.repeat(101) },
      { ...doc, versionId: named.id, force: true },
      { slug: 'launch', versionId: named.id },
      JSON.parse(`{"slug":"launch","surfaceSlug":"doc","versionId":"${named.id}","__proto__":{"role":"owner"}}`),
    ]) {
      const error = await rpcError(mcp.callTool({ name: 'restore_version', arguments: args }));
      expect(error.code, JSON.stringify(args)).toBe(-32602);
    }
    expect(refusal(await call('restore_version', { ...doc, versionId: 'ver_missing' })).status).toBe(404);
    expect(refusal(await call('restore_version', { slug: 'launch', surfaceSlug: 'nope', versionId: named.id })).status).toBe(404);
    expect(await docMarkdown()).toBe(before);
  });
});

describe('a sheet through the version tools', () => {
  it('restore_version brings back a row’s old cells, as GET /rows/{id} then shows', async () => {
    const row = await output('create_row', { slug: 'welcome', data: { title: 'Original title' } });
    const named = await output('name_version', { slug: 'welcome', surfaceSlug: 'table', name: 'Before edits' });
    expect((await rest('PATCH', `/api/workspaces/welcome/rows/${row.id}`, { data: { title: 'Changed over REST' } })).status).toBe(200);

    const shown = await output('get_version', { slug: 'welcome', surfaceSlug: 'table', versionId: named.id });
    expect(shown).toEqual((await rest('GET', `/api/workspaces/welcome/surfaces/table/versions/${named.id}`)).body);
    expect(shown.rows.find((r: any) => r.id === row.id).data.title).toBe('Original title');

    await output('restore_version', { slug: 'welcome', surfaceSlug: 'table', versionId: named.id });
    expect((await rest('GET', `/api/workspaces/welcome/rows/${row.id}`)).body.data.title).toBe('Original title');
  });
});
