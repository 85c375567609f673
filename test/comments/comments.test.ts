import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTestApp } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { eventually } from '../helpers/sync';
import { addMembership, createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { proxyUpload } from '../files/helpers';
import { addComment, auditEvents, countComments, expectStatus, postComment, rangeOf } from './helpers';

/**
 * The universal comment endpoints over real HTTP: every target type, threads,
 * resolution, reactions, mention filtering, filters, who may do what, the
 * legacy row endpoints and hostile input.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser; // owner
let bob: TestUser; // commenter
let vic: TestUser; // viewer
let eve: TestUser; // stranger
let ws: { id: string; slug: string };
let rowId: string;
let otherRowId: string;
let sheets: Record<string, { id: string; slug: string }>;
const base = '/api/workspaces/plan';

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  bob = await signInUser(t, 'bob@example.com');
  vic = await signInUser(t, 'vic@example.com');
  eve = await signInUser(t, 'eve@example.com');
  ws = await createWorkspace(t, ada, { name: 'Plan', slug: 'plan' });
  await addMembership(t, ws.id, bob.userId, 'commenter');
  await addMembership(t, ws.id, vic.userId, 'viewer');
  sheets = {};
  for (const [kind, slug] of [['doc', 'spec'], ['html', 'page'], ['table', 'bugs']] as const) {
    sheets[slug] = (await expectStatus(t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind, slug, name: slug } }), 200)).body;
  }
  await expectStatus(t.request('PUT', `${base}/doc?surface=spec`, { as: ada.as, body: { markdown: '# Spec\n\nThe launch date is Friday.' } }), 200);
  rowId = (await expectStatus(t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Ship it', status: 'todo' } } }), 200)).body.id;
  otherRowId = (await expectStatus(t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'Bug' }, surface: 'bugs' } }), 200)).body.id;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('targets', () => {
  it('a comment on each target type carries the record shape, with ids and surfaces as documented', async () => {
    const doc = (await t.request('GET', `${base}/doc?surface=spec`, { as: ada.as })).body;
    const range = rangeOf(doc.content, 'Friday');
    const made = {
      row: await addComment(t, ada.as, 'plan', { target: { type: 'row', rowId }, body: 'On the row' }),
      cell: await addComment(t, ada.as, 'plan', { target: { type: 'cell', rowId, columnKey: 'status' }, body: 'On the cell' }),
      doc: await addComment(t, ada.as, 'plan', { target: { type: 'doc_range', surfaceSlug: 'spec', anchor: { ...range, text: 'Friday' } }, body: 'Which Friday?' }),
      html: await addComment(t, ada.as, 'plan', { target: { type: 'html_element', surfaceSlug: 'page', anchor: { selector: 'main > h1', text: 'Hello' } }, body: 'Title?' }),
      html2: await addComment(t, ada.as, 'plan', { target: { type: 'html_element', surfaceSlug: 'page', anchor: { selector: 'footer' } }, body: 'Footer?' }),
      surface: await addComment(t, ada.as, 'plan', { target: { type: 'surface', surfaceSlug: 'bugs' }, body: 'On the sheet' }),
      workspace: await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'On everything', correlationId: 'client-1' }),
    };
    expect(made.row).toMatchObject({
      workspaceId: ws.id,
      target: { type: 'row', rowId },
      targetType: 'row',
      targetId: rowId,
      surfaceSlug: 'table',
      body: 'On the row',
      parentId: null,
      mentions: [],
      author: { principalType: 'user', id: ada.userId },
      authorId: ada.userId,
      authorPrincipalType: 'user',
      reactions: [],
      resolvedAt: null,
      resolvedBy: null,
      correlationId: null,
      wakes: [],
    });
    expect(made.row.id).toMatch(/^cmt_/);
    expect(made.row.createdAt).toBe(made.row.updatedAt);
    expect(made.cell).toMatchObject({ targetType: 'cell', targetId: rowId, target: { type: 'cell', rowId, columnKey: 'status' }, surfaceSlug: 'table' });
    expect(made.doc).toMatchObject({
      targetType: 'doc_range',
      targetId: sheets.spec.id,
      surfaceSlug: 'spec',
      target: { type: 'doc_range', surfaceSlug: 'spec', anchor: { ...range, text: 'Friday' } },
      anchor: { ...range, text: 'Friday' },
    });
    expect(made.doc).not.toHaveProperty('currentText');
    // Threads on one html surface share the surface id as target id.
    expect(made.html).toMatchObject({ targetType: 'html_element', targetId: sheets.page.id, target: { anchor: { selector: 'main > h1', text: 'Hello' } } });
    expect(made.html2.targetId).toBe(made.html.targetId);
    expect(made.surface).toMatchObject({ targetType: 'surface', targetId: sheets.bugs.id, surfaceSlug: 'bugs', target: { type: 'surface', surfaceSlug: 'bugs' } });
    expect(made.workspace).toMatchObject({ targetType: 'workspace', targetId: ws.id, surfaceSlug: null, correlationId: 'client-1' });

    for (const comment of Object.values(made)) {
      const { wakes: _wakes, ...record } = comment;
      const read = await expectStatus(t.request('GET', `/api/comments/${comment.id}`, { as: bob.as }), 200);
      expect(read.body).toMatchObject(record);
    }
  });

  it('refuses targets that do not exist (404) or cannot take the comment (422), writing nothing', async () => {
    const before = await countComments(t);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ type: 'row', rowId: 'nope' }, 404, 'rowId'],
      [{ type: 'cell', rowId, columnKey: 'nope' }, 404, 'columnKey'],
      [{ type: 'surface', surfaceSlug: 'nope' }, 404, 'surfaceSlug'],
      [{ type: 'file', fileId: 'fil_nope' }, 404, ''],
      [{ type: 'doc_range', surfaceSlug: 'page', anchor: { from: 0, to: 1, text: '' } }, 422, 'surfaceSlug'],
      [{ type: 'html_element', surfaceSlug: 'spec', anchor: { selector: 'p' } }, 422, 'surfaceSlug'],
      [{ type: 'doc_range', surfaceSlug: 'spec', anchor: { from: 0, to: 10_000, text: 'x' } }, 422, 'anchor'],
      [{ type: 'doc_range', surfaceSlug: 'spec', anchor: { from: 5, to: 2, text: 'x' } }, 422, 'anchor'],
    ];
    for (const [target, status, field] of cases) {
      const res = await postComment(t, ada.as, 'plan', { target, body: 'x' });
      expect(res.status, JSON.stringify(target)).toBe(status);
      if (field) expect(JSON.stringify(res.body.error.details), JSON.stringify(target)).toContain(field);
    }
    expect(await countComments(t)).toBe(before);
  });
  it('a file target names a live file of the workspace: the thread sits on its files surface until the file is archived', async () => {
    const drive = (await expectStatus(t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'files', slug: 'drive', name: 'Drive' } }), 200)).body;
    const uploaded = await proxyUpload(t, `${base}/files`, ada.as, { bytes: new TextEncoder().encode('minutes of the launch meeting'), name: 'minutes.txt', type: 'text/plain' }, { surface: 'drive' });
    expect(uploaded.status, uploaded.text).toBe(200);
    const fileId = uploaded.body.id;

    const root = await addComment(t, bob.as, 'plan', { target: { type: 'file', fileId }, body: 'Who took these?' });
    expect(root).toMatchObject({ targetType: 'file', targetId: fileId, surfaceSlug: 'drive', target: { type: 'file', fileId } });
    const reply = await addComment(t, ada.as, 'plan', { target: { type: 'file', fileId }, body: 'I did', parentId: root.id });
    expect(reply.parentId).toBe(root.id);
    const listed = await expectStatus(t.request('GET', `${base}/comments?target_type=file&surface=drive`, { as: vic.as }), 200);
    expect(listed.body.comments.map((c: { id: string }) => c.id)).toEqual([root.id, reply.id]);

    // Another workspace's file is not this workspace's to comment on.
    await createWorkspace(t, ada, { name: 'Other', slug: 'other-files' });
    await expectStatus(t.request('POST', '/api/workspaces/other-files/surfaces', { as: ada.as, body: { kind: 'files', slug: 'drive', name: 'Drive' } }), 200);
    const foreign = await proxyUpload(t, '/api/workspaces/other-files/files', ada.as, { bytes: new TextEncoder().encode('x'), name: 'x.txt', type: 'text/plain' }, { surface: 'drive' });
    expect(foreign.status, foreign.text).toBe(200);
    const elsewhere = await postComment(t, ada.as, 'plan', { target: { type: 'file', fileId: foreign.body.id }, body: 'not here' });
    expect(elsewhere.status).toBe(404);
    expect(JSON.stringify(elsewhere.body.error.details)).toContain('fileId');

    await expectStatus(t.request('DELETE', `${base}/files/${fileId}`, { as: ada.as }), 200);
    expect((await postComment(t, ada.as, 'plan', { target: { type: 'file', fileId }, body: 'after archiving' })).status).toBe(404);
    // The existing thread stays readable.
    expect((await expectStatus(t.request('GET', `/api/comments/${root.id}`, { as: vic.as }), 200)).body.replies).toHaveLength(1);
  });
});

describe('threads', () => {
  it('replies attach to the root (one level), the root lists them, and a reply must name the same target', async () => {
    const root = await addComment(t, ada.as, 'plan', { target: { type: 'cell', rowId, columnKey: 'title' }, body: 'Rename?' });
    const target = { type: 'cell', rowId, columnKey: 'title' };
    const reply = await addComment(t, bob.as, 'plan', { target, body: 'Yes', parentId: root.id });
    const nested = await addComment(t, ada.as, 'plan', { target, body: 'Done', parentId: reply.id });
    expect(reply.parentId).toBe(root.id);
    expect(nested.parentId).toBe(root.id);

    const detail = await expectStatus(t.request('GET', `${base}/comments/${root.id}`, { as: vic.as }), 200);
    expect(detail.body.replies.map((r: { id: string }) => r.id)).toEqual([reply.id, nested.id]);
    const replyDetail = await expectStatus(t.request('GET', `/api/comments/${reply.id}`, { as: vic.as }), 200);
    expect(replyDetail.body).not.toHaveProperty('replies');

    for (const other of [{ type: 'row', rowId }, { type: 'cell', rowId, columnKey: 'status' }, { type: 'cell', rowId: otherRowId, columnKey: 'title' }]) {
      const res = await postComment(t, bob.as, 'plan', { target: other, body: 'x', parentId: root.id });
      expect(res.status, JSON.stringify(other)).toBe(400);
      expect(res.body.error.details[0]).toMatchObject({ path: ['target'], code: 'target_mismatch' });
    }
    expect((await postComment(t, bob.as, 'plan', { target, body: 'x', parentId: 'cmt_missing' })).status).toBe(404);
  });

  it('resolving acts on the thread; a reply to a resolved thread reopens it and emits comment.unresolved', async () => {
    const target = { type: 'row', rowId };
    const root = await addComment(t, ada.as, 'plan', { target, body: 'Thread to resolve' });
    const reply = await addComment(t, bob.as, 'plan', { target, body: 'A reply', parentId: root.id });

    const resolved = await expectStatus(t.request('POST', `/api/comments/${reply.id}/resolve`, { as: bob.as }), 200);
    expect(resolved.body).toMatchObject({ id: reply.id, resolvedBy: { id: bob.userId } });
    expect(resolved.body.resolvedAt).not.toBeNull();
    const again = await expectStatus(t.request('POST', `/api/comments/${root.id}/resolve`, { as: ada.as }), 200);
    expect(again.body.resolvedBy.id).toBe(bob.userId); // already resolved: unchanged
    expect((await auditEvents(t, ws.id, 'comment.resolved')).filter((e) => e.data.id === root.id)).toHaveLength(1);

    const open = (await t.request('GET', `${base}/comments?target_id=${rowId}`, { as: ada.as })).body.comments.map((c: { id: string }) => c.id);
    expect(open).not.toContain(root.id);
    const done = (await t.request('GET', `${base}/comments?target_id=${rowId}&status=resolved`, { as: ada.as })).body.comments.map((c: { id: string }) => c.id);
    expect(done).toEqual(expect.arrayContaining([root.id, reply.id]));

    const reopening = await addComment(t, bob.as, 'plan', { target, body: 'Not done yet', parentId: root.id });
    const unresolved = (await auditEvents(t, ws.id, 'comment.unresolved')).filter((e) => e.data.id === root.id);
    expect(unresolved).toHaveLength(1);
    expect(unresolved[0]).toMatchObject({ principal: { id: bob.userId }, data: { reason: 'reply', replyId: reopening.id } });
    const rootNow = (await t.request('GET', `/api/comments/${root.id}`, { as: ada.as })).body;
    expect(rootNow.resolvedAt).toBeNull();
    expect(rootNow.replies.every((r: { resolvedAt: unknown }) => r.resolvedAt === null)).toBe(true);

    await expectStatus(t.request('POST', `/api/comments/${root.id}/resolve`, { as: ada.as }), 200);
    const reopened = await expectStatus(t.request('POST', `/api/comments/${root.id}/unresolve`, { as: ada.as }), 200);
    expect(reopened.body).toMatchObject({ resolvedAt: null, resolvedBy: null });
    expect((await auditEvents(t, ws.id, 'comment.unresolved')).filter((e) => e.data.id === root.id)).toHaveLength(2);
  });
});

describe('reactions', () => {
  it('are unique per (comment, principal, emoji), idempotent both ways, at most 16 characters', async () => {
    const comment = await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'React to me' });
    const url = `/api/comments/${comment.id}/reactions`;
    await expectStatus(t.request('POST', url, { as: bob.as, body: { emoji: '👍' } }), 200);
    const twice = await expectStatus(t.request('POST', url, { as: bob.as, body: { emoji: '👍' } }), 200);
    expect(twice.body.reactions).toEqual([{ emoji: '👍', count: 1, principalIds: [bob.userId] }]);
    const family = '👨‍👩‍👧‍👦';
    const both = await expectStatus(t.request('POST', url, { as: ada.as, body: { emoji: '👍' } }), 200);
    expect(both.body.reactions).toEqual([{ emoji: '👍', count: 2, principalIds: [bob.userId, ada.userId] }]);
    await expectStatus(t.request('POST', url, { as: ada.as, body: { emoji: family } }), 200);

    expect((await t.request('POST', url, { as: ada.as, body: { emoji: 'x'.repeat(17) } })).status).toBe(422);
    expect((await t.request('POST', url, { as: ada.as, body: { emoji: 'a b' } })).status).toBe(422);
    expect((await t.request('POST', url, { as: ada.as, body: { emoji: '\ud83d' } })).status).toBe(422);
    expect((await t.request('POST', url, { as: ada.as, body: { emoji: 7 } })).status).toBe(400);
    expect((await t.request('POST', url, { as: vic.as, body: { emoji: '👀' } })).status).toBe(403);

    const removed = await expectStatus(t.request('DELETE', `${url}/${encodeURIComponent('👍')}`, { as: bob.as }), 200);
    expect(removed.body.reactions).toEqual([
      { emoji: '👍', count: 1, principalIds: [ada.userId] },
      { emoji: family, count: 1, principalIds: [ada.userId] },
    ]);
    await expectStatus(t.request('DELETE', `${url}/${encodeURIComponent('👍')}`, { as: bob.as }), 200);
    const added = (await auditEvents(t, ws.id, 'comment.reaction_added')).filter((e) => e.data.commentId === comment.id);
    const gone = (await auditEvents(t, ws.id, 'comment.reaction_removed')).filter((e) => e.data.commentId === comment.id);
    expect(added.map((e) => [e.principal.id, e.data.emoji])).toEqual([[bob.userId, '👍'], [ada.userId, '👍'], [ada.userId, family]]);
    expect(gone.map((e) => [e.principal.id, e.data.emoji])).toEqual([[bob.userId, '👍']]);
  });
});

describe('mentions', () => {
  it('keeps only mentions whose @label occurs in the body; comment.added carries the kept ones', async () => {
    const comment = await addComment(t, ada.as, 'plan', {
      target: { type: 'workspace' },
      body: 'Ping @Bob about this',
      mentions: [
        { kind: 'user', id: bob.userId, label: 'Bob' },
        { kind: 'user', id: vic.userId, label: 'Vic' },
        { kind: 'user', id: bob.userId, label: 'Bob' },
      ],
    });
    expect(comment.mentions).toEqual([{ kind: 'user', id: bob.userId, label: 'Bob' }]);
    const added = (await auditEvents(t, ws.id, 'comment.added')).find((e) => e.data.id === comment.id);
    expect(added.data.mentions).toEqual([{ kind: 'user', id: bob.userId, label: 'Bob' }]);
    expect(added).toMatchObject({ principal: { id: ada.userId }, workspace: { id: ws.id, slug: 'plan' } });

    const unknown = await postComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'Hi @Ghost', mentions: [{ kind: 'user', id: 'usr_ghost', label: 'Ghost' }] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0]).toMatchObject({ path: ['mentions', '0', 'id'], code: 'unknown_principal' });
    // The wrong kind for a real principal is refused the same way.
    const wrongKind = await postComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'Hi @Bob', mentions: [{ kind: 'agent', id: bob.userId, label: 'Bob' }] });
    expect(wrongKind.status).toBe(422);
    // A dropped mention is not checked: it fires nothing.
    const dropped = await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'no at-sign', mentions: [{ kind: 'user', id: 'usr_ghost', label: 'Ghost' }] });
    expect(dropped.mentions).toEqual([]);
  });
});

describe('listing', () => {
  it('filters by target, surface, status, mention and author, and pages with offset', async () => {
    const fresh = await createWorkspace(t, ada, { name: 'Lists', slug: 'lists' });
    await addMembership(t, fresh.id, bob.userId, 'commenter');
    await expectStatus(t.request('POST', '/api/workspaces/lists/surfaces', { as: ada.as, body: { kind: 'table', slug: 'second', name: 'Second' } }), 200);
    const r1 = (await t.request('POST', '/api/workspaces/lists/rows', { as: ada.as, body: { data: { title: 'one' } } })).body.id;
    const r2 = (await t.request('POST', '/api/workspaces/lists/rows', { as: ada.as, body: { data: { title: 'two' }, surface: 'second' } })).body.id;
    const c1 = await addComment(t, ada.as, 'lists', { target: { type: 'row', rowId: r1 }, body: 'first @Bob', mentions: [{ kind: 'user', id: bob.userId, label: 'Bob' }] });
    const c2 = await addComment(t, bob.as, 'lists', { target: { type: 'cell', rowId: r1, columnKey: 'title' }, body: 'second' });
    const c3 = await addComment(t, ada.as, 'lists', { target: { type: 'row', rowId: r2 }, body: 'third' });
    const c4 = await addComment(t, bob.as, 'lists', { target: { type: 'workspace' }, body: 'fourth' });
    await expectStatus(t.request('POST', `/api/comments/${c4.id}/resolve`, { as: bob.as }), 200);

    const ids = async (query: string, as = ada.as) => {
      const res = await expectStatus(t.request('GET', `/api/workspaces/lists/comments${query}`, { as }), 200);
      return res.body.comments.map((c: { id: string }) => c.id);
    };
    expect(await ids('')).toEqual([c1.id, c2.id, c3.id]);
    expect(await ids('?status=all')).toEqual([c1.id, c2.id, c3.id, c4.id]);
    expect(await ids('?status=resolved')).toEqual([c4.id]);
    expect(await ids('?order=newest&status=all')).toEqual([c4.id, c3.id, c2.id, c1.id]);
    expect(await ids('?target_type=row')).toEqual([c1.id, c3.id]);
    expect(await ids(`?target_id=${r1}`)).toEqual([c1.id, c2.id]);
    expect(await ids(`?target_type=cell&target_id=${r1}`)).toEqual([c2.id]);
    expect(await ids('?surface=second')).toEqual([c3.id]);
    expect(await ids('?surface=table')).toEqual([c1.id, c2.id]);
    expect(await ids('?mentioning=me', bob.as)).toEqual([c1.id]);
    expect(await ids('?author=me&status=all', bob.as)).toEqual([c2.id, c4.id]);
    expect(await ids(`?author=${ada.userId}`)).toEqual([c1.id, c3.id]);

    const page1 = (await t.request('GET', '/api/workspaces/lists/comments?status=all&limit=3', { as: ada.as })).body;
    expect(page1.nextOffset).toBe(3);
    const page2 = (await t.request('GET', `/api/workspaces/lists/comments?status=all&limit=3&offset=${page1.nextOffset}`, { as: ada.as })).body;
    expect(page2).toMatchObject({ nextOffset: null });
    expect(page2.comments.map((c: { id: string }) => c.id)).toEqual([c4.id]);

    // A row moved to another sheet lists under its new sheet.
    await expectStatus(t.request('PATCH', `/api/workspaces/lists/rows/${r1}`, { as: ada.as, body: { surface: 'second' } }), 200);
    expect(await ids('?surface=second')).toEqual([c1.id, c2.id, c3.id]);

    expect((await t.request('GET', '/api/workspaces/lists/comments?surface=nope', { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', '/api/workspaces/lists/comments?status=closed', { as: ada.as })).status).toBe(400);
    expect((await t.request('GET', '/api/workspaces/lists/comments?limit=0', { as: ada.as })).status).toBe(422);
    expect((await t.request('GET', '/api/workspaces/lists/comments?colour=red', { as: ada.as })).status).toBe(400);
  });
});

/**
 * What an anonymous SSE reader of the public workspace `open` receives while
 * `write` runs: comment bodies, and whether a later non-comment event (a
 * row) arrived, which shows the stream was live while comments were held back.
 */
async function publicStreamFrames(write: () => Promise<unknown>) {
  const sse = openSse(`${t.url}/api/workspaces/open/subscribe`);
  try {
    expect(await sse.ready).toBe(200);
    await write();
    const row = await expectStatus(t.request('POST', '/api/workspaces/open/rows', { as: ada.as, body: { data: { title: 'marker' } } }), 200);
    await eventually(() => sse.frames.some((f) => f.event === 'row.created' && f.data.data.id === row.body.id));
    return { comments: sse.frames.filter((f) => f.event === 'comment.added').map((f) => f.data.data.body), sawOtherEvent: true };
  } finally {
    sse.close();
  }
}

describe('who may do what', () => {
  it('viewers read but may not write (403); strangers see nothing (404); only the author deletes', async () => {
    const comment = await addComment(t, bob.as, 'plan', { target: { type: 'workspace' }, body: 'by bob' });
    const root = await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'root by ada' });
    const reply = await addComment(t, bob.as, 'plan', { target: { type: 'workspace' }, body: 'reply by bob', parentId: root.id });

    expect((await t.request('GET', `${base}/comments`, { as: vic.as })).status).toBe(200);
    expect((await postComment(t, vic.as, 'plan', { target: { type: 'workspace' }, body: 'viewer' })).status).toBe(403);
    expect((await t.request('POST', `/api/comments/${comment.id}/resolve`, { as: vic.as })).status).toBe(403);
    expect((await t.request('DELETE', `/api/comments/${comment.id}`, { as: vic.as })).status).toBe(403);
    expect((await t.request('GET', `${base}/comments`, { as: eve.as })).status).toBe(404);
    expect((await t.request('GET', `/api/comments/${comment.id}`, { as: eve.as })).status).toBe(404);
    expect((await t.request('DELETE', `/api/comments/${comment.id}`, { as: eve.as })).status).toBe(404);
    expect((await postComment(t, undefined, 'plan', { target: { type: 'workspace' }, body: 'anon' })).status).toBe(401);

    // Not the author: 403, even for the workspace owner.
    const notMine = await t.request('DELETE', `/api/comments/${comment.id}`, { as: ada.as });
    expect(notMine.status).toBe(403);
    await expectStatus(t.request('DELETE', `/api/comments/${comment.id}`, { as: bob.as }), 200);
    expect((await t.request('GET', `/api/comments/${comment.id}`, { as: bob.as })).status).toBe(404);

    // Deleting a root deletes its thread: one comment.deleted per comment.
    await expectStatus(t.request('DELETE', `${base}/comments/${root.id}`, { as: ada.as }), 200);
    expect((await t.request('GET', `/api/comments/${reply.id}`, { as: bob.as })).status).toBe(404);
    const deleted = (await auditEvents(t, ws.id, 'comment.deleted')).map((e) => e.data.id);
    expect(deleted).toEqual(expect.arrayContaining([comment.id, root.id, reply.id]));
  });

  it('an agent key comments as its agent; a viewer key may not', async () => {
    const editorKey = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'helper' });
    const viewerKey = await insertKey(t, ada, { role: 'viewer', scopeWorkspaceId: ws.id, agentName: 'reader' });
    const byAgent = await addComment(t, editorKey.as, 'plan', { target: { type: 'workspace' }, body: 'from an agent' });
    expect(byAgent).toMatchObject({ authorId: editorKey.agentId, authorPrincipalType: 'agent', author: { principalType: 'agent', name: 'helper' } });
    expect((await postComment(t, viewerKey.as, 'plan', { target: { type: 'workspace' }, body: 'no' })).status).toBe(403);
    expect((await t.request('GET', `/api/comments/${byAgent.id}`, { as: viewerKey.as })).status).toBe(200);
    expect((await t.request('DELETE', `/api/comments/${byAgent.id}`, { as: ada.as })).status).toBe(403);
    await expectStatus(t.request('DELETE', `/api/comments/${byAgent.id}`, { as: editorKey.as }), 200);
  });

  it('anonymous readers of a public workspace read comments only while commentsOnPublicShare is on', async () => {
    await createWorkspace(t, ada, { name: 'Open', slug: 'open', visibility: 'public' });
    const comment = await addComment(t, ada.as, 'open', { target: { type: 'workspace' }, body: 'public note' });

    expect((await t.request('GET', '/api/workspaces/open/comments')).status).toBe(403);
    expect((await t.request('GET', `/api/comments/${comment.id}`)).status).toBe(403);
    expect((await t.request('GET', '/api/workspaces/open/comments', { as: eve.as })).status).toBe(403);
    expect((await t.request('GET', '/api/workspaces/open/rows')).status).toBe(200);
    const closed = await publicStreamFrames(async () => addComment(t, ada.as, 'open', { target: { type: 'workspace' }, body: 'unseen' }));
    expect(closed.comments).toEqual([]);
    expect(closed.sawOtherEvent).toBe(true);

    await expectStatus(t.request('PATCH', '/api/workspaces/open', { as: ada.as, body: { commentsOnPublicShare: true } }), 200);
    const listed = await expectStatus(t.request('GET', '/api/workspaces/open/comments'), 200);
    expect(listed.body.comments.map((c: { id: string }) => c.id)).toContain(comment.id);
    expect((await t.request('GET', `/api/comments/${comment.id}`)).status).toBe(200);
    expect((await postComment(t, eve.as, 'open', { target: { type: 'workspace' }, body: 'stranger' })).status).toBe(403);
    const open = await publicStreamFrames(async () => addComment(t, ada.as, 'open', { target: { type: 'workspace' }, body: 'seen' }));
    expect(open.comments).toEqual(['seen']);
    // A signed-in stranger is a public reader too.
    expect((await t.request('GET', '/api/workspaces/open/comments', { as: eve.as })).status).toBe(200);
  });

  it('the same holds for an unlisted workspace', async () => {
    await createWorkspace(t, ada, { name: 'Link only', slug: 'link-only', visibility: 'unlisted' });
    const comment = await addComment(t, ada.as, 'link-only', { target: { type: 'workspace' }, body: 'for people with the link' });
    expect((await t.request('GET', '/api/workspaces/link-only/comments')).status).toBe(403);
    expect((await t.request('GET', `/api/workspaces/link-only/comments/${comment.id}`)).status).toBe(403);
    await expectStatus(t.request('PATCH', '/api/workspaces/link-only', { as: ada.as, body: { commentsOnPublicShare: true } }), 200);
    expect((await expectStatus(t.request('GET', `/api/workspaces/link-only/comments/${comment.id}`), 200)).body.body).toBe('for people with the link');
    await expectStatus(t.request('PATCH', '/api/workspaces/link-only', { as: ada.as, body: { commentsOnPublicShare: false } }), 200);
    expect((await t.request('GET', '/api/workspaces/link-only/comments')).status).toBe(403);
  });

  it('an archived workspace keeps its comments readable and refuses new ones (409)', async () => {
    await createWorkspace(t, ada, { name: 'Old', slug: 'old' });
    const comment = await addComment(t, ada.as, 'old', { target: { type: 'workspace' }, body: 'before archiving' });
    await expectStatus(t.request('POST', '/api/me/elevate', { as: ada.as, body: { scope: 'workspace_delete' } }), 200);
    await expectStatus(t.request('DELETE', '/api/workspaces/old', { as: ada.as }), 200);
    expect((await t.request('GET', `/api/comments/${comment.id}`, { as: ada.as })).status).toBe(200);
    expect((await postComment(t, ada.as, 'old', { target: { type: 'workspace' }, body: 'after' })).status).toBe(409);
    expect((await t.request('POST', `/api/comments/${comment.id}/resolve`, { as: ada.as })).status).toBe(409);
  });
});

