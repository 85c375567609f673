import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { startTestApp } from '../helpers/app';
import { connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { addMember, elevateForKeys, mint, signInPerson, type Person } from '../keys/fixtures';
import { checkedClients } from '../mcp/helpers';

/**
 * Presence on one instance (docs/SYNC.md, "Presence"): who has a surface's
 * document open over /api/sync, as GET /presence and the get_presence tool
 * answer it.
 */
let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: Person;
let editor: Person;
let workspaceId: string;
let tableSurfaceId: string;
let docSurfaceId: string;
let agent: { secret: string; agentId: string };
/** By id: every person has a workspace named `welcome` in their own org. */
let base = '/api/workspaces/welcome';
const clients: SyncClient[] = [];
const mcp = checkedClients(() => t);

type Entry = { principal: { id: string; principalType: string; name: string }; since: string; connections: number; owner?: { id: string }; cursor?: unknown };

function open(name: string, credential: { cookie?: string; token?: string }) {
  const client = connectClient(t.url, name, credential);
  clients.push(client);
  return client;
}

async function presence(as: Person['as'], query: string): Promise<Entry[]> {
  const res = await t.request('GET', `${base}/presence?${query}`, { as });
  expect(res.status, res.text).toBe(200);
  return res.body.present as Entry[];
}

const ids = (entries: Entry[]) => entries.map((e) => e.principal.id).sort();

beforeAll(async () => {
  // With TEST_REDIS_URL, through the Redis source as a deployment of several instances runs it (its own part read live, the others' from Redis).
  const redis = process.env.TEST_REDIS_URL;
  t = await startTestApp(redis ? { env: { REDIS_URL: redis, REDIS_PREFIX: `trellis-test-${randomBytes(4).toString('hex')}:` } } : {});
  owner = await signInPerson(t, 'owner@presence.test');
  editor = await signInPerson(t, 'editor@presence.test');
  const detail = await t.request('GET', base, { as: owner.as });
  workspaceId = detail.body.id;
  base = `/api/workspaces/${workspaceId}`;
  tableSurfaceId = detail.body.primarySurface.id;
  await addMember(t, workspaceId, editor.userId, 'editor');
  // The first doc write creates the workspace's doc surface.
  const doc = await t.request('PUT', `${base}/doc`, { as: owner.as, body: { markdown: 'Hello world' } });
  expect(doc.status, doc.text).toBe(200);
  docSurfaceId = doc.body.surfaceId;
  await elevateForKeys(t, owner);
  const minted = await mint(t, owner, { scopeSlug: 'welcome', role: 'editor', agentName: 'planner' });
  agent = { secret: minted.secret, agentId: minted.key.agent.id };
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await mcp.closeAll();
  await t.close();
  await t.store.dispose();
});

describe('presence on one instance', () => {
  it('lists two people and an agent key on a table, with since, connections and the agent’s owner, and forgets whoever disconnects', async () => {
    const tables = tablesDocumentName(workspaceId);
    const before = Date.now();
    const ownerTabs = [open(tables, { cookie: owner.cookie }), open(tables, { cookie: owner.cookie })];
    const editorTab = open(tables, { cookie: editor.cookie });
    const agentClient = open(tables, { token: agent.secret });
    await Promise.all([...ownerTabs, editorTab, agentClient].map((c) => synced(c)));

    const present = await eventually(async () => {
      const entries = await presence(owner.as, `surfaceId=${tableSurfaceId}`);
      return entries.length === 3 ? entries : null;
    });
    expect(ids(present)).toEqual([owner.userId, editor.userId, agent.agentId].sort());
    const byId = new Map(present.map((e) => [e.principal.id, e]));
    expect(byId.get(owner.userId)).toMatchObject({ principal: { principalType: 'user' }, connections: 2 });
    expect(byId.get(owner.userId)!.owner).toBeUndefined();
    expect(byId.get(editor.userId)).toMatchObject({ principal: { principalType: 'user' }, connections: 1 });
    expect(byId.get(agent.agentId)).toMatchObject({ principal: { principalType: 'agent', name: 'planner' }, connections: 1, owner: { id: owner.userId } });
    for (const entry of present) {
      expect(Date.parse(entry.since)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(entry.since)).toBeLessThanOrEqual(Date.now());
    }
    // The same list without naming the surface (the primary one is the table).
    expect(ids(await presence(owner.as, ''))).toEqual(ids(present));
    // Nobody has the doc open.
    expect(await presence(owner.as, `surfaceId=${docSurfaceId}`)).toEqual([]);

    agentClient.destroy();
    ownerTabs[0]!.destroy();
    const after = await eventually(async () => {
      const entries = await presence(owner.as, `surfaceId=${tableSurfaceId}`);
      return entries.length === 2 && entries.find((e) => e.principal.id === owner.userId)?.connections === 1 ? entries : null;
    });
    expect(ids(after)).toEqual([owner.userId, editor.userId].sort());
    ownerTabs[1]!.destroy();
    editorTab.destroy();
    await eventually(async () => (await presence(owner.as, `surfaceId=${tableSurfaceId}`)).length === 0);
  });

  it('describes the active table cell and the doc selection a client shares in its awareness state', async () => {
    const tables = open(tablesDocumentName(workspaceId), { cookie: editor.cookie });
    const doc = open(`${workspaceId}/doc/${docSurfaceId}`, { cookie: owner.cookie });
    await Promise.all([synced(tables), synced(doc)]);
    tables.provider.awareness!.setLocalStateField('cell', { surfaceId: tableSurfaceId, rowId: 'row-1', key: 'title' });
    // As y-prosemirror's cursor plugin shares a selection: relative positions inside the first paragraph's text ("Hello world").
    const text = paragraphText(doc.doc, 0);
    doc.provider.awareness!.setLocalStateField('cursor', {
      anchor: Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text, 0)),
      head: Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text, 5)),
    });

    const onTable = await eventually(async () => {
      const [entry] = await presence(owner.as, `surfaceId=${tableSurfaceId}`);
      return entry?.cursor ? entry : null;
    });
    expect(onTable).toMatchObject({ principal: { id: editor.userId }, cursor: { type: 'cell', rowId: 'row-1', column: 'title' } });
    const onDoc = await eventually(async () => {
      const [entry] = await presence(editor.as, `surfaceId=${docSurfaceId}`);
      return entry?.cursor ? entry : null;
    });
    // Positions of the body as GET /doc returns it: the paragraph opens at 0, its text starts at 1.
    expect(onDoc).toMatchObject({ principal: { id: owner.userId }, cursor: { type: 'doc', anchor: 1, head: 6 } });
    const body = await t.request('GET', `${base}/doc?surfaceId=${docSurfaceId}&format=text`, { as: owner.as });
    expect(body.body.text.slice(0, 5)).toBe('Hello');

    // A cell on another sheet says nothing about where on this one.
    tables.provider.awareness!.setLocalStateField('cell', { surfaceId: 'another-sheet', rowId: 'row-1', key: 'title' });
    await eventually(async () => {
      const [entry] = await presence(owner.as, `surfaceId=${tableSurfaceId}`);
      return entry && !entry.cursor;
    });
    tables.destroy();
    doc.destroy();
    await eventually(async () => (await presence(owner.as, `surfaceId=${docSurfaceId}`)).length === 0);
  });

  it('lets a viewer read presence, and answers 404 for a key of another workspace and for a surface that does not exist', async () => {
    const viewer = await signInPerson(t, 'viewer@presence.test');
    await addMember(t, workspaceId, viewer.userId, 'viewer');
    const viewing = open(tablesDocumentName(workspaceId), { cookie: viewer.cookie });
    await synced(viewing);
    const seen = await eventually(async () => {
      const entries = await presence(viewer.as, `surfaceId=${tableSurfaceId}`);
      return entries.length === 1 ? entries : null;
    });
    expect(seen[0]!.principal.id).toBe(viewer.userId);

    const stranger = await signInPerson(t, 'stranger@presence.test');
    await elevateForKeys(t, stranger);
    const strangerKey = await mint(t, stranger, { scopeSlug: 'welcome', role: 'editor', agentName: 'elsewhere' });
    const refused = await t.request('GET', `/api/workspaces/${workspaceId}/presence?surfaceId=${tableSurfaceId}`, { as: strangerKey.as });
    expect(refused.status).toBe(404);
    expect(refused.text).not.toContain(viewer.userId);
    // The same through the canonical form of the URL, for a member.
    const canonical = await t.request('GET', `/api/orgs/${owner.orgSlug}/workspaces/welcome/presence?surfaceId=${tableSurfaceId}`, { as: viewer.as });
    expect(canonical.status).toBe(200);
    expect(ids(canonical.body.present)).toEqual([viewer.userId]);
    expect((await t.request('GET', `${base}/presence?surface=no-such-surface`, { as: owner.as })).status).toBe(404);
    expect((await t.request('GET', `${base}/presence?surfaceId=${tableSurfaceId}`, {})).status).toBe(401);
    viewing.destroy();
    await eventually(async () => (await presence(owner.as, `surfaceId=${tableSurfaceId}`)).length === 0);
  });

  it('answers get_presence over MCP as REST answers it', async () => {
    const client: Client = await mcp.open(agent.secret);
    const person = open(tablesDocumentName(workspaceId), { cookie: editor.cookie });
    await synced(person);
    const rest = await eventually(async () => {
      const entries = await presence(owner.as, `surfaceId=${tableSurfaceId}`);
      return entries.length === 1 ? entries : null;
    });
    const result = await client.callTool({ name: 'get_presence', arguments: { slug: workspaceId, surfaceId: tableSurfaceId } });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toEqual({ present: rest });
    expect(rest[0]).toMatchObject({ principal: { id: editor.userId, principalType: 'user' }, connections: 1 });
    const tool = (await client.listTools()).tools.find((tool) => tool.name === 'get_presence');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true });
    person.destroy();
  });
});
