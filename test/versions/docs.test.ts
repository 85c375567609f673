import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { docFromJSON, docToMarkdown } from '../../src/model/doc/markdown';
import { readDocBody } from '../../src/model/doc/body';
import { acknowledged, eventually, synced, type SyncClient } from '../helpers/sync';
import { addMembership, createWorkspace, insertKey } from '../workspaces/helpers';
import { useVersionsApp } from './helpers';

/**
 * Version history of doc surfaces over the real app: sessions of sync
 * clients and REST writes, showing and comparing versions, restoring while
 * clients stay connected, named versions across compaction, and writes that
 * name their base version.
 */

const v = useVersionsApp();

async function docWorkspace(slug: string, initialMarkdown: string) {
  const ws = await createWorkspace(v.t, v.ada, { name: slug, slug, mode: 'doc', initialMarkdown });
  return { id: ws.id as string, surfaceId: ws.primarySurface.id as string, documentName: ws.primarySurface.syncDocument as string, base: `/api/workspaces/${slug}` };
}

/** Appends a paragraph from a sync client (the documented body layout: Y.XmlFragment `default`). */
function typeParagraph(client: SyncClient, text: string) {
  const fragment = client.doc.getXmlFragment('default');
  const paragraph = new Y.XmlElement('paragraph');
  paragraph.insert(0, [new Y.XmlText(text)]);
  fragment.insert(fragment.length, [paragraph]);
}

function markdownOf(client: SyncClient): string {
  return docToMarkdown(readDocBody(client.doc));
}

async function versions(base: string, as = v.ada.as) {
  const res = await v.t.request('GET', `${base}/surfaces/doc/versions`, { as });
  expect(res.status, res.text).toBe(200);
  return res.body as { versions: any[]; nextCursor: string | null; history: { since: string | null; retentionDays: number | null } };
}

async function markdown(base: string): Promise<string> {
  const res = await v.t.request('GET', `${base}/doc?format=markdown`, { as: v.ada.as });
  expect(res.status).toBe(200);
  return res.body.markdown;
}

async function versionMarkdown(base: string, id: string): Promise<string> {
  const res = await v.t.request('GET', `${base}/surfaces/doc/versions/${id}?format=markdown`, { as: v.ada.as });
  expect(res.status, res.text).toBe(200);
  return res.body.markdown;
}

