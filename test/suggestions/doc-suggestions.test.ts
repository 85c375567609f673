import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { bearerOf, checkedClients, refusal, type ToolResult } from '../mcp/helpers';
import { addMembership, createWorkspace, elevate, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Suggestions on docs (issue 25, docs/SUGGESTIONS.md) from outside: an
 * agent's suggestion reaches a second client live, survives a person's
 * concurrent edit of the same paragraph, and is accepted or rejected with
 * the right text on every client, over REST and in Markdown; a suggest-only
 * key cannot make a plain change over REST, MCP or sync.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let cy: TestUser;
let agent: { as: { bearer: string }; agentId: string };
let suggester: { as: { bearer: string }; agentId: string };
const clients: SyncClient[] = [];
const mcp = checkedClients(() => t);

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@suggest.test');
  cy = await signInUser(t, 'cy@suggest.test');
  agent = (await insertKey(t, ada, { role: 'editor', agentName: 'drafter' })) as typeof agent;
  suggester = (await insertKey(t, ada, { role: 'editor', agentName: 'proposer', suggestOnly: true })) as typeof suggester;
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await mcp.closeAll();
  await t.close();
  await t.store.dispose();
});

async function docWorkspace(slug: string, markdown: string) {
  const ws = await createWorkspace(t, ada, { name: slug, slug, mode: 'doc', initialMarkdown: markdown });
  return { id: ws.id as string, surfaceId: ws.primarySurface.id as string, documentName: ws.primarySurface.syncDocument as string, base: `/api/workspaces/${slug}` };
}

function connect(documentName: string, credential: { token?: string; cookie?: string }) {
  const client = connectClient(t.url, documentName, credential);
  clients.push(client);
  return client;
}

async function markdownOf(base: string, include = false) {
  const res = await t.request('GET', `${base}/doc?format=markdown${include ? '&suggestions=include' : ''}`, { as: ada.as });
  expect(res.status, res.text).toBe(200);
  return res.body.markdown as string;
}

async function eventsOf(workspaceId: string, event: string) {
  const rows = await t.services.db.selectFrom('events').select(['record']).where('workspaceId', '=', workspaceId).where('event', '=', event).orderBy('seq').execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record));
}

/** The text of a client's doc as plain text, marks ignored (a suggestion's inserted and removed text both show). */
function clientText(client: SyncClient): string {
  return client.doc
    .getXmlFragment('default')
    .toArray()
    .map((block) => (block instanceof Y.XmlElement ? block.toArray().map((child) => (child instanceof Y.XmlText ? child.toString().replace(/<[^>]+>/g, '') : '')).join('') : ''))
    .join('\n');
}

/** Whether a client's doc holds text marked as a suggestion with this id. */
function holdsSuggestion(client: SyncClient, id: string): boolean {
  for (const block of client.doc.getXmlFragment('default').toArray()) {
    if (!(block instanceof Y.XmlElement)) continue;
    for (const child of block.toArray()) {
      if (!(child instanceof Y.XmlText)) continue;
      for (const op of child.toDelta() as Array<{ attributes?: Record<string, { id?: string }> }>) {
        const attrs = op.attributes ?? {};
        if (attrs.suggestInsert?.id === id || attrs.suggestDelete?.id === id) return true;
      }
    }
  }
  return false;
}

