import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorFromSessionToken } from '../../src/access/callers';
import { resolveWorkspace } from '../../src/access/workspace-access';
import { decideRowSuggestion, listRowSuggestions, rowSuggestionViews, suggestRowCreate, suggestRowDelete, suggestRowUpdate } from '../../src/domain/row-suggestions';
import type { Actor } from '../../src/policy/actor';
import { tablesDocumentName } from '../../src/model/document-names';
import { rowSuggestionEntries } from '../../src/model/table/suggestions';
import { startTestApp, type TestResponse } from '../helpers/app';
import { connectClient, eventually, synced } from '../helpers/sync';
import { addWorkspaceWithRows } from '../billing/helpers';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { capsFor } from '../../src/limits/plans';

/**
 * Suggested row changes through the domain functions the suggestion routes
 * call (issue 25 item 2): a suggestion is checked like the plain write,
 * changes no row, reaches a sync client live, shows the cells someone else
 * changed since its base as conflicts, and is applied as the decider's own
 * row change on accept (events, row cap), or only marked on reject.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let cole: TestUser;
let adaActor: Actor;
let coleActor: Actor;
let workspaceId: string;
let sheetId: string;
const base = '/api/workspaces/plans';

function ok(res: TestResponse) {
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function rejection(promise: Promise<unknown>): Promise<{ status: number; code: string; details?: unknown }> {
  const error = await promise.then(
    () => null,
    (e) => e,
  );
  expect(error, 'expected a refusal').not.toBeNull();
  return { status: error.statusCode, code: error.code, details: error.details };
}

const asCole = () => resolveWorkspace(t.services, coleActor, { slug: 'plans' }, 'suggest');
const asAda = () => resolveWorkspace(t.services, adaActor, { slug: 'plans' }, 'decide_suggestions');

async function newRow(data: Record<string, unknown>): Promise<string> {
  return ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data } })).id;
}

async function row(id: string): Promise<TestResponse> {
  return t.request('GET', `${base}/rows/${id}`, { as: ada.as });
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  cole = await signInUser(t, 'cole@example.com');
  const workspace = await createWorkspace(t, ada, { name: 'Plans', slug: 'plans', mode: 'table' });
  workspaceId = workspace.id;
  sheetId = workspace.primarySurface?.id ?? ok(await t.request('GET', base, { as: ada.as })).primarySurface.id;
  await addMembership(t, workspace.id, cole.userId, 'commenter');
  ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'estimate', label: 'Estimate', type: 'number' } } }));
  adaActor = (await actorFromSessionToken(t.services, ada.cookie))!;
  coleActor = (await actorFromSessionToken(t.services, cole.cookie))!;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('suggesting', () => {
  it('an update is held beside the row, reaches a sync client live, and changes nothing', async () => {
    const rowId = await newRow({ title: 'Write spec', estimate: 3 });
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: ada.cookie });
    try {
      await synced(client);
      const suggestion = await suggestRowUpdate(t.services, coleActor, await asCole(), rowId, { estimate: 5 });
      expect(suggestion).toEqual({
        id: expect.stringMatching(/^sug_/),
        surfaceId: sheetId,
        target: 'row',
        rowId,
        status: 'open',
        author: { principalType: 'user', id: cole.userId, name: expect.any(String), avatarUrl: null },
        createdAt: expect.any(String),
        summary: `Row ${rowId}: estimate 3 → 5`,
        change: { kind: 'update', values: { estimate: 5 }, previous: { estimate: 3 } },
      });
      expect(ok(await row(rowId)).data).toMatchObject({ title: 'Write spec', estimate: 3 });
      const live = await eventually(() => rowSuggestionEntries(client.doc).find((entry) => entry.id === suggestion.id));
      expect(live).toMatchObject({ kind: 'update', rowId, values: { estimate: 5 }, base: { estimate: 3 }, status: 'open', author: { id: cole.userId } });
      expect(await listRowSuggestions(t.services, (await asAda()).workspace, sheetId)).toContainEqual(suggestion);
      expect((await rowSuggestionViews(t.services, (await asAda()).workspace)).get(suggestion.id)).toEqual(suggestion.change);
    } finally {
      client.destroy();
    }
  });

  it('is refused as the plain write would be: bad values 422, unknown rows and sheets 404, a foreign base 412, nothing written', async () => {
    const rowId = await newRow({ title: 'Checked' });
    const resolved = await asCole();
    const before = (await listRowSuggestions(t.services, resolved.workspace)).length;
    const bad = await rejection(suggestRowUpdate(t.services, coleActor, resolved, rowId, { estimate: 'lots' }));
    expect(bad).toMatchObject({ status: 422, code: 'validation', details: [expect.objectContaining({ path: ['data', 'estimate'] })] });
    expect(await rejection(suggestRowCreate(t.services, coleActor, resolved, {}, { estimate: 'lots' }))).toMatchObject({ status: 422 });
    expect(await rejection(suggestRowUpdate(t.services, coleActor, resolved, 'no-such-row', { title: 'x' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await rejection(suggestRowDelete(t.services, coleActor, resolved, 'no-such-row'))).toMatchObject({ status: 404 });
    expect(await rejection(suggestRowCreate(t.services, coleActor, resolved, { surface: 'nope' }, { title: 'x' }))).toMatchObject({ status: 404 });
    expect(await rejection(suggestRowDelete(t.services, coleActor, resolved, rowId, { surface: 'nope' }))).toMatchObject({ status: 404 });
    expect(await rejection(suggestRowUpdate(t.services, coleActor, resolved, rowId, { title: 'x' }, { ifMatch: '"1.AAAAAAAA"' }))).toMatchObject({ status: 412 });
    expect(await rejection(suggestRowUpdate(t.services, coleActor, resolved, rowId, {}))).toMatchObject({ status: 400 });
    expect((await listRowSuggestions(t.services, resolved.workspace)).length).toBe(before);
  });

  it('shows the cells someone changed since the suggester read them as conflicts', async () => {
    const rowId = await newRow({ title: 'Draft', estimate: 1 });
    const read = await row(rowId);
    const etag = read.headers.get('etag')!;
    ok(await t.request('PATCH', `${base}/rows/${rowId}`, { as: ada.as, body: { data: { title: 'Draft v2' } } }));
    // Read at the ETag: `title` changed since (a conflict), `estimate` did not.
    const onBase = await suggestRowUpdate(t.services, coleActor, await asCole(), rowId, { title: 'Final', estimate: 2 }, { ifMatch: etag });
    expect(onBase.change?.conflicts).toEqual([{ column: 'title', base: 'Draft', current: 'Draft v2', suggested: 'Final' }]);
    // Without a base the cells now are the base; a later change shows up.
    const plain = await suggestRowUpdate(t.services, coleActor, await asCole(), rowId, { estimate: 8 });
    expect(plain.change?.conflicts).toBeUndefined();
    ok(await t.request('PATCH', `${base}/rows/${rowId}`, { as: ada.as, body: { data: { estimate: 4 } } }));
    const views = await listRowSuggestions(t.services, (await asAda()).workspace, sheetId);
    expect(views.find((s) => s.id === plain.id)?.change?.conflicts).toEqual([{ column: 'estimate', base: 1, current: 4, suggested: 8 }]);
  });
});

describe('deciding', () => {
  it('accepting an update applies it as the decider\'s row change; deciding again is 409', async () => {
    const rowId = await newRow({ title: 'Ship', estimate: 2 });
    const suggestion = await suggestRowUpdate(t.services, coleActor, await asCole(), rowId, { estimate: 13 });
    const accepted = await decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, suggestion.id, 'accept');
    expect(accepted).toMatchObject({
      id: suggestion.id,
      status: 'accepted',
      decidedBy: { principalType: 'user', id: ada.userId },
      decidedAt: expect.any(String),
      change: { kind: 'update', values: { estimate: 13 }, previous: { estimate: 2 } },
    });
    expect(ok(await row(rowId)).data).toMatchObject({ estimate: 13 });
    const { events } = ok(await t.request('GET', `${base}/rows/${rowId}/history`, { as: ada.as }));
    expect(events.at(-1)).toMatchObject({ event: 'row.updated', principal: { id: ada.userId } });
    expect(await rejection(decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, suggestion.id, 'reject'))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await rejection(decideRowSuggestion(t.services, adaActor, await asAda(), 'srf_other', suggestion.id, 'reject'))).toMatchObject({ status: 404 });
  });

  it('rejecting changes no row', async () => {
    const rowId = await newRow({ title: 'Keep me' });
    const suggestion = await suggestRowDelete(t.services, coleActor, await asCole(), rowId);
    expect(suggestion.change).toMatchObject({ kind: 'delete', previous: { title: 'Keep me' } });
    const rejected = await decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, suggestion.id, 'reject');
    expect(rejected).toMatchObject({ status: 'rejected', decidedBy: { id: ada.userId } });
    expect(ok(await row(rowId)).data).toMatchObject({ title: 'Keep me' });
  });

  it('accepting a new row creates it under the suggested id; accepting a delete deletes it', async () => {
    const created = await suggestRowCreate(t.services, coleActor, await asCole(), {}, { title: 'From a suggestion', estimate: 1 });
    expect(created.change).toEqual({ kind: 'create', values: { title: 'From a suggestion', estimate: 1 } });
    expect((await row(created.rowId!)).status).toBe(404);
    await decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, created.id, 'accept');
    expect(ok(await row(created.rowId!))).toMatchObject({ surfaceId: sheetId, data: { title: 'From a suggestion', estimate: 1 }, createdByPrincipalId: ada.userId });

    const removal = await suggestRowDelete(t.services, coleActor, await asCole(), created.rowId!);
    const accepted = await decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, removal.id, 'accept');
    expect(accepted.change).toMatchObject({ kind: 'delete', previous: { title: 'From a suggestion' } });
    expect((await row(created.rowId!)).status).toBe(404);
  });

  it('an update of a row deleted since is 409 and stays open', async () => {
    const rowId = await newRow({ title: 'Doomed' });
    const suggestion = await suggestRowUpdate(t.services, coleActor, await asCole(), rowId, { title: 'Saved?' });
    ok(await t.request('DELETE', `${base}/rows/${rowId}`, { as: ada.as }));
    expect(await rejection(decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, suggestion.id, 'accept'))).toMatchObject({ status: 409 });
    const [view] = (await listRowSuggestions(t.services, (await asAda()).workspace)).filter((s) => s.id === suggestion.id);
    expect(view?.status).toBe('open');
    expect((await decideRowSuggestion(t.services, adaActor, await asAda(), sheetId, suggestion.id, 'reject')).status).toBe('rejected');
  });

  it('a new row past the row cap is refused with the cap error and stays open', async () => {
    const cap = capsFor('free').rowsPerWorkspace;
    const full = await addWorkspaceWithRows(t, ada, 'full', cap);
    const resolved = await resolveWorkspace(t.services, adaActor, { slug: 'full' }, 'decide_suggestions');
    const suggestion = await suggestRowCreate(t.services, adaActor, resolved, {}, { title: 'one too many' });
    expect(await rejection(decideRowSuggestion(t.services, adaActor, resolved, full.surfaceId, suggestion.id, 'accept'))).toMatchObject({ status: 402 });
    expect((await listRowSuggestions(t.services, resolved.workspace)).find((s) => s.id === suggestion.id)?.status).toBe('open');
    ok(await t.request('DELETE', `/api/workspaces/full/rows/${full.rowIds[0]}`, { as: ada.as }));
    expect((await decideRowSuggestion(t.services, adaActor, resolved, full.surfaceId, suggestion.id, 'accept')).status).toBe('accepted');
  }, 60_000);
});
