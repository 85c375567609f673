import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestResponse } from '../helpers/app';
import { addMembership, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Saved views over HTTP (issue 24 item 2, docs/TABLES.md "Saved views"): create,
 * list, change and delete them on a sheet, each refusal with its status and
 * error body, who may write them, and what a board needs.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let vic: TestUser;
let bugs: { id: string; slug: string };
let primaryId: string;
const base = '/api/workspaces/plans';

function ok(res: TestResponse) {
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }), requestId: expect.any(String) });
  return res.body.error as { code: string; message: string; details?: Array<{ path: string[]; code: string; message: string }> };
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
  vic = await signInUser(t, 'vic@example.com');
  const workspace = await createWorkspace(t, ada, { name: 'Plans', slug: 'plans', mode: 'table' });
  primaryId = workspace.primarySurface?.id ?? ok(await t.request('GET', base, { as: ada.as })).primarySurface.id;
  await addMembership(t, workspace.id, vic.userId, 'viewer');
  ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column: { key: 'due', label: 'Due', type: 'date' } } }));
  bugs = ok(await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'table', slug: 'bugs', name: 'Bugs' } }));
  for (const column of [
    { key: 'title', label: 'Title', type: 'text' },
    { key: 'notes', label: 'Notes', type: 'longtext' },
  ]) {
    ok(await t.request('POST', `${base}/columns?surface=bugs`, { as: ada.as, body: { column } }));
  }
  ok(await t.request('POST', `${base}/columns?surface=bugs`, { as: ada.as, body: { column: { key: 'severity', label: 'Severity', type: 'select', options: [{ value: 'low', label: 'Low' }] } } }));
  ok(await t.request('POST', `${base}/columns?surface=bugs`, { as: ada.as, body: { column: { key: 'stage', label: 'Stage', type: 'status', options: [{ value: 'new', label: 'New' }] } } }));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('saved views: create, list, change, delete', () => {
  it('creates a view with defaults on the primary sheet and lists it', async () => {
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Everything' } }));
    expect(view).toEqual({
      id: expect.any(String),
      surfaceId: primaryId,
      name: 'Everything',
      kind: 'grid',
      filter: null,
      sort: [],
      hiddenColumns: [],
      columnOrder: [],
      groupBy: null,
      rowHeight: 'short',
      position: 0,
    });
    const listed = ok(await t.request('GET', `${base}/views`, { as: ada.as })).views;
    expect(listed).toContainEqual(view);
  });

  it('creates a view with every field on a named sheet, under the org URL too, and lists it per sheet', async () => {
    const body = {
      name: 'Open bugs',
      filter: { and: [{ column: 'stage', op: 'in', value: ['new'] }] },
      sort: [{ column: 'title', direction: 'desc' }],
      hiddenColumns: ['notes'],
      columnOrder: ['severity', 'title'],
      groupBy: null,
      rowHeight: 'tall',
    };
    const { view } = ok(await t.request('POST', `/api/orgs/${ada.orgSlug}/workspaces/plans/views?surface=bugs`, { as: ada.as, body }));
    expect(view).toEqual({ ...body, id: expect.any(String), surfaceId: bugs.id, kind: 'grid', position: 0 });
    const second = ok(await t.request('POST', `${base}/views?surfaceId=${bugs.id}`, { as: ada.as, body: { name: 'Second' } })).view;
    expect(second.position).toBe(1);

    const onBugs = ok(await t.request('GET', `${base}/views?surface=bugs`, { as: ada.as })).views;
    expect(onBugs.map((v: { name: string }) => v.name)).toEqual(['Open bugs', 'Second']);
    const onPrimary = ok(await t.request('GET', `${base}/views?surfaceId=${primaryId}`, { as: ada.as })).views;
    expect(onPrimary.every((v: { surfaceId: string }) => v.surfaceId === primaryId)).toBe(true);
    // Without a sheet: every sheet's views, sheet by sheet.
    const all = ok(await t.request('GET', `/api/orgs/${ada.orgSlug}/workspaces/plans/views`, { as: ada.as })).views;
    expect(all.map((v: { surfaceId: string }) => v.surfaceId)).toEqual([...onPrimary.map(() => primaryId), bugs.id, bugs.id]);
  });

  it('changes the fields given and keeps the others', async () => {
    const { view } = ok(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'To change', hiddenColumns: ['notes'], rowHeight: 'medium' } }));
    const changed = ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { name: 'Changed', sort: [{ column: 'severity' }], filter: { or: [{ column: 'title', op: 'contains', value: 'crash' }] } } })).view;
    expect(changed).toEqual({ ...view, name: 'Changed', sort: [{ column: 'severity', direction: 'asc' }], filter: { or: [{ column: 'title', op: 'contains', value: 'crash' }] } });
    const cleared = ok(await t.request('PATCH', `/api/orgs/${ada.orgSlug}/workspaces/plans/views/${view.id}?surface=bugs`, { as: ada.as, body: { filter: null, hiddenColumns: [] } })).view;
    expect(cleared).toEqual({ ...changed, filter: null, hiddenColumns: [] });
    const listed = ok(await t.request('GET', `${base}/views?surface=bugs`, { as: ada.as })).views;
    expect(listed).toContainEqual(cleared);
  });

  it('deletes a view: gone from the list, and a second delete is 404', async () => {
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Short-lived' } }));
    expect(ok(await t.request('DELETE', `${base}/views/${view.id}`, { as: ada.as }))).toEqual({ ok: true });
    const listed = ok(await t.request('GET', `${base}/views`, { as: ada.as })).views;
    expect(listed.map((v: { id: string }) => v.id)).not.toContain(view.id);
    expectError(await t.request('DELETE', `${base}/views/${view.id}`, { as: ada.as }), 404, 'not_found');
  });
});

