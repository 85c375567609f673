import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsertQueryNode, sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { listDocSections, PART_OVERLAP, replaceDocSections, searchParts } from '../../src/persistence/doc-sections';
import { searchProjections } from '../../src/persistence/search';
import * as sectionParts from '../../src/persistence/migrations/0190_doc_section_parts';
import { startTestApp, type TestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';
import { statementRecorder } from '../helpers/statements';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Doc sections searched in parts (src/persistence/doc-sections.ts
 * `searchParts`, migration 0190): a long section's searched text is cut
 * into parts of 1-4 KB so that an edit indexes again what it changed, not
 * the whole section, and search still finds every phrase of it.
 */

/** Prose of lower-case words (nothing Markdown reads as markup), paragraphs of about 400 characters, `length` characters in all. */
function prose(length: number, seed = 1): string {
  let state = seed;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const words = ['pelican', 'harbour', 'lantern', 'meadow', 'copper', 'quiet', 'ledger', 'orchard', 'velvet', 'summit', 'tide', 'granite', 'willow', 'ember', 'falcon', 'thistle'];
  const paragraphs: string[] = [];
  let total = 0;
  while (total < length) {
    const paragraph: string[] = [];
    while (paragraph.join(' ').length < 400) paragraph.push(words[Math.floor(random() * words.length)]! + (random() < 0.1 ? String(Math.floor(random() * 1000)) : ''));
    const text = paragraph.join(' ');
    paragraphs.push(text);
    total += text.length + 2;
  }
  return paragraphs.join('\n\n').slice(0, length).trimEnd();
}

/** The section's text again from its parts, in order: the first without its heading line, the others without their repeated start. */
function joined(parts: string[]): string {
  return parts.map((part, i) => (i === 0 ? part.slice(part.indexOf('\n') + 1) : part.slice(PART_OVERLAP))).join('');
}

describe('searchParts', () => {
  it('keeps a short section whole, its heading and a newline before its text, as the searched text was', () => {
    expect(searchParts('Feeding', 'Fish, twice a day.')).toEqual(['Feeding\nFish, twice a day.']);
    expect(searchParts(null, 'untitled')).toEqual(['\nuntitled']);
  });

  it('cuts a long text after whitespace into parts of at most 4 KB, each after the 100 characters before it; the parts hold the text whole', () => {
    const text = prose(100_000);
    const parts = searchParts('Long', text);
    expect(parts.length).toBeGreaterThanOrEqual(25);
    expect(parts[0]!.startsWith('Long\n')).toBe(true);
    for (const part of parts.slice(1)) expect(part.length - PART_OVERLAP).toBeLessThanOrEqual(4096);
    for (const part of parts.slice(1)) expect(part.length - PART_OVERLAP).toBeGreaterThanOrEqual(1024);
    expect(joined(parts)).toBe(text);
    // Every cut is after a whitespace: no word is split between two parts.
    for (const part of parts.slice(0, -1)) expect(part.at(-1)).toMatch(/\s/);
  });

  it('cuts where the text decides, not by offset: text typed into the middle changes the part it lands in (and the next part\'s repeated start), and the others come out the same', () => {
    const text = prose(60_000, 7);
    const before = searchParts(null, text);
    const at = text.indexOf(' ', 30_000);
    const after = searchParts(null, `${text.slice(0, at)} pelican zeppelin ledger${text.slice(at)}`);
    const changed = after.filter((part) => !before.includes(part));
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(changed.length).toBeLessThanOrEqual(2);
    expect(before.filter((part) => !after.includes(part)).length).toBeLessThanOrEqual(2);
  });

  it('never splits a surrogate pair: text without whitespace is cut at 4 KB, moved back before a pair', () => {
    const text = '😀'.repeat(5_000);
    const parts = searchParts(null, text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.isWellFormed()).toBe(true);
    expect(parts.map((part, i) => (i === 0 ? part.slice(1) : part)).join('').replaceAll('😀', '')).toBe('');
  });
});

describe('a long doc section searched in parts', () => {
  let t: TestApp & { store: { dispose(): Promise<void> } };
  let ada: TestUser;
  let ws: { id: string; surfaceId: string; base: string };
  const text = prose(100_000, 3);
  const search = async (q: string) => {
    const res = await t.request('GET', `/api/search?q=${encodeURIComponent(q)}&kind=doc-section`, { as: ada.as });
    expect(res.status, res.text).toBe(200);
    return res.body.hits as Array<{ id: string; kind: string }>;
  };
  const storedParts = () => t.services.db.selectFrom('docSectionParts').select(['idx', 'hash', 'searchText']).where('surfaceId', '=', ws.surfaceId).execute();

  beforeAll(async () => {
    t = await startTestApp();
    ada = await signInUser(t, 'ada@parts.test');
    const created = await createWorkspace(t, ada, { name: 'Parts', slug: 'parts', mode: 'doc' });
    ws = { id: created.id, surfaceId: created.primarySurface.id, base: '/api/workspaces/parts' };
    const put = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: `# Long\n\n${text}\n` } });
    expect(put.status, put.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await t?.store.dispose();
  });

  it('stores the section whole and its searched text in parts; an edit in its middle indexes one or two parts again, and the section reads back whole', async () => {
    expect((await listDocSections(t.services.db, ws.surfaceId)).map((s) => s.text)).toEqual([text]);
    const parts = await storedParts();
    expect(parts.length).toBeGreaterThanOrEqual(25);
    expect(new Set(parts.map((part) => part.searchText))).toEqual(new Set(searchParts('Long', text)));

    const inserted: number[] = [];
    const db = t.services.db.withPlugin(
      statementRecorder((node, result) => {
        if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'doc_section_parts') inserted.push(Number(result.numAffectedRows));
      }),
    );
    const at = text.indexOf(' ', 50_000);
    const edited = `${text.slice(0, at)} zeppelin${text.slice(at)}`;
    await db.transaction().execute((tx) => replaceDocSections(tx, ws.id, ws.surfaceId, [{ index: 0, heading: 'Long', level: 1, text: edited }], new Date()));
    expect(inserted.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(1);
    expect(inserted.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(2);
    const after = await storedParts();
    expect(new Set(after.map((part) => part.searchText))).toEqual(new Set(searchParts('Long', edited)));
    expect(parts.filter((part) => !after.some((kept) => kept.hash === part.hash)).length).toBeLessThanOrEqual(2);
    expect((await listDocSections(t.services.db, ws.surfaceId)).map((s) => s.text)).toEqual([edited]);
    expect((await search('zeppelin')).map((hit) => hit.id)).toEqual([`doc-section:${ws.surfaceId}:0`]);

    // Back to the text as the doc holds it, for the searches below.
    await t.services.db.transaction().execute((tx) => replaceDocSections(tx, ws.id, ws.surfaceId, [{ index: 0, heading: 'Long', level: 1, text }], new Date()));
  });

  it('finds a phrase across a cut, once per section; a query longer than the parts\' repeated start across a cut too, and not one whose start alone is there', async () => {
    const parts = searchParts('Long', text);
    // Where the second part's own text starts in the section.
    const cut = parts[0]!.length - 'Long\n'.length;
    const section = `doc-section:${ws.surfaceId}:0`;
    const across = text.slice(cut - 20, cut + 20);
    expect(parts.some((part) => part.includes(across))).toBe(true);
    expect((await search(across)).map((hit) => hit.id)).toEqual([section]);

    // Starts further before the cut than the second part repeats: in no part whole.
    const long = text.slice(cut - 140, cut + 40);
    expect(long.length).toBeGreaterThan(PART_OVERLAP);
    expect(parts.some((part) => part.includes(long))).toBe(false);
    expect((await search(long)).map((hit) => hit.id)).toEqual([section]);
    expect((await search(long.toUpperCase())).map((hit) => hit.id)).toEqual([section]);
    expect(await search(`${long.slice(0, 170)} qqqq`)).toEqual([]);
    // Heading and text are one searched text, as before: the heading line and the first words.
    expect((await search(`Long\n${text.slice(0, 30)}`)).map((hit) => hit.id)).toEqual([section]);
  });
});

