import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { refusalMessage } from '../../web/src/sync/refusal';
import { loadConfig } from '../../src/config';
import type { SyncEngine } from '../../src/sync/engine';

/**
 * Issue 26 item 4: past each sync ceiling (SYNC_MAX_*) the connection or the
 * writer gets a clear error (close code and reason, 413 / 503 over REST),
 * nothing past it is stored, and other documents keep working.
 */

type App = Awaited<ReturnType<typeof startTestApp>>;
type CloseSeen = { code?: number; reason?: string };

/** Every close a provider reports: the document's close message (reason only) and, for a socket of its own, the socket's close (code). */
function closesOf(client: SyncClient): CloseSeen[] {
  const seen: CloseSeen[] = [];
  client.provider.on('close', ({ event }: { event?: CloseSeen }) => seen.push({ code: event?.code, reason: event?.reason }));
  return seen;
}

function harness(env: Record<string, string>) {
  const state = {} as { t: App; ada: TestUser; clients: SyncClient[] };
  state.clients = [];
  beforeAll(async () => {
    state.t = await startTestApp({ env });
    state.ada = await signInUser(state.t, 'ada@example.com');
  });
  afterAll(async () => {
    for (const client of state.clients) client.destroy();
    await state.t.close();
    await state.t.store.dispose();
  });
  const connect = (documentName: string) => {
    const client = connectClient(state.t.url, documentName, { cookie: state.ada.cookie });
    state.clients.push(client);
    return client;
  };
  const docWorkspace = async (slug: string, initialMarkdown = 'start\n') => {
    const ws = await createWorkspace(state.t, state.ada, { name: slug, slug, mode: 'doc', initialMarkdown });
    return { documentName: ws.primarySurface.syncDocument as string, base: `/api/workspaces/${slug}` };
  };
  const markdown = async (base: string) => {
    const res = await state.t.request('GET', `${base}/doc?format=markdown`, { as: state.ada.as });
    expect(res.status).toBe(200);
    return res.body.markdown as string;
  };
  /** Two fresh clients on another document: an edit of one reaches the other and the server. */
  const stillWorks = async (slug: string) => {
    const ws = await docWorkspace(slug);
    const [a, b] = [connect(ws.documentName), connect(ws.documentName)];
    await Promise.all([synced(a), synced(b)]);
    paragraphText(a.doc, 0).insert(0, 'fine ');
    await acknowledged(a);
    await eventually(() => paragraphText(b.doc, 0).toString() === 'fine start');
    expect(await markdown(ws.base)).toBe('fine start\n');
    a.destroy();
    b.destroy();
  };
  return { state, connect, docWorkspace, markdown, stillWorks };
}

const letters = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7 + seed) % 26))).join('');

describe('sync ceiling settings', () => {
  it('defaults to 500 connections, 64 MiB documents, 8 MiB updates, 10,000 loaded documents, and refuses a bad value at start, naming it', () => {
    expect(loadConfig({}).syncCeilings).toEqual({ connectionsPerDocument: 500, documentBytes: 64 * 2 ** 20, updateBytes: 8 * 2 ** 20, loadedDocuments: 10_000 });
    expect(() => loadConfig({ SYNC_MAX_CONNECTIONS_PER_DOCUMENT: '0' })).toThrow(/SYNC_MAX_CONNECTIONS_PER_DOCUMENT/);
    expect(() => loadConfig({ SYNC_MAX_UPDATE_BYTES: 'lots' })).toThrow(/SYNC_MAX_UPDATE_BYTES/);
    expect(() => loadConfig({ SYNC_MAX_DOCUMENT_BYTES: '-1' })).toThrow(/SYNC_MAX_DOCUMENT_BYTES/);
    expect(() => loadConfig({ SYNC_MAX_LOADED_DOCUMENTS: '1.5' })).toThrow(/SYNC_MAX_LOADED_DOCUMENTS/);
  });
});

