import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { updateRowCells } from '../../src/model/table/document';
import { countAttributionRows, loadAttribution } from '../../src/persistence/attribution';
import { appendUpdates } from '../../src/persistence/document-log';
import { writeSnapshot } from '../../src/persistence/documents';
import { startTestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';
import { acknowledged, connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { addMembership, createWorkspace, insertKey, signInUser } from '../workspaces/helpers';

/**
 * Issue 25, item 3: who wrote what, from the update log's own attribution.
 * Two people type at once over sync and an agent writes over REST; the
 * spans of `GET /doc?attribution=1` name each of them for what they typed,
 * the same after compaction folded the log away and after a restart. A
 * row's cells name their last writers, over REST and sync.
 */

type Store = Awaited<ReturnType<typeof freshDataStore>>;
const stores: Store[] = [];
const clients: SyncClient[] = [];

afterAll(async () => {
  for (const client of clients) client.destroy();
  for (const store of stores) await store.dispose();
});

function connect(t: { url: string }, documentName: string, credential: { cookie?: string; token?: string }) {
  const client = connectClient(t.url, documentName, credential);
  clients.push(client);
  return client;
}

function appendParagraph(client: SyncClient, text: string) {
  const fragment = client.doc.getXmlFragment('default');
  const paragraph = new Y.XmlElement('paragraph');
  paragraph.insert(0, [new Y.XmlText(text)]);
  fragment.insert(fragment.length, [paragraph]);
}

/** The spans as `[who, text]`, the agent named with its owner as the web app labels it. */
function shown(spans: Array<{ text: string; principal: any }>) {
  return spans.map((span) => [span.principal ? (span.principal.owner ? `${span.principal.name} (agent of ${span.principal.owner.name})` : span.principal.name) : null, span.text]);
}

describe('doc attribution', () => {
  it('names who typed each span after concurrent typing by two people and an agent, after compaction and after a restart', async () => {
    const store = await freshDataStore();
    stores.push(store);
    let t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
    const ada = await signInUser(t, 'ada@example.com');
    const bob = await signInUser(t, 'bob@example.com');
    const ws = await createWorkspace(t, ada, { name: 'Authors', slug: 'authors', mode: 'doc' });
    const documentName = ws.primarySurface.syncDocument as string;
    await addMembership(t, ws.id, bob.userId, 'editor');
    const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'scribe' });
    const base = '/api/workspaces/authors';

    const adaClient = connect(t, documentName, { cookie: ada.cookie });
    const bobClient = connect(t, documentName, { cookie: bob.cookie });
    await Promise.all([synced(adaClient), synced(bobClient)]);
    appendParagraph(adaClient, 'Hello from Ada.');
    await acknowledged(adaClient);
    await eventually(() => bobClient.doc.getXmlFragment('default').toString().includes('Hello from Ada.'));
    // At once: Ada goes on typing in her paragraph while Bob starts one of his own.
    const adaText = adaClient.doc.getXmlFragment('default').toArray().length - 1;
    paragraphText(adaClient.doc, adaText).insert('Hello from Ada.'.length, ' More from Ada.');
    appendParagraph(bobClient, 'Bob was here.');
    await Promise.all([acknowledged(adaClient), acknowledged(bobClient)]);
    // The agent edits Ada's sentence in place and adds a paragraph, over REST with its key.
    const put = await t.request('PUT', `${base}/doc`, { as: agent.as, body: { markdown: 'Hello from Ada and the agent. More from Ada.\n\nBob was here.\n' } });
    expect(put.status, put.text).toBe(200);
    expect((await t.request('POST', `${base}/doc/sections`, { as: agent.as, body: { markdown: 'Written by the agent.' } })).status).toBe(200);

    const expected = [
      ['ada', 'Hello from Ada'],
      ['scribe (agent of ada)', ' and the agent'],
      ['ada', '. More from Ada.'],
      ['bob', '\n\nBob was here.'],
      ['scribe (agent of ada)', '\n\nWritten by the agent.'],
    ];
    const check = async () => {
      const text = await t.request('GET', `${base}/doc?format=text`, { as: ada.as });
      const res = await t.request('GET', `${base}/doc?attribution=1`, { as: ada.as, headers: { accept: 'application/json' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.surfaceId).toBe(ws.primarySurface.id);
      expect(res.body.spans.map((s: any) => s.text).join('')).toBe(text.body.text);
      expect(shown(res.body.spans)).toEqual(expected);
      const scribe = res.body.spans[1].principal;
      expect(scribe).toMatchObject({ principalType: 'agent', id: agent.agentId, owner: { principalType: 'user', id: ada.userId, name: 'ada' } });
      expect(res.body.spans[0].principal).toEqual({ principalType: 'user', id: ada.userId, name: 'ada', avatarUrl: null });
      return res.body.spans;
    };
    const before = await check();

    // Compaction folds the log away; the attribution it held is folded into the table first.
    await eventually(async () => {
      await t.services.sync.compactNow(documentName);
      const left = await t.services.db.selectFrom('documentUpdates').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', documentName).executeTakeFirstOrThrow();
      return Number(left.n) === 0;
    }, 20_000, 200);
    expect(await countAttributionRows(t.services.db, documentName)).toBeGreaterThan(0);
    expect(await check()).toEqual(before);

    // Typing after the fold lands in the log again; both halves are read together.
    paragraphText(bobClient.doc, 1).insert(0, 'Later, ');
    await acknowledged(bobClient);
    await eventually(async () => (await t.request('GET', `${base}/doc?format=text`, { as: ada.as })).body.text.includes('Later, Bob'));
    expected.splice(3, 1, ['bob', '\n\nLater, Bob was here.']);
    await check();

    for (const client of [adaClient, bobClient]) client.destroy();
    await t.close();
    t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
    try {
      await check();
    } finally {
      await t.close();
    }
  }, 120_000);

  it('gives text a restore brings back to the person who restored it, and leaves kept text to its authors', async () => {
    const t = await startTestApp();
    try {
      const ada = await signInUser(t, 'ada@example.com');
      const bob = await signInUser(t, 'bob@example.com');
      const ws = await createWorkspace(t, ada, { name: 'Restore', slug: 'restore', mode: 'doc' });
      await addMembership(t, ws.id, bob.userId, 'editor');
      const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'rewriter' });
      const base = '/api/workspaces/restore';
      expect((await t.request('PUT', `${base}/doc`, { as: bob.as, body: { markdown: 'Kept by Bob.\n\nFirst words.\n' } })).status).toBe(200);
      // Sessions are grouped by the log's own timestamps: the agent's rewrite is a version of its own.
      await sql`update document_updates set created_at = created_at - interval '30 minutes' where document = ${ws.primarySurface.syncDocument}`.execute(t.services.db);
      expect((await t.request('PUT', `${base}/doc`, { as: agent.as, body: { markdown: 'Kept by Bob.\n\nRewritten entirely.\n' } })).status).toBe(200);
      const attribution = async () => shown((await t.request('GET', `${base}/doc?attribution=1`, { as: ada.as })).body.spans);
      // A changed block is edited in place, down to characters: Bob's paragraph and full stop stay his.
      expect(await attribution()).toEqual([
        ['bob', 'Kept by Bob.\n\n'],
        ['rewriter (agent of ada)', 'Rewritten entirely'],
        ['bob', '.'],
      ]);
      const versions = (await t.request('GET', `${base}/surfaces/doc/versions`, { as: ada.as })).body.versions;
      const restored = await t.request('POST', `${base}/surfaces/doc/versions/${versions.at(-1).id}/restore`, { as: ada.as });
      expect(restored.status, restored.text).toBe(200);
      expect((await t.request('GET', `${base}/doc?format=text`, { as: ada.as })).body.text).toBe('Kept by Bob.\n\nFirst words.');
      // The restore is a change of Ada's: what it wrote again is hers; the agent's block it replaced is gone.
      expect(await attribution()).toEqual([
        ['bob', 'Kept by Bob.\n\n'],
        ['ada', 'First words'],
        ['bob', '.'],
      ]);
    } finally {
      await t.close();
      await t.store.dispose();
    }
  });

  it("covers the text with an agent's open suggestion left out, as the text read does, or in with suggestions=include", async () => {
    const t = await startTestApp();
    try {
      const ada = await signInUser(t, 'ada@example.com');
      const ws = await createWorkspace(t, ada, { name: 'Suggested', slug: 'suggested', mode: 'doc' });
      const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'proposer' });
      const base = '/api/workspaces/suggested';
      expect((await t.request('PUT', `${base}/doc`, { as: ada.as, body: { markdown: 'Ada wrote this.\n' } })).status).toBe(200);
      const suggested = await t.request('PUT', `${base}/doc?mode=suggest`, { as: agent.as, body: { markdown: 'Ada wrote this, and more.\n\nA new paragraph.\n' } });
      expect(suggested.status, suggested.text).toBe(202);
      for (const query of ['', '&suggestions=include']) {
        const text = await t.request('GET', `${base}/doc?format=text${query}`, { as: ada.as });
        const spans = (await t.request('GET', `${base}/doc?attribution=1${query}`, { as: ada.as })).body.spans;
        expect(spans.map((s: any) => s.text).join('')).toBe(text.body.text);
        if (query === '') expect(shown(spans)).toEqual([['ada', 'Ada wrote this.']]);
        else expect(shown(spans).filter(([who]) => who === 'proposer (agent of ada)').map(([, text]) => text).join('')).toContain('A new paragraph.');
      }
    } finally {
      await t.close();
      await t.store.dispose();
    }
  });

  it('answers JSON whatever Accept says, and 404 for a workspace without a doc', async () => {
    const t = await startTestApp();
    try {
      const ada = await signInUser(t, 'ada@example.com');
      await createWorkspace(t, ada, { name: 'Plain', slug: 'plain', mode: 'doc', initialMarkdown: '# Title\n\nBody text.\n' });
      const res = await t.request('GET', '/api/workspaces/plain/doc?attribution=1', { as: ada.as, headers: { accept: 'text/plain' } });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.spans.map((s: any) => s.text).join('')).toBe('Title\n\nBody text.');
      expect((await t.request('GET', '/api/workspaces/plain/doc?attribution=maybe', { as: ada.as })).status).toBe(400);
      await createWorkspace(t, ada, { name: 'Grid', slug: 'grid', mode: 'table' });
      expect((await t.request('GET', '/api/workspaces/grid/doc?attribution=1', { as: ada.as })).status).toBe(404);
    } finally {
      await t.close();
      await t.store.dispose();
    }
  });
});

