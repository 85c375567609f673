import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { APPEND_ROWS_PER_STATEMENT } from '../../src/persistence/document-log';
import { lockDocumentLogs } from '../../src/persistence/document-log-heads';
import { loadStoredDocument } from '../../src/persistence/documents';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { acknowledged, connectClient, eventually, paragraphText, synced } from '../helpers/sync';

let t: Awaited<ReturnType<typeof startTestApp>>;
let cookie: string;

beforeAll(async () => {
  // No compaction folds the log while the test reads it back.
  t = await startTestApp({ env: { COMPACT_AFTER_UPDATES: '1000000' } });
  ({ cookie } = await signIn(t, 'typist@example.com'));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/**
 * A flood that all waits in the server (below message-queue.ts HIGH_WATER)
 * and is derived in one batch (ChangeBatches maxBatch), and that one commit
 * logs in several statements on Postgres (document-log.ts
 * APPEND_ROWS_PER_STATEMENT; on the embedded database one, its updates a run).
 */
const FLOOD = 600;

/**
 * Test-only reach into the engine: how many of a document's messages wait
 * on its connections, and whether the update log has a commit in flight.
 * Only used to line the flood up behind one commit, never asserted on.
 */
function engineState(documentName: string) {
  const engine = t.services.sync as unknown as {
    hocuspocus: { documents: Map<string, { connections: Map<{ messageQueue: { length: number } }, unknown> }> };
    log: { flushing: boolean };
  };
  const connections = engine.hocuspocus.documents.get(documentName)?.connections.keys() ?? [];
  let waiting = 0;
  for (const connection of connections) waiting += connection.messageQueue.length;
  return { waiting, committing: engine.log.flushing };
}

describe('a sync client flooding a doc with pipelined updates', () => {
  it('does not hold the server: a request and a REST write to another document are answered while the flood is applied, and every update is logged, applied and acknowledged in order', async () => {
    const table = await t.request('POST', '/api/workspaces', { as: { cookie }, body: { name: 'Beside', slug: 'beside', mode: 'table' } });
    expect(table.status, table.text).toBe(200);
    const created = await t.request('POST', '/api/workspaces', { as: { cookie }, body: { name: 'Flood', slug: 'flood', mode: 'doc' } });
    expect(created.status).toBe(200);
    const documentName = created.body.primarySurface.syncDocument as string;
    const client = connectClient(t.url, documentName, { cookie });
    await synced(client);
    client.doc.transact(() => {
      const paragraph = new Y.XmlElement('paragraph');
      client.doc.getXmlFragment('default').insert(0, [paragraph]);
      paragraph.insert(0, [new Y.XmlText()]);
    });
    await acknowledged(client);
    const text = paragraphText(client.doc, 0);
    const typed = (i: number) => String(i % 10);

    // The log's commits are held while the flood arrives, so that it is logged in one commit and applied
    // in one go after it (as a client that pipelines faster than commits sees it): one keystroke first,
    // whose commit waits on the lock, then the flood behind it.
    let locked!: () => void;
    let release!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = t.services.db.transaction().execute(async (tx) => {
      await lockDocumentLogs(tx, [documentName]);
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await lockTaken;
    client.doc.transact(() => text.insert(0, '>'));
    await eventually(() => engineState(documentName).committing);
    for (let i = 0; i < FLOOD; i++) client.doc.transact(() => text.insert(text.length, typed(i)));
    await eventually(() => engineState(documentName).waiting === FLOOD + 1);
    expect(FLOOD).toBeGreaterThan(2 * APPEND_ROWS_PER_STATEMENT);

    // As soon as the first update of the flood is acknowledged, a request and a REST write (a row of a table: another
    // document, its own commit) go out; the flood must not finish first. The write waits on the database several times,
    // and each time its next step is served while queued messages remain (src/sync/engine.ts, waiting-requests.ts).
    let unacknowledgedWhenAnswered = -1;
    let unacknowledgedWhenWritten = -1;
    const answered = new Promise<void>((resolve, reject) => {
      const onChange = ({ number }: { number: number }) => {
        if (number >= FLOOD) return;
        client.provider.off('unsyncedChanges', onChange);
        const health = fetch(`${t.url}/api/health`).then((response) => {
          expect(response.status).toBe(200);
          unacknowledgedWhenAnswered = client.provider.unsyncedChanges;
        });
        const write = t.request('POST', '/api/workspaces/beside/rows', { as: { cookie }, body: { data: { title: 'written beside the flood' } } }).then((response) => {
          expect(response.status, response.text).toBe(200);
          unacknowledgedWhenWritten = client.provider.unsyncedChanges;
        });
        Promise.all([health, write]).then(() => resolve(), reject);
      };
      client.provider.on('unsyncedChanges', onChange);
    });
    release();
    await held;
    await answered;
    await acknowledged(client, 60_000);
    expect(unacknowledgedWhenAnswered).toBeGreaterThan(0);
    expect(unacknowledgedWhenWritten).toBeGreaterThan(0);
    const rows = await t.request('GET', '/api/workspaces/beside/rows', { as: { cookie } });
    expect(rows.body.rows.map((row: { data: { title: string } }) => row.data.title)).toContain('written beside the flood');

    const expected = '>' + Array.from({ length: FLOOD }, (_, i) => typed(i)).join('');
    expect(text.toString()).toBe(expected);
    expect(await t.services.sync.read(documentName, (doc) => paragraphText(doc, 0).toString())).toBe(expected);
    // Durable and in order: the log, replayed one update at a time in sequence order, never holds an update
    // back for one that comes later, and ends in the text every client has.
    const stored = await loadStoredDocument(t.services.db, documentName);
    const replayed = new Y.Doc();
    if (stored.snapshot) Y.applyUpdateV2(replayed, stored.snapshot.state);
    for (const { update } of stored.updates) {
      Y.applyUpdate(replayed, update);
      expect(replayed.store.pendingStructs).toBeNull();
    }
    expect(paragraphText(replayed, 0).toString()).toBe(expected);
    client.destroy();
  });
});
