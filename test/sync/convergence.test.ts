import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { ConvergenceCheck, DIGEST_MESSAGE, documentDigest } from '../../src/model/sync-digest';
import { getRow, insertRow } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { startSyncProxy, type SyncProxy } from '../helpers/sync-proxy';

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string };
let surfaceId: string;
let docName: string;
let proxy: SyncProxy;
const clients: SyncClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'owner@example.com');
  const ws = await t.services.db
    .selectFrom('workspaces')
    .innerJoin('surfaces', 'surfaces.workspaceId', 'workspaces.id')
    .select(['workspaces.id', 'surfaces.id as surfaceId'])
    .where('workspaces.slug', '=', 'welcome')
    .where('surfaces.kind', '=', 'table')
    .executeTakeFirstOrThrow();
  surfaceId = ws.surfaceId;
  docName = tablesDocumentName(ws.id);
  proxy = await startSyncProxy(t.url);
});
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});
afterAll(async () => {
  await proxy.close();
  await t.close();
  await t.store.dispose();
});

async function connected(url: string): Promise<SyncClient> {
  const client = connectClient(url, docName, { cookie: owner.cookie });
  clients.push(client);
  await synced(client);
  await acknowledged(client);
  return client;
}

async function metric(name: string): Promise<number> {
  const text = (await t.request('GET', '/metrics')).text;
  const lines = text.split('\n').filter((line) => line.startsWith(name));
  return lines.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

const serverRow = (id: string) => t.services.sync.read(docName, (doc) => getRow(doc, id)?.data.title ?? null);

describe('checked convergence (digests)', () => {
  it('a client whose update was lost on the way finds it missing with a digest and sends it again, counted in /metrics', async () => {
    const detectedBefore = await metric('trellis_sync_divergences_detected_total{side="server"}');
    const healedBefore = await metric('trellis_sync_divergences_healed_total');
    const writer = await connected(proxy.url);
    const watcher = await connected(t.url);
    const check = new ConvergenceCheck(writer.provider, { quietMs: 20 });

    const lost = proxy.dropNextUpdate('toServer');
    insertRow(writer.doc, { id: 'lost-on-the-way', surfaceId, data: { title: 'typed, then lost by the network' } }, null);
    await lost;
    // The server never got it, and nothing told the writer so.
    await t.services.sync.changesCommitted(docName);
    expect(await serverRow('lost-on-the-way')).toBeNull();
    expect(getRow(watcher.doc, 'lost-on-the-way')).toBeFalsy();

    expect(await eventually(() => check.state === 'saved' && check.state, 10_000)).toBe('saved');
    expect(await serverRow('lost-on-the-way')).toBe('typed, then lost by the network');
    await eventually(() => getRow(watcher.doc, 'lost-on-the-way')?.data.title === 'typed, then lost by the network');
    const rest = await t.request('GET', `/api/workspaces/welcome/rows/lost-on-the-way`, { as: { cookie: owner.cookie } });
    expect(rest.status).toBe(200);
    expect(await metric('trellis_sync_divergences_detected_total{side="server"}')).toBe(detectedBefore + 1);
    expect(await metric('trellis_sync_divergences_healed_total')).toBe(healedBefore + 1);
    expect(documentDigest(writer.doc)).toEqual(await t.services.sync.read(docName, (doc) => documentDigest(doc)));
    check.destroy();
  });

  it('a client that missed a broadcast finds it lacks server state and fetches it', async () => {
    const detectedBefore = await metric('trellis_sync_divergences_detected_total{side="client"}');
    const healedBefore = await metric('trellis_sync_divergences_healed_total');
    const reader = await connected(proxy.url);
    const writer = await connected(t.url);
    const check = new ConvergenceCheck(reader.provider, { quietMs: 20 });
    await check.check();
    expect(check.state).toBe('saved');

    const lost = proxy.dropNextUpdate('toClient');
    insertRow(writer.doc, { id: 'missed-broadcast', surfaceId, data: { title: 'the reader never heard of me' } }, null);
    await acknowledged(writer);
    await lost;
    expect(getRow(reader.doc, 'missed-broadcast')).toBeFalsy();

    // The reader made no change of its own: only its digest question finds the gap.
    const answered = await check.check();
    expect(answered).toBe('saving');
    await eventually(() => getRow(reader.doc, 'missed-broadcast')?.data.title === 'the reader never heard of me', 10_000);
    await eventually(() => check.state === 'saved', 10_000);
    expect(await metric('trellis_sync_divergences_detected_total{side="client"}')).toBe(detectedBefore + 1);
    expect(await metric('trellis_sync_divergences_healed_total')).toBe(healedBefore + 1);
    check.destroy();
  });

  it('says saved only once the server holds every local change, and agrees with itself when nothing was lost', async () => {
    const client = await connected(t.url);
    const check = new ConvergenceCheck(client.provider, { quietMs: 20 });
    const detectedBefore = await metric('trellis_sync_divergences_detected_total');
    insertRow(client.doc, { id: 'plainly-saved', surfaceId, data: { title: 'nothing lost' } }, null);
    expect(check.state).toBe('saving');
    await eventually(() => check.state === 'saved', 10_000);
    expect(await serverRow('plainly-saved')).toBe('nothing lost');
    expect(await metric('trellis_sync_divergences_detected_total')).toBe(detectedBefore);
    check.destroy();
  });

  it('ignores malformed digest questions and other stateless messages: the connection keeps working and nothing is counted', async () => {
    const client = await connected(t.url);
    const detectedBefore = await metric('trellis_sync_divergences_detected_total');
    const replies: string[] = [];
    client.provider.on('stateless', ({ payload }: { payload: string }) => replies.push(payload));
    const hostile = [
      `{"type":"${DIGEST_MESSAGE}"`,
      JSON.stringify({ type: DIGEST_MESSAGE, id: 1, stateVector: '!!!', hash: 'x' }),
      JSON.stringify({ type: DIGEST_MESSAGE, id: 1.5, stateVector: '', hash: '0'.repeat(64) }),
      `{"type":"${DIGEST_MESSAGE}","id":2,"stateVector":"AAAA","hash":"${'0'.repeat(64)}","__proto__":{"polluted":true}}`,
      JSON.stringify({ type: DIGEST_MESSAGE, id: 3, stateVector: '=', hash: '0'.repeat(64) }),
      JSON.stringify({ type: DIGEST_MESSAGE, id: 4, stateVector: 'AAAA', hash: '0'.repeat(64), serverMissing: false }),
      'not json at all \ud800',
    ];
    for (const payload of hostile) client.provider.sendStateless(payload);
    insertRow(client.doc, { id: 'after-garbage', surfaceId, data: { title: 'still works' } }, null);
    await acknowledged(client);
    expect(await serverRow('after-garbage')).toBe('still works');
    // Only the well-formed question (a client that holds nothing yet) is answered, and it lost nothing.
    const answered = replies.filter((reply) => reply.includes(DIGEST_MESSAGE)).map((reply) => JSON.parse(reply));
    expect(answered.map((reply) => [reply.id, reply.serverMissing])).toEqual([[2, false]]);
    expect(await metric('trellis_sync_divergences_detected_total')).toBe(detectedBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a digest of equal states is equal however the peers received them, and differs for different states', () => {
    const a = new Y.Doc();
    const streamed = new Y.Doc();
    a.on('update', (update: Uint8Array) => Y.applyUpdate(streamed, update));
    const text = a.getText('t');
    for (const char of 'hello world') text.insert(text.length, char);
    text.delete(2, 5);
    a.getMap('m').set('k', 1);
    a.getMap('m').delete('k');
    const atOnce = new Y.Doc();
    Y.applyUpdate(atOnce, Y.encodeStateAsUpdate(a));
    expect(documentDigest(streamed)).toEqual(documentDigest(a));
    expect(documentDigest(atOnce)).toEqual(documentDigest(a));
    // The same items, one more deletion: equal state vectors, different digests.
    const deleted = new Y.Doc();
    Y.applyUpdate(deleted, Y.encodeStateAsUpdate(a));
    deleted.getText('t').delete(0, 1);
    Y.applyUpdate(a, Y.encodeStateAsUpdate(deleted));
    expect(documentDigest(deleted)).toEqual(documentDigest(a));
    expect(documentDigest(deleted)).not.toEqual(documentDigest(atOnce));
  });
});