describe('an agent suggests a change to a doc', () => {
  it('is held, not applied: 202, GET /doc unchanged, the suggestion listed, shown with suggestions=include, live on a second client', async () => {
    const ws = await docWorkspace('proposal', '# Plan\n\nShip the beta on Monday.\n');
    const watcher = connect(ws.documentName, { cookie: ada.cookie });
    await synced(watcher);

    const put = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: agent.as, body: { markdown: '# Plan\n\nShip the beta on Friday.\n' } });
    expect(put.status, put.text).toBe(202);
    const suggestion = put.body.suggestion;
    expect(suggestion).toMatchObject({ surfaceId: ws.surfaceId, target: 'doc', status: 'open', author: { principalType: 'agent', id: agent.agentId, name: 'drafter' } });
    expect(suggestion.inserted).toContain('Fri');
    expect(suggestion.removed).toContain('Mon');
    expect(suggestion.summary).toContain('Fri');

    expect(await markdownOf(ws.base)).toBe('# Plan\n\nShip the beta on Monday.\n');
    const included = await markdownOf(ws.base, true);
    expect(included).toContain('{++');
    expect(included).toContain('{--');

    const listed = await t.request('GET', `${ws.base}/suggestions`, { as: ada.as });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.suggestions).toHaveLength(1);
    expect(listed.body.suggestions[0]).toMatchObject({ id: suggestion.id, status: 'open', context: expect.any(Object) });

    await eventually(() => holdsSuggestion(watcher, suggestion.id));

    const created = await eventsOf(ws.id, 'suggestion.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ principal: { id: agent.agentId }, data: { suggestionId: suggestion.id, surfaceId: ws.surfaceId, target: 'doc' } });

    // The workspace's owner hears of it in the inbox.
    const inbox = await t.services.db.selectFrom('inboxMessages').selectAll().where('recipientId', '=', ada.userId).where('kind', '=', 'suggestion').execute();
    expect(inbox).toHaveLength(1);
  });

  it('survives a person typing in the same paragraph, and accepting it gives the same text on every client, over REST and in Markdown', async () => {
    const ws = await docWorkspace('concurrent', '# Notes\n\nThe meeting is at noon.\n');
    const person = connect(ws.documentName, { cookie: ada.cookie });
    const other = connect(ws.documentName, { cookie: ada.cookie });
    await Promise.all([synced(person), synced(other)]);

    const put = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: agent.as, body: { markdown: '# Notes\n\nThe meeting is at three.\n' } });
    expect(put.status, put.text).toBe(202);
    // Concurrently (before the person has seen it is irrelevant to a CRDT; the edit lands in the same paragraph), the person adds text at its start.
    paragraphText(person.doc, 1).insert(0, 'Reminder: ');
    await acknowledged(person);
    await eventually(() => holdsSuggestion(person, put.body.suggestion.id) && holdsSuggestion(other, put.body.suggestion.id));

    expect(await markdownOf(ws.base)).toBe('# Notes\n\nReminder: The meeting is at noon.\n');

    const accepted = await t.request('POST', `/api/suggestions/${put.body.suggestion.id}/accept`, { as: ada.as });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.suggestion).toMatchObject({ status: 'accepted', decidedBy: { id: ada.userId, principalType: 'user' }, decidedAt: expect.any(String) });

    expect(await markdownOf(ws.base)).toBe('# Notes\n\nReminder: The meeting is at three.\n');
    expect(await markdownOf(ws.base, true)).toBe('# Notes\n\nReminder: The meeting is at three.\n');
    await eventually(() => clientText(person) === 'Notes\nReminder: The meeting is at three.' && clientText(other) === clientText(person));

    const again = await t.request('POST', `/api/suggestions/${put.body.suggestion.id}/reject`, { as: ada.as });
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.code).toBe('conflict');

    const events = await eventsOf(ws.id, 'suggestion.accepted');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ principal: { id: ada.userId }, data: { suggestionId: put.body.suggestion.id, author: { id: agent.agentId } } });
    // The agent that suggested hears the outcome.
    const told = await t.services.db.selectFrom('inboxMessages').selectAll().where('recipientId', '=', agent.agentId).where('kind', '=', 'suggestion_decided').execute();
    expect(told).toHaveLength(1);
  });

  it('rejecting puts the doc back on every client; a suggested section appended and rejected leaves nothing behind', async () => {
    const ws = await docWorkspace('rejecting', '# Notes\n\nKeep this line.\n');
    const person = connect(ws.documentName, { cookie: ada.cookie });
    await synced(person);
    const put = await t.request('PUT', `${ws.base}/doc`, { as: agent.as, body: { markdown: '# Notes\n\nKeep that line.\n', mode: 'suggest' } });
    expect(put.status, put.text).toBe(202);
    const section = await t.request('POST', `${ws.base}/doc/sections?mode=suggest`, { as: agent.as, body: { markdown: '## Added\n\nA new paragraph.\n' } });
    expect(section.status, section.text).toBe(202);
    expect(section.body.suggestion.inserted).toContain('A new paragraph.');
    expect(await markdownOf(ws.base)).toBe('# Notes\n\nKeep this line.\n');

    for (const id of [put.body.suggestion.id, section.body.suggestion.id]) {
      const rejected = await t.request('POST', `/api/suggestions/${id}/reject`, { as: ada.as });
      expect(rejected.status, rejected.text).toBe(200);
      expect(rejected.body.suggestion.status).toBe('rejected');
    }
    expect(await markdownOf(ws.base, true)).toBe('# Notes\n\nKeep this line.\n');
    await eventually(() => clientText(person) === 'Notes\nKeep this line.');
    const open = await t.request('GET', `${ws.base}/suggestions`, { as: ada.as });
    expect(open.body.suggestions).toEqual([]);
    const all = await t.request('GET', `${ws.base}/suggestions?status=all`, { as: ada.as });
    expect(all.body.suggestions.map((s: { status: string }) => s.status)).toEqual(['rejected', 'rejected']);
    expect((await eventsOf(ws.id, 'suggestion.rejected')).length).toBe(2);
  });

  it('a plain write by an editor keeps the open suggestions in the blocks it leaves alone', async () => {
    const ws = await docWorkspace('plain-after', '# Notes\n\nFirst paragraph.\n\nSecond paragraph.\n');
    const put = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: agent.as, body: { markdown: '# Notes\n\nFirst paragraph, revised.\n\nSecond paragraph.\n' } });
    expect(put.status, put.text).toBe(202);
    const plain = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: '# Notes\n\nFirst paragraph.\n\nSecond paragraph, edited.\n' } });
    expect(plain.status, plain.text).toBe(200);
    const listed = await t.request('GET', `${ws.base}/suggestions`, { as: ada.as });
    expect(listed.body.suggestions.map((s: { id: string }) => s.id)).toEqual([put.body.suggestion.id]);
    const accepted = await t.request('POST', `/api/suggestions/${put.body.suggestion.id}/accept`, { as: ada.as });
    expect(accepted.status, accepted.text).toBe(200);
    expect(await markdownOf(ws.base)).toBe('# Notes\n\nFirst paragraph, revised.\n\nSecond paragraph, edited.\n');
  });

  it('who may suggest and decide: a commenter suggests but cannot decide, a viewer cannot suggest; nothing to suggest is 400', async () => {
    const ws = await docWorkspace('roles', '# Roles\n\nText.\n');
    await addMembership(t, ws.id, cy.userId, 'commenter');
    const put = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: cy.as, body: { markdown: '# Roles\n\nMore text.\n' } });
    expect(put.status, put.text).toBe(202);
    expect(put.body.suggestion.author).toMatchObject({ principalType: 'user', id: cy.userId });
    const decide = await t.request('POST', `/api/suggestions/${put.body.suggestion.id}/accept`, { as: cy.as });
    expect(decide.status, decide.text).toBe(403);
    const plain = await t.request('PUT', `${ws.base}/doc`, { as: cy.as, body: { markdown: '# Roles\n\nMore text.\n' } });
    expect(plain.status).toBe(403);

    await t.services.db.updateTable('memberships').set({ role: 'viewer' }).where('workspaceId', '=', ws.id).where('principalId', '=', cy.userId).execute();
    await eventually(async () => (await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: cy.as, body: { markdown: '# Roles\n\nOther.\n' } })).status === 403);

    const same = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: agent.as, body: { markdown: '# Roles\n\nText.\n' } });
    expect(same.status, same.text).toBe(400);
    const unknown = await t.request('POST', '/api/suggestions/sug_nothing/accept', { as: ada.as });
    expect(unknown.status).toBe(404);
    // Another tenant's caller cannot see it either.
    const stranger = await signInUser(t, 'stranger@suggest.test');
    const hidden = await t.request('POST', `/api/suggestions/${put.body.suggestion.id}/accept`, { as: stranger.as });
    expect(hidden.status).toBe(404);
  });

  it('accept-all decides every open suggestion of a surface', async () => {
    const ws = await docWorkspace('all-of-them', '# A\n\nOne.\n\nTwo.\n');
    for (const markdown of ['# A\n\nOne!\n\nTwo.\n', '# A\n\nOne.\n\nTwo!\n']) {
      expect((await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: agent.as, body: { markdown } })).status).toBe(202);
    }
    const all = await t.request('POST', `${ws.base}/suggestions/accept-all?surfaceId=${ws.surfaceId}`, { as: ada.as });
    expect(all.status, all.text).toBe(200);
    expect(all.body.suggestions.map((s: { status: string }) => s.status)).toEqual(['accepted', 'accepted']);
    expect(await markdownOf(ws.base)).toBe('# A\n\nOne!\n\nTwo!\n');
  });
});

