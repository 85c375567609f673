import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { InsertQueryNode } from 'kysely';
import { statementRecorder } from '../helpers/statements';
import { listDocSections, replaceDocSections } from '../../src/persistence/doc-sections';
import { docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown';
import { docSections, readDocBody, replaceDocBody } from '../../src/model/doc/body';
import { append } from '../../src/sync/document-store';
import { DocChanges, type DocDerived } from '../../src/events/doc-changes';
import { parseDocumentName } from '../../src/model/document-names';
import { serverOrigin } from '../../src/sync/origins';
import { startTestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { acknowledged, connectClient, eventually, paragraphText, synced, type SyncClient } from '../helpers/sync';
import { untilBlockedBehindLock } from '../helpers/database';
import { addMembership, createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
const clients: SyncClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

/** A doc workspace and its doc surface's sync document name. */
async function docWorkspace(slug: string, initialMarkdown?: string) {
  const ws = await createWorkspace(t, ada, { name: slug, slug, mode: 'doc', ...(initialMarkdown === undefined ? {} : { initialMarkdown }) });
  return { id: ws.id as string, surfaceId: ws.primarySurface.id as string, documentName: ws.primarySurface.syncDocument as string, base: `/api/workspaces/${slug}` };
}

function connect(documentName: string, credential: { token?: string; cookie?: string } = { cookie: ada.cookie }) {
  const client = connectClient(t.url, documentName, credential);
  clients.push(client);
  return client;
}

async function events(workspaceId: string, event: string) {
  const rows = await t.services.db
    .selectFrom('events')
    .select(['record', 'principalId'])
    .where('workspaceId', '=', workspaceId)
    .where('event', '=', event)
    .orderBy('seq')
    .execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record));
}

async function sections(surfaceId: string) {
  return t.services.db.selectFrom('docSections').select(['idx', 'heading', 'level', 'text']).where('surfaceId', '=', surfaceId).orderBy('idx').execute();
}

describe('workspace creation with initialMarkdown', () => {
  it('seeds the body, forces mode doc and projects the sections', async () => {
    const res = await t.request('POST', '/api/workspaces', {
      as: ada.as,
      body: { name: 'Notes', slug: 'notes', mode: 'table', initialMarkdown: '# Notes\n\nHello **world**.\n\n## Next\n\n- [ ] ship it\n' },
    });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('doc');
    expect(res.body.primarySurface).toMatchObject({ kind: 'doc', slug: 'doc' });
    const md = await t.request('GET', '/api/workspaces/notes/doc?format=markdown', { as: ada.as });
    expect(md.status).toBe(200);
    expect(md.body).toEqual({ surfaceId: res.body.primarySurface.id, markdown: '# Notes\n\nHello **world**.\n\n## Next\n\n- [ ] ship it\n' });
    expect(await sections(res.body.primarySurface.id)).toEqual([
      { idx: 0, heading: 'Notes', level: 1, text: 'Hello world.' },
      { idx: 1, heading: 'Next', level: 2, text: 'ship it' },
    ]);
    const updated = await events(res.body.id, 'doc.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ principal: { id: ada.userId }, surface: { id: res.body.primarySurface.id, slug: 'doc' }, data: { surfaceId: res.body.primarySurface.id } });
    const columns = await t.request('GET', '/api/workspaces/notes/columns', { as: ada.as });
    expect(columns.body.columns).toEqual([]);
  });
});

describe('GET /doc', () => {
  let ws: Awaited<ReturnType<typeof docWorkspace>>;
  beforeAll(async () => {
    ws = await docWorkspace('reading', '# Title\n\nSome *text* and `code`.\n');
  });

  it('answers ProseMirror JSON by default, Markdown and text by format', async () => {
    const json = await t.request('GET', `${ws.base}/doc`, { as: ada.as });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.body.surfaceId).toBe(ws.surfaceId);
    expect(json.body.content).toEqual(markdownToDoc('# Title\n\nSome *text* and `code`.\n').toJSON());
    const text = await t.request('GET', `${ws.base}/doc?format=text`, { as: ada.as });
    expect(text.body).toEqual({ surfaceId: ws.surfaceId, text: 'Title\n\nSome text and code.' });
    const bySlug = await t.request('GET', `${ws.base}/doc?format=markdown&surface=doc`, { as: ada.as });
    expect(bySlug.body.markdown).toBe('# Title\n\nSome *text* and `code`.\n');
    const byId = await t.request('GET', `${ws.base}/doc?format=markdown&surfaceId=${ws.surfaceId}`, { as: ada.as });
    expect(byId.body.markdown).toBe(bySlug.body.markdown);
    const canonical = await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/reading/doc?format=text`, { as: ada.as });
    expect(canonical.body.text).toBe(text.body.text);
  });

  it('negotiates text/markdown and text/plain when no format is given; format always answers JSON', async () => {
    const md = await t.request('GET', `${ws.base}/doc`, { as: ada.as, headers: { accept: 'text/markdown' } });
    expect(md.status).toBe(200);
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(md.headers.get('vary')).toMatch(/accept/i);
    expect(md.text).toBe('# Title\n\nSome *text* and `code`.\n');
    const plain = await t.request('GET', `${ws.base}/doc`, { as: ada.as, headers: { accept: 'text/plain' } });
    expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(plain.text).toBe('Title\n\nSome text and code.');
    const preferJson = await t.request('GET', `${ws.base}/doc`, { as: ada.as, headers: { accept: 'text/markdown;q=0.5, application/json' } });
    expect(preferJson.body.content.type).toBe('doc');
    const browser = await t.request('GET', `${ws.base}/doc`, { as: ada.as, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.body.content.type).toBe('doc');
    const formatWins = await t.request('GET', `${ws.base}/doc?format=text`, { as: ada.as, headers: { accept: 'text/markdown' } });
    expect(formatWins.headers.get('content-type')).toMatch(/^application\/json/);
    expect(formatWins.body.text).toBe('Title\n\nSome text and code.');
  });

  it('404s without a doc surface, for a surface that is not a doc, and for non-members; public docs read anonymously', async () => {
    expect((await t.request('GET', '/api/workspaces/welcome/doc', { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${ws.base}/doc?surface=nope`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${ws.base}/doc?format=yaml`, { as: ada.as })).status).toBe(400);
    const stranger = await signInUser(t, 'stranger@example.com');
    expect((await t.request('GET', `${ws.base}/doc`, { as: stranger.as })).status).toBe(404);
    expect((await t.request('GET', `${ws.base}/doc`)).status).toBe(404); // anonymous: a private workspace is invisible

    const pub = await createWorkspace(t, ada, { name: 'Public', slug: 'public-doc', mode: 'doc', visibility: 'public', initialMarkdown: 'Open to all.' });
    const anonymous = await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/public-doc/doc?format=markdown`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({ surfaceId: pub.primarySurface.id, markdown: 'Open to all.\n' });
  });
});

describe('PUT /doc', () => {
  it('a Markdown PUT shows up in a connected client and emits doc.updated with a summary', async () => {
    const ws = await docWorkspace('put-sync');
    const client = connect(ws.documentName);
    await synced(client);
    const sse = openSse(`${t.url}${ws.base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    expect(await sse.ready).toBe(200);

    const put = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: '# Plan\n\nWrite the *spec*.\n' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ surfaceId: ws.surfaceId, content: markdownToDoc('# Plan\n\nWrite the *spec*.\n').toJSON() });
    await eventually(() => docToMarkdown(readDocBody(client.doc)) === '# Plan\n\nWrite the *spec*.\n');

    const frame = await eventually(() => sse.frames.find((f) => f.event === 'doc.updated'));
    expect(frame.data).toMatchObject({
      event: 'doc.updated',
      workspace: { id: ws.id, slug: 'put-sync', org: { slug: ada.orgSlug } },
      surface: { id: ws.surfaceId, slug: 'doc' },
      principal: { principalType: 'user', id: ada.userId },
      data: { surfaceId: ws.surfaceId, text: expect.stringContaining('Plan') },
    });
    expect(frame.id).toBe(frame.data.eventId);

    // The same body again changes nothing and emits nothing.
    const before = (await events(ws.id, 'doc.updated')).length;
    expect((await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: '# Plan\n\nWrite the *spec*.\n' } })).status).toBe(200);
    expect(await events(ws.id, 'doc.updated')).toHaveLength(before);
    sse.close();
  });

  it('content wins over markdown; invalid ProseMirror JSON is 400 with the path of the node and writes nothing', async () => {
    const ws = await docWorkspace('put-json', 'Original.');
    const content = { type: 'doc', content: [{ type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'From JSON' }] }] };
    const both = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { content, markdown: 'ignored' } });
    expect(both.status).toBe(200);
    expect(both.body.content).toEqual(content);
    const before = (await events(ws.id, 'doc.updated')).length;

    const invalid = await t.request('PUT', `${ws.base}/doc`, {
      as: ada.as,
      body: { content: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'ok' }, { type: 'bogus' }] }] } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('bad_request');
    expect(invalid.body.error.details).toEqual([{ path: ['content', 'content', '0', 'content', '1', 'type'], code: 'invalid_content', message: expect.stringContaining('bogus') }]);

    const badAttr = await t.request('PUT', `${ws.base}/doc`, {
      as: ada.as,
      body: { content: { type: 'doc', content: [{ type: 'heading', attrs: { level: 9 }, content: [{ type: 'text', text: 'x' }] }] } },
    });
    expect(badAttr.status).toBe(400);
    expect(badAttr.body.error.details[0].path).toEqual(['content', 'content', '0', 'attrs', 'level']);

    const notADoc = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { content: [] } });
    expect(notADoc.status).toBe(400);
    const neither = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: {} });
    expect(neither.status).toBe(400);
    const unknownField = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: 'x', html: '<p>' } });
    expect(unknownField.status).toBe(400);

    expect(await events(ws.id, 'doc.updated')).toHaveLength(before);
    const md = await t.request('GET', `${ws.base}/doc?format=markdown`, { as: ada.as });
    expect(md.body.markdown).toBe('## From JSON\n');
  });

  it('needs edit_doc: viewers and commenters get 403; a workspace without a doc surface gets one on the first PUT', async () => {
    const ws = await docWorkspace('put-roles', 'Guarded.');
    const viewer = await signInUser(t, 'viewer@example.com');
    const commenter = await signInUser(t, 'commenter@example.com');
    await addMembership(t, ws.id, viewer.userId, 'viewer');
    await addMembership(t, ws.id, commenter.userId, 'commenter');
    expect((await t.request('GET', `${ws.base}/doc?format=text`, { as: viewer.as })).body.text).toBe('Guarded.');
    for (const who of [viewer, commenter]) {
      expect((await t.request('PUT', `${ws.base}/doc`, { as: who.as, body: { markdown: 'Hijacked' } })).status).toBe(403);
      expect((await t.request('POST', `${ws.base}/doc/sections`, { as: who.as, body: { markdown: 'Hijacked' } })).status).toBe(403);
    }

    const table = await createWorkspace(t, ada, { name: 'Sheet only', slug: 'sheet-only' });
    expect((await t.request('GET', '/api/workspaces/sheet-only/doc', { as: ada.as })).status).toBe(404);
    const created = await t.request('PUT', '/api/workspaces/sheet-only/doc', { as: ada.as, body: { markdown: 'Now with a doc.' } });
    expect(created.status).toBe(200);
    const surfaces = await t.request('GET', '/api/workspaces/sheet-only/surfaces', { as: ada.as });
    expect(surfaces.body.surfaces.map((s: any) => [s.slug, s.kind])).toEqual([
      ['table', 'table'],
      ['doc', 'doc'],
    ]);
    expect(created.body.surfaceId).toBe(surfaces.body.surfaces[1].id);
    expect((await events(table.id, 'surface.created')).map((e) => e.data.kind)).toEqual(['doc']);
  });
});

describe('sync clients and REST on the same body', () => {
  it("a client's edit shows up in GET ?format=markdown and emits doc.updated attributed to the client", async () => {
    const ws = await docWorkspace('client-edit', '# Shared\n\nFirst.\n');
    const key = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'Scribe' });
    const client = connect(ws.documentName, { token: (key.as as { bearer: string }).bearer });
    await synced(client);
    const sse = openSse(`${t.url}${ws.base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    await sse.ready;

    // What a browser's y-prosemirror binding does: an edit to the body fragment in the documented layout.
    replaceDocBody(client.doc, markdownToDoc('# Shared\n\nFirst.\n\nAdded by the **agent**.\n'), null);
    await acknowledged(client);
    const md = await eventually(async () => {
      const res = await t.request('GET', `${ws.base}/doc?format=markdown`, { as: ada.as });
      return res.body.markdown.includes('agent') ? res.body.markdown : null;
    });
    expect(md).toBe('# Shared\n\nFirst.\n\nAdded by the **agent**.\n');
    const frame = await eventually(() => sse.frames.find((f) => f.event === 'doc.updated' && f.data.principal?.id === key.agentId));
    expect(frame.data).toMatchObject({ principal: { principalType: 'agent', id: key.agentId, name: 'Scribe' }, data: { surfaceId: ws.surfaceId } });
    sse.close();
  });

  it('a PUT that changes paragraph 1 keeps a concurrent client edit to paragraph 2', async () => {
    const ws = await docWorkspace('concurrent', 'Paragraph one.\n\nParagraph two.\n');
    const client = connect(ws.documentName);
    await synced(client);
    await eventually(() => client.doc.getXmlFragment('default').length === 2);

    // The client types into paragraph 2 while the PUT, built from the pre-edit body, is in flight:
    // its edit is made on a copy that has not seen the PUT and merged afterwards.
    const offline = new Y.Doc();
    Y.applyUpdate(offline, Y.encodeStateAsUpdate(client.doc));
    const before = Y.encodeStateVector(offline);
    paragraphText(offline, 1).insert('Paragraph two'.length, ' (typed in a browser)');
    const edit = Y.encodeStateAsUpdate(offline, before);

    const put = await t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown: 'Paragraph ONE, rewritten by an agent.\n\nParagraph two.\n' } });
    expect(put.status).toBe(200);
    await eventually(() => paragraphText(client.doc, 0).toString().includes('ONE'));
    Y.applyUpdate(client.doc, edit);
    await acknowledged(client);

    const expected = 'Paragraph ONE, rewritten by an agent.\n\nParagraph two (typed in a browser).\n';
    const md = await eventually(async () => {
      const res = await t.request('GET', `${ws.base}/doc?format=markdown`, { as: ada.as });
      return res.body.markdown === expected ? res.body.markdown : null;
    });
    expect(md).toBe(expected);
    expect(docToMarkdown(readDocBody(client.doc))).toBe(expected);
  });

  it('projects sections from sync edits too, at most every 2 s', async () => {
    const ws = await docWorkspace('sections-sync', '# One\n\nalpha\n');
    const client = connect(ws.documentName);
    await synced(client);
    await eventually(() => client.doc.getXmlFragment('default').length === 2);
    paragraphText(client.doc, 1).insert(5, ' beta');
    await acknowledged(client);
    await eventually(async () => (await sections(ws.surfaceId))[0]?.text === 'alpha beta', 6000);
    expect(await sections(ws.surfaceId)).toEqual([{ idx: 0, heading: 'One', level: 1, text: 'alpha beta' }]);
  });
});

