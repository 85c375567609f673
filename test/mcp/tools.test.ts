import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rowOperations } from '../../src/operations/rows';
import { toolFromOperation } from '../../src/mcp/registry';
import { tablesDocumentName } from '../../src/model/document-names';
import { serverOrigin } from '../../src/sync/origins';
import { insertRow } from '../../src/model/table/document';
import { ManualClock, startTestApp, type Credential } from '../helpers/app';
import { insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { mcpClient } from '../oauth/helpers';
import { bearerOf, rpcError } from './helpers';

/**
 * The MCP endpoint through the SDK's own Client and StreamableHTTPClientTransport:
 * every tool against its REST twin, every error code, metering and the
 * confirmation of dangerous tools.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock();
let owner: TestUser;
let editor: { as: Credential; agentId: string };
let mcp: Client;
const WRITES_PER_MINUTE = 20;


beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { API_WRITES_PER_MINUTE: String(WRITES_PER_MINUTE) },
    routes: (app) => {
      // How upgrade_plan and downgrade_plan will be declared: an operation, a message, and the registry does the rest.
      app.mcpTools.register(
        toolFromOperation('delete_row_confirmed', rowOperations.remove, {
          title: 'Delete a row, after confirmation',
          description: 'Test tool: delete_row behind the confirmation mechanism.',
          annotations: { readOnlyHint: false, destructiveHint: true },
          confirm: (args) => `Delete row ${String(args.id)} of ${String(args.slug)}?`,
        }),
      );
      app.mcpTools.register({
        name: 'explode',
        title: 'Fails',
        description: 'Test tool: an unexpected failure inside a tool.',
        input: z.strictObject({}),
        output: z.object({}),
        annotations: { readOnlyHint: true },
        run: async () => {
          throw new Error('secret database detail at /srv/db');
        },
      });
    },
  });
  owner = await signInUser(t, 'mcp-owner@example.com');
  editor = await insertKey(t, owner, { role: 'editor', agentName: 'assistant' });
  mcp = await mcpClient(t, bearerOf(editor.as));
});
afterAll(async () => {
  await mcp.close();
  await t.close();
  await t.store.dispose();
});
// Burst windows are sliding minutes on the test clock: each test starts with fresh budgets.
beforeEach(() => clock.advance(61_000));

async function call(name: string, args: Record<string, unknown>, client = mcp) {
  const result = await client.callTool({ name, arguments: args });
  expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(result.isError ? expect.anything() : result.structuredContent);
  return result;
}

const rest = (method: string, path: string, body?: unknown) => t.request(method, path, { as: owner.as, body });

describe('tools/list', () => {
  it('names the tools, each with the schemas of its REST route', async () => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // SPEC's fifteen, API-DECISIONS' core tools, and version history (issue 17).
    const spec = ['upgrade_plan', 'downgrade_plan', 'request_limit_increase', 'get_billing', 'create_support_ticket', 'add_comment', 'list_comments', 'get_comment_thread', 'reply_to_comment', 'resolve_comment', 'unresolve_comment', 'react_to_comment', 'move_rows', 'append_doc_section', 'list_workspaces'];
    const core = ['get_workspace', 'list_rows', 'create_row', 'update_row', 'bulk_update_rows', 'delete_row', 'get_doc', 'replace_doc', 'search'];
    const versions = ['list_versions', 'get_version', 'compare_versions', 'name_version', 'restore_version'];
    const runs = ['start_run', 'end_run', 'list_runs', 'get_run_changes', 'revert_run'];
    for (const name of [...spec, ...core, ...versions, ...runs]) expect(byName.has(name), name).toBe(true);
    const fields = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties ?? {}).sort();
    // Content writes name the run they join (docs/RUNS.md).
    expect(fields('create_row')).toEqual(['data', 'mode', 'orgSlug', 'run', 'slug', 'surface', 'surfaceId']);
    expect(fields('update_row')).toEqual(['baseVersion', 'data', 'id', 'mode', 'orgSlug', 'position', 'run', 'slug', 'surface', 'surfaceId']);
    expect(fields('list_rows')).toEqual(['after', 'fields', 'filter', 'from', 'limit', 'orgSlug', 'slug', 'sort', 'surface', 'surfaceId', 'to', 'view']);
    expect(fields('replace_doc')).toEqual(['baseVersion', 'content', 'markdown', 'mode', 'orgSlug', 'run', 'slug', 'surface', 'surfaceId']);
    expect(fields('delete_row')).toEqual(['id', 'mode', 'orgSlug', 'run', 'slug', 'surface', 'surfaceId']);
    expect(fields('accept_suggestion')).toEqual(['id', 'run']);
    expect(fields('start_run')).toEqual(['name', 'orgSlug', 'slug']);
    expect(fields('revert_run')).toEqual(['dryRun', 'orgSlug', 'runId', 'slug']);
    expect(byName.get('create_row')!.inputSchema).toMatchObject({ type: 'object', required: ['slug', 'data'], additionalProperties: false });
    expect(byName.get('move_rows')!.inputSchema.properties!.rowIds).toMatchObject({ type: 'array', maxItems: 500 });
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      const reads = ['list_workspaces', 'get_workspace', 'list_rows', 'query_rows', 'list_views', 'get_doc', 'list_comments', 'get_comment_thread', 'search', 'get_billing', 'list_versions', 'get_version', 'compare_versions', 'explode', 'export_rows_csv', 'list_suggestions', 'get_presence', 'list_runs', 'get_run_changes', 'list_columns', 'check_formula', 'export_doc'];
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(reads.includes(tool.name));
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
    }
    for (const name of ['delete_row', 'replace_doc', 'restore_version', 'revert_run']) expect(byName.get(name)!.annotations?.destructiveHint, name).toBe(true);
    // The plan tools take the organisation as `org` (the REST routes' ?org=) and, being dangerous, a confirm_token.
    expect(fields('upgrade_plan')).toEqual(['confirm_token', 'org', 'plan']);
    expect(fields('downgrade_plan')).toEqual(['confirm_token', 'org']);
    expect(fields('search')).toEqual(['kind', 'limit', 'offset', 'q']);
    expect(fields('restore_version')).toEqual(['orgSlug', 'run', 'slug', 'surfaceSlug', 'versionId']);
    expect(byName.get('upgrade_plan')!.description).toContain('confirmation_required');
    expect(byName.get('upgrade_plan')!.outputSchema!.anyOf).toHaveLength(2);
    expect(fields('delete_row_confirmed')).toContain('confirm_token');
  });
});

describe('each tool runs what its REST route runs', () => {
  let rowId: string;

  it('list_workspaces and get_workspace answer what GET /api/workspaces and /api/workspaces/{slug} answer', async () => {
    const listed = await call('list_workspaces', {});
    expect(listed.structuredContent).toEqual((await t.request('GET', '/api/workspaces', { as: editor.as })).body);
    const detail = await call('get_workspace', { slug: 'welcome' });
    expect(detail.structuredContent).toEqual((await t.request('GET', '/api/workspaces/welcome', { as: editor.as })).body);
    expect((detail.structuredContent as any).columns.map((c: any) => c.key)).toEqual(['title', 'status', 'notes']);
  });

  it('create_row, update_row, bulk_update_rows and list_rows; writes are attributed to the agent', async () => {
    const created = await call('create_row', { slug: 'welcome', data: { title: 'Plan the launch', status: 'todo' } });
    const row = created.structuredContent as any;
    rowId = row.id;
    expect(row).toMatchObject({ data: { title: 'Plan the launch', status: 'todo' }, createdByPrincipalId: editor.agentId });
    expect((await rest('GET', `/api/workspaces/welcome/rows/${rowId}`)).body).toEqual(row);

    const updated = await call('update_row', { slug: 'welcome', id: rowId, data: { status: 'doing' } });
    expect((updated.structuredContent as any).data).toEqual({ title: 'Plan the launch', status: 'doing' });

    const second = (await call('create_row', { slug: 'welcome', data: { title: 'Write the post' } })).structuredContent as any;
    const bulk = await call('bulk_update_rows', { slug: 'welcome', updates: [{ id: rowId, data: { status: 'done' } }, { id: second.id, data: { status: 'todo' } }] });
    expect((bulk.structuredContent as any).rows.map((r: any) => r.data.status)).toEqual(['done', 'todo']);

    const listed = await call('list_rows', { slug: 'welcome', sort: 'title' });
    expect(listed.structuredContent).toEqual((await rest('GET', '/api/workspaces/welcome/rows?sort=title')).body);
    // The same filter as the query string's filter[status][eq]=todo, and the JSON form through query_rows.
    const filtered = await call('list_rows', { slug: 'welcome', filter: { status: { eq: 'todo' } }, fields: 'title' });
    expect(filtered.structuredContent).toEqual((await rest('GET', '/api/workspaces/welcome/rows?filter[status][eq]=todo&fields=title')).body);
    expect((filtered.structuredContent as any).rows.map((r: any) => r.data)).toEqual([{ title: 'Write the post' }]);
    const queried = await call('query_rows', { slug: 'welcome', filter: { or: [{ column: 'status', op: 'in', value: ['done'] }] }, sort: [{ column: 'title', direction: 'desc' }] });
    expect((queried.structuredContent as any).rows.map((r: any) => r.data.title)).toEqual(['Plan the launch']);
    const wrong = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'welcome', filter: { nope: { eq: 'x' } } } });
    expect(wrong.isError).toBe(true);
    expect(JSON.stringify(wrong.content)).toContain('nope');
    const events = (await rest('GET', '/api/workspaces/welcome/events?action=row.updated')).body.events;
    expect(events[0].principal).toMatchObject({ principalType: 'agent', id: editor.agentId, name: 'assistant' });
  });

  it('move_rows and delete_row', async () => {
    expect((await rest('POST', '/api/workspaces/welcome/surfaces', { kind: 'table', slug: 'archive', name: 'Archive' })).status).toBe(200);
    const moved = await call('move_rows', { slug: 'welcome', rowIds: [rowId], surface: 'archive' });
    expect(moved.structuredContent).toEqual({ moved: [rowId], skipped: 0 });
    const archive = await call('list_rows', { slug: 'welcome', surface: 'archive' });
    expect((archive.structuredContent as any).rows.map((r: any) => r.id)).toEqual([rowId]);

    expect((await call('delete_row', { slug: 'welcome', id: rowId })).structuredContent).toEqual({ ok: true });
    expect((await rest('GET', `/api/workspaces/welcome/rows/${rowId}`)).status).toBe(404);
  });

  it('replace_doc, append_doc_section and get_doc in each format', async () => {
    const replaced = await call('replace_doc', { slug: 'welcome', markdown: '# Launch\n\nWe ship on *Friday*.' });
    expect((replaced.structuredContent as any).content.type).toBe('doc');
    const appended = await call('append_doc_section', { slug: 'welcome', markdown: '## Risks\n\n- the weather' });
    expect((appended.structuredContent as any).appendedBlocks).toBe(2);

    const markdown = await call('get_doc', { slug: 'welcome', format: 'markdown' });
    expect(markdown.structuredContent).toEqual((await rest('GET', '/api/workspaces/welcome/doc?format=markdown')).body);
    expect((markdown.structuredContent as any).markdown).toBe('# Launch\n\nWe ship on *Friday*.\n\n## Risks\n\n- the weather\n');
    const text = await call('get_doc', { slug: 'welcome', format: 'text' });
    expect((text.structuredContent as any).text).toContain('We ship on Friday.');
    const json = await call('get_doc', { slug: 'welcome' });
    expect(json.structuredContent).toEqual((await rest('GET', '/api/workspaces/welcome/doc')).body);
  });
});

describe('what the API refuses is an isError result with the REST error body', () => {
  it('404 for a workspace the caller cannot see, 403 for a role that cannot write, 422 for a value the column refuses', async () => {
    const missing = await call('get_workspace', { slug: 'no-such-workspace' });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content as any)[0].text)).toEqual({ error: { code: 'not_found', message: 'Workspace not found.' }, status: 404 });

    const viewer = await insertKey(t, owner, { role: 'viewer', agentName: 'reader' });
    const readOnly = await mcpClient(t, bearerOf(viewer.as));
    const refused = await call('create_row', { slug: 'welcome', data: { title: 'no' } }, readOnly);
    expect(JSON.parse((refused.content as any)[0].text)).toMatchObject({ error: { code: 'forbidden' }, status: 403 });
    await readOnly.close();

    const invalid = await call('create_row', { slug: 'welcome', data: { status: 'not-an-option' } });
    expect(JSON.parse((invalid.content as any)[0].text)).toMatchObject({ error: { code: 'validation', details: [{ path: ['data', 'status'] }] }, status: 422 });
  });
});

describe('JSON-RPC errors', () => {
  it('-32601 for an unknown tool or method', async () => {
    const tool = await rpcError(mcp.callTool({ name: 'drop_database', arguments: {} }));
    expect(tool.code).toBe(-32601);
    const method = await rpcError(mcp.request({ method: 'resources/list', params: {} }, z.object({})));
    expect(method.code).toBe(-32601);
  });

  it('-32602 for a missing argument, a wrong type, an unknown field or an out-of-range value, naming the field', async () => {
    for (const [args, path] of [
      [{ slug: 'welcome' }, ['data']],
      [{ slug: 'welcome', data: 'a string' }, ['data']],
      [{ slug: 'welcome', data: {}, colour: 'red' }, []],
      [{ slug: 42, data: {} }, ['slug']],
    ] as const) {
      const error = await rpcError(mcp.callTool({ name: 'create_row', arguments: args as Record<string, unknown> }));
      expect(error.code, JSON.stringify(args)).toBe(-32602);
      expect((error.data as any).details[0].path, JSON.stringify(args)).toEqual(path);
    }
    const tooMany = await rpcError(mcp.callTool({ name: 'move_rows', arguments: { slug: 'welcome', rowIds: Array.from({ length: 501 }, (_, i) => `r${i}`), surface: 'archive' } }));
    expect(tooMany.code).toBe(-32602);
  });

  it('-32603 for an unexpected failure, without its detail', async () => {
    const error = await rpcError(mcp.callTool({ name: 'explode', arguments: {} }));
    expect(error.code).toBe(-32603);
    expect(error.message).not.toContain('secret');
    expect(error.message).not.toContain('/srv');
  });

  it('-32001 with HTTP 401 for a missing, unknown or revoked token, and for a browser session', async () => {
    const list = { jsonrpc: '2.0', id: 'x', method: 'tools/list' };
    const headers = { accept: 'application/json, text/event-stream' };
    const key = await insertKey(t, owner, { role: 'viewer', agentName: 'soon-revoked' });
    expect((await t.request('POST', '/api/mcp', { as: key.as, headers, body: list })).status).toBe(200);
    await t.services.db.updateTable('apiKeys').set({ revokedAt: new Date() }).where('agentId', '=', key.agentId).execute();
    for (const as of [undefined, { bearer: 'svc_live_unknown' }, { bearer: 'oat_unknown' }, key.as, { cookie: owner.cookie }] as Array<Credential | undefined>) {
      const res = await t.request('POST', '/api/mcp', { as, headers, body: list });
      expect(res.status, JSON.stringify(as)).toBe(401);
      // A token refused before the body is read answers id null, as JSON-RPC allows when the id is not known yet.
      expect(res.body, JSON.stringify(as)).toEqual({ jsonrpc: '2.0', id: as && 'bearer' in as ? null : 'x', error: { code: -32001, message: expect.any(String) } });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"/);
    }
    expect((await t.request('POST', '/api/mcp', { as: key.as, headers, body: list })).headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('-32700 for a body that is not JSON and -32600 for one that is not JSON-RPC; GET and DELETE are 405', async () => {
    const headers = { accept: 'application/json, text/event-stream', authorization: `Bearer ${bearerOf(editor.as)}` };
    const notJson = await t.request('POST', '/api/mcp', { rawBody: '{"jsonrpc": ', headers: { ...headers, 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe(-32700);
    const notRpc = await t.request('POST', '/api/mcp', { headers, body: { hello: 'world' } });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBe(-32600);
    expect((await t.request('GET', '/api/mcp', { headers })).status).toBe(405);
    expect((await t.request('DELETE', '/api/mcp', { headers })).status).toBe(405);
  });

  it('-32015 with the plan data once the monthly API cap is reached, for tools that write; tools/list and read tools still answer', async () => {
    const capped = await signInUser(t, 'capped-mcp@example.com');
    // The organisation's stored usage is read the first time it is seen this month.
    await t.services.db.insertInto('apiUsage').values({ orgId: capped.orgId, period: clock.now().toISOString().slice(0, 7), calls: 10_000 }).execute();
    const key = await insertKey(t, capped, { role: 'editor' });
    const client = await mcpClient(t, bearerOf(key.as));
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    expect((await client.callTool({ name: 'list_workspaces', arguments: {} })).isError).toBeFalsy();
    const error = await rpcError(client.callTool({ name: 'create_row', arguments: { slug: 'welcome', data: { title: 'One call too many' } } }));
    expect(error.code).toBe(-32015);
    expect(error.data).toMatchObject({
      plan: 'free',
      limit: 'api_calls',
      // The read above answered and was counted.
      active: 10_001,
      cap: 10_000,
      upgrade: { mcpTool: 'upgrade_plan', api: 'POST /api/billing/upgrade', plan: 'pro' },
      increase: { mcpTool: 'request_limit_increase' },
    });
    await client.close();
  });

  it('-32015 when a write meets a plan cap (500 rows per workspace on free)', async () => {
    const workspace = await t.services.db.selectFrom('workspaces').select('id').where('orgId', '=', owner.orgId).where('slug', '=', 'welcome').executeTakeFirstOrThrow();
    const surface = await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', workspace.id).where('slug', '=', 'table').executeTakeFirstOrThrow();
    const present = (await rest('GET', '/api/workspaces/welcome/rows?limit=1000')).body.rows.length;
    await t.services.sync.transact(tablesDocumentName(workspace.id), serverOrigin({ principalType: 'user', id: owner.userId, name: 'owner', avatarUrl: null }, 'system'), (doc) => {
      for (let i = present; i < 500; i++) insertRow(doc, { id: `fill-${i}`, surfaceId: surface.id, data: { title: `fill ${i}` } }, null);
    });
    const error = await rpcError(mcp.callTool({ name: 'create_row', arguments: { slug: 'welcome', data: { title: 'one too many' } } }));
    expect(error.code).toBe(-32015);
    expect(error.data).toMatchObject({ plan: 'free', limit: 'rows', active: 500, cap: 500 });
    // Edits of existing rows keep working at the cap.
    expect((await call('update_row', { slug: 'welcome', id: 'fill-499', data: { status: 'done' } })).isError).toBeFalsy();
  });
});

describe('limits', () => {
  it('a tools/call counts against the monthly API cap like a REST call; tools/list does not', async () => {
    const headers = { accept: 'application/json, text/event-stream', authorization: `Bearer ${bearerOf(editor.as)}` };
    const post = (body: unknown) => t.request('POST', '/api/mcp', { headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body });
    const used = async (body: unknown) => Number((await post(body)).headers.get('x-ratelimit-monthly-used'));
    const before = await used({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const afterList = await used({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(afterList).toBe(before);
    const afterCall = await used({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_workspaces', arguments: {} } });
    expect(afterCall).toBe(before + 1);
  });

  it('writes share the 300-a-minute write budget (here 20) of the key; reads over MCP do not use it', async () => {
    const key = await insertKey(t, owner, { role: 'editor', agentName: 'busy' });
    const client = await mcpClient(t, bearerOf(key.as));
    for (let i = 0; i < WRITES_PER_MINUTE + 1; i++) expect((await client.callTool({ name: 'list_workspaces', arguments: {} })).isError).toBeFalsy();
    for (let i = 0; i < WRITES_PER_MINUTE; i++) await client.callTool({ name: 'update_row', arguments: { slug: 'welcome', id: 'fill-1', data: { notes: `n${i}` } } });
    const error = await rpcError(client.callTool({ name: 'update_row', arguments: { slug: 'welcome', id: 'fill-1', data: { notes: 'one more' } } }));
    expect(error.code).toBe(-32029);
    expect(error.data).toMatchObject({ code: 'rate_limited', endpoint: 'api_writes', limit: WRITES_PER_MINUTE, window: '1m' });
    await client.close();
  });
});

describe('confirmation of dangerous tools', () => {
  const args = { slug: 'welcome', id: 'fill-10' };
  const confirmation = async (client = mcp, input: Record<string, unknown> = args) => {
    const first = await call('delete_row_confirmed', input, client);
    expect(first.structuredContent).toEqual({ status: 'confirmation_required', confirm_token: expect.stringMatching(/^cfm_/), message: 'Delete row fill-10 of welcome?', expires_in: 60 });
    return (first.structuredContent as any).confirm_token as string;
  };
  const refusal = (result: Awaited<ReturnType<typeof call>>) => {
    expect(result.isError).toBe(true);
    return JSON.parse((result.content as any)[0].text).error.code;
  };
  const rowExists = async () => (await rest('GET', '/api/workspaces/welcome/rows/fill-10')).status === 200;

  it('acts only when repeated with the token, which then no longer works', async () => {
    const token = await confirmation();
    expect(await rowExists()).toBe(true);
    // Bound to the arguments: another row's id does not use it up.
    expect(refusal(await call('delete_row_confirmed', { slug: 'welcome', id: 'fill-11', confirm_token: token }))).toBe('invalid_confirmation');
    expect((await call('delete_row_confirmed', { ...args, confirm_token: token })).structuredContent).toEqual({ ok: true });
    expect(await rowExists()).toBe(false);
    expect(refusal(await call('delete_row_confirmed', { ...args, confirm_token: token }))).toBe('invalid_confirmation');
  });

  it('expires after 60 seconds', async () => {
    const input = { slug: 'welcome', id: 'fill-12' };
    const first = await call('delete_row_confirmed', input);
    const token = (first.structuredContent as any).confirm_token;
    clock.advance(60_001);
    expect(refusal(await call('delete_row_confirmed', { ...input, confirm_token: token }))).toBe('invalid_confirmation');
    const fresh = (await call('delete_row_confirmed', input)).structuredContent as any;
    clock.advance(59_000);
    expect((await call('delete_row_confirmed', { ...input, confirm_token: fresh.confirm_token })).structuredContent).toEqual({ ok: true });
  });

  it('is bound to the caller: another key cannot use it', async () => {
    const input = { slug: 'welcome', id: 'fill-13' };
    const token = ((await call('delete_row_confirmed', input)).structuredContent as any).confirm_token;
    const other = await insertKey(t, owner, { role: 'editor', agentName: 'other' });
    const otherClient = await mcpClient(t, bearerOf(other.as));
    expect(refusal(await call('delete_row_confirmed', { ...input, confirm_token: token }, otherClient))).toBe('invalid_confirmation');
    await otherClient.close();
    expect((await call('delete_row_confirmed', { id: 'fill-13', slug: 'welcome', confirm_token: token })).structuredContent).toEqual({ ok: true });
  });
});
