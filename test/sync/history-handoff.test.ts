import { afterAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { readsOfTheLog, snapshotState } from '../../src/persistence/versions';
import { historyThread } from '../../src/sync/history-thread';
import { indexVersions } from '../../src/sync/version-index';
import { statementRecorder } from '../helpers/statements';
import { listUnderivedSeqs } from '../../src/persistence/document-log';
import { startTestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';
import { acknowledged, connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { addMembership, createWorkspace, signInUser } from '../workspaces/helpers';

/**
 * Issue 38, goal 2: the history pass and compaction's attribution took the
 * updates a typist had just appended by reading them back from the log (a
 * pass's pages, then the fold's attribution, every update twice). They now
 * take them from memory (src/sync/logged-tail.ts, pass-attribution.ts) and
 * read the log only when memory does not hold all of it, here after a
 * restart. Either way the versions and attribution a reader gets over REST
 * name who typed what. A fold that stops short of the pass's cursor (here
 * at a base a read handed out) rebuilt its state from the log too, in
 * pages of 2,000 rows that were PGlite's longest statements under the
 * typing trace; it now takes the held updates as well.
 */

type Store = Awaited<ReturnType<typeof freshDataStore>>;
const stores: Store[] = [];
const clients: SyncClient[] = [];

afterAll(async () => {
  for (const client of clients) client.destroy();
  for (const store of stores) await store.dispose();
});

function typeInto(client: SyncClient, paragraph: number, text: string) {
  const target = paragraphText(client.doc, paragraph);
  // A keystroke a transaction: one logged update each, as a typist's.
  for (const character of text) target.insert(target.length, character);
}

function newParagraph(client: SyncClient) {
  const fragment = client.doc.getXmlFragment('default');
  fragment.insert(fragment.length, [new Y.XmlElement('paragraph')]);
  (fragment.get(fragment.length - 1) as Y.XmlElement).insert(0, [new Y.XmlText('')]);
}

/** A server on a data store of its own (kept for a restart), with ada's doc workspace. */
async function startWithDoc(name: string, slug: string) {
  const store = await freshDataStore();
  stores.push(store);
  const t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
  const ada = await signInUser(t, 'ada@example.com');
  const ws = await createWorkspace(t, ada, { name, slug, mode: 'doc' });
  return { store, t, ada, ws, documentName: ws.primarySurface.syncDocument as string };
}

describe('the history pass and compaction after a burst of typing', () => {
  it('read none of the typed updates back from the log, and again only after a restart; versions and attribution name the typists either way', async () => {
    const started = await startWithDoc('Typing', 'typing');
    const { store, ada, ws, documentName } = started;
    let t = started.t;
    const bob = await signInUser(t, 'bob@example.com');
    await addMembership(t, ws.id, bob.userId, 'editor');
    const base = '/api/workspaces/typing';
    const connect = (credential: { cookie: string }) => {
      const client = connectClient(t.url, documentName, credential);
      clients.push(client);
      return client;
    };

    const countLog = async (where: 'all' | 'underived') => {
      if (where === 'underived') return (await listUnderivedSeqs(t.services.db, documentName)).length;
      const query = t.services.db.selectFrom('documentUpdates').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', documentName);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };
    /** Compacts until the log is folded away; what it read back from the log meanwhile. */
    const compactAll = async () => {
      // Updates whose events are not committed yet hold the fold back (and a fold short of the history cursor rebuilds its state from the log).
      await eventually(async () => (await countLog('underived')) === 0, 20_000, 50);
      const before = { ...readsOfTheLog };
      await eventually(async () => {
        await t.services.sync.compactNow(documentName);
        return (await countLog('all')) === 0;
      }, 20_000, 200);
      return { history: readsOfTheLog.history - before.history, attribution: readsOfTheLog.attribution - before.attribution };
    };
    const seen = async () => {
      const spans = await t.request('GET', `${base}/doc?attribution=1`, { as: ada.as, headers: { accept: 'application/json' } });
      expect(spans.status, spans.text).toBe(200);
      const list = await t.request('GET', `${base}/surfaces/doc/versions`, { as: ada.as });
      expect(list.status, list.text).toBe(200);
      return {
        spans: spans.body.spans.map((span: any) => [span.principal?.name ?? null, span.text]),
        versions: list.body.versions.map((version: any) => version.editors.map((editor: any) => `${editor.principal.name}:${editor.edits}`).join(' ')),
      };
    };

    let adaClient = connect({ cookie: ada.cookie });
    let bobClient = connect({ cookie: bob.cookie });
    await Promise.all([synced(adaClient), synced(bobClient)]);
    newParagraph(adaClient);
    const adaParagraph = adaClient.doc.getXmlFragment('default').length - 1;
    typeInto(adaClient, adaParagraph, 'Typed by Ada, key by key.');
    await acknowledged(adaClient);
    await eventually(() => bobClient.doc.getXmlFragment('default').length === adaClient.doc.getXmlFragment('default').length);
    newParagraph(bobClient);
    const bobParagraph = bobClient.doc.getXmlFragment('default').length - 1;
    typeInto(bobClient, bobParagraph, 'And Bob.');
    await acknowledged(bobClient);

    // Every update the passes and the fold needed was appended by this process a moment before.
    expect(await compactAll()).toEqual({ history: 0, attribution: 0 });
    const first = await seen();
    expect(first.spans.filter(([, text]: [string, string]) => text.trim() !== '')).toEqual([
      ['ada', expect.stringContaining('Typed by Ada, key by key.')],
      ['bob', expect.stringContaining('And Bob.')],
    ]);
    expect(first.versions.join(' | ')).toMatch(/ada:\d+/);
    expect(first.versions.join(' | ')).toMatch(/bob:\d+/);

    // Ada types more; a read of the versions runs a pass over it, she types on, and the server
    // restarts before the fold: the new process holds neither what she typed since nor the pass's ranges.
    typeInto(adaClient, adaParagraph, ' More');
    await acknowledged(adaClient);
    const between = await t.request('GET', `${base}/surfaces/doc/versions`, { as: ada.as });
    expect(between.status, between.text).toBe(200);
    typeInto(adaClient, adaParagraph, '.');
    await acknowledged(adaClient);
    for (const client of [adaClient, bobClient]) client.destroy();
    await t.close();
    t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
    bobClient = connect({ cookie: bob.cookie });
    await synced(bobClient);
    typeInto(bobClient, bobParagraph, ' Again.');
    await acknowledged(bobClient);

    // The log is read where memory has a gap, and what it says is the same.
    const reads = await compactAll();
    expect(reads.history).toBeGreaterThan(0);
    expect(reads.attribution).toBeGreaterThan(0);
    const second = await seen();
    expect(second.spans.filter(([, text]: [string, string]) => text.trim() !== '')).toEqual([
      ['ada', expect.stringContaining('Typed by Ada, key by key. More.')],
      ['bob', expect.stringContaining('And Bob. Again.')],
    ]);
    expect(second.versions.slice(-first.versions.length)).toEqual(first.versions);

    // After the gap, typing is held again.
    adaClient = connect({ cookie: ada.cookie });
    await synced(adaClient);
    typeInto(adaClient, adaParagraph, ' Last.');
    await acknowledged(adaClient);
    expect(await compactAll()).toEqual({ history: 0, attribution: 0 });
    expect((await seen()).spans.filter(([, text]: [string, string]) => text.trim() !== '')[0]).toEqual(['ada', expect.stringContaining('key by key. More. Last.')]);
    await t.close();
  }, 120_000);

  it('a fold short of the history cursor, at a base a read handed out, reads none of the typed updates back and folds exactly what was typed up to the read', async () => {
    const started = await startWithDoc('Held', 'held');
    const { store, ada, documentName } = started;
    let t = started.t;
    const base = '/api/workspaces/held';
    const underived = async () => (await listUnderivedSeqs(t.services.db, documentName)).length;

    const client = connectClient(t.url, documentName, { cookie: ada.cookie });
    clients.push(client);
    await synced(client);
    newParagraph(client);
    const paragraph = client.doc.getXmlFragment('default').length - 1;
    typeInto(client, paragraph, 'Before the read.');
    await acknowledged(client);
    await eventually(async () => (await underived()) === 0, 20_000, 50);
    // The read hands out its log position as a base: compaction keeps it reconstructible, so folds stop there.
    const read = await t.request('GET', `${base}/doc?format=markdown`, { as: ada.as });
    expect(read.status, read.text).toBe(200);
    const readAt = Number(/^"(\d+)\./.exec(read.headers.get('etag')!)![1]);
    typeInto(client, paragraph, ' After.');
    await acknowledged(client);
    await eventually(async () => (await underived()) === 0, 20_000, 50);

    const before = { ...readsOfTheLog };
    await t.services.sync.compactNow(documentName);
    // The pass went on to the head; the fold stopped at the read, short of it, and rebuilt the state there from memory.
    expect({ history: readsOfTheLog.history - before.history, attribution: readsOfTheLog.attribution - before.attribution }).toEqual({ history: 0, attribution: 0 });
    const snapshot = await snapshotState(t.services.db, documentName);
    expect(snapshot?.uptoSeq).toBe(readAt);
    const folded = new Y.Doc();
    Y.applyUpdateV2(folded, snapshot!.state);
    expect(paragraphText(folded, paragraph).toString()).toBe('Before the read.');

    // What a fresh client gets after a restart: the snapshot and the log after it, the whole text once.
    client.destroy();
    await t.close();
    t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
    const fresh = connectClient(t.url, documentName, { cookie: ada.cookie });
    clients.push(fresh);
    await synced(fresh);
    expect(paragraphText(fresh.doc, paragraph).toString()).toBe('Before the read. After.');
    const markdown = await t.request('GET', `${base}/doc?format=markdown`, { as: ada.as });
    expect(markdown.text).toContain('Before the read. After.');
    await t.close();
  }, 120_000);

  it('a pass lets the event loop turn between taking its tail and handing it to the history thread; its versions name the typist', async () => {
    const { t, ada, documentName } = await startWithDoc('Turns', 'turns');
    const client = connectClient(t.url, documentName, { cookie: ada.cookie });
    clients.push(client);
    await synced(client);
    newParagraph(client);
    typeInto(client, client.doc.getXmlFragment('default').length - 1, 'Typed before the pass.');
    await acknowledged(client);
    await eventually(async () => (await listUnderivedSeqs(t.services.db, documentName)).length === 0, 20_000, 50);

    // Turns of the event loop, counted by an immediate that queues the next one, noted as each statement of
    // the pass answers and as the pass hands its tail to the history thread. Between its last statement and
    // the hand-off the pass worked out its sessions, packed the tail and posted it: before the change all in
    // the turn its statement answered in, which on the embedded database is the turn of the statements before.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    const turnsAtStatements: number[] = [];
    const turnsAtHandOff: Array<{ turn: number; lastStatement: number | undefined }> = [];
    const db = t.services.db.withPlugin(statementRecorder(() => turnsAtStatements.push(turns)));
    const replay = historyThread.replay.bind(historyThread);
    const spy = vi.spyOn(historyThread, 'replay').mockImplementation((input) => {
      turnsAtHandOff.push({ turn: turns, lastStatement: turnsAtStatements.at(-1) });
      return replay(input);
    });
    setImmediate(tick);
    try {
      expect((await indexVersions(db, documentName))?.caughtUp).toBe(true);
    } finally {
      ticking = false;
      spy.mockRestore();
    }
    expect(turnsAtHandOff).toHaveLength(1);
    expect(turnsAtHandOff[0]!.lastStatement).toBeDefined();
    expect(turnsAtHandOff[0]!.turn).toBeGreaterThan(turnsAtHandOff[0]!.lastStatement!);

    const list = await t.request('GET', '/api/workspaces/turns/surfaces/doc/versions', { as: ada.as });
    expect(list.status, list.text).toBe(200);
    expect(list.body.versions.map((version: any) => version.editors.map((editor: any) => editor.principal.name).join(' ')).join(' | ')).toMatch(/ada/);
    const markdown = await t.request('GET', '/api/workspaces/turns/doc?format=markdown', { as: ada.as });
    expect(markdown.text).toContain('Typed before the pass.');
    await t.close();
  }, 120_000);
});
