import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { updateRowCells } from '../../src/model/table/document';
import { startTestApp, type TestResponse } from '../helpers/app';
import { upsertRows } from '../../src/persistence/table-rows';
import { unindexRows } from '../../src/persistence/row-indexes';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';
import { untilBlockedBehindLock } from '../helpers/database';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Calendar and timeline windows over HTTP and sync (issue 37 item 1,
 * docs/TABLES.md "Calendar and timeline"): `GET /rows?view=&from=&to=`
 * answers the rows whose date or range overlaps the days, in date order,
 * through the date index beside the row projection; rows without a date
 * are in no window; the view's filter applies; a date a sync client moves
 * is found at its new place at once; a window that is missing or reversed
 * is 400.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
let workspaceId: string;
const base = '/api/workspaces/plans';
const ids: Record<string, string> = {};

function ok(res: TestResponse) {
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const titles = (res: TestResponse) => ok(res).rows.map((row: { data: { title: string } }) => row.data.title);

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@windows.test');
  workspaceId = (await createWorkspace(t, ada, { name: 'Plans', slug: 'plans' })).id;
  for (const column of [
    { key: 'start', label: 'Start', type: 'date' },
    { key: 'end', label: 'End', type: 'date' },
    { key: 'owner', label: 'Owner', type: 'text' },
  ]) {
    ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column } }));
  }
  const rows: Array<[string, Record<string, unknown>]> = [
    ['Before', { start: '2026-04-20', end: '2026-04-29' }],
    ['Across the start', { start: '2026-04-28', end: '2026-05-03', status: 'doing' }],
    ['Inside', { start: '2026-05-10', owner: 'ann' }],
    ['Timed', { start: '2026-05-12T09:30:00Z', end: '2026-05-12T11:00:00Z' }],
    ['Across the end', { start: '2026-05-30', end: '2026-06-04', owner: 'ann' }],
    ['Spanning', { start: '2026-03-01', end: '2026-09-30', status: 'done' }],
    ['After', { start: '2026-06-02' }],
    ['No date', { owner: 'ann' }],
    ['End before start', { start: '2026-05-20', end: '2026-05-01' }],
  ];
  for (const [title, data] of rows) ids[title] = ok(await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title, ...data } } })).id;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function makeView(body: Record<string, unknown>) {
  return ok(await t.request('POST', `${base}/views`, { as: ada.as, body })).view as { id: string };
}

