import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Credential } from '../helpers/app';
import { addComment, auditEvents, rangeOf } from '../comments/helpers';
import { mcpClient } from '../oauth/helpers';
import { bearerOf, rpcError } from './helpers';
import { insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * The comment tools of the MCP endpoint through the SDK's own client, each
 * against its REST twin: same record, same events, same refusals.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: TestUser;
let agent: { as: Credential; agentId: string };
let viewer: { as: Credential; agentId: string };
let mcp: Client;
let readOnly: Client;
let workspaceId: string;
let rowId: string;

const rest = (method: string, path: string, body?: unknown) => t.request(method, path, { as: owner.as, body });

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'mcp-comments@example.com');
  agent = await insertKey(t, owner, { role: 'editor', agentName: 'reviewer' });
  viewer = await insertKey(t, owner, { role: 'viewer', agentName: 'onlooker' });
  mcp = await mcpClient(t, bearerOf(agent.as));
  readOnly = await mcpClient(t, bearerOf(viewer.as));
  workspaceId = (await rest('GET', '/api/workspaces/welcome')).body.id;
  rowId = (await rest('POST', '/api/workspaces/welcome/rows', { data: { title: 'Launch plan' } })).body.id;
});
afterAll(async () => {
  await mcp.close();
  await readOnly.close();
  await t.close();
  await t.store.dispose();
});

async function call(name: string, args: Record<string, unknown>, client = mcp) {
  const result = await client.callTool({ name, arguments: args });
  const text = JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
  if (!result.isError) expect(text).toEqual(result.structuredContent);
  return { isError: Boolean(result.isError), body: result.isError ? text : (result.structuredContent as any) };
}

/** A comment as GET /api/comments/{id} answers it to the owner. */
const restDetail = async (id: string) => (await rest('GET', `/api/comments/${id}`)).body;

describe('tools/list', () => {
  it('lists the comment tools with the schemas of their routes; reply_to_comment takes commentId and body', async () => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const fields = (name: string) => Object.keys(byName.get(name)?.inputSchema.properties ?? {}).sort();
    expect(fields('add_comment')).toEqual(['body', 'correlationId', 'mentions', 'orgSlug', 'parentId', 'run', 'slug', 'target']);
    expect(fields('list_comments')).toEqual(['author', 'limit', 'mentioning', 'offset', 'order', 'orgSlug', 'slug', 'status', 'surface', 'surfaceId', 'target_id', 'target_type']);
    expect(fields('get_comment_thread')).toEqual(['id', 'orgSlug', 'slug']);
    expect(fields('reply_to_comment')).toEqual(['body', 'commentId', 'correlationId', 'mentions', 'run']);
    expect(byName.get('reply_to_comment')!.inputSchema).toMatchObject({ required: ['commentId', 'body'], additionalProperties: false });
    expect(fields('resolve_comment')).toEqual(['id', 'orgSlug', 'slug']);
    expect(fields('unresolve_comment')).toEqual(['id', 'orgSlug', 'slug']);
    expect(fields('react_to_comment')).toEqual(['emoji', 'id', 'orgSlug', 'slug']);
    for (const name of ['list_comments', 'get_comment_thread']) expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(true);
    for (const name of ['add_comment', 'reply_to_comment', 'resolve_comment', 'unresolve_comment', 'react_to_comment']) {
      expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(false);
      expect(byName.get(name)!.outputSchema?.type, name).toBe('object');
    }
  });
});

