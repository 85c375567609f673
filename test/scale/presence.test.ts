import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import type { TestApp } from '../helpers/app';
import type { ServerProcess } from '../helpers/server-process';
import { connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { addMember, signInPerson, type Person } from '../keys/fixtures';
import type { RedisOutage } from './redis-outage';
import { startTwoInstances, type TwoInstances } from './two-instances';

/**
 * Presence across two instances on one Postgres and one Redis (docs/SYNC.md,
 * "Presence"): instance A is a real process (so it can be SIGKILLed),
 * instance B runs in this process. Like test/scale/two-instances.test.ts it
 * needs TEST_DATABASE_URL and TEST_REDIS_URL; without them it is reported
 * as skipped, never passed.
 */
const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/** Bounds each wait for a condition; two servers, Postgres and Redis share two cores with other test runs here. */
const PATIENCE_MS = 30_000;

type Entry = { principal: { id: string }; since: string; connections: number; cursor?: unknown };

describe.skipIf(!shared)('presence on two instances (needs TEST_DATABASE_URL and TEST_REDIS_URL)', { timeout: 4 * PATIENCE_MS }, () => {
  let instances: TwoInstances;
  let a: ServerProcess;
  let b: TestApp;
  let outage: RedisOutage;
  let owner: Person;
  let editor: Person;
  let base: string;
  let workspaceId: string;
  let docName: string;
  const clients: SyncClient[] = [];

  function connect(url: string, person: Person) {
    const client = connectClient(url, docName, { cookie: person.cookie });
    clients.push(client);
    return client;
  }

  async function presentOn(url: string, query = ''): Promise<Entry[]> {
    const res = await fetch(`${url}${base}/presence${query}`, { headers: { cookie: `svc-session=${owner.cookie}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { present: Entry[] }).present;
  }

  beforeAll(async () => {
    // Entries of an instance that stops refreshing them count for two seconds (refreshed every 2/3 s).
    instances = await startTwoInstances({ PRESENCE_TTL_SECONDS: '2' });
    ({ a, b, outage } = instances);
    owner = await signInPerson(b, 'owner@presence-scale.test');
    editor = await signInPerson(b, 'editor@presence-scale.test');
    const detail = await b.request('GET', '/api/workspaces/welcome', { as: owner.as });
    workspaceId = detail.body.id;
    base = `/api/workspaces/${workspaceId}`;
    docName = tablesDocumentName(detail.body.id);
    await addMember(b, detail.body.id, editor.userId, 'editor');
  });

  afterAll(async () => {
    for (const client of clients) client.destroy();
    await instances?.close();
  });

  it('lists a client of A on B (and both instances’ clients on either), and forgets it once it disconnects', async () => {
    const onA = connect(a.url, editor);
    await synced(onA, PATIENCE_MS);
    // B has not loaded the document: its answer comes from what A wrote to Redis.
    const seen = await eventually(async () => {
      const entries = await presentOn(b.url);
      return entries.length === 1 ? entries : null;
    }, PATIENCE_MS);
    expect(seen[0]).toMatchObject({ principal: { id: editor.userId }, connections: 1 });

    const editorOnB = connect(b.url, editor);
    const ownerOnB = connect(b.url, owner);
    await Promise.all([synced(editorOnB, PATIENCE_MS), synced(ownerOnB, PATIENCE_MS)]);
    for (const url of [a.url, b.url]) {
      const both = await eventually(async () => {
        const entries = await presentOn(url);
        return entries.length === 2 && entries.find((e) => e.principal.id === editor.userId)?.connections === 2 ? entries : null;
      }, PATIENCE_MS);
      expect(both.map((e) => e.principal.id).sort()).toEqual([owner.userId, editor.userId].sort());
      // `since` is the earlier of the editor's two connections: the one on A.
      expect(both.find((e) => e.principal.id === editor.userId)!.since).toBe(seen[0]!.since);
    }

    editorOnB.destroy();
    ownerOnB.destroy();
    onA.destroy();
    await eventually(async () => (await presentOn(b.url)).length === 0 && (await presentOn(a.url)).length === 0, PATIENCE_MS);
  });

  it('describes on B the doc selection a client of A shares', async () => {
    const written = await b.request('PUT', `${base}/doc`, { as: owner.as, body: { markdown: 'Hello world' } });
    expect(written.status).toBe(200);
    const surfaceId = written.body.surfaceId as string;
    const onA = connectClient(a.url, `${workspaceId}/doc/${surfaceId}`, { cookie: editor.cookie });
    clients.push(onA);
    await synced(onA, PATIENCE_MS);
    const text = paragraphText(onA.doc, 0);
    onA.provider.awareness!.setLocalStateField('cursor', {
      anchor: Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text, 6)),
      head: Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text, 11)),
    });
    const entry = await eventually(async () => {
      const [first] = await presentOn(b.url, `?surfaceId=${surfaceId}`);
      return first?.cursor ? first : null;
    }, PATIENCE_MS);
    // "world": the paragraph's text starts at body position 1.
    expect(entry).toMatchObject({ principal: { id: editor.userId }, connections: 1, cursor: { type: 'doc', anchor: 7, head: 12 } });
    onA.destroy();
    await eventually(async () => (await presentOn(b.url, `?surfaceId=${surfaceId}`)).length === 0, PATIENCE_MS);
  });

  it('keeps answering on an instance cut off from Redis, and shares its clients again once Redis is back', async () => {
    const onB = connect(b.url, owner);
    await synced(onB, PATIENCE_MS);
    await eventually(async () => (await presentOn(a.url)).some((e) => e.principal.id === owner.userId), PATIENCE_MS);
    outage.cut();
    // B still knows its own client; A stops counting B's part once it is not refreshed within the TTL.
    await eventually(async () => (await presentOn(a.url)).length === 0, PATIENCE_MS);
    expect((await presentOn(b.url)).map((e) => e.principal.id)).toEqual([owner.userId]);
    outage.restore();
    await eventually(async () => (await presentOn(a.url)).some((e) => e.principal.id === owner.userId), PATIENCE_MS);
    onB.destroy();
    await eventually(async () => (await presentOn(a.url)).length === 0, PATIENCE_MS);
  });

  it('drops the entries of an instance that died once they expire', async () => {
    const onA = connect(a.url, owner);
    await synced(onA, PATIENCE_MS);
    await eventually(async () => (await presentOn(b.url)).some((e) => e.principal.id === owner.userId), PATIENCE_MS);
    // SIGKILL: A never removes its part; B stops counting it when it is not refreshed within the TTL.
    await a.kill('SIGKILL');
    await eventually(async () => (await presentOn(b.url)).length === 0, PATIENCE_MS);
    onA.destroy();
  });
});