describe('row attribution', () => {
  it("names each cell's last writer after REST and sync writes, and after compaction", async () => {
    const t = await startTestApp();
    try {
      const ada = await signInUser(t, 'ada@example.com');
      const bob = await signInUser(t, 'bob@example.com');
      const ws = await createWorkspace(t, ada, { name: 'Cells', slug: 'cells', mode: 'table' });
      await addMembership(t, ws.id, bob.userId, 'editor');
      const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'filler' });
      const base = '/api/workspaces/cells';
      const created = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'First', status: 'todo' } } });
      expect(created.status, created.text).toBe(200);
      const rowId = created.body.id as string;
      expect((await t.request('PATCH', `${base}/rows/${rowId}`, { as: agent.as, body: { data: { status: 'doing' } } })).status).toBe(200);
      const bobClient = connect(t, tablesDocumentName(ws.id), { cookie: bob.cookie });
      await synced(bobClient);
      updateRowCells(bobClient.doc, rowId, { title: 'First, renamed' }, null);
      await acknowledged(bobClient);

      const writers = async () => {
        const res = await t.request('GET', `${base}/rows/${rowId}?attribution=1`, { as: ada.as });
        expect(res.status, res.text).toBe(200);
        return Object.fromEntries(Object.entries(res.body.attribution as Record<string, any>).map(([key, p]) => [key, p.owner ? `${p.name} (agent of ${p.owner.name})` : p.name]));
      };
      await eventually(async () => (await t.request('GET', `${base}/rows/${rowId}`, { as: ada.as })).body.data.title === 'First, renamed');
      expect(await writers()).toEqual({ title: 'bob', status: 'filler (agent of ada)' });
      // Without the flag the row is as before.
      expect((await t.request('GET', `${base}/rows/${rowId}`, { as: ada.as })).body.attribution).toBeUndefined();

      await eventually(async () => {
        await t.services.sync.compactNow(tablesDocumentName(ws.id));
        const left = await t.services.db.selectFrom('documentUpdates').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', tablesDocumentName(ws.id)).executeTakeFirstOrThrow();
        return Number(left.n) === 0;
      }, 20_000, 200);
      expect(await writers()).toEqual({ title: 'bob', status: 'filler (agent of ada)' });
      expect((await t.request('PATCH', `${base}/rows/${rowId}`, { as: ada.as, body: { data: { status: 'done' } } })).status).toBe(200);
      expect(await writers()).toEqual({ title: 'bob', status: 'ada' });
    } finally {
      for (const client of clients) client.destroy();
      await t.close();
      await t.store.dispose();
    }
  }, 60_000);
});

