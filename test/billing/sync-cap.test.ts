import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROWS_REFUSED_MESSAGE } from '../../src/events/observer';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow, listRows } from '../../src/model/table/document';
import { startTestApp, type TestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { setPlan } from './helpers';

/**
 * The row cap on sync writes (issue 15, item 3; docs/LIMITS.md "Rows over
 * sync"): real providers write bursts past the cap; the table ends at the
 * cap exactly, rows within it are never removed, and the client whose rows
 * were refused is told on its connection and on the SSE stream.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let editor: TestUser;
const clients: SyncClient[] = [];
const CAP = 500;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'owner@sync-cap.test');
  editor = await signInUser(t, 'editor@sync-cap.test');
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

async function tableWorkspace(slug: string) {
  const workspace = await createWorkspace(t, owner, { name: slug, slug });
  const detail = await t.request('GET', `/api/workspaces/${slug}`, { as: owner.as });
  return { id: workspace.id as string, slug, surfaceId: detail.body.primarySurface.id as string, docName: tablesDocumentName(workspace.id) };
}

/** A provider that collects the stateless messages the server sends it. */
async function connect(user: TestUser, docName: string) {
  const client = connectClient(t.url, docName, { cookie: user.cookie });
  clients.push(client);
  const messages: any[] = [];
  client.provider.on('stateless', ({ payload }: { payload: string }) => messages.push(JSON.parse(payload)));
  await synced(client, 30_000);
  return { client, messages };
}

async function serverRowIds(slug: string): Promise<string[]> {
  const res = await t.request('GET', `/api/workspaces/${slug}/rows?limit=1000`, { as: owner.as });
  expect(res.status).toBe(200);
  return res.body.rows.map((r: { id: string }) => r.id);
}

/** Rows whose events and projection are committed (REST reads the live document, which shows a client's rows before that). */
async function committedRowCount(workspaceId: string): Promise<number> {
  const row = await t.services.db.selectFrom('tableRows').select((eb) => eb.fn.countAll<number>().as('n')).where('workspaceId', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

const clientRowIds = (client: SyncClient) => listRows(client.doc).rows.map((r) => r.id);

function burst(client: SyncClient, surfaceId: string, prefix: string, count: number): string[] {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
  client.doc.transact(() => ids.forEach((id) => insertRow(client.doc, { id, surfaceId, data: { title: id } }, null)));
  return ids;
}

describe('the row cap on sync writes', { timeout: 300_000 }, () => {
  it('two clients, 3 bursts of 200 rows each at a 500-row cap: exactly 500 rows, none of the first acknowledged ones removed, both clients converge and are told', async () => {
    const ws = await tableWorkspace('bursts');
    await addMembership(t, ws.id, editor.userId, 'editor');
    const a = await connect(owner, ws.docName);
    const b = await connect(editor, ws.docName);
    const sse = openSse(`${t.url}/api/workspaces/${ws.slug}/subscribe`, { cookie: `svc-session=${owner.cookie}` });
    expect(await sse.ready).toBe(200);

    const rounds: Array<{ a: string[]; b: string[] }> = [];
    for (let round = 1; round <= 3; round++) {
      const ids = { a: burst(a.client, ws.surfaceId, `a${round}`, 200), b: burst(b.client, ws.surfaceId, `b${round}`, 200) };
      rounds.push(ids);
      // Hundreds of rows an update: generous waits, the machine may be busy.
      await Promise.all([acknowledged(a.client, 60_000), acknowledged(b.client, 60_000)]);
      const expected = Math.min(CAP, 400 * round);
      await eventually(async () => (await serverRowIds(ws.slug)).length === expected && a.messages.length + b.messages.length >= (round > 1 ? round - 1 : 0), 60_000, 100);
    }

    const onServer = new Set(await serverRowIds(ws.slug));
    expect(onServer.size).toBe(CAP);
    // Round 1 was acknowledged and within the cap: every row of it stays.
    for (const id of [...rounds[0]!.a, ...rounds[0]!.b]) expect(onServer.has(id)).toBe(true);
    // Round 2 had room for 100: the first 100 rows, in creation order, of whichever burst committed first; the other burst lost all of its rows.
    const keptA = rounds[1]!.a.filter((id) => onServer.has(id));
    const keptB = rounds[1]!.b.filter((id) => onServer.has(id));
    const [winner, loser] = keptA.length > 0 ? [rounds[1]!.a, keptB] : [rounds[1]!.b, keptA];
    expect([...keptA, ...keptB]).toEqual(winner.slice(0, 100));
    expect(loser).toEqual([]);
    // Round 3 came when the table was full.
    for (const id of [...rounds[2]!.a, ...rounds[2]!.b]) expect(onServer.has(id)).toBe(false);

    // Both clients converge on the server's rows.
    const sameAsServer = (client: SyncClient) => {
      const ids = clientRowIds(client);
      return ids.length === CAP && ids.every((id) => onServer.has(id));
    };
    await eventually(() => sameAsServer(a.client) && sameAsServer(b.client), 60_000, 100);

    // Each client is told on its own connection which of its rows were refused, and why.
    const refusedOf = (messages: any[]) => messages.flatMap((m) => m.rowIds as string[]).sort();
    const attempted = rounds.flatMap((r) => [...r.a, ...r.b]);
    const refused = attempted.filter((id) => !onServer.has(id));
    expect(refused).toHaveLength(1200 - CAP);
    expect(refusedOf(a.messages)).toEqual(refused.filter((id) => id.startsWith('a')).sort());
    expect(refusedOf(b.messages)).toEqual(refused.filter((id) => id.startsWith('b')).sort());
    for (const message of [...a.messages, ...b.messages]) expect(message).toMatchObject({ type: ROWS_REFUSED_MESSAGE, reason: 'over_limit', limit: 'rows', cap: CAP });

    // And on the workspace's SSE stream: row.refused naming the author; refused rows never appear as created or deleted.
    const refusedFrames = await eventually(() => {
      const frames = sse.frames.filter((f) => f.event === 'row.refused');
      return frames.flatMap((f) => f.data.data.rowIds).length === refused.length ? frames : null;
    }, 30_000);
    for (const frame of refusedFrames) {
      expect(frame.data.principal).toMatchObject({ id: 'system' });
      expect(frame.data.data).toMatchObject({ reason: 'over_limit', limit: 'rows', cap: CAP, plan: 'free' });
      const author = frame.data.data.author.id;
      expect([owner.userId, editor.userId]).toContain(author);
      for (const id of frame.data.data.rowIds) expect(id.startsWith(author === owner.userId ? 'a' : 'b')).toBe(true);
    }
    const refusedSet = new Set(refused);
    const mentioned = sse.frames.filter((f) => f.event === 'row.created' || f.event === 'row.deleted').map((f) => f.data.data.id);
    expect(mentioned.filter((id) => refusedSet.has(id))).toEqual([]);
    expect(sse.frames.filter((f) => f.event === 'row.created')).toHaveLength(CAP);
    sse.close();

    // REST agrees: the cap is reached.
    const refusedOverRest = await t.request('POST', `/api/workspaces/${ws.slug}/rows`, { as: owner.as, body: { data: { title: 'one too many' } } });
    expect(refusedOverRest.status).toBe(402);
    expect(refusedOverRest.body).toMatchObject({ code: 'over_limit', limit: 'rows', current: CAP, cap: CAP });
  });

  it('REST never shows a row the cap refuses: lists, single rows and 402 bodies polled during sync bursts past the cap', async () => {
    const ws = await tableWorkspace('refused-unseen');
    await addMembership(t, ws.id, editor.userId, 'editor');
    const a = await connect(owner, ws.docName);
    const b = await connect(editor, ws.docName);
    // Almost full, so the bursts below cross the cap while the readers poll.
    const seeded = burst(a.client, ws.surfaceId, 'rseed', 440);
    await acknowledged(a.client, 60_000);
    await eventually(async () => (await committedRowCount(ws.id)) === seeded.length, 60_000, 100);

    const listed: string[][] = [];
    const seenSingly = new Set<string>();
    const restCreated: string[] = [];
    const overLimit: any[] = [];
    const attempted: string[] = [];
    let done = false;
    const reader = async () => {
      while (!done) {
        const res = await t.request('GET', `/api/workspaces/${ws.slug}/rows?limit=1000`, { as: owner.as });
        expect(res.status).toBe(200);
        listed.push(res.body.rows.map((r: { id: string }) => r.id));
      }
    };
    const singleReader = async () => {
      while (!done) {
        // The newest rows a client made: the ones most likely refused a moment later.
        for (const id of attempted.slice(-8)) {
          const res = await t.request('GET', `/api/workspaces/${ws.slug}/rows/${id}`, { as: owner.as });
          expect([200, 404]).toContain(res.status);
          if (res.status === 200) seenSingly.add(id);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const writer = async () => {
      while (!done) {
        const res = await t.request('POST', `/api/workspaces/${ws.slug}/rows`, { as: editor.as, body: { data: { title: 'over REST' } } });
        expect([200, 201, 402]).toContain(res.status);
        if (res.status === 402) overLimit.push(res.body);
        else restCreated.push(res.body.id);
      }
    };
    const pollers = Promise.all([reader(), reader(), singleReader(), writer(), writer()]);
    pollers.catch(() => {}); // heard below

    let onServer: Set<string>;
    try {
      await eventually(() => restCreated.length >= 4, 30_000);
      // Bursts of 20 rows from both clients, not waiting for acknowledgements, well past the cap.
      for (let round = 0; round < 12; round++) {
        // Row ids of their own: the projection keys rows by id alone, and the first test used a1-000 and so on.
        attempted.push(...burst(a.client, ws.surfaceId, `ra${round}`, 20), ...burst(b.client, ws.surfaceId, `rb${round}`, 20));
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
      await Promise.all([acknowledged(a.client, 60_000), acknowledged(b.client, 60_000)]);
      onServer = new Set(
        await eventually(async () => {
          const ids = await serverRowIds(ws.slug);
          return ids.length === CAP && clientRowIds(a.client).length === CAP && clientRowIds(b.client).length === CAP ? ids : null;
        }, 60_000, 100),
      );
      // A little longer, so the polls also see the settled table.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      done = true;
    }
    await pollers;

    const refused = new Set(attempted.filter((id) => !onServer.has(id)));
    expect(refused.size).toBeGreaterThan(0);
    expect(restCreated.every((id) => onServer.has(id))).toBe(true);
    expect(listed.length).toBeGreaterThan(0);
    expect(Math.max(...listed.map((ids) => ids.length))).toBeLessThanOrEqual(CAP);
    expect(listed.flat().filter((id) => refused.has(id))).toEqual([]);
    expect([...seenSingly].filter((id) => refused.has(id))).toEqual([]);
    expect(overLimit.length).toBeGreaterThan(0);
    for (const body of overLimit) expect(body).toMatchObject({ code: 'over_limit', limit: 'rows', cap: CAP });
    expect(Math.max(...overLimit.map((body) => body.current))).toBeLessThanOrEqual(CAP);

    // Versions are taken from the update log, which holds the refused rows until their removal: shown without them.
    const base = `/api/workspaces/${ws.slug}/surfaces/${ws.surfaceId}/versions`;
    const versions = await t.request('GET', base, { as: owner.as });
    expect(versions.status).toBe(200);
    expect(versions.body.versions.length).toBeGreaterThan(0);
    for (const version of versions.body.versions) {
      const shown = await t.request('GET', `${base}/${version.id}?limit=1000`, { as: owner.as });
      expect(shown.status).toBe(200);
      const ids: string[] = shown.body.rows.map((r: { id: string }) => r.id);
      expect(ids.length).toBeLessThanOrEqual(CAP);
      expect(ids.filter((id) => refused.has(id))).toEqual([]);
    }
  });

  it('an organisation over the cap after a downgrade keeps its rows; new ones are refused; a raised plan applies at once', async () => {
    const ws = await tableWorkspace('downgraded');
    await setPlan(t, owner.orgId, 'pro');
    const { client, messages } = await connect(owner, ws.docName);
    const before = burst(client, ws.surfaceId, 'pre', 520);
    await acknowledged(client, 60_000);
    await eventually(async () => (await serverRowIds(ws.slug)).length === 520, 60_000, 100);
    // The downgrade must come after the burst is held to the (pro) cap, not race its commit.
    await eventually(async () => (await committedRowCount(ws.id)) === 520, 60_000, 100);

    await setPlan(t, owner.orgId, 'free');
    const late = burst(client, ws.surfaceId, 'late', 3);
    await acknowledged(client, 30_000);
    await eventually(() => messages.some((m) => m.rowIds.includes(late[0])), 30_000);
    expect(messages.at(-1)).toMatchObject({ cap: CAP, rowIds: late });
    await eventually(() => clientRowIds(client).length === 520, 30_000);
    expect(new Set(await serverRowIds(ws.slug))).toEqual(new Set(before));

    await setPlan(t, owner.orgId, 'pro');
    const raised = burst(client, ws.surfaceId, 'raised', 2);
    await acknowledged(client, 30_000);
    await eventually(async () => (await serverRowIds(ws.slug)).length === 522, 30_000, 100);
    expect(await serverRowIds(ws.slug)).toEqual(expect.arrayContaining(raised));
    expect(messages.filter((m) => m.rowIds.some((id: string) => raised.includes(id)))).toEqual([]);
  });
});