describe('versions of a doc', () => {
  it('are made for editing sessions of REST writers and sync clients, with who changed what', async () => {
    const ws = await docWorkspace('sessions', '# Plan\n\nFirst draft.\n');
    const agent = await insertKey(v.t, v.ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'scribe' });
    // Ada's REST edits more than ten minutes apart are two sessions.
    await v.ageLog(ws.documentName, 30);
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Plan\n\nSecond draft.\n' } })).status).toBe(200);
    // The agent types over sync.
    const client = v.connect(ws.documentName, { token: (agent.as as { bearer: string }).bearer });
    await synced(client);
    typeParagraph(client, 'Typed by the scribe.');
    typeParagraph(client, 'And a second line.');
    await acknowledged(client);
    // Ada writes again over REST: a new session of hers.
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Plan\n\nThird draft.\n\nTyped by the scribe.\n\nAnd a second line.\n' } })).status).toBe(200);

    const list = await versions(ws.base);
    expect(list.history).toEqual({ since: null, retentionDays: 30 });
    const shown = list.versions.map((v) => ({ by: v.createdBy.name, editors: v.editors.map((e: any) => `${e.principal.name}:${e.edits}`), changes: v.changes }));
    expect(shown).toEqual([
      { by: 'ada', editors: ['ada:1'], changes: { unit: 'blocks', added: 0, removed: 0, changed: 1 } },
      { by: 'scribe', editors: ['scribe:2'], changes: { unit: 'blocks', added: 2, removed: 0, changed: 0 } },
      { by: 'ada', editors: ['ada:1'], changes: { unit: 'blocks', added: 0, removed: 0, changed: 1 } },
      { by: 'ada', editors: ['ada:1'], changes: { unit: 'blocks', added: 2, removed: 0, changed: 0 } },
    ]);
    expect(list.versions.every((v) => v.kind === 'auto' && v.name === null)).toBe(true);
    expect(await Promise.all(list.versions.map((v) => versionMarkdown(ws.base, v.id)))).toEqual([
      '# Plan\n\nThird draft.\n\nTyped by the scribe.\n\nAnd a second line.\n',
      '# Plan\n\nSecond draft.\n\nTyped by the scribe.\n\nAnd a second line.\n',
      '# Plan\n\nSecond draft.\n',
      '# Plan\n\nFirst draft.\n',
    ]);
  });

  it('shows a version as GET /doc does: JSON, Markdown, text and raw bodies', async () => {
    const ws = await docWorkspace('shapes', '# Title\n\nSome **bold** text.\n');
    const [first] = (await versions(ws.base)).versions;
    const json = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${first.id}`, { as: v.ada.as });
    expect(json.status).toBe(200);
    expect(json.headers.get('etag')).toBe(first.etag);
    expect(json.body.surfaceId).toBe(ws.surfaceId);
    expect(json.body.version).toEqual(first);
    expect(json.body.content.content[0]).toMatchObject({ type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Title' }] });
    const text = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${first.id}?format=text`, { as: v.ada.as });
    expect(text.body.text).toBe('Title\n\nSome bold text.');
    const raw = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${first.id}`, { as: v.ada.as, headers: { accept: 'text/markdown' } });
    expect(raw.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(raw.text).toBe('# Title\n\nSome **bold** text.\n');
    expect((await v.t.request('GET', `${ws.base}/surfaces/doc/versions/ver_nope`, { as: v.ada.as })).status).toBe(404);
    expect((await v.t.request('GET', `${ws.base}/surfaces/nope/versions`, { as: v.ada.as })).status).toBe(404);
  });

  it('compares two versions block by block', async () => {
    const ws = await docWorkspace('compare', '# A\n\nKeep me.\n\nChange me.\n\nDrop me.\n');
    await v.ageLog(ws.documentName, 30);
    await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# A\n\nKeep me.\n\nChanged.\n\nNew one.\n' } });
    const [latest, first] = (await versions(ws.base)).versions;
    const res = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${first.id}/diff?to=${latest.id}`, { as: v.ada.as });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changes).toEqual({ unit: 'blocks', added: 0, removed: 0, changed: 2 });
    expect(res.body.diff.blocks.map((b: any) => [b.op, b.before?.markdown ?? null, b.after?.markdown ?? null])).toEqual([
      ['changed', 'Change me.\n', 'Changed.\n'],
      ['changed', 'Drop me.\n', 'New one.\n'],
    ]);
    const toCurrent = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${latest.id}/diff`, { as: v.ada.as });
    expect(toCurrent.body.to).toEqual({ current: true, etag: latest.etag });
    expect(toCurrent.body.diff.blocks).toEqual([]);
  });

  it('keeps a named version, its content and the list across compaction', async () => {
    const ws = await docWorkspace('named', '# Named\n\nOriginal words.\n');
    const named = await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name: '  Before the rewrite ' } });
    expect(named.status, named.text).toBe(200);
    expect(named.body).toMatchObject({ kind: 'named', name: 'Before the rewrite', createdBy: { id: v.ada.userId } });
    const event = await v.t.services.db.selectFrom('events').select(['record']).where('workspaceId', '=', ws.id).where('event', '=', 'version.created').executeTakeFirstOrThrow();
    expect(record(event.record).data).toMatchObject({ versionId: named.body.id, name: 'Before the rewrite', surfaceId: ws.surfaceId });
    for (let i = 0; i < 5; i++) await v.t.request('PUT', `${ws.base}/doc`, { as: v.bob.as, body: { markdown: `# Named\n\nRewrite ${i}.\n` } }).catch(() => {});
    await addMembership(v.t, ws.id, v.bob.userId, 'editor');
    for (let i = 0; i < 5; i++) expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.bob.as, body: { markdown: `# Named\n\nRewrite ${i}.\n` } })).status).toBe(200);
    const before = await versions(ws.base);

    await v.t.services.sync.compactNow(ws.documentName);
    const left = await v.t.services.db.selectFrom('documentUpdates').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', ws.documentName).executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);

    const after = await versions(ws.base);
    expect(after.versions).toEqual(before.versions);
    expect(await versionMarkdown(ws.base, named.body.id)).toBe('# Named\n\nOriginal words.\n');
    expect(await versionMarkdown(ws.base, after.versions.at(-1).id)).toBe('# Named\n\nOriginal words.\n');
    expect(after.versions.some((v) => v.id === named.body.id)).toBe(true);
    // Versions made after the compaction keep counting from the stored state.
    await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Named\n\nAfter compaction.\n' } });
    const latest = (await versions(ws.base)).versions[0];
    expect(latest).toMatchObject({ createdBy: { id: v.ada.userId }, changes: { unit: 'blocks', changed: 1, added: 0, removed: 0 } });
    expect(await versionMarkdown(ws.base, latest.id)).toBe('# Named\n\nAfter compaction.\n');
  });

  it('rejects bad names and is for editors only', async () => {
    const ws = await docWorkspace('guarded', '# Guarded\n');
    for (const name of ['', '   ', 'x'.repeat(201)]) {
      const res = await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name } });
      expect([400, 422]).toContain(res.status);
    }
    expect((await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name: 'ok', extra: 1 } })).status).toBe(400);
    await addMembership(v.t, ws.id, v.bob.userId, 'commenter');
    expect((await v.t.request('GET', `${ws.base}/surfaces/doc/versions`, { as: v.bob.as })).status).toBe(403);
    expect((await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.bob.as, body: { name: 'mine' } })).status).toBe(403);
    const [first] = (await versions(ws.base)).versions;
    expect((await v.t.request('POST', `${ws.base}/surfaces/doc/versions/${first.id}/restore`, { as: v.bob.as })).status).toBe(403);
    // Anonymous: the private workspace is invisible; a write needs credentials first.
    expect((await v.t.request('GET', `${ws.base}/surfaces/doc/versions`)).status).toBe(404);
    expect((await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { body: { name: 'anon' } })).status).toBe(401);
  });
});