describe('saved views: refusals', () => {
  it('answers 422 naming a hidden or ordered column key the sheet does not have', async () => {
    const hidden = expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Bad', hiddenColumns: ['title', 'nope'] } }), 422, 'validation');
    expect(hidden.details).toEqual([{ path: ['hiddenColumns', '1'], code: 'unknown_column', message: expect.stringContaining('"nope"') }]);
    // `severity` is a column of bugs, not of the primary sheet.
    const ordered = expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Bad', columnOrder: ['severity'] } }), 422, 'validation');
    expect(ordered.details).toEqual([{ path: ['columnOrder', '0'], code: 'unknown_column', message: expect.stringContaining('"severity"') }]);
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Fine' } }));
    const patched = expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { columnOrder: ['title', 'ghost'] } }), 422, 'validation');
    expect(patched.details).toEqual([{ path: ['columnOrder', '1'], code: 'unknown_column', message: expect.stringContaining('"ghost"') }]);
    // Nothing of a refused write is kept.
    const listed = ok(await t.request('GET', `${base}/views`, { as: ada.as })).views;
    expect(listed.find((v: { id: string }) => v.id === view.id).columnOrder).toEqual([]);
    expect(listed.map((v: { name: string }) => v.name)).not.toContain('Bad');
  });

  it('answers 422 naming the part of a filter or sort the sheet cannot run: unknown column, operator not for its type, unparsable value', async () => {
    const filterOf = async (filter: unknown, sort: unknown = []) =>
      expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Bad filter', filter, sort } }), 422, 'validation').details;
    expect(await filterOf({ and: [{ column: 'ghost', op: 'eq', value: 'x' }] })).toEqual([
      { path: ['filter', 'and', '0', 'column'], code: 'unknown_column', message: expect.stringContaining('"ghost"') },
    ]);
    expect(await filterOf({ or: [{ column: 'title', op: 'eq', value: 'a' }, { and: [{ column: 'title', op: 'lt', value: 'b' }] }] })).toEqual([
      { path: ['filter', 'or', '1', 'and', '0', 'op'], code: 'invalid_operator', message: expect.stringContaining('text column') },
    ]);
    expect(await filterOf({ and: [{ column: 'due', op: 'lt', value: 'next tuesday' }] })).toEqual([
      { path: ['filter', 'and', '0', 'value'], code: 'invalid_value', message: expect.any(String) },
    ]);
    expect(await filterOf(null, [{ column: 'title' }, { column: 'nope', direction: 'desc' }])).toEqual([
      { path: ['sort', '1'], code: 'unknown_column', message: expect.stringContaining('"nope"') },
    ]);
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Due soon', filter: { and: [{ column: 'due', op: 'lt', value: '2026-12-01' }] } } }));
    const patched = expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { sort: [{ column: 'ghost' }] } }), 422, 'validation');
    expect(patched.details).toEqual([{ path: ['sort', '0'], code: 'unknown_column', message: expect.any(String) }]);
    expect(ok(await t.request('GET', `${base}/views`, { as: ada.as })).views.map((v: { name: string }) => v.name)).not.toContain('Bad filter');
  });

  it('answers 400 for a malformed view (unknown field, bad kind, bad filter operator, empty name)', async () => {
    const unknownField = expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'X', colour: 'red' } }), 400, 'bad_request');
    expect(unknownField.details).toContainEqual(expect.objectContaining({ path: ['colour'], code: 'unrecognized_keys' }));
    expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'X', kind: 'spreadsheet' } }), 400, 'bad_request');
    const op = expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'X', filter: { and: [{ column: 'title', op: 'like', value: 'a' }] } } }), 400, 'bad_request');
    expect(op.details!.some((d) => d.path[0] === 'filter')).toBe(true);
    const name = expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: '  ' } }), 422, 'validation');
    expect(name.details).toContainEqual(expect.objectContaining({ path: ['name'] }));
    expectError(await t.request('POST', `${base}/views`, { as: ada.as, body: {} }), 400, 'bad_request');
  });

  it('answers 404 for an unknown view, an unknown sheet, and a view addressed on another sheet', async () => {
    expectError(await t.request('PATCH', `${base}/views/no-such-view`, { as: ada.as, body: { name: 'X' } }), 404, 'not_found');
    expectError(await t.request('DELETE', `${base}/views/no-such-view`, { as: ada.as }), 404, 'not_found');
    expectError(await t.request('GET', `${base}/views?surface=nope`, { as: ada.as }), 404, 'not_found');
    expectError(await t.request('POST', `${base}/views?surface=nope`, { as: ada.as, body: { name: 'X' } }), 404, 'not_found');
    const { view } = ok(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'On bugs' } }));
    expectError(await t.request('PATCH', `${base}/views/${view.id}?surfaceId=${primaryId}`, { as: ada.as, body: { name: 'X' } }), 404, 'not_found');
  });

  it('answers 404 for a view id of another workspace, and leaves that view alone', async () => {
    await createWorkspace(t, ada, { name: 'Other', slug: 'other', mode: 'table' });
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Home view' } }));
    expectError(await t.request('PATCH', `/api/workspaces/other/views/${view.id}`, { as: ada.as, body: { name: 'Hijacked' } }), 404, 'not_found');
    expectError(await t.request('DELETE', `/api/workspaces/other/views/${view.id}`, { as: ada.as }), 404, 'not_found');
    expect(ok(await t.request('GET', '/api/workspaces/other/views', { as: ada.as })).views).toEqual([]);
    const home = ok(await t.request('GET', `${base}/views`, { as: ada.as })).views;
    expect(home).toContainEqual(view);
  });
});