describe('paths and events', () => {
  it('serves each comment at /api/comments/{id} and under its workspace, bare and org-prefixed; another workspace is 404', async () => {
    const comment = await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'addressed three ways' });
    for (const url of [`/api/comments/${comment.id}`, `${base}/comments/${comment.id}`, `/api/orgs/${ada.orgSlug}/workspaces/plan/comments/${comment.id}`]) {
      expect((await t.request('GET', url, { as: ada.as })).body.id, url).toBe(comment.id);
    }
    await createWorkspace(t, ada, { name: 'Elsewhere', slug: 'elsewhere' });
    expect((await t.request('GET', `/api/workspaces/elsewhere/comments/${comment.id}`, { as: ada.as })).status).toBe(404);
    const canonical = await t.request('POST', `/api/orgs/${ada.orgSlug}/workspaces/plan/comments`, { as: ada.as, body: { target: { type: 'workspace' }, body: 'canonical' } });
    expect(canonical.body.workspaceId).toBe(ws.id);
  });

  it('every comment change reaches the SSE stream and the audit log', async () => {
    const sse = openSse(`${t.url}${base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    onTestFinished(() => sse.close());
    expect(await sse.ready).toBe(200);
    const comment = await addComment(t, bob.as, 'plan', { target: { type: 'row', rowId }, body: 'streamed', correlationId: 'corr-7' });
    await expectStatus(t.request('POST', `/api/comments/${comment.id}/reactions`, { as: ada.as, body: { emoji: '🎉' } }), 200);
    await expectStatus(t.request('DELETE', `/api/comments/${comment.id}/reactions/${encodeURIComponent('🎉')}`, { as: ada.as }), 200);
    await expectStatus(t.request('POST', `/api/comments/${comment.id}/resolve`, { as: ada.as }), 200);
    await expectStatus(t.request('POST', `/api/comments/${comment.id}/unresolve`, { as: ada.as }), 200);
    await expectStatus(t.request('DELETE', `/api/comments/${comment.id}`, { as: bob.as }), 200);
    const names = ['comment.added', 'comment.reaction_added', 'comment.reaction_removed', 'comment.resolved', 'comment.unresolved', 'comment.deleted'];
    const mine = () => sse.frames.filter((f) => f.data.data?.id === comment.id || f.data.data?.commentId === comment.id);
    await eventually(() => mine().length === names.length);
    expect(mine().map((f) => f.event)).toEqual(names);
    const added = mine()[0]!.data;
    expect(added).toMatchObject({ event: 'comment.added', surface: { slug: 'table' }, principal: { id: bob.userId }, data: { correlationId: 'corr-7', targetId: rowId } });
    const log = await expectStatus(t.request('GET', `${base}/events?action=comment.added&limit=500`, { as: ada.as }), 200);
    expect(log.body.events.some((e: { data: { id: string } }) => e.data.id === comment.id)).toBe(true);
  });
});

describe('legacy row endpoints', () => {
  it('list oldest first and create row comments with string mentions, answering Deprecation and a successor Link', async () => {
    const url = `${base}/rows/${otherRowId}/comments`;
    const first = await expectStatus(t.request('POST', url, { as: ada.as, body: { body: 'legacy @bob@example.com', mentions: [bob.userId] } }), 200);
    expect(first.headers.get('deprecation')).toBe('true');
    expect(first.headers.get('link')).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/openapi\.json#[^>]+comments>; rel="successor-version"$/);
    expect(first.body).toMatchObject({ targetType: 'row', targetId: otherRowId, target: { type: 'row', rowId: otherRowId }, surfaceSlug: 'bugs' });
    // The label of a legacy mention is the principal's name; it is kept only when `@name` is in the body.
    const name = (await t.request('GET', '/api/me', { as: bob.as })).body.user?.name ?? 'bob';
    const named = await expectStatus(t.request('POST', url, { as: ada.as, body: { body: `hi @${name}`, mentions: [bob.userId] } }), 200);
    expect(named.body.mentions).toEqual([{ kind: 'user', id: bob.userId, label: name }]);
    const reply = await expectStatus(t.request('POST', url, { as: bob.as, body: { body: 'legacy reply', parentId: first.body.id } }), 200);
    expect(reply.body.parentId).toBe(first.body.id);
    await addComment(t, ada.as, 'plan', { target: { type: 'cell', rowId: otherRowId, columnKey: 'title' }, body: 'cell, not listed' });

    const listed = await expectStatus(t.request('GET', url, { as: vic.as }), 200);
    expect(listed.headers.get('deprecation')).toBe('true');
    expect(listed.headers.get('link')).toContain('rel="successor-version"');
    expect(listed.body.comments.map((c: { id: string }) => c.id)).toEqual([first.body.id, named.body.id, reply.body.id]);

    const cellThread = await addComment(t, ada.as, 'plan', { target: { type: 'cell', rowId: otherRowId, columnKey: 'title' }, body: 'a cell thread' });
    const wrong = await t.request('POST', url, { as: bob.as, body: { body: 'reply', parentId: cellThread.id } });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('deprecation')).toBe('true');
    expect((await t.request('POST', url, { as: ada.as, body: { body: 'x', mentions: ['usr_nobody'] } })).status).toBe(422);
    expect((await t.request('GET', `${base}/rows/nope/comments`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${url}?surface=table`, { as: ada.as })).status).toBe(404);
    expect((await t.request('GET', `${url}?surface=bugs`, { as: ada.as })).status).toBe(200);
  });
});