describe('the fold', () => {
  it('keeps the first principal of an item across folds when a later update brings it again, and merges touching ranges', async () => {
    const t = await startTestApp();
    try {
      const db = t.services.db;
      const document = 'fold-test-document';
      const writer = new Y.Doc();
      const updates: Uint8Array[] = [];
      writer.on('update', (u: Uint8Array) => updates.push(u));
      const text = writer.getText('t');
      text.insert(0, 'abc');
      text.insert(3, 'def');
      const ada = { principalType: 'user' as const, id: 'usr_ada' };
      const bob = { principalType: 'user' as const, id: 'usr_bob' };
      const [first] = await appendUpdates(db, [updates[0]!, updates[1]!].map((update) => ({ document, update, author: ada, derived: true })));
      await writeSnapshot(db, document, Y.encodeStateAsUpdateV2(writer), 0, first! + 1, new Date());
      // Bob's client resends everything (its sync step 2 after a reconnect) and adds one character.
      text.insert(6, 'g');
      const [resent] = await appendUpdates(db, [{ document, update: Y.encodeStateAsUpdate(writer), author: bob, derived: true }]);
      const client = writer.clientID;
      const read = async () => (await loadAttribution(db, document)).ranges.ranges();
      expect(await read()).toEqual([
        { client, from: 0, to: 6, key: 'user:usr_ada' },
        { client, from: 6, to: 7, key: 'user:usr_bob' },
      ]);
      await writeSnapshot(db, document, Y.encodeStateAsUpdateV2(writer), first! + 1, resent!, new Date());
      expect(await countAttributionRows(db, document)).toBe(2);
      expect(await read()).toEqual([
        { client, from: 0, to: 6, key: 'user:usr_ada' },
        { client, from: 6, to: 7, key: 'user:usr_bob' },
      ]);
    } finally {
      await t.close();
      await t.store.dispose();
    }
  });
});