describe('saved views: applied to rows', () => {
  it('GET /rows?view= lists the rows of a view saved here, filtered and sorted as saved', async () => {
    for (const [title, stage] of [['b crash', 'new'], ['a crash', 'new'], ['c typo', 'new'], ['d crash', null]]) {
      ok(await t.request('POST', `${base}/rows?surface=bugs`, { as: ada.as, body: { data: { title, stage } } }));
    }
    const { view } = ok(
      await t.request('POST', `${base}/views?surface=bugs`, {
        as: ada.as,
        body: { name: 'New crashes', filter: { and: [{ column: 'stage', op: 'eq', value: 'new' }, { column: 'title', op: 'contains', value: 'crash' }] }, sort: [{ column: 'title', direction: 'desc' }] },
      }),
    );
    const rows = ok(await t.request('GET', `${base}/rows?view=${view.id}`, { as: vic.as })).rows;
    expect(rows.map((r: { data: { title: string } }) => r.data.title)).toEqual(['b crash', 'a crash']);
  });
});

describe('saved views: a deleted sheet', () => {
  it('hides the views of a deleted table surface: not listed, and 404 to change', async () => {
    ok(await t.request('POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'table', slug: 'scratch', name: 'Scratch' } }));
    ok(await t.request('POST', `${base}/columns?surface=scratch`, { as: ada.as, body: { column: { key: 'title', label: 'Title', type: 'text' } } }));
    const { view } = ok(await t.request('POST', `${base}/views?surface=scratch`, { as: ada.as, body: { name: 'On scratch' } }));
    ok(await t.request('DELETE', `${base}/surfaces/scratch?force=1`, { as: ada.as }));
    expect(ok(await t.request('GET', `${base}/views`, { as: ada.as })).views.map((v: { id: string }) => v.id)).not.toContain(view.id);
    expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { name: 'Still here?' } }), 404, 'not_found');
    expectError(await t.request('DELETE', `${base}/views/${view.id}`, { as: ada.as }), 404, 'not_found');
  });
});