describe('each comment tool runs what its REST route runs', () => {
  let threadId: string;

  it('add_comment: the record POST /comments answers, attributed to the agent, with comment.added', async () => {
    const added = await call('add_comment', { slug: 'welcome', target: { type: 'row', rowId }, body: 'Is Friday realistic?', correlationId: 'opt-1' });
    threadId = added.body.id;
    expect(added.body).toMatchObject({ targetType: 'row', targetId: rowId, parentId: null, authorId: agent.agentId, authorPrincipalType: 'agent', correlationId: 'opt-1', wakes: [] });
    const { wakes: _wakes, ...record } = added.body;
    expect(await restDetail(threadId)).toEqual({ ...record, replies: [] });
    const [event] = (await auditEvents(t, workspaceId, 'comment.added')).filter((e) => e.data.id === threadId);
    expect(event.principal).toMatchObject({ principalType: 'agent', id: agent.agentId });
  });

  it('reply_to_comment: answers by comment id alone; a reply to a reply joins the root, as POST /comments with parentId does', async () => {
    const reply = await call('reply_to_comment', { commentId: threadId, body: 'Yes, if QA starts Monday.' });
    expect(reply.body).toMatchObject({ parentId: threadId, target: { type: 'row', rowId }, authorId: agent.agentId, wakes: [] });
    const nested = await call('reply_to_comment', { commentId: reply.body.id, body: 'Agreed.' });
    expect(nested.body.parentId).toBe(threadId);
    const viaRest = await addComment(t, owner.as, 'welcome', { target: { type: 'row', rowId }, body: 'Over REST', parentId: threadId });

    const thread = await call('get_comment_thread', { id: threadId });
    expect(thread.body).toEqual(await restDetail(threadId));
    expect(thread.body.replies.map((r: { id: string }) => r.id)).toEqual([reply.body.id, nested.body.id, viaRest.id]);
    expect((await call('get_comment_thread', { id: reply.body.id, slug: 'welcome' })).body).toEqual(await restDetail(reply.body.id));
  });

  it('reply_to_comment finds the thread of a cell and of a doc range', async () => {
    const cell = await addComment(t, owner.as, 'welcome', { target: { type: 'cell', rowId, columnKey: 'status' }, body: 'Which status?' });
    const cellReply = await call('reply_to_comment', { commentId: cell.id, body: 'Doing.' });
    expect(cellReply.body).toMatchObject({ parentId: cell.id, target: { type: 'cell', rowId, columnKey: 'status' } });

    await rest('PUT', '/api/workspaces/welcome/doc', { markdown: 'We ship on Friday.' });
    const content = (await rest('GET', '/api/workspaces/welcome/doc')).body.content;
    const docSlug = (await rest('GET', '/api/workspaces/welcome')).body.surfaces.find((s: { kind: string }) => s.kind === 'doc').slug;
    const range = await addComment(t, owner.as, 'welcome', { target: { type: 'doc_range', surfaceSlug: docSlug, anchor: { ...rangeOf(content, 'Friday'), text: 'Friday' } }, body: 'Sure?' });
    const rangeReply = await call('reply_to_comment', { commentId: range.id, body: 'Sure.' });
    expect(rangeReply.body).toMatchObject({ parentId: range.id, targetType: 'doc_range', surfaceSlug: range.surfaceSlug, anchor: range.anchor });
  });

  it('list_comments: the page GET /comments answers, with the same filters', async () => {
    const listed = await call('list_comments', { slug: 'welcome', status: 'all', target_type: 'row', target_id: rowId });
    expect(listed.body).toEqual((await rest('GET', `/api/workspaces/welcome/comments?status=all&target_type=row&target_id=${rowId}`)).body);
    expect(listed.body.comments.length).toBe(4);
    const mine = await call('list_comments', { slug: 'welcome', author: 'me', limit: 1, order: 'newest' });
    expect(mine.body).toEqual({ comments: [expect.objectContaining({ authorId: agent.agentId })], nextOffset: 1 });
  });

  it('resolve_comment and unresolve_comment act on the thread, idempotently, with the REST events', async () => {
    const replyId = (await restDetail(threadId)).replies[0].id;
    const resolved = await call('resolve_comment', { id: replyId });
    expect(resolved.body).toMatchObject({ id: replyId, resolvedAt: expect.any(String), resolvedBy: { id: agent.agentId } });
    expect((await restDetail(threadId)).resolvedAt).toBe(resolved.body.resolvedAt);
    expect((await call('resolve_comment', { id: threadId })).body.resolvedAt).toBe(resolved.body.resolvedAt);
    expect((await auditEvents(t, workspaceId, 'comment.resolved')).filter((e) => e.data.id === threadId)).toHaveLength(1);

    const reopened = await call('unresolve_comment', { id: threadId, slug: 'welcome' });
    expect(reopened.body).toEqual({ ...(await restDetail(threadId)), replies: undefined });
    expect(reopened.body.resolvedAt).toBeNull();
    expect((await auditEvents(t, workspaceId, 'comment.unresolved')).filter((e) => e.data.id === threadId)).toHaveLength(1);

    // A reply reopens a resolved thread, as over REST.
    await call('resolve_comment', { id: threadId });
    await call('reply_to_comment', { commentId: threadId, body: 'One more thing.' });
    expect((await restDetail(threadId)).resolvedAt).toBeNull();
  });

  it('react_to_comment: one reaction per emoji and caller, as POST /reactions', async () => {
    const first = await call('react_to_comment', { id: threadId, emoji: '👍' });
    expect(first.body.reactions).toEqual([{ emoji: '👍', count: 1, principalIds: [agent.agentId] }]);
    expect((await call('react_to_comment', { id: threadId, emoji: '👍' })).body.reactions).toEqual(first.body.reactions);
    const both = (await rest('POST', `/api/comments/${threadId}/reactions`, { emoji: '👍' })).body;
    expect(both.reactions).toEqual([{ emoji: '👍', count: 2, principalIds: expect.arrayContaining([agent.agentId, owner.userId]) }]);
    const { replies: _replies, ...detail } = await restDetail(threadId);
    expect(detail).toEqual(both);
  });
});