describe('sync ceilings: connections and sizes', () => {
  const { state, connect, docWorkspace, markdown, stillWorks } = harness({
    SYNC_MAX_CONNECTIONS_PER_DOCUMENT: '2',
    SYNC_MAX_UPDATE_BYTES: '16384',
    SYNC_MAX_DOCUMENT_BYTES: '65536',
  });

  it('closes a connection past SYNC_MAX_CONNECTIONS_PER_DOCUMENT with 4429 too_many_connections; the others keep editing', async () => {
    const ws = await docWorkspace('crowded');
    const [first, second] = [connect(ws.documentName), connect(ws.documentName)];
    await Promise.all([synced(first), synced(second)]);
    const third = connect(ws.documentName);
    const closes = closesOf(third);
    const closed = await third.closed;
    expect(closed.reason).toMatch(/^too_many_connections: this document has too many open connections \(SYNC_MAX_CONNECTIONS_PER_DOCUMENT is 2/);
    // Its own socket carries nothing else: the socket is closed too, with the code.
    await eventually(() => closes.some((c) => c.code === 4429 && c.reason?.startsWith('too_many_connections')));
    // What the web app shows for it (web/src/sync/refusal.ts, in the workspace page's banner).
    expect(refusalMessage(closed.reason)).toContain('this document has too many open connections');

    paragraphText(first.doc, 0).insert(0, 'still ');
    await acknowledged(first);
    await eventually(() => paragraphText(second.doc, 0).toString() === 'still start');
    expect(third.doc.getXmlFragment('default').toString()).not.toContain('still');

    // The ceiling counts open connections: once one leaves, a new one gets in.
    first.destroy();
    await eventually(async () => {
      const fourth = connect(ws.documentName);
      try {
        await synced(fourth, 1000);
        return true;
      } catch {
        fourth.destroy();
        return false;
      }
    });
    await stillWorks('crowded-neighbour');
  });

  it('closes a sync connection whose update is over SYNC_MAX_UPDATE_BYTES with 4413 update_too_large; nothing is stored', async () => {
    const ws = await docWorkspace('big-update');
    const [writer, reader] = [connect(ws.documentName), connect(ws.documentName)];
    await Promise.all([synced(writer), synced(reader)]);
    const closes = closesOf(writer);
    paragraphText(writer.doc, 0).insert(0, letters(20_000));
    const closed = await writer.closed;
    expect(closed.reason).toMatch(/^update_too_large: one change of .* is over the server's ceiling of 0\.02 MiB \(SYNC_MAX_UPDATE_BYTES\); nothing was written/);
    await eventually(() => closes.some((c) => c.code === 4413));
    expect(refusalMessage(closed.reason)).toMatch(/^Not saved: your last change is too large/);

    expect(await markdown(ws.base)).toBe('start\n');
    const logged = await state.t.services.db.selectFrom('documentUpdates').select('update').where('document', '=', ws.documentName).execute();
    expect(logged.map((row) => row.update.byteLength).filter((bytes) => bytes >= 16_384)).toEqual([]);
    // The other client never saw it and still edits.
    paragraphText(reader.doc, 0).insert(0, 'small ');
    await acknowledged(reader);
    expect(await markdown(ws.base)).toBe('small start\n');
    await stillWorks('big-update-neighbour');
  });

  it('closes a sync connection whose update would take the document past SYNC_MAX_DOCUMENT_BYTES with 4413 document_too_large', async () => {
    const ws = await docWorkspace('growing');
    const writer = connect(ws.documentName);
    await synced(writer);
    const closes = closesOf(writer);
    let accepted = 0;
    let closed: CloseSeen | undefined;
    for (let chunk = 0; chunk < 20 && !closed; chunk++) {
      paragraphText(writer.doc, 0).insert(0, letters(10_000, chunk));
      closed = await Promise.race([acknowledged(writer, 10_000).then(() => undefined), writer.closed]);
      if (!closed) accepted++;
    }
    expect(closed?.reason).toMatch(/^document_too_large: this change \(.*\) would take the document \(.*\) over the server's ceiling of 0\.06 MiB \(SYNC_MAX_DOCUMENT_BYTES\); nothing was written/);
    await eventually(() => closes.some((c) => c.code === 4413));
    expect(refusalMessage(closed?.reason)).toMatch(/^Not saved: this document has reached the largest size/);
    // Everything acknowledged is stored, the refused chunk is not, and the document stays under the ceiling.
    expect(accepted).toBeGreaterThanOrEqual(4);
    const stored = await markdown(ws.base);
    expect(stored.length).toBe(accepted * 10_000 + 'start\n'.length);
    expect(stored.length).toBeLessThan(65_536);
    await stillWorks('growing-neighbour');
  });

  it('answers a REST write over SYNC_MAX_UPDATE_BYTES with 413 payload_too_large and changes nothing', async () => {
    const ws = await docWorkspace('rest-big');
    const watcher = connect(ws.documentName);
    await synced(watcher);
    const res = await state.t.request('PUT', `${ws.base}/doc`, { as: state.ada.as, body: { markdown: `${letters(20_000)}\n` } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      error: { code: 'payload_too_large', message: expect.stringContaining('SYNC_MAX_UPDATE_BYTES'), details: { ceiling: 'SYNC_MAX_UPDATE_BYTES', limit: 16_384 } },
      requestId: expect.any(String),
    });
    expect(await markdown(ws.base)).toBe('start\n');
    // The document keeps taking writes, and the client sees exactly what the server holds.
    const ok = await state.t.request('PUT', `${ws.base}/doc`, { as: state.ada.as, body: { markdown: 'after\n' } });
    expect(ok.status).toBe(200);
    await eventually(() => paragraphText(watcher.doc, 0)?.toString() === 'after');
    expect(watcher.doc.getXmlFragment('default').length).toBe(1);
  });

  it('answers a REST write that would take the document past SYNC_MAX_DOCUMENT_BYTES with 413 payload_too_large; the document keeps its state', async () => {
    const ws = await docWorkspace('rest-growing');
    const watcher = connect(ws.documentName);
    await synced(watcher);
    const paragraphs: string[] = ['start'];
    let refused: { status: number; body: any } | undefined;
    for (let chunk = 0; chunk < 20 && !refused; chunk++) {
      const next = [...paragraphs, letters(10_000, chunk)];
      const res = await state.t.request('PUT', `${ws.base}/doc`, { as: state.ada.as, body: { markdown: next.join('\n\n') + '\n' } });
      if (res.status === 200) paragraphs.push(next[next.length - 1]);
      else refused = res;
    }
    expect(refused?.status).toBe(413);
    expect(refused?.body.error).toMatchObject({ code: 'payload_too_large', details: { ceiling: 'SYNC_MAX_DOCUMENT_BYTES', limit: 65_536 } });
    expect(paragraphs.length).toBeGreaterThanOrEqual(5);
    const expected = paragraphs.join('\n\n') + '\n';
    expect(await markdown(ws.base)).toBe(expected);
    await eventually(() => watcher.doc.getXmlFragment('default').length === paragraphs.length);
    // A smaller write still goes through.
    const shrink = await state.t.request('PUT', `${ws.base}/doc`, { as: state.ada.as, body: { markdown: 'short again\n' } });
    expect(shrink.status).toBe(200);
    expect(await markdown(ws.base)).toBe('short again\n');
    await stillWorks('rest-growing-neighbour');
  });
});

describe('sync ceilings: loaded documents', () => {
  const { state, connect, docWorkspace, markdown } = harness({ SYNC_MAX_LOADED_DOCUMENTS: '3' });
  const loaded = () => state.t.services.sync.stats().documents;

  it('unloads the least recently used idle documents past SYNC_MAX_LOADED_DOCUMENTS; every document still reads right', async () => {
    const names: Array<{ base: string; text: string; documentName: string }> = [];
    for (let i = 0; i < 6; i++) {
      const ws = await docWorkspace(`lru-${i}`, `doc number ${i}\n`);
      names.push({ base: ws.base, text: `doc number ${i}\n`, documentName: ws.documentName });
      expect(loaded()).toBeLessThanOrEqual(3);
    }
    for (const { base, text } of names) {
      expect(await markdown(base)).toBe(text);
      expect(loaded()).toBeLessThanOrEqual(3);
    }
    // The three used last are the ones still loaded.
    const engine = state.t.services.sync as unknown as SyncEngine;
    expect([...engine.hocuspocus.documents.keys()].sort()).toEqual(names.slice(3).map((n) => n.documentName).sort());
    const metrics = await state.t.request('GET', '/metrics');
    expect(metrics.text).toMatch(/^trellis_documents_loaded [0-3]$/m);
    expect(metrics.text).not.toMatch(/^trellis_sync_ceiling_refusals_total\{ceiling="loaded_documents"\}/m);
  });

  it('refuses a new document when none loaded is idle (sync too_many_documents, REST 503 with Retry-After); the open ones keep working', async () => {
    const open = [await docWorkspace('busy-0'), await docWorkspace('busy-1'), await docWorkspace('busy-2')];
    const spare = await docWorkspace('spare', 'spare text\n');
    const clients = open.map((ws) => connect(ws.documentName));
    await Promise.all(clients.map((c) => synced(c)));
    expect(loaded()).toBe(3);

    const read = await state.t.request('GET', `${spare.base}/doc?format=markdown`, { as: state.ada.as });
    expect(read.status).toBe(503);
    expect(read.headers.get('retry-after')).toBe('5');
    expect(read.body).toMatchObject({ error: { code: 'too_many_documents', message: expect.stringContaining('SYNC_MAX_LOADED_DOCUMENTS is 3') }, requestId: expect.any(String) });
    const refusedClient = connect(spare.documentName);
    const refusedReason = await refusedClient.authenticationFailed;
    expect((await state.t.request('GET', '/metrics')).text).toMatch(/^trellis_sync_ceiling_refusals_total\{ceiling="loaded_documents"\} 2$/m);
    expect(refusedReason).toMatch(/^too_many_documents: /);
    expect(refusalMessage(refusedReason)).toMatch(/^Not connected: the server has too many documents open/);

    for (const [i, client] of clients.entries()) {
      paragraphText(client.doc, 0).insert(0, `busy ${i} `);
      await acknowledged(client);
      expect(await markdown(open[i].base)).toBe(`busy ${i} start\n`);
    }

    // Once a client leaves, its document is idle and gives way.
    clients[0].destroy();
    await eventually(async () => (await state.t.request('GET', `${spare.base}/doc?format=markdown`, { as: state.ada.as })).body?.markdown === 'spare text\n');
    expect(loaded()).toBeLessThanOrEqual(3);
    expect(await markdown(open[0].base)).toBe('busy 0 start\n');
  });
});