describe('restoring a doc', () => {
  it('gives back exactly the old content as a new change, while two connected clients converge, and is undone by its undo version', async () => {
    const ws = await docWorkspace('restore', '# Story\n\nOnce upon a time.\n\n- one\n- two\n');
    const agent = await insertKey(v.t, v.ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'rewriter' });
    const original = (await versions(ws.base)).versions[0];
    const first = v.connect(ws.documentName, { cookie: v.ada.cookie });
    const second = v.connect(ws.documentName, { token: (agent.as as { bearer: string }).bearer });
    await Promise.all([synced(first), synced(second)]);
    typeParagraph(second, 'The agent rewrote everything.');
    await acknowledged(second);
    await v.t.request('PUT', `${ws.base}/doc`, { as: agent.as, body: { markdown: '# Different\n\nThe agent rewrote everything.\n' } });
    const rewritten = '# Different\n\nThe agent rewrote everything.\n';
    await eventually(() => markdownOf(first) === rewritten);

    const res = await v.t.request('POST', `${ws.base}/surfaces/doc/versions/${original.id}/restore`, { as: v.ada.as });
    expect(res.status, res.text).toBe(200);
    expect(res.body.restored.id).toBe(original.id);
    const restored = '# Story\n\nOnce upon a time.\n\n- one\n- two\n';
    expect(await markdown(ws.base)).toBe(restored);
    await eventually(() => markdownOf(first) === restored && markdownOf(second) === restored);
    expect(first.provider.isSynced && second.provider.isSynced).toBe(true);

    // Attributed to the caller, with the usual events, and nothing in the log rewritten.
    // (A sync client's doc.updated is recorded when its typing burst flushes, so it may land after the restore's.)
    await eventually(async () => {
      const log = await v.t.request('GET', `${ws.base}/events?limit=50`, { as: v.ada.as });
      const byAda = log.body.events.filter((e: any) => e.principal?.id === v.ada.userId).map((e: any) => e.event);
      return byAda.includes('doc.updated') && byAda.includes('version.restored');
    }, 15_000);
    const list = (await versions(ws.base)).versions;
    expect(list[0]).toMatchObject({ createdBy: { id: v.ada.userId } });
    expect(await versionMarkdown(ws.base, list[0].id)).toBe(restored);

    // The clients keep editing on top of the restored body.
    typeParagraph(first, 'After the restore.');
    await acknowledged(first);
    await eventually(() => markdownOf(second) === `${restored}\nAfter the restore.\n`);

    // Undo: restore the version just before the restore.
    expect(await versionMarkdown(ws.base, res.body.undo.id)).toBe(rewritten);
    const undo = await v.t.request('POST', `${ws.base}/surfaces/doc/versions/${res.body.undo.id}/restore`, { as: v.ada.as });
    expect(undo.status).toBe(200);
    expect(await markdown(ws.base)).toBe(rewritten);
    await eventually(() => markdownOf(first) === rewritten && markdownOf(second) === rewritten);
  });
});

