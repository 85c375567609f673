import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { serverOrigin } from '../../src/sync/origins';
import { insertRow } from '../../src/model/table/document';
import { setPlan } from '../billing/helpers';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { addMembership, addOrgMember, createWorkspace, elevate, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

let t: TestApp & { store: { dispose(): Promise<void> } };
const clock = new ManualClock(new Date('2027-03-10T12:00:00Z'));
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let roadmap: { id: string; slug: string };

const search = (user: { as: TestUser['as'] }, query: string) => t.request('GET', `/api/search?${query}`, { as: user.as });
const ids = (res: { body: { hits: Array<{ id: string }> } }) => res.body.hits.map((h) => h.id);

async function addRow(user: TestUser, workspace: string, data: Record<string, unknown>) {
  clock.advance(1_000);
  const res = await t.request('POST', `/api/orgs/${user.orgSlug}/workspaces/${workspace}/rows`, { as: user.as, body: { data } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  alice = await signInUser(t, 'alice@search.test');
  bob = await signInUser(t, 'bob@search.test');
  carol = await signInUser(t, 'carol@search.test');
  // Carol belongs to Alice's organisation but to none of its private workspaces.
  await addOrgMember(t, alice.orgId, carol.userId, 'editor');
  roadmap = await createWorkspace(t, alice, { name: 'Quarterly Roadmap', slug: 'roadmap', visibility: 'private' });
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('GET /api/search', () => {
  it('finds a row as soon as its write is acknowledged, case-insensitively, with its workspace and links', async () => {
    const rowId = await addRow(alice, 'roadmap', { title: 'Ship the Pelican importer', status: 'todo', notes: 'needs a parser' });
    const res = await search(alice, 'q=PELICAN');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(typeof res.body.took).toBe('number');
    expect(res.body.hits[0]).toMatchObject({
      id: `row:${rowId}`,
      kind: 'row',
      title: 'Ship the Pelican importer',
      snippet: 'Ship the Pelican importer',
      workspace: { id: roadmap.id, slug: 'roadmap', name: 'Quarterly Roadmap', mode: 'table', org: { slug: alice.orgSlug } },
      surface: { slug: 'table' },
      url: `${t.url}/${alice.orgSlug}/roadmap/table?row=${rowId}`,
      apiUrl: `/api/orgs/${alice.orgSlug}/workspaces/roadmap/rows/${rowId}`,
    });
    expect(res.body.hits[0].score).toBeGreaterThan(0);
    expect(res.body.hits[0].score).toBeLessThanOrEqual(1);
    // The apiUrl is the row itself.
    const row = await t.request('GET', res.body.hits[0].apiUrl, { as: alice.as });
    expect(row.body).toMatchObject({ id: rowId, data: { title: 'Ship the Pelican importer' } });
  });

  it('finds a row written over sync once its update has been derived', async () => {
    const client = connectClient(t.url, tablesDocumentName(roadmap.id), { cookie: alice.cookie });
    try {
      await synced(client);
      const surfaceId = (await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', roadmap.id).executeTakeFirstOrThrow()).id;
      insertRow(client.doc, { id: 'row-from-sync-flamingo', surfaceId, data: { title: 'Flamingo over the wire' } }, null);
      await acknowledged(client);
      // Acknowledged means logged; the projection search reads is written by the derive that follows (docs/SEARCH.md, Freshness).
      await eventually(() => t.services.db.selectFrom('tableRows').select('id').where('id', '=', 'row-from-sync-flamingo').executeTakeFirst(), 15_000);
      const res = await search(alice, 'q=flamingo');
      expect(ids(res)).toEqual(['row:row-from-sync-flamingo']);
    } finally {
      client.destroy();
    }
  });

  it('matches workspace names and doc sections (heading and text), and filters by kind', async () => {
    await createWorkspace(t, alice, {
      name: 'Pelican handbook',
      slug: 'handbook',
      mode: 'doc',
      initialMarkdown: '# Intro\n\nWelcome aboard.\n\n## Feeding the pelican\n\nFish, twice a day, never bread.\n',
    });
    const all = await search(alice, 'q=pelican');
    const kinds = all.body.hits.map((h: { kind: string }) => h.kind).sort();
    expect(kinds).toEqual(['doc-section', 'row', 'workspace']);
    expect(all.body.count).toBe(3);

    const sections = await search(alice, 'q=never%20bread&kind=doc-section');
    expect(sections.body.count).toBe(1);
    const section = sections.body.hits[0];
    expect(section).toMatchObject({ kind: 'doc-section', title: 'Feeding the pelican', snippet: 'Fish, twice a day, never bread.', surface: { slug: 'doc' } });
    expect(section.id).toMatch(/^doc-section:sf_[A-Za-z0-9]+:\d+$/);
    expect(section.url).toMatch(new RegExp(`^${t.url}/${alice.orgSlug}/handbook/doc#section-\\d+$`));

    expect((await search(alice, 'q=pelican&kind=row')).body.hits.map((h: { kind: string }) => h.kind)).toEqual(['row']);
    const workspaces = await search(alice, 'q=pelican&kind=workspace');
    expect(workspaces.body.hits).toEqual([
      expect.objectContaining({ kind: 'workspace', title: 'Pelican handbook', url: `${t.url}/${alice.orgSlug}/handbook`, surface: null }),
    ]);
    expect(workspaces.body.hits[0].snippet).toBeUndefined();
  });

  it('scores a whole-field match 1 and ranks it above a partial one', async () => {
    await addRow(alice, 'roadmap', { title: 'osprey' });
    await addRow(alice, 'roadmap', { title: 'the osprey nest survey, long notes about the nest and its surroundings' });
    const res = await search(alice, 'q=Osprey');
    expect(res.body.hits.map((h: { title: string; score: number }) => [h.title, h.score])).toEqual([
      ['osprey', 1],
      ['the osprey nest survey, long notes about the nest and its surroundings', expect.any(Number)],
    ]);
    expect(res.body.hits[1].score).toBeGreaterThanOrEqual(0.5);
    expect(res.body.hits[1].score).toBeLessThan(0.9);
  });

  it('breaks score ties by recency: the newest change first, and an edit brings a row to the top', async () => {
    const first = await addRow(alice, 'roadmap', { title: 'heron count' });
    const second = await addRow(alice, 'roadmap', { title: 'heron count' });
    const third = await addRow(alice, 'roadmap', { title: 'heron count' });
    expect(ids(await search(alice, 'q=heron%20count'))).toEqual([`row:${third}`, `row:${second}`, `row:${first}`]);

    clock.advance(1_000);
    const edit = await t.request('PATCH', `/api/workspaces/roadmap/rows/${first}`, { as: alice.as, body: { data: { status: 'done' } } });
    expect(edit.status).toBe(200);
    expect(ids(await search(alice, 'q=heron%20count'))).toEqual([`row:${first}`, `row:${third}`, `row:${second}`]);
  });

  it('pages with limit and offset; count is the total before paging', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(await addRow(alice, 'roadmap', { title: `kestrel ${i}` }));
    const newestFirst = made.map((id) => `row:${id}`).reverse();
    const page1 = await search(alice, 'q=kestrel&limit=3');
    const page2 = await search(alice, 'q=kestrel&limit=3&offset=3');
    const page3 = await search(alice, 'q=kestrel&limit=3&offset=6');
    const beyond = await search(alice, 'q=kestrel&limit=3&offset=50');
    expect([page1, page2, page3, beyond].map((r) => r.body.count)).toEqual([7, 7, 7, 7]);
    expect([...ids(page1), ...ids(page2), ...ids(page3)]).toEqual(newestFirst);
    expect(beyond.body.hits).toEqual([]);
    expect((await search(alice, 'q=kestrel')).body.hits).toHaveLength(7); // default limit 20
  });

  it('treats % and _ in the query as literal characters', async () => {
    await addRow(alice, 'roadmap', { title: 'budget 100% spent' });
    await addRow(alice, 'roadmap', { title: 'budget 1000 spent' });
    await addRow(alice, 'roadmap', { title: 'file_name.txt' });
    await addRow(alice, 'roadmap', { title: 'fileXname.txt' });
    await addRow(alice, 'roadmap', { title: 'back\\slash' });
    expect((await search(alice, `q=${encodeURIComponent('100%')}`)).body.hits.map((h: { title: string }) => h.title)).toEqual(['budget 100% spent']);
    expect((await search(alice, `q=${encodeURIComponent('file_name')}`)).body.hits.map((h: { title: string }) => h.title)).toEqual(['file_name.txt']);
    expect((await search(alice, `q=${encodeURIComponent('k\\s')}`)).body.hits.map((h: { title: string }) => h.title)).toEqual(['back\\slash']);
    expect((await search(alice, `q=${encodeURIComponent('%')}`)).body.hits.map((h: { title: string }) => h.title)).toEqual(['budget 100% spent']);
  });

  it("never shows another organisation's workspaces, even public ones, nor private workspaces the caller is not in", async () => {
    await createWorkspace(t, bob, { name: 'Bob private', slug: 'secret', visibility: 'private' });
    await createWorkspace(t, bob, { name: 'Bob public', slug: 'open', visibility: 'public' });
    await addRow(bob, 'secret', { title: 'zebra migration plan' });
    await addRow(bob, 'open', { title: 'zebra sightings' });
    expect((await search(bob, 'q=zebra')).body.count).toBe(2);
    const seenByAlice = await search(alice, 'q=zebra');
    expect(seenByAlice.status).toBe(200);
    expect(seenByAlice.body).toMatchObject({ hits: [], count: 0 });
    expect((await search(alice, 'q=Bob')).body.hits).toEqual([]);

    // Carol is in Alice's org: she finds org-visible workspaces, not Alice's private ones.
    await createWorkspace(t, alice, { name: 'Shared ibis board', slug: 'ibis', visibility: 'org' });
    await addRow(alice, 'ibis', { title: 'ibis feeding times' });
    await addRow(alice, 'roadmap', { title: 'ibis budget (private)' });
    const carolSees = await search(carol, 'q=ibis');
    expect(carolSees.body.hits.map((h: { title: string }) => h.title).sort()).toEqual(['Shared ibis board', 'ibis feeding times']);

    // A membership row opens the private one.
    await addMembership(t, roadmap.id, carol.userId, 'viewer');
    expect((await search(carol, 'q=ibis')).body.count).toBe(3);
  });

  it('searches only the one workspace of a scoped key, and leaves archived workspaces out', async () => {
    const scoped = await insertKey(t, alice, { role: 'viewer', scopeWorkspaceId: roadmap.id });
    await addRow(alice, 'ibis', { title: 'cormorant in ibis' });
    await addRow(alice, 'roadmap', { title: 'cormorant in roadmap' });
    expect((await search(alice, 'q=cormorant')).body.count).toBe(2);
    expect((await search(scoped, 'q=cormorant')).body.hits.map((h: { title: string }) => h.title)).toEqual(['cormorant in roadmap']);

    await elevate(t, alice);
    expect((await t.request('DELETE', '/api/workspaces/ibis', { as: alice.as })).status).toBe(200);
    expect((await search(alice, 'q=cormorant')).body.hits.map((h: { title: string }) => h.title)).toEqual(['cormorant in roadmap']);
  });

  it('does not find rows of a deleted sheet', async () => {
    const sheet = await t.request('POST', '/api/workspaces/roadmap/surfaces', { as: alice.as, body: { kind: 'table', slug: 'scratch', name: 'Scratch' } });
    expect(sheet.status).toBe(200);
    await t.request('POST', '/api/workspaces/roadmap/rows', { as: alice.as, body: { data: { title: 'albatross draft' }, surface: 'scratch' } });
    expect((await search(alice, 'q=albatross')).body.hits[0]).toMatchObject({ surface: { slug: 'scratch' } });
    expect((await t.request('DELETE', '/api/workspaces/roadmap/surfaces/scratch?force=1', { as: alice.as })).status).toBe(200);
    expect((await search(alice, 'q=albatross')).body).toMatchObject({ hits: [], count: 0 });
  });

  it('answers an empty query with no hits, and refuses bad parameters without searching', async () => {
    expect((await search(alice, 'q=')).body).toEqual({ hits: [], count: 0, countEstimated: false, took: 0 });
    expect((await search(alice, 'q=%20%20')).body).toMatchObject({ hits: [], count: 0 });
    expect((await search(alice, '')).body).toMatchObject({ hits: [], count: 0 });
    const badKind = await search(alice, 'q=x&kind=files');
    expect(badKind.status).toBe(400);
    expect(badKind.body.error.details[0].path).toEqual(['querystring', 'kind']);
    expect((await search(alice, `q=${'a'.repeat(201)}`)).status).toBe(422);
    expect((await search(alice, 'q=x&limit=0')).status).toBe(422);
    expect((await search(alice, 'q=x&limit=101')).status).toBe(422);
    expect((await search(alice, 'q=x&offset=-1')).status).toBe(422);
    // The HTTP entrance repairs U+0000 to U+FFFD (as for every write), so this is an ordinary miss.
    const withNul = await search(alice, 'q=a%00b');
    expect(withNul.status).toBe(200);
    expect(withNul.body.count).toBe(0);
    expect((await search(alice, 'q=x&unknown=1')).status).toBe(400);
    expect((await t.request('GET', '/api/search?q=x')).status).toBe(401);
    // Text that is not ASCII, and a lone surrogate, are just text that matches nothing.
    expect((await search(alice, `q=${encodeURIComponent('🦩 €')}`)).status).toBe(200);
    expect((await search(alice, 'q=%ED%A0%80')).status).toBe(200);
  });

  it('allows 120 searches a minute per principal, then 429 with Retry-After', async () => {
    const dave = await signInUser(t, 'dave@search.test');
    for (let i = 0; i < 120; i++) {
      const res = await search(dave, 'q=anything');
      expect(res.status).toBe(200);
    }
    const refused = await search(dave, 'q=anything');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', endpoint: 'search', limit: 120, window: '1m' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another principal is not affected, and the window slides.
    expect((await search(alice, 'q=anything')).status).toBe(200);
    clock.advance(61_000);
    expect((await search(dave, 'q=anything')).status).toBe(200);
  });
});

describe('broad queries (issue 21 goal 4)', () => {
  it('past 1,000 matches of a kind: the best of the first 1,000, count a lower bound with countEstimated, paging ends there', async () => {
    const owner = await signInUser(t, 'broad@search.test');
    await setPlan(t, owner.orgId, 'pro');
    const wide = await createWorkspace(t, owner, { name: 'Wide', slug: 'wide' });
    const surfaces = (await t.request('GET', `/api/orgs/${owner.orgSlug}/workspaces/wide/surfaces`, { as: owner.as })).body.surfaces;
    const surfaceId = surfaces.find((s: { kind: string }) => s.kind === 'table').id;
    const principal = { principalType: 'user' as const, id: owner.userId, name: 'broad', avatarUrl: null };
    await t.services.sync.transact(tablesDocumentName(wide.id), serverOrigin(principal, 'system'), (doc) => {
      insertRow(doc, { id: 'pelican-exact', surfaceId, data: { title: 'pelican' } }, null);
      for (let i = 0; i < 1_200; i++) insertRow(doc, { id: `pelican-${i}`, surfaceId, data: { title: `a pelican flock number ${i}` } }, null);
      insertRow(doc, { id: 'pelican-rare', surfaceId, data: { title: 'a lone grebe' } }, null);
    });

    const broad = await eventually(async () => {
      const res = await search(owner, 'q=pelican&limit=5');
      return res.body?.countEstimated ? res : null;
    });
    expect(broad.status).toBe(200);
    expect(broad.body).toMatchObject({ count: 1_000, countEstimated: true });
    expect(broad.body.hits).toHaveLength(5);
    const scores = broad.body.hits.map((h: { score: number }) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // The candidates end the paging.
    const past = await search(owner, 'q=pelican&limit=5&offset=1000');
    expect(past.body).toMatchObject({ hits: [], count: 1_000, countEstimated: true });
    // Below the threshold counts stay exact.
    const rare = await search(owner, 'q=grebe');
    expect(rare.body).toMatchObject({ count: 1, countEstimated: false });
    expect(ids(rare)).toEqual(['row:pelican-rare']);
    const narrow = await search(owner, 'q=pelican%20flock%20number%2011&limit=20');
    // 11, 110-119 and 1100-1199: 111 rows, all counted.
    expect(narrow.body).toMatchObject({ count: 111, countEstimated: false });
  });
});