describe('bad input', () => {
  it('is refused with 400 or 422 and writes nothing', async () => {
    const before = await countComments(t);
    const target = { type: 'workspace' };
    const cases: Array<[unknown, number]> = [
      [{ target, body: '' }, 422],
      [{ target, body: '   \n ' }, 422],
      [{ target, body: 'x'.repeat(20_001) }, 422],
      [{ target, body: 42 }, 400],
      [{ body: 'no target' }, 400],
      [{ target: { type: 'galaxy' }, body: 'x' }, 400],
      [{ target: { type: 'row' }, body: 'x' }, 400],
      [{ target: { type: 'workspace', extra: 1 }, body: 'x' }, 400],
      [JSON.parse('{"target":{"type":"workspace"},"body":"x","__proto__":{"admin":true}}'), 400],
      [{ target, body: 'x', mentions: 'bob' }, 400],
      [{ target, body: 'x', mentions: Array.from({ length: 51 }, () => ({ kind: 'user', id: bob.userId, label: 'b' })) }, 422],
      [{ target: { type: 'doc_range', surfaceSlug: 'spec', anchor: { from: 1.5, to: 2, text: '' } }, body: 'x' }, 400],
      [{ target: { type: 'doc_range', surfaceSlug: 'spec', anchor: { from: -1, to: 2, text: '' } }, body: 'x' }, 422],
    ];
    for (const [body, status] of cases) {
      const res = await t.request('POST', `${base}/comments`, { as: ada.as, rawBody: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(status);
      expect(res.body.error.details.length).toBeGreaterThan(0);
    }
    // An unpaired surrogate is repaired to U+FFFD on the way in (docs/SYNC.md "Text"), never stored as is.
    const repaired = await expectStatus(t.request('POST', `${base}/comments`, { as: ada.as, rawBody: JSON.stringify({ target, body: 'half a pair \ud800 here' }) }), 200);
    expect(repaired.body.body).toBe('half a pair \ufffd here');
    await expectStatus(t.request('DELETE', `/api/comments/${repaired.body.id}`, { as: ada.as }), 200);
    const nested = '{"target":{"type":"workspace"},"body":"x","correlationId":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    expect((await t.request('POST', `${base}/comments`, { as: ada.as, rawBody: nested })).status).toBe(400);
    expect((await t.request('POST', `${base}/comments`, { as: ada.as, rawBody: '{"target":' })).status).toBe(400);
    expect(await countComments(t)).toBe(before);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('the personal export', () => {
  it('holds the comments and reactions of the caller and their agents, and nobody else\'s', async () => {
    const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'exporter' });
    const mine = await addComment(t, ada.as, 'plan', { target: { type: 'workspace' }, body: 'mine to export' });
    const agents = await addComment(t, agent.as, 'plan', { target: { type: 'workspace' }, body: 'my agent wrote this' });
    const bobs = await addComment(t, bob.as, 'plan', { target: { type: 'workspace' }, body: 'bob keeps this' });
    await expectStatus(t.request('POST', `/api/comments/${bobs.id}/reactions`, { as: ada.as, body: { emoji: '✅' } }), 200);
    await expectStatus(t.request('POST', `/api/comments/${mine.id}/reactions`, { as: bob.as, body: { emoji: '❌' } }), 200);

    const bundle = JSON.parse((await expectStatus(t.request('GET', '/api/me/export', { as: ada.as }), 200)).text);
    const ids = bundle.comments.map((c: { id: string }) => c.id);
    expect(ids).toEqual(expect.arrayContaining([mine.id, agents.id]));
    expect(ids).not.toContain(bobs.id);
    expect(bundle.comments.find((c: { id: string }) => c.id === agents.id)).toMatchObject({
      workspaceSlug: 'plan',
      body: 'my agent wrote this',
      authorId: agent.agentId,
      authorPrincipalType: 'agent',
      targetType: 'workspace',
    });
    expect(bundle.commentReactions).toContainEqual(expect.objectContaining({ commentId: bobs.id, principalId: ada.userId, emoji: '✅' }));
    expect(bundle.commentReactions.every((r: { principalId: string }) => r.principalId === ada.userId)).toBe(true);
    expect(JSON.stringify(bundle)).not.toContain('bob keeps this');
  });
});

describe('OpenAPI', () => {
  it('describes every comment and inbox route, the legacy ones as deprecated', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const expected: Array<[string, string]> = [
      ['get', '/api/workspaces/{slug}/comments'],
      ['post', '/api/workspaces/{slug}/comments'],
      ['post', '/api/orgs/{orgSlug}/workspaces/{slug}/comments'],
      ['get', '/api/comments/{id}'],
      ['delete', '/api/comments/{id}'],
      ['post', '/api/comments/{id}/resolve'],
      ['post', '/api/comments/{id}/unresolve'],
      ['post', '/api/comments/{id}/reactions'],
      ['delete', '/api/comments/{id}/reactions/{emoji}'],
      ['get', '/api/orgs/{orgSlug}/workspaces/{slug}/comments/{id}'],
      ['get', '/api/me/messages'],
      ['get', '/api/me/messages/stream'],
    ];
    for (const [method, path] of expected) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(doc.paths['/api/workspaces/{slug}/rows/{id}/comments'].get.deprecated).toBe(true);
    expect(doc.paths['/api/workspaces/{slug}/rows/{id}/comments'].post.deprecated).toBe(true);
    expect(doc.components.schemas.Comment.properties).toHaveProperty('currentText');
  });
});