describe('a suggest-only key', () => {
  it('is minted with suggestOnly and shows it', async () => {
    await elevate(t, ada, 'keys');
    const minted = await t.request('POST', '/api/keys', { as: ada.as, body: { name: 'reviewer', agentName: 'careful', role: 'editor', suggestOnly: true } });
    expect(minted.status, minted.text).toBe(200);
    expect(minted.body.key.suggestOnly).toBe(true);
    const me = await t.request('GET', '/api/me', { as: { bearer: minted.body.secret } });
    expect(me.body.agent.suggestOnly).toBe(true);
  });

  it('cannot make a plain change over REST (403 forbidden) but its suggestions work', async () => {
    const ws = await docWorkspace('guarded', '# Guarded\n\nOriginal.\n');
    const plain = await t.request('PUT', `${ws.base}/doc`, { as: suggester.as, body: { markdown: '# Guarded\n\nChanged.\n' } });
    expect(plain.status, plain.text).toBe(403);
    expect(plain.body.error.code).toBe('forbidden');
    expect(plain.body.error.message).toContain('suggest');
    const append = await t.request('POST', `${ws.base}/doc/sections`, { as: suggester.as, body: { markdown: 'More.' } });
    expect(append.status).toBe(403);
    const row = await t.request('POST', `${ws.base}/rows`, { as: suggester.as, body: { data: { title: 'x' } } });
    expect(row.status).toBe(403);
    expect(await markdownOf(ws.base)).toBe('# Guarded\n\nOriginal.\n');

    const suggested = await t.request('PUT', `${ws.base}/doc?mode=suggest`, { as: suggester.as, body: { markdown: '# Guarded\n\nChanged.\n' } });
    expect(suggested.status, suggested.text).toBe(202);
    expect(suggested.body.suggestion.author.id).toBe(suggester.agentId);
    // It cannot accept its own suggestion either.
    const decide = await t.request('POST', `/api/suggestions/${suggested.body.suggestion.id}/accept`, { as: suggester.as });
    expect(decide.status).toBe(403);
  });

  it('cannot make a plain change over MCP, and suggests with mode "suggest"', async () => {
    const ws = await docWorkspace('guarded-mcp', '# Guarded\n\nOriginal.\n');
    const client: Client = await mcp.open(bearerOf(suggester.as));
    const plain: ToolResult = await client.callTool({ name: 'replace_doc', arguments: { slug: 'guarded-mcp', markdown: '# Guarded\n\nChanged.\n' } });
    expect(refusal(plain)).toMatchObject({ status: 403, error: { code: 'forbidden' } });
    const suggested: ToolResult = await client.callTool({ name: 'replace_doc', arguments: { slug: 'guarded-mcp', markdown: '# Guarded\n\nChanged.\n', mode: 'suggest' } });
    expect(suggested.isError, JSON.stringify(suggested.content)).toBeFalsy();
    const { suggestion } = suggested.structuredContent as { suggestion: { id: string; status: string } };
    expect(suggestion.status).toBe('open');
    const listed: ToolResult = await client.callTool({ name: 'list_suggestions', arguments: { slug: 'guarded-mcp' } });
    expect((listed.structuredContent as { suggestions: Array<{ id: string }> }).suggestions.map((s) => s.id)).toEqual([suggestion.id]);
    expect(await markdownOf(ws.base)).toBe('# Guarded\n\nOriginal.\n');
  });

  it('over sync: a plain edit is refused (the connection closes, nothing reaches the doc); a suggestion marked with its author is kept', async () => {
    const ws = await docWorkspace('guarded-sync', '# Guarded\n\nOriginal.\n');
    const reader = connect(ws.documentName, { cookie: ada.cookie });
    const plainClient = connect(ws.documentName, { token: bearerOf(suggester.as) });
    await Promise.all([synced(reader), synced(plainClient)]);
    paragraphText(plainClient.doc, 1).insert(0, 'Sneaky ');
    await plainClient.closed;
    expect(await markdownOf(ws.base, true)).toBe('# Guarded\n\nOriginal.\n');
    expect(clientText(reader)).toBe('Guarded\nOriginal.');

    const suggestingClient = connect(ws.documentName, { token: bearerOf(suggester.as) });
    await synced(suggestingClient);
    const stamp = { id: 'sug_fromsync0001', authorType: 'agent', authorId: suggester.agentId, authorName: 'proposer', at: new Date().toISOString() };
    paragraphText(suggestingClient.doc, 1).insert(0, 'Proposed ', { suggestInsert: stamp });
    await acknowledged(suggestingClient);
    expect(await markdownOf(ws.base)).toBe('# Guarded\n\nOriginal.\n');
    expect(await markdownOf(ws.base, true)).toContain('{++Proposed ++}');
    const listed = await eventually(async () => {
      const res = await t.request('GET', `${ws.base}/suggestions`, { as: ada.as });
      return res.body.suggestions.length === 1 ? res.body.suggestions : null;
    });
    expect(listed[0]).toMatchObject({ id: stamp.id, author: { id: suggester.agentId }, inserted: 'Proposed ' });
  });
});
