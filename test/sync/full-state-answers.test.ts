import { Document } from '@hocuspocus/server';
import * as decoding from 'lib0/decoding';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { deleteRow, insertRow, listRows } from '../../src/model/table/document';
import { replaceDocumentState } from '../../src/sync/document-store';
import { FullStateAnswers, fullStateEncodes } from '../../src/sync/full-state-answers';
import { MESSAGE_SYNC, SYNC_STEP_2 } from '../../src/sync/update-message';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { addMember, signInPerson, type Person } from '../keys/fixtures';

/**
 * Fresh clients of a loaded document (an empty state vector in their sync
 * step 1) share one encoding of its whole state while it is unchanged
 * (src/sync/full-state-answers.ts). What each receives is compared byte
 * for byte with the server document's own encoding, and the encodings are
 * counted (`fullStateEncodes`).
 */
let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: Person;
let surfaceId: string;
let name: string;
const base = '/api/workspaces/welcome';
const clients: SyncClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInPerson(t, 'owner@example.com');
  const detail = await t.request('GET', base, { as: owner.as });
  surfaceId = detail.body.primarySurface.id;
  name = tablesDocumentName(detail.body.id);
  expect((await create('loads the table')).status).toBe(200);
});
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const create = (title: string) => t.request('POST', `${base}/rows`, { as: owner.as, body: { data: { title } } });
const serverState = () => t.services.sync.read(name, (doc) => Y.encodeStateAsUpdate(doc));
const serverRows = () => t.services.sync.read(name, (doc) => rowsIn(doc));
const rowsIn = (doc: Y.Doc) => listRows(doc, { limit: 10_000 }).rows.map((row): [string, string] => [row.id, String(row.data.title)]).sort();

/** The update of a sync step 2 the server sent, or null for any other message. */
function step2Of(message: Uint8Array): Uint8Array | null {
  const decoder = decoding.createDecoder(message);
  decoding.readVarString(decoder);
  if (decoding.readVarUint(decoder) !== MESSAGE_SYNC || decoding.readVarUint(decoder) !== SYNC_STEP_2) return null;
  return decoding.readVarUint8Array(decoder);
}

/** A client with nothing (an empty state vector), and the step 2 answers it receives. */
async function freshClient(person: Person = owner): Promise<{ client: SyncClient; answers: Uint8Array[] }> {
  const client = connectClient(t.url, name, { cookie: person.cookie });
  clients.push(client);
  const answers: Uint8Array[] = [];
  client.provider.on('message', ({ event }: { event: MessageEvent }) => {
    const update = step2Of(new Uint8Array(event.data as ArrayBuffer));
    if (update) answers.push(update);
  });
  await synced(client);
  await acknowledged(client);
  return { client, answers };
}

describe('fresh sync clients of a loaded document', () => {
  it('three one after another, nothing changed between them: the state is encoded once, and each receives exactly the server document', async () => {
    for (const title of ['one', 'two', 'three']) expect((await create(title)).status).toBe(200);
    const expected = await serverState();
    const rows = await serverRows();
    const before = fullStateEncodes.count;
    for (let i = 0; i < 3; i++) {
      const { client, answers } = await freshClient();
      expect(answers).toEqual([expected]);
      expect(rowsIn(client.doc)).toEqual(rows);
    }
    expect(fullStateEncodes.count - before).toBe(1);
    // Each client answered with an empty update, a transaction that changed nothing: still the same state.
    expect(await serverState()).toEqual(expected);
  });

  it('a change between two clients, from the server or from a client, is in what the next receives (encoded again); none is missed', async () => {
    expect((await create('before the first')).status).toBe(200);
    const before = fullStateEncodes.count;
    await freshClient();
    await freshClient();
    expect(fullStateEncodes.count - before).toBe(1);

    expect((await create('after the second')).status).toBe(200);
    const third = await freshClient();
    expect(third.answers).toEqual([await serverState()]);
    expect(rowsIn(third.client.doc).map(([, title]) => title)).toContain('after the second');
    expect(fullStateEncodes.count - before).toBe(2);

    // A deletion from a client: the table's state vector may not move, the answer must.
    const removed = rowsIn(third.client.doc).find(([, title]) => title === 'after the second')![0];
    deleteRow(third.client.doc, removed, null);
    await acknowledged(third.client);
    await t.services.sync.changesCommitted(name);
    const fourth = await freshClient();
    expect(fourth.answers).toEqual([await serverState()]);
    expect(rowsIn(fourth.client.doc).map(([id]) => id)).not.toContain(removed);
    expect(rowsIn(fourth.client.doc)).toEqual(await serverRows());
    expect(fullStateEncodes.count - before).toBe(3);
  });

  it('a viewer (read-only) is answered the same bytes as an editor, from the same encoding', async () => {
    const viewer = await signInPerson(t, 'viewer@example.com');
    await addMember(t, (await t.request('GET', base, { as: owner.as })).body.id, viewer.userId, 'viewer');
    expect((await create('before the viewer')).status).toBe(200);
    const expected = await serverState();
    const before = fullStateEncodes.count;
    const editor = await freshClient();
    const reader = await freshClient(viewer);
    expect(editor.answers).toEqual([expected]);
    expect(reader.answers).toEqual([expected]);
    expect(rowsIn(reader.client.doc)).toEqual(await serverRows());
    expect(fullStateEncodes.count - before).toBe(1);
  });

  it('clients connecting while a writer streams rows in all end with exactly the server state', async () => {
    const writer = await freshClient();
    const joining: Array<Promise<{ client: SyncClient }>> = [];
    for (let i = 0; i < 60; i++) {
      insertRow(writer.client.doc, { id: `streamed-${i}`, surfaceId, data: { title: `streamed ${i}` } }, null);
      if (i % 12 === 5) joining.push(freshClient());
      await new Promise((resolve) => setImmediate(resolve));
    }
    // And some with nothing changing in between, sharing one answer while the last rows are still arriving.
    joining.push(freshClient(), freshClient());
    const joined = await Promise.all(joining);
    await acknowledged(writer.client);
    await t.services.sync.changesCommitted(name);
    const rows = await serverRows();
    expect(rows.filter(([id]) => id.startsWith('streamed-'))).toHaveLength(60);
    const stateVector = await t.services.sync.read(name, (doc) => Y.encodeStateVector(doc));
    for (const { client } of joined) {
      await eventually(() => JSON.stringify(rowsIn(client.doc)) === JSON.stringify(rows));
      expect(Y.encodeStateVector(client.doc)).toEqual(stateVector);
    }
  });
});