describe('the sections projection, written section by section', () => {
  it('writes again only the sections whose heading, level or text changed; every row takes the new time, as a whole rewrite gave it, unless none changed', async () => {
    const ws = await docWorkspace('sections-changed', '# One\n\nalpha\n\n## Two\n\nbeta\n\n## Three\n\ngamma\n');
    // Rows each insert into doc_sections wrote (each one a trigram index insert of its whole text).
    const inserted: number[] = [];
    const recording = statementRecorder((node, result) => {
      if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'doc_sections') inserted.push(Number(result.numAffectedRows));
    });
    const db = t.services.db.withPlugin(recording);
    // `storedAt`: the time the rows keep (a projection that changes none writes nothing, not even its time).
    const project = async (rows: Array<{ index: number; heading: string | null; level: number; text: string }>, at: string, storedAt = at) => {
      inserted.length = 0;
      await db.transaction().execute((tx) => replaceDocSections(tx, ws.id, ws.surfaceId, rows, new Date(at)));
      const after = await listDocSections(t.services.db, ws.surfaceId);
      expect(after.map(({ updatedAt: _, ...row }) => row)).toEqual(rows);
      expect(after.map((row) => row.updatedAt.toISOString())).toEqual(rows.map(() => new Date(storedAt).toISOString()));
      return inserted.reduce((sum, n) => sum + n, 0);
    };
    const stored = (await listDocSections(t.services.db, ws.surfaceId)).map(({ updatedAt: _, ...row }) => row);
    expect(stored.map((row) => row.text)).toEqual(['alpha', 'beta', 'gamma']);

    expect(await project(stored.map((row) => (row.index === 1 ? { ...row, text: 'beta, typed on' } : row)), '2026-01-01T00:00:01Z')).toBe(1);
    expect(await project(stored.map((row) => (row.index === 1 ? { ...row, text: 'beta, typed on' } : row)), '2026-01-01T00:00:02Z', '2026-01-01T00:00:01Z')).toBe(0);
    // A heading renamed, a level changed, the last section gone: those two rows written, the third deleted.
    const edited = [{ ...stored[0]!, heading: 'Uno' }, { ...stored[1]!, level: 3, text: 'beta, typed on' }];
    expect(await project(edited, '2026-01-01T00:00:03Z')).toBe(2);
    // A section added at the end, the text of the first in another script (md5 of its UTF-8, as the database hashes it).
    expect(await project([{ ...edited[0]!, text: 'älpha ✓' }, edited[1]!, { index: 2, heading: 'Four', level: 2, text: 'delta' }], '2026-01-01T00:00:04Z')).toBe(2);
    expect(await project([{ ...edited[0]!, text: 'älpha ✓' }, edited[1]!, { index: 2, heading: 'Four', level: 2, text: 'delta' }], '2026-01-01T00:00:05Z', '2026-01-01T00:00:04Z')).toBe(0);
  });
});