describe('a restore in the list', () => {
  it('is listed as a restore of the version it brought back (its name and time), and stays one while the restorer edits on', async () => {
    const ws = await docWorkspace('restore-listed', '# Plan\n\nFirst.\n');
    const named = await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name: 'Approved' } });
    expect(named.status, named.text).toBe(200);
    expect(named.body.restoredFrom).toBeNull();
    await v.ageLog(ws.documentName, 30);
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Plan\n\nSecond.\n' } })).status).toBe(200);
    expect((await versions(ws.base)).versions.every((version) => version.restoredFrom === null)).toBe(true);

    const restore = await v.t.request('POST', `${ws.base}/surfaces/doc/versions/${named.body.id}/restore`, { as: v.ada.as });
    expect(restore.status, restore.text).toBe(200);
    const [made, ...older] = (await versions(ws.base)).versions;
    expect(made).toMatchObject({
      kind: 'auto',
      createdBy: { id: v.ada.userId },
      restoredFrom: { versionId: named.body.id, name: 'Approved', createdAt: named.body.createdAt },
    });
    expect(await versionMarkdown(ws.base, made.id)).toBe('# Plan\n\nFirst.\n');
    expect(older.every((version) => version.restoredFrom === null)).toBe(true);

    // Ada edits on within the same session: that edit is a version of its own; the restore stays listed as one.
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Plan\n\nFirst.\n\nThird.\n' } })).status).toBe(200);
    const after = (await versions(ws.base)).versions;
    expect(after[0]).toMatchObject({ restoredFrom: null });
    expect(after[1]).toMatchObject({ id: made.id, restoredFrom: { versionId: named.body.id } });
    expect(await versionMarkdown(ws.base, made.id)).toBe('# Plan\n\nFirst.\n');
    const shown = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${made.id}`, { as: v.ada.as });
    expect(shown.body.version.restoredFrom).toMatchObject({ versionId: named.body.id });
  });
});

describe('version ids', () => {
  it('once listed, stay listed: naming, changing, restoring and typing never remove one, and a removed id is a clear 404', async () => {
    const ws = await docWorkspace('stable-ids', '# Ids\n\nFirst.\n');
    const ids = (list: { versions: any[] }) => list.versions.map((version) => version.id as string);
    const a = await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name: 'v-a' } });
    expect(a.status, a.text).toBe(200);
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Ids\n\nSecond.\n' } })).status).toBe(200);
    const b = await v.t.request('POST', `${ws.base}/surfaces/doc/versions`, { as: v.ada.as, body: { name: 'v-b' } });
    expect(b.status, b.text).toBe(200);
    const listed = ids(await versions(ws.base));
    expect(listed).toEqual(expect.arrayContaining([a.body.id, b.body.id]));

    const restore = await v.t.request('POST', `${ws.base}/surfaces/doc/versions/${a.body.id}/restore`, { as: v.ada.as });
    expect(restore.status, restore.text).toBe(200);
    const afterRestore = ids(await versions(ws.base));
    expect(afterRestore).toEqual(expect.arrayContaining(listed));
    expect(await markdown(ws.base)).toBe('# Ids\n\nFirst.\n');

    // The same session goes on over sync: its automatic version grows under the id it was listed with.
    const client = v.connect(ws.documentName, { cookie: v.ada.cookie });
    await synced(client);
    typeParagraph(client, 'Typed later.');
    await acknowledged(client);
    const afterTyping = await versions(ws.base);
    expect(ids(afterTyping)).toEqual(expect.arrayContaining(afterRestore));
    for (const id of afterRestore) {
      const shown = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/${id}`, { as: v.ada.as });
      expect(shown.status, shown.text).toBe(200);
    }
    expect(await versionMarkdown(ws.base, afterTyping.versions[0].id)).toBe('# Ids\n\nFirst.\n\nTyped later.\n');

    const gone = await v.t.request('GET', `${ws.base}/surfaces/doc/versions/ver_removed`, { as: v.ada.as });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'not_found', message: expect.stringMatching(/version/i) });
  });
});