describe('doc sections stored before parts (migration 0190)', () => {
  let store: Awaited<ReturnType<typeof freshDataStore>>;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    store = await freshDataStore();
    handle = await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir });
  });
  afterAll(async () => {
    await handle?.close();
    await store?.dispose();
  });

  it('become one part each, found as before; the next projection of their doc cuts a long one into parts', async () => {
    const db = handle.db;
    await sectionParts.down(db);
    const workspace = 'ws_parts_upgrade';
    await sql`insert into orgs (id, slug, name) values ('org_parts_upgrade', 'parts-upgrade', 'Parts')`.execute(db);
    await sql`insert into principals (id, kind, name) values ('u_parts_upgrade', 'user', 'Ada')`.execute(db);
    await sql`insert into users (id, email) values ('u_parts_upgrade', 'ada@upgrade.test')`.execute(db);
    await sql`insert into workspaces (id, org_id, slug, name, mode, visibility, created_by_id, created_by_type) values (${workspace}, 'org_parts_upgrade', 'upgrade', 'Upgrade', 'doc', 'private', 'u_parts_upgrade', 'user')`.execute(db);
    await sql`insert into surfaces (id, workspace_id, slug, kind, name, position) values ('sf_parts_upgrade', ${workspace}, 'doc', 'doc', 'Doc', 0)`.execute(db);
    const long = prose(30_000, 5);
    await sql`insert into doc_sections (workspace_id, surface_id, idx, heading, level, text) values
      (${workspace}, 'sf_parts_upgrade', 0, null, 0, 'an untitled start'),
      (${workspace}, 'sf_parts_upgrade', 1, 'Long', 1, ${long})`.execute(db);
    await sectionParts.up(db);

    const parts = await db.selectFrom('docSectionParts').select(['idx', 'searchText']).where('surfaceId', '=', 'sf_parts_upgrade').orderBy('idx').execute();
    expect(parts).toEqual([
      { idx: 0, searchText: '\nan untitled start' },
      { idx: 1, searchText: `Long\n${long}` },
    ]);
    const found = async (q: string) =>
      (await searchProjections(db, { workspaceIds: [workspace], text: q, kinds: new Set(['doc-section']), limit: 10, offset: 0 })).matches.map((m) => [m.ref, m.text]);
    expect(await found('untitled')).toEqual([['sf_parts_upgrade:0', '\nan untitled start']]);
    expect(await found(long.slice(20_000, 20_200))).toEqual([['sf_parts_upgrade:1', `Long\n${long}`]]);

    await replaceDocSections(db, workspace, 'sf_parts_upgrade', [{ index: 0, heading: null, level: 0, text: 'an untitled start' }, { index: 1, heading: 'Long', level: 1, text: `${long} and more` }], new Date());
    const cut = await db.selectFrom('docSectionParts').select(['idx', 'searchText']).where('surfaceId', '=', 'sf_parts_upgrade').execute();
    expect(cut.filter((part) => part.idx === 0).map((part) => part.searchText)).toEqual(['\nan untitled start']);
    expect(new Set(cut.filter((part) => part.idx === 1).map((part) => part.searchText))).toEqual(new Set(searchParts('Long', `${long} and more`)));
    expect(await found('and more')).toEqual([['sf_parts_upgrade:1', `Long\n${long} and more`]]);
  });
});