describe('saved views: who may write them', () => {
  it('lets a viewer read views but answers 403 to their create, change and delete', async () => {
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Shared' } }));
    const seen = ok(await t.request('GET', `${base}/views`, { as: vic.as })).views;
    expect(seen).toContainEqual(view);
    expectError(await t.request('POST', `${base}/views`, { as: vic.as, body: { name: 'Mine' } }), 403, 'forbidden');
    expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: vic.as, body: { name: 'Renamed' } }), 403, 'forbidden');
    expectError(await t.request('DELETE', `${base}/views/${view.id}`, { as: vic.as }), 403, 'forbidden');
    expect(ok(await t.request('GET', `${base}/views`, { as: ada.as })).views).toContainEqual(view);
  });

  it('answers 401 to a write without credentials and 404 to a stranger', async () => {
    expectError(await t.request('POST', `${base}/views`, { body: { name: 'Anon' } }), 401, 'unauthorized');
    const stranger = await signInUser(t, 'stranger@example.com');
    expectError(await t.request('GET', `${base}/views`, { as: stranger.as }), 404, 'not_found');
  });
});

describe('saved views: boards', () => {
  it('creates a board grouped by a status column', async () => {
    const { view } = ok(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'Stages', kind: 'board', groupBy: 'stage' } }));
    expect(view).toMatchObject({ kind: 'board', groupBy: 'stage', surfaceId: bugs.id });
  });

  it('answers 422 to a board without groupBy, grouped by a column that is not a status column, or by an unknown one', async () => {
    const missing = expectError(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'B', kind: 'board' } }), 422, 'validation');
    expect(missing.details).toEqual([{ path: ['groupBy'], code: 'required', message: expect.any(String) }]);
    const select = expectError(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'B', kind: 'board', groupBy: 'severity' } }), 422, 'validation');
    expect(select.details).toEqual([{ path: ['groupBy'], code: 'not_status_column', message: expect.stringContaining('"severity" is a select column') }]);
    const unknown = expectError(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'B', kind: 'board', groupBy: 'status' } }), 422, 'validation');
    expect(unknown.details).toEqual([{ path: ['groupBy'], code: 'unknown_column', message: expect.stringContaining('"status"') }]);
  });

  it('checks the board on the view as a PATCH leaves it: turning a grid into a board needs groupBy, and a board cannot drop it', async () => {
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Grid first' } }));
    const turned = expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { kind: 'board' } }), 422, 'validation');
    expect(turned.details).toEqual([{ path: ['groupBy'], code: 'required', message: expect.any(String) }]);
    const board = ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { kind: 'board', groupBy: 'status' } })).view;
    expect(board).toMatchObject({ kind: 'board', groupBy: 'status' });
    const dropped = expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { groupBy: null } }), 422, 'validation');
    expect(dropped.details).toEqual([{ path: ['groupBy'], code: 'required', message: expect.any(String) }]);
    const wrongType = expectError(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { groupBy: 'title' } }), 422, 'validation');
    expect(wrongType.details).toEqual([{ path: ['groupBy'], code: 'not_status_column', message: expect.stringContaining('"title" is a text column') }]);
    // Back to a grid: groupBy may go.
    expect(ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { kind: 'grid', groupBy: null } })).view).toMatchObject({ kind: 'grid', groupBy: null });
  });
});

describe('saved views: events', () => {
  it('records view.created, view.updated (with the fields changed) and view.deleted, attributed to the caller', async () => {
    const { view } = ok(await t.request('POST', `${base}/views?surface=bugs`, { as: ada.as, body: { name: 'Evented' } }));
    ok(await t.request('PATCH', `${base}/views/${view.id}`, { as: ada.as, body: { name: 'Evented again', rowHeight: 'short', hiddenColumns: ['notes'] } }));
    ok(await t.request('DELETE', `${base}/views/${view.id}`, { as: ada.as }));
    const events = ok(await t.request('GET', `${base}/events?limit=3`, { as: ada.as })).events.reverse();
    const principal = expect.objectContaining({ id: ada.userId });
    const surface = { id: bugs.id, slug: 'bugs' };
    expect(events).toEqual([
      expect.objectContaining({ event: 'view.created', surface, principal, data: { id: view.id, surfaceId: bugs.id, view } }),
      // rowHeight was already `short`: not a change.
      expect.objectContaining({
        event: 'view.updated',
        surface,
        principal,
        data: { id: view.id, surfaceId: bugs.id, changedFields: ['hiddenColumns', 'name'], view: { ...view, name: 'Evented again', hiddenColumns: ['notes'] } },
      }),
      expect.objectContaining({ event: 'view.deleted', surface, principal, data: { id: view.id, surfaceId: bugs.id } }),
    ]);
  });
});