describe('writes that name their base version', () => {
  it('a stale PUT /doc keeps the paragraph a sync client added since, and answers the current body with a fresh ETag', async () => {
    const ws = await docWorkspace('stale', '# Notes\n\nAlpha.\n\nBeta.\n');
    const read = await v.t.request('GET', `${ws.base}/doc?format=markdown`, { as: v.ada.as });
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+\.[A-Za-z0-9_-]{8}"$/);
    const client = v.connect(ws.documentName, { cookie: v.bob.cookie });
    await addMembership(v.t, ws.id, v.bob.userId, 'editor');
    await synced(client);
    typeParagraph(client, 'Gamma from the client.');
    await acknowledged(client);

    // Built from the stale read: Alpha changed, nothing about Gamma.
    const put = await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, headers: { 'if-match': etag }, body: { markdown: '# Notes\n\nAlpha, revised.\n\nBeta.\n' } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.conflicts).toEqual([]);
    const expected = '# Notes\n\nAlpha, revised.\n\nBeta.\n\nGamma from the client.\n';
    expect(docToMarkdown(docFromJSON(put.body.content))).toBe(expected);
    expect(await markdown(ws.base)).toBe(expected);
    await eventually(() => markdownOf(client) === expected);
    const fresh = put.headers.get('etag');
    expect(fresh).not.toBe(etag);

    // Without a base the same stale body would have removed Gamma (the old behaviour, still there for callers who want it).
    const next = await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { baseVersion: fresh, markdown: `${expected}\nDelta.\n` } });
    expect(next.status).toBe(200);
    expect(await markdown(ws.base)).toBe(`${expected}\nDelta.\n`);
  });

  it('reports a block both sides changed and keeps the other writer’s version of it', async () => {
    const ws = await docWorkspace('conflict', '# Title\n\nShared paragraph.\n\nOther.\n');
    const etag = (await v.t.request('GET', `${ws.base}/doc`, { as: v.ada.as })).headers.get('etag')!;
    await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, body: { markdown: '# Title\n\nShared paragraph, their edit.\n\nOther.\n' } });
    const put = await v.t.request('PUT', `${ws.base}/doc`, {
      as: v.ada.as,
      body: { baseVersion: etag, markdown: '# Title v2\n\nShared paragraph, my edit.\n\nOther.\n' },
    });
    expect(put.status).toBe(200);
    expect(put.body.conflicts).toEqual([{ at: 1, base: 'Shared paragraph.\n', yours: 'Shared paragraph, my edit.\n', theirs: 'Shared paragraph, their edit.\n' }]);
    expect(await markdown(ws.base)).toBe('# Title v2\n\nShared paragraph, their edit.\n\nOther.\n');
  });

  it('refuses a token that is not one of this doc with 412, and changes nothing', async () => {
    const ws = await docWorkspace('tokens', '# Tokens\n');
    const other = await docWorkspace('tokens-other', '# Other\n');
    const foreign = (await v.t.request('GET', `${other.base}/doc`, { as: v.ada.as })).headers.get('etag')!;
    for (const headers of [{ 'if-match': foreign }, { 'if-match': '"999999999.abcdefgh"' }, { 'if-match': 'garbage' }, { 'if-match': `${foreign}, ${foreign}` }]) {
      const res = await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, headers, body: { markdown: '# Changed\n' } });
      expect(res.status, JSON.stringify(headers)).toBe(412);
      expect(res.body.error.code).toBe('precondition_failed');
    }
    const mixed = await v.t.request('PUT', `${ws.base}/doc`, {
      as: v.ada.as,
      headers: { 'if-match': (await v.t.request('GET', `${ws.base}/doc`, { as: v.ada.as })).headers.get('etag')! },
      body: { baseVersion: '"1.abcdefgh"', markdown: '# Changed\n' },
    });
    expect(mixed.status).toBe(412);
    expect(await markdown(ws.base)).toBe('# Tokens\n');
    // `*` means any version: a plain write.
    expect((await v.t.request('PUT', `${ws.base}/doc`, { as: v.ada.as, headers: { 'if-match': '*' }, body: { markdown: '# Star\n' } })).status).toBe(200);
    expect(await markdown(ws.base)).toBe('# Star\n');
  });
});

function record(value: unknown): any {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