describe('the sections projection, two commits at once', () => {
  it('a second projection of the same surface while the first is uncommitted waits for it and then replaces its rows, instead of failing on the first one\'s new section', async () => {
    const ws = await docWorkspace('sections-race', '# One\n\nalpha\n');
    const first = [{ index: 0, heading: 'One', level: 1, text: 'alpha' }, { index: 1, heading: 'Two', level: 2, text: 'from the first commit' }];
    const second = [{ index: 0, heading: 'One', level: 1, text: 'alpha' }, { index: 1, heading: 'Two', level: 2, text: 'from the second commit' }];
    const db = t.services.db;
    let secondDone: Promise<unknown> | undefined;
    await db.transaction().execute(async (tx) => {
      await replaceDocSections(tx, ws.id, ws.surfaceId, first, new Date('2026-01-01T00:00:01Z'));
      secondDone = db.transaction().execute((other) => replaceDocSections(other, ws.id, ws.surfaceId, second, new Date('2026-01-01T00:00:02Z')));
      // On Postgres the second runs on its own connection: wait until it is blocked behind this transaction (on the
      // section's key without the lock, on the lock with it). The embedded database's one session runs it after this one.
      await untilBlockedBehindLock(t.services);
    });
    await secondDone;
    expect((await listDocSections(db, ws.surfaceId)).map(({ updatedAt: _, ...row }) => row)).toEqual(second);
  });
});

