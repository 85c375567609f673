import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { bearerOf, checkedClients, refusal, type ToolResult } from './helpers';

/**
 * The saved-view tools through the SDK's own client (which checks every
 * result against the tool's outputSchema): each answers what its REST twin
 * answers, and a viewer's key may list views but not save one.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let editor: Client;
let viewer: Client;
const clients = checkedClients(() => t);
const base = '/api/workspaces/agents-views';

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'owner@mcp-views.test');
  await createWorkspace(t, owner, { name: 'Agents views', slug: 'agents-views', mode: 'table' });
  editor = await clients.open(bearerOf((await insertKey(t, owner, { role: 'editor', agentName: 'planner' })).as));
  viewer = await clients.open(bearerOf((await insertKey(t, owner, { role: 'viewer', agentName: 'reader' })).as));
});

afterAll(async () => {
  await clients.closeAll();
  await t.close();
  await t.store.dispose();
});

async function output(by: Client, name: string, args: Record<string, unknown>) {
  const result: ToolResult = await by.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, any>;
}

describe('saved-view tools', () => {
  it('create_view, list_views, update_view and delete_view answer what REST answers', async () => {
    const { view } = await output(editor, 'create_view', {
      slug: 'agents-views',
      name: 'My open work',
      filter: { and: [{ column: 'status', op: 'neq', value: 'done' }] },
      sort: [{ column: 'title', direction: 'asc' }],
    });
    expect(view).toMatchObject({ name: 'My open work', kind: 'grid', filter: { and: [{ column: 'status', op: 'neq', value: 'done' }] } });
    const rest = await t.request('GET', `${base}/views`, { as: owner.as });
    expect(rest.body.views).toEqual([view]);
    expect(await output(editor, 'list_views', { slug: 'agents-views' })).toEqual(rest.body);

    const updated = await output(editor, 'update_view', { slug: 'agents-views', id: view.id, kind: 'board', groupBy: 'status' });
    expect(updated.view).toEqual({ ...view, kind: 'board', groupBy: 'status' });
    expect(await output(editor, 'delete_view', { slug: 'agents-views', id: view.id })).toEqual({ ok: true });
    expect((await t.request('GET', `${base}/views`, { as: owner.as })).body.views).toEqual([]);
  });

  it('refuses a board without a status column (422) and a viewer’s write (403), and lets the viewer list', async () => {
    const board = refusal(await editor.callTool({ name: 'create_view', arguments: { slug: 'agents-views', name: 'Lanes', kind: 'board', groupBy: 'title' } }));
    expect(board).toMatchObject({ status: 422, error: { code: 'validation' } });
    const write = refusal(await viewer.callTool({ name: 'create_view', arguments: { slug: 'agents-views', name: 'Mine' } }));
    expect(write).toMatchObject({ status: 403, error: { code: 'forbidden' } });
    expect(await output(viewer, 'list_views', { slug: 'agents-views' })).toEqual({ views: [] });
  });
});