describe('calendar and timeline windows', () => {
  it('lists the rows whose range overlaps the window at either edge, in date order, and none without a date', async () => {
    const timeline = await makeView({ name: 'Roadmap', kind: 'timeline', dateColumn: 'start', endDateColumn: 'end' });
    expect(titles(await t.request('GET', `${base}/rows?view=${timeline.id}&from=2026-05-01&to=2026-05-31`, { as: ada.as }))).toEqual([
      'Spanning',
      'Across the start',
      'Inside',
      'Timed',
      'End before start',
      'Across the end',
    ]);
    // One day at each edge: a range ending on the first day and one starting on the last are in.
    expect(titles(await t.request('GET', `${base}/rows?view=${timeline.id}&from=2026-04-29&to=2026-04-29`, { as: ada.as }))).toEqual(['Spanning', 'Before', 'Across the start']);
    expect(titles(await t.request('GET', `${base}/rows?view=${timeline.id}&from=2026-05-25&to=2026-05-30`, { as: ada.as }))).toEqual(['Spanning', 'Across the end']);
    expect(titles(await t.request('GET', `${base}/rows?view=${timeline.id}&from=2026-06-04&to=2026-06-10`, { as: ada.as }))).toEqual(['Spanning', 'Across the end']);
  });

  it('places each row on its one date in a calendar without an end column', async () => {
    const calendar = await makeView({ name: 'Starts', kind: 'calendar', dateColumn: 'start' });
    expect(titles(await t.request('GET', `${base}/rows?view=${calendar.id}&from=2026-05-01&to=2026-05-31`, { as: ada.as }))).toEqual([
      'Inside',
      'Timed',
      'End before start',
      'Across the end',
    ]);
  });

  it('applies the view’s filter, and the request’s, and pages with a cursor', async () => {
    const mine = await makeView({ name: 'Ann’s', kind: 'calendar', dateColumn: 'start', endDateColumn: 'end', filter: { and: [{ column: 'owner', op: 'eq', value: 'ann' }] } });
    expect(titles(await t.request('GET', `${base}/rows?view=${mine.id}&from=2026-05-01&to=2026-05-31`, { as: ada.as }))).toEqual(['Inside', 'Across the end']);
    const everything = await makeView({ name: 'All', kind: 'timeline', dateColumn: 'start', endDateColumn: 'end' });
    expect(titles(await t.request('GET', `${base}/rows?view=${everything.id}&from=2026-05-01&to=2026-05-31&filter[status][eq]=doing`, { as: ada.as }))).toEqual(['Across the start']);
    const first = ok(await t.request('GET', `${base}/rows?view=${everything.id}&from=2026-05-01&to=2026-05-31&limit=4`, { as: ada.as }));
    expect(first.rows.map((row: { data: { title: string } }) => row.data.title)).toEqual(['Spanning', 'Across the start', 'Inside', 'Timed']);
    const second = ok(await t.request('GET', `${base}/rows?view=${everything.id}&from=2026-05-01&to=2026-05-31&limit=4&after=${first.nextCursor}`, { as: ada.as }));
    expect(second.rows.map((row: { data: { title: string } }) => row.data.title)).toEqual(['End before start', 'Across the end']);
    expect(second.nextCursor).toBeNull();
    // A cursor of another window is refused.
    const other = await t.request('GET', `${base}/rows?view=${everything.id}&from=2026-05-02&to=2026-05-31&after=${first.nextCursor}`, { as: ada.as });
    expect(other.status).toBe(400);
    expect(other.body.error.details[0]).toMatchObject({ path: ['after'], code: 'invalid_cursor' });
    // The JSON form answers the same.
    const posted = ok(await t.request('POST', `${base}/rows/query`, { as: ada.as, body: { view: mine.id, from: '2026-05-01', to: '2026-05-31' } }));
    expect(posted.rows.map((row: { data: { title: string } }) => row.data.title)).toEqual(['Inside', 'Across the end']);
  });

  it('finds a date a sync client moved at its new place at once', async () => {
    const calendar = await makeView({ name: 'Moved', kind: 'calendar', dateColumn: 'start' });
    const client: SyncClient = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: ada.cookie });
    try {
      await synced(client);
      updateRowCells(client.doc, ids['No date']!, { start: '2026-07-15' }, 'test');
      updateRowCells(client.doc, ids.Inside!, { start: '2026-07-01' }, 'test');
      await acknowledged(client);
      expect(titles(await t.request('GET', `${base}/rows?view=${calendar.id}&from=2026-07-01&to=2026-07-31`, { as: ada.as }))).toEqual(['Inside', 'No date']);
      expect(titles(await t.request('GET', `${base}/rows?view=${calendar.id}&from=2026-05-01&to=2026-05-31`, { as: ada.as }))).not.toContain('Inside');
      updateRowCells(client.doc, ids['No date']!, { start: null }, 'test');
      await acknowledged(client);
      expect(titles(await t.request('GET', `${base}/rows?view=${calendar.id}&from=2026-07-01&to=2026-07-31`, { as: ada.as }))).toEqual(['Inside']);
    } finally {
      client.destroy();
    }
  });

  it('answers 400 for a window that is missing, half given, reversed or not days, and for a window without a dated view', async () => {
    const calendar = await makeView({ name: 'Checked', kind: 'calendar', dateColumn: 'start' });
    const refused = async (query: string, path: string[], code: string) => {
      const res = await t.request('GET', `${base}/rows?${query}`, { as: ada.as });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
      expect(res.body.error.details).toContainEqual(expect.objectContaining({ path, code }));
    };
    await refused(`view=${calendar.id}`, ['from'], 'required');
    await refused(`view=${calendar.id}&from=2026-05-01`, ['to'], 'required');
    await refused(`view=${calendar.id}&to=2026-05-01`, ['from'], 'required');
    await refused(`view=${calendar.id}&from=2026-05-31&to=2026-05-01`, ['to'], 'reversed_window');
    await refused(`view=${calendar.id}&from=2026-02-30&to=2026-03-01`, ['from'], 'invalid_value');
    await refused(`view=${calendar.id}&from=May&to=2026-03-01`, ['from'], 'invalid_value');
    await refused('from=2026-05-01&to=2026-05-31', ['view'], 'window_needs_dated_view');
    const grid = await makeView({ name: 'Grid' });
    await refused(`view=${grid.id}&from=2026-05-01&to=2026-05-31`, ['view'], 'window_needs_dated_view');
  });

  it('refuses a calendar without a date column, or on a column that is not a date', async () => {
    const none = await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Bare', kind: 'calendar' } });
    expect(none.status).toBe(422);
    expect(none.body.error.details).toEqual([expect.objectContaining({ path: ['dateColumn'], code: 'required' })]);
    const text = await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'By owner', kind: 'timeline', dateColumn: 'owner' } });
    expect(text.status).toBe(422);
    expect(text.body.error.details).toEqual([expect.objectContaining({ path: ['dateColumn'], code: 'not_date_column' })]);
    const lanes = await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Lanes', kind: 'timeline', dateColumn: 'start', groupBy: 'title' } });
    expect(lanes.status).toBe(422);
    expect(lanes.body.error.details).toEqual([expect.objectContaining({ path: ['groupBy'], code: 'not_lane_column' })]);
    const { view } = ok(await t.request('POST', `${base}/views`, { as: ada.as, body: { name: 'Lanes', kind: 'timeline', dateColumn: 'start', endDateColumn: 'end', groupBy: 'status' } }));
    expect(view).toMatchObject({ kind: 'timeline', dateColumn: 'start', endDateColumn: 'end', groupBy: 'status' });
    expect(view).not.toHaveProperty('coverColumn');
    // Turning a grid into a calendar needs its date column in the same patch.
    const grid = await makeView({ name: 'Turned' });
    expect((await t.request('PATCH', `${base}/views/${grid.id}`, { as: ada.as, body: { kind: 'calendar' } })).status).toBe(422);
    expect(ok(await t.request('PATCH', `${base}/views/${grid.id}`, { as: ada.as, body: { kind: 'calendar', dateColumn: 'end' } })).view).toMatchObject({ kind: 'calendar', dateColumn: 'end', endDateColumn: null });
  });
});