describe('a kept full-state answer', () => {
  const documentWithRows = (name: string, titles: string[]) => {
    const document = new Document(name, { gc: true });
    for (const title of titles) document.getMap('cells').set(title, title);
    return document;
  };
  const keysIn = (doc: Y.Doc) => [...doc.getMap('cells').keys()].sort();

  it('is not served once the document’s state was replaced without a transaction (a recovery)', () => {
    const answers = new FullStateAnswers();
    const document = documentWithRows('replaced', ['kept', 'never stored']);
    const first = answers.fullState(document);
    expect(answers.fullState(document)).toBe(first);
    replaceDocumentState(document, documentWithRows('from the log', ['kept']));
    const after = answers.fullState(document);
    expect(after).toEqual(Y.encodeStateAsUpdate(document));
    expect(keysIn(decoded(after))).toEqual(['kept']);
  });

  it('is not kept while Yjs holds an update back for a missing dependency (no update event, yet in the encoding)', () => {
    const answers = new FullStateAnswers();
    const document = documentWithRows('pending', ['one']);
    const source = new Y.Doc();
    Y.applyUpdate(source, Y.encodeStateAsUpdate(document));
    const before = Y.encodeStateVector(source);
    source.getMap('cells').set('two', 'two');
    const missing = Y.encodeStateAsUpdate(source, before);
    const afterTwo = Y.encodeStateVector(source);
    source.getMap('cells').set('three', 'three');
    answers.fullState(document);
    // 'three' without 'two': held back, pending in the store.
    Y.applyUpdate(document, Y.encodeStateAsUpdate(source, afterTwo));
    expect(document.store.pendingStructs).not.toBeNull();
    expect(answers.fullState(document)).toEqual(Y.encodeStateAsUpdate(document));
    Y.applyUpdate(document, missing);
    expect(answers.fullState(document)).toEqual(Y.encodeStateAsUpdate(document));
    expect(keysIn(document)).toEqual(['one', 'three', 'two']);
  });

  it('stays under its cap: the answer unused longest goes first, one larger than the cap is not kept', () => {
    const small = documentWithRows('small', ['a']);
    const other = documentWithRows('other', ['b']);
    const size = Y.encodeStateAsUpdate(small).byteLength + Y.encodeStateAsUpdate(other).byteLength;
    const answers = new FullStateAnswers(size);
    answers.fullState(small);
    answers.fullState(other);
    expect(answers.bytes).toBe(size);
    const third = documentWithRows('third', ['c']);
    answers.fullState(third);
    expect(answers.bytes).toBeLessThanOrEqual(size);
    const before = fullStateEncodes.count;
    answers.fullState(small);
    expect(fullStateEncodes.count - before).toBe(1);
    const tiny = new FullStateAnswers(1);
    expect(tiny.fullState(small)).toEqual(Y.encodeStateAsUpdate(small));
    expect(tiny.bytes).toBe(0);
  });
});

function decoded(update: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, update);
  return doc;
}