describe('refusals', () => {
  const refusal = (result: Awaited<ReturnType<typeof call>>) => {
    expect(result.isError).toBe(true);
    return result.body;
  };

  it("a viewer's token reads comments but every comment write answers 403 forbidden, as over REST", async () => {
    expect((await call('list_comments', { slug: 'welcome' }, readOnly)).isError).toBeFalsy();
    const thread = (await call('list_comments', { slug: 'welcome', status: 'all', limit: 1 })).body.comments[0];
    expect((await call('get_comment_thread', { id: thread.id }, readOnly)).isError).toBeFalsy();
    const before = (await rest('GET', '/api/workspaces/welcome/comments?status=all&limit=200')).body.comments.length;
    for (const [name, args] of [
      ['add_comment', { slug: 'welcome', target: { type: 'workspace' }, body: 'no' }],
      ['reply_to_comment', { commentId: thread.id, body: 'no' }],
      ['resolve_comment', { id: thread.id }],
      ['unresolve_comment', { id: thread.id }],
      ['react_to_comment', { id: thread.id, emoji: '👀' }],
    ] as const) {
      expect(refusal(await call(name, args, readOnly)), name).toMatchObject({ error: { code: 'forbidden' }, status: 403 });
    }
    const rest403 = await t.request('POST', '/api/workspaces/welcome/comments', { as: viewer.as, body: { target: { type: 'workspace' }, body: 'no' } });
    expect(rest403.status).toBe(403);
    expect((await rest('GET', '/api/workspaces/welcome/comments?status=all&limit=200')).body.comments.length).toBe(before);
  });

  it("404 for a missing comment and for one in a workspace the caller cannot see; 400 for a target that is not the thread's", async () => {
    const stranger = await signInUser(t, 'mcp-comments-stranger@example.com');
    const theirs = await addComment(t, stranger.as, 'welcome', { target: { type: 'workspace' }, body: 'private' });
    for (const [name, args] of [
      ['reply_to_comment', { commentId: 'cmt_missing', body: 'hello' }],
      ['reply_to_comment', { commentId: theirs.id, body: 'hello' }],
      ['get_comment_thread', { id: theirs.id }],
      ['resolve_comment', { id: theirs.id }],
      ['react_to_comment', { id: theirs.id, emoji: '👀' }],
    ] as const) {
      expect(refusal(await call(name, args)), `${name} ${JSON.stringify(args)}`).toEqual({ error: { code: 'not_found', message: 'Comment not found.' }, status: 404 });
    }
    // The comment exists, but not in the workspace named.
    const ours = await addComment(t, owner.as, 'welcome', { target: { type: 'workspace' }, body: 'ours' });
    const other = await rest('POST', '/api/workspaces', { name: 'Elsewhere', slug: 'elsewhere', mode: 'table' });
    expect(other.status, other.text).toBe(200);
    expect(refusal(await call('get_comment_thread', { id: ours.id, slug: 'elsewhere' })).status).toBe(404);

    const mismatch = refusal(await call('add_comment', { slug: 'welcome', target: { type: 'row', rowId }, body: 'x', parentId: ours.id }));
    expect(mismatch).toMatchObject({ status: 400, error: { details: [{ path: ['target'], code: 'target_mismatch' }] } });
  });

  it('-32602 for a blank body, a missing commentId, an unknown field or an emoji with spaces', async () => {
    for (const [name, args, path] of [
      ['reply_to_comment', { commentId: 'cmt_x', body: '   ' }, ['body']],
      ['reply_to_comment', { body: 'hi' }, ['commentId']],
      ['reply_to_comment', { commentId: 'cmt_x', body: 'hi', parentId: 'cmt_y' }, []],
      ['react_to_comment', { id: 'cmt_x', emoji: 'a b' }, ['emoji']],
      ['add_comment', { slug: 'welcome', target: { type: 'row' }, body: 'x' }, ['target', 'rowId']],
    ] as const) {
      const error = await rpcError(mcp.callTool({ name, arguments: args as Record<string, unknown> }));
      expect(error.code, JSON.stringify(args)).toBe(-32602);
      expect((error.data as any).details[0].path, JSON.stringify(args)).toEqual(path);
    }
  });
});