describe('the sections projection, the newest last', () => {
  it("a sync client's debounced projection whose transaction starts after a REST write's projection committed writes the doc as it is then, not as it was when the debounce fired", async () => {
    const ws = await docWorkspace('sections-order', '# One\n\nalpha\n');
    const documentName = ws.documentName;
    const parsed = parseDocumentName(documentName)!;
    // The projection's transaction starts late (a busy pool, the embedded database's one session taken): held here until `start`.
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    let asked = false;
    let projecting: Promise<unknown> | undefined;
    const db = t.services.db;
    const late = new Proxy(db, {
      get(target, key) {
        if (key === 'transaction') {
          return () => ({
            execute: <T>(work: (tx: Parameters<Parameters<ReturnType<typeof db.transaction>['execute']>[0]>[0]) => Promise<T>) => {
              asked = true;
              const run = started.then(() => db.transaction().execute(work));
              projecting = run;
              return run;
            },
          });
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const changes = new DocChanges({ clock: t.services.clock, events: t.services.events, webhooks: t.services.webhooks, log: t.services.log, db: late as typeof db });
    // A stand-in for the live document, observed as the engine does.
    const doc = new Y.Doc();
    const derived: DocDerived[] = [];
    doc.on('afterTransaction', (transaction: Y.Transaction) => {
      const made = changes.derive(documentName, parsed, doc, transaction, null);
      if (made) derived.push(made);
    });
    const by = { principalType: 'user' as const, id: ada.userId, name: 'ada', avatarUrl: null };
    // A sync client types: the projection runs after the debounce, and its transaction waits.
    replaceDocBody(doc, markdownToDoc('# One\n\ntyped by the client\n'), { client: 'sync' });
    await eventually(() => asked, 10_000);
    // Meanwhile a REST write changes the doc, and its commit projects it.
    replaceDocBody(doc, markdownToDoc('# One\n\nwritten over REST\n'), serverOrigin(by, 'system'));
    const rest = derived.at(-1)!;
    expect(rest.fromClient).toBe(false);
    const context = { id: ws.id, slug: 'sections-order', orgId: '', orgSlug: '', surfaces: new Map() };
    await db.transaction().execute(async (tx) => changes.persist(tx, context, rest, by, { documentName, seqs: [], deferred: [], run: null, runWrites: [] }, []));
    expect(await sections(ws.surfaceId)).toEqual([{ idx: 0, heading: 'One', level: 1, text: 'written over REST' }]);
    // The debounced projection commits last: search keeps the newest text.
    start();
    await projecting;
    expect(await sections(ws.surfaceId)).toEqual([{ idx: 0, heading: 'One', level: 1, text: 'written over REST' }]);
  });
});

describe('the sections projection, kept block by block', () => {
  /** The sections as reading the whole body gives them, from the client's copy of the document. */
  const wholeRead = (doc: Y.Doc) => docSections(readDocBody(doc)).map((s) => ({ idx: s.index, heading: s.heading, level: s.level, text: s.text }));
  const block = (doc: Y.Doc, index: number) => doc.getXmlFragment('default').get(index) as Y.XmlElement;

  it('a REST write projects what sync clients changed inside blocks, headings and lists since the last projection', async () => {
    const ws = await docWorkspace('sections-mixed', '# One\n\nalpha\n\n## Two\n\n- first\n  - nested\n\nbeta\n\n## Three\n\ngamma\n');
    const client = connect(ws.documentName);
    await synced(client);
    await eventually(() => client.doc.getXmlFragment('default').length === 7);
    // A REST write first: the projection has read every block once.
    expect((await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: { markdown: 'end one' } })).status).toBe(200);
    await eventually(() => client.doc.getXmlFragment('default').length === 8);

    client.doc.transact(() => {
      paragraphText(client.doc, 1).insert(5, ' typed');
      block(client.doc, 2).setAttribute('level', 3 as never);
      // The nested item's paragraph, three levels under the top-level list.
      const nested = ((((block(client.doc, 3).get(0) as Y.XmlElement).get(1) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText;
      nested.insert(0, 'deeply ');
      client.doc.getXmlFragment('default').delete(5, 2);
    });
    await acknowledged(client);
    // Sooner than the sync clients' debounced projection: the REST write projects at once.
    expect((await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: { markdown: 'end two' } })).status).toBe(200);
    await eventually(() => client.doc.getXmlFragment('default').length === 7);
    const expected = wholeRead(client.doc);
    expect(expected.map((s) => s.heading)).toEqual(['One', 'Two']);
    expect(expected[0]!.text).toBe('alpha typed');
    expect(expected[1]).toMatchObject({ level: 3, text: 'first\n\ndeeply nested\n\nbeta\n\nend one\n\nend two' });
    expect(await sections(ws.surfaceId)).toEqual(expected);
  });

  it('an import projects the body it wrote, and later edits to its blocks', async () => {
    const ws = await docWorkspace('sections-import', '# Before\n\nold text\n');
    const form = new FormData();
    form.append('file', new Blob(['# Imported\n\nfirst paragraph\n\n## Part\n\n- item\n\nlast paragraph\n'], { type: 'text/markdown' }), 'in.md');
    const imported = await fetch(`${t.url}${ws.base}/doc/import`, { method: 'POST', body: form, headers: { cookie: `svc-session=${ada.cookie}` } });
    expect(imported.status).toBe(200);
    expect(await sections(ws.surfaceId)).toEqual([
      { idx: 0, heading: 'Imported', level: 1, text: 'first paragraph' },
      { idx: 1, heading: 'Part', level: 2, text: 'item\n\nlast paragraph' },
    ]);

    const client = connect(ws.documentName);
    await synced(client);
    await eventually(() => client.doc.getXmlFragment('default').length === 5);
    paragraphText(client.doc, 1).insert(0, 'edited ');
    paragraphText(client.doc, 4).delete(0, 5);
    await acknowledged(client);
    expect((await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: { markdown: 'appended' } })).status).toBe(200);
    await eventually(() => client.doc.getXmlFragment('default').length === 6);
    expect(await sections(ws.surfaceId)).toEqual([
      { idx: 0, heading: 'Imported', level: 1, text: 'edited first paragraph' },
      { idx: 1, heading: 'Part', level: 2, text: 'item\n\nparagraph\n\nappended' },
    ]);
    expect(await sections(ws.surfaceId)).toEqual(wholeRead(client.doc));
  });
});

describe('mentions', () => {
  it('fire doc.mention_added once per new mention, not on every save', async () => {
    const ws = await docWorkspace('mentions', 'Start.');
    const put = (markdown: string) => t.request('PUT', `${ws.base}/doc`, { as: ada.as, body: { markdown } });
    expect((await put('Ask [@Ada](mention:user/u_ada) to review.')).status).toBe(200);
    expect((await put('Ask [@Ada](mention:user/u_ada) to review.')).status).toBe(200);
    expect((await put('Ask [@Ada](mention:user/u_ada) to review today.')).status).toBe(200);
    expect((await put('Ask [@Ada](mention:user/u_ada) to review today.\n\nAnd [@Ada](mention:user/u_ada) again.')).status).toBe(200);
    let mentioned = await events(ws.id, 'doc.mention_added');
    expect(mentioned.map((e) => e.data)).toEqual([{ surfaceId: ws.surfaceId, mentions: [{ kind: 'user', id: 'u_ada', label: 'Ada' }] }]);

    expect((await put('Ask [@Ada](mention:user/u_ada) and [@Build Bot](mention:agent/ag_7) to review today.')).status).toBe(200);
    mentioned = await events(ws.id, 'doc.mention_added');
    expect(mentioned).toHaveLength(2);
    expect(mentioned[1]).toMatchObject({
      principal: { id: ada.userId },
      surface: { id: ws.surfaceId },
      data: { surfaceId: ws.surfaceId, mentions: [{ kind: 'agent', id: 'ag_7', label: 'Build Bot' }] },
    });

    // Swapping a mention in place (same node, new attributes) is a new mention; removing and re-adding one is too.
    expect((await put('Ask [@Grace](mention:user/u_grace) and [@Build Bot](mention:agent/ag_7) to review today.')).status).toBe(200);
    expect((await put('Nobody.')).status).toBe(200);
    expect((await put('[@Build Bot](mention:agent/ag_7) is back.')).status).toBe(200);
    mentioned = await events(ws.id, 'doc.mention_added');
    expect(mentioned.slice(2).map((e) => e.data.mentions)).toEqual([[{ kind: 'user', id: 'u_grace', label: 'Grace' }], [{ kind: 'agent', id: 'ag_7', label: 'Build Bot' }]]);
    expect((await events(ws.id, 'doc.updated')).length).toBeGreaterThanOrEqual(7);
  });

  it('a mention typed by a sync client fires once, attributed to the client, on a freshly loaded document', async () => {
    const ws = await docWorkspace('mentions-sync');
    // The body is in the log before the server ever loads the document, so the tracker starts from a document it has never seen.
    const stored = new Y.Doc();
    replaceDocBody(stored, markdownToDoc('Hello [@Ada](mention:user/u_ada).'), null);
    await append(t.services.db, ws.documentName, Y.encodeStateAsUpdate(stored), null);
    const client = connect(ws.documentName);
    await synced(client);
    await eventually(() => client.doc.getXmlFragment('default').length === 1);
    replaceDocBody(client.doc, markdownToDoc('Hello [@Ada](mention:user/u_ada) and [@Lin](mention:user/u_lin).'), null);
    await acknowledged(client);
    replaceDocBody(client.doc, markdownToDoc('Hello [@Ada](mention:user/u_ada) and [@Lin](mention:user/u_lin)!'), null);
    await acknowledged(client);
    const mentioned = await eventually(async () => {
      const found = await events(ws.id, 'doc.mention_added');
      return found.length >= 1 ? found : null;
    });
    // The two saves are one typing burst: one doc.updated, counting both changes.
    const updated = await eventually(async () => (await events(ws.id, 'doc.updated')).find((e: any) => e.data.changes >= 2));
    expect(updated.principal.id).toBe(ada.userId);
    expect(await events(ws.id, 'doc.updated')).toHaveLength(1);
    // Ada was already in the stored body; Lin is new once; the second save adds nothing.
    expect(await events(ws.id, 'doc.mention_added')).toHaveLength(1);
    expect(mentioned[0]).toMatchObject({ principal: { id: ada.userId }, data: { mentions: [{ kind: 'user', id: 'u_lin', label: 'Lin' }] } });
  });
});

describe('POST /doc/sections', () => {
  it('appends blocks at the end and answers how many', async () => {
    const ws = await docWorkspace('append', '# Log\n\nFirst entry.\n');
    const res = await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: { markdown: '## Tuesday\n\nSecond entry.\n\n- a\n- b\n' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ surfaceId: ws.surfaceId, appendedBlocks: 3 });
    const md = await t.request('GET', `${ws.base}/doc?format=markdown`, { as: ada.as });
    expect(md.body.markdown).toBe('# Log\n\nFirst entry.\n\n## Tuesday\n\nSecond entry.\n\n- a\n- b\n');
    expect((await sections(ws.surfaceId)).map((s) => s.heading)).toEqual(['Log', 'Tuesday']);

    const before = (await events(ws.id, 'doc.updated')).length;
    const empty = await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: { markdown: '' } });
    expect(empty.body).toEqual({ surfaceId: ws.surfaceId, appendedBlocks: 0 });
    expect(await events(ws.id, 'doc.updated')).toHaveLength(before);
    expect((await t.request('POST', `${ws.base}/doc/sections`, { as: ada.as, body: {} })).status).toBe(400);
  });
});