describe('the date and file indexes, two commits of one row at once', () => {
  /**
   * Two instances over Redis can each commit a change to the same row (two
   * people on one row): each commit deletes the row's index entries, then
   * inserts what its cells hold. The second's delete cannot see entries the
   * first inserted and committed while it waited, so its insert met them on
   * the primary key, and its whole commit failed.
   */
  it("a second projection of a row while the first is uncommitted waits, then stands, instead of failing on the first one's entries", async () => {
    const db = t.services.db;
    const surfaceId = (await db.selectFrom('surfaces').select('id').where('workspaceId', '=', workspaceId).where('kind', '=', 'table').executeTakeFirstOrThrow()).id;
    const row = (start: string) => ({ id: 'row_raced', workspaceId, surfaceId, position: 99, data: { title: 'Raced', start, files: ['fil_raced'] }, createdBy: null, updatedBy: null });
    let second: Promise<unknown> | undefined;
    await db.transaction().execute(async (tx) => {
      await upsertRows(tx, [row('2031-03-01')], new Date());
      second = db.transaction().execute((other) => upsertRows(other, [row('2031-03-05')], new Date()));
      // On Postgres the second runs on its own connection: wait until it is blocked behind this transaction (on the row).
      // The embedded database's one session runs it after this one.
      await untilBlockedBehindLock(t.services);
    });
    await second;
    const dates = await db.selectFrom('rowDates').select(['columnKey', 'at']).where('workspaceId', '=', workspaceId).where('rowId', '=', 'row_raced').execute();
    expect(dates).toEqual([{ columnKey: 'start', at: new Date('2031-03-05T00:00:00Z') }]);
    const files = await db.selectFrom('rowFiles').select('fileId').where('workspaceId', '=', workspaceId).where('rowId', '=', 'row_raced').execute();
    expect(files).toEqual([{ fileId: 'fil_raced' }]);
    // Not a row of the table document: out of the projection again.
    await unindexRows(db, workspaceId, ['row_raced']);
    await db.deleteFrom('tableRows').where('workspaceId', '=', workspaceId).where('id', '=', 'row_raced').execute();
  });
});
