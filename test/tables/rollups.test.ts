import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow, listRows, openReading, readColumns, updateRowCells } from '../../src/model/table/document';
import { compileRowQuery, filterFromQueryString, sortFromQueryString } from '../../src/model/table/query';
import { tableIndex } from '../../src/model/table/row-index';
import { startTestApp, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { addWorkspaceWithRows } from '../billing/helpers';
import { mcpClient } from '../oauth/helpers';
import { bearerOf } from '../mcp/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Rollup columns and computed cells where values show (issue 36, items 2
 * to 4; docs/FORMULAS.md): every rollup function over a link, of stored,
 * formula and lookup fields; values current right after a write's
 * acknowledgement on a linked row (REST, MCP, sync); deletes and moves of
 * linked rows; rows the caller cannot read never counted; filters, sorts,
 * views, boards, CSV and row events on computed columns; a sorted listing
 * after writes (what a listing keeps is brought up to date, not reread).
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let workspaceId: string;
const clients: SyncClient[] = [];
const base = '/api/workspaces/plan';
const ids: Record<string, string> = {};

function rest(method: string, path: string, body?: unknown) {
  return t.request(method, path, { as: owner.as, body });
}

async function add(column: Record<string, unknown>, surface = 'table') {
  const res = await rest('POST', `${base}/columns?surface=${surface}`, { column });
  expect(res.status, res.text).toBe(200);
  return res.body.column;
}

async function project(id = ids.apollo!) {
  return (await rest('GET', `${base}/rows/${id}`)).body.data;
}

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'rollups@example.com');
  workspaceId = (await createWorkspace(t, owner, { name: 'Plan', slug: 'plan' })).id;
  for (const [slug, name] of [['projects', 'Projects'], ['archive', 'Archive']]) expect((await rest('POST', `${base}/surfaces`, { kind: 'table', slug, name })).status).toBe(200);
  await add({ key: 'budget', label: 'Budget', type: 'number' }, 'projects');
  ids.apollo = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Apollo', budget: 100 } })).body.id;
  ids.borealis = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Borealis', budget: 10 } })).body.id;
  // Tasks: stored fields, a formula, a link to projects and a lookup through it.
  await add({ key: 'est', label: 'Estimate', type: 'number' });
  await add({ key: 'done', label: 'Done', type: 'checkbox' });
  await add({ key: 'due', label: 'Due', type: 'date' });
  await add({ key: 'points', label: 'Points', type: 'formula', formula: '{est} * 2' });
  await add({ key: 'project', label: 'Project', type: 'link', targetSurface: 'projects' });
  await add({ key: 'projectBudget', label: 'Project budget', type: 'lookup', link: 'project', field: 'budget' });
  await add({ key: 'share', label: 'Share', type: 'formula', formula: 'ROUND({est} / SUM({projectBudget}) * 100, 1)' });
  const tasks: Array<[string, Record<string, unknown>]> = [
    ['write', { title: 'Write', est: 3, done: true, due: '2026-02-01' }],
    ['test', { title: 'Test', est: 5, done: false, due: '2026-01-15' }],
    ['ship', { title: 'Ship', due: '2026-03-10T09:00:00Z' }],
  ];
  for (const [name, data] of tasks) ids[name] = (await rest('POST', `${base}/rows`, { data })).body.id;
  // Projects roll the tasks up.
  await add({ key: 'tasks', label: 'Tasks', type: 'link', targetSurface: 'table' }, 'projects');
  const rollups: Array<[string, string, string]> = [
    ['total', 'est', 'sum'],
    ['mean', 'est', 'avg'],
    ['least', 'est', 'min'],
    ['most', 'est', 'max'],
    ['n', 'est', 'count'],
    ['estimated', 'est', 'counta'],
    ['names', 'title', 'concat'],
    ['allDone', 'done', 'and'],
    ['anyDone', 'done', 'or'],
    ['first', 'due', 'earliest'],
    ['last', 'due', 'latest'],
    ['pointsTotal', 'points', 'sum'],
    ['budgets', 'projectBudget', 'sum'],
  ];
  for (const [key, field, fn] of rollups) await add({ key, label: key, type: 'rollup', link: 'tasks', field, fn }, 'projects');
  await add({ key: 'left', label: 'Left', type: 'formula', formula: '{budget} - {total}' }, 'projects');
  expect((await rest('PATCH', `${base}/rows/${ids.apollo}`, { data: { tasks: [ids.write, ids.test, ids.ship] } })).status).toBe(200);
  for (const task of ['write', 'test', 'ship']) expect((await rest('PATCH', `${base}/rows/${ids[task]}`, { data: { project: [ids.apollo] } })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

describe('rollup columns', () => {
  it('every function over the linked rows, of stored, formula and lookup fields, with a result type; a formula may use a rollup', async () => {
    expect(await project()).toMatchObject({
      total: 8,
      mean: 4,
      least: 3,
      most: 5,
      n: 3,
      estimated: 2,
      names: 'Write, Test, Ship',
      allDone: false,
      anyDone: true,
      first: '2026-01-15',
      last: '2026-03-10T09:00:00.000Z',
      pointsTotal: 16,
      budgets: 300,
      left: 92,
    });
    // A project without tasks: sums and counts are 0, the rest blank or false.
    expect(await project(ids.borealis)).toMatchObject({ total: 0, mean: null, least: null, most: null, n: 0, estimated: 0, names: null, allDone: false, anyDone: false, first: null, last: null, left: 10 });
    const columns = (await rest('GET', `${base}/columns?surface=projects`)).body.columns;
    const typeOf = (key: string) => columns.find((c: any) => c.key === key).resultType;
    expect(['total', 'n', 'names', 'allDone', 'first', 'left'].map(typeOf)).toEqual(['number', 'number', 'text', 'checkbox', 'date', 'number']);
    // Tasks read the project's budget through the lookup.
    expect((await rest('GET', `${base}/rows/${ids.write}`)).body.data).toMatchObject({ points: 6, projectBudget: [100], share: 3 });
  });

  it('a change to a linked row shows in the rollups right after its acknowledgement: REST, MCP and a sync provider', async () => {
    expect((await rest('PATCH', `${base}/rows/${ids.ship}`, { data: { est: 2, done: true } })).status).toBe(200);
    expect(await project()).toMatchObject({ total: 10, estimated: 3, pointsTotal: 20, least: 2, left: 90 });

    const agent = await insertKey(t, owner, { role: 'editor', scopeWorkspaceId: workspaceId, agentName: 'planner' });
    const mcp = await mcpClient(t, bearerOf(agent.as));
    try {
      expect((await mcp.callTool({ name: 'update_row', arguments: { slug: 'plan', id: ids.test, data: { est: 7 } } })).isError).toBeFalsy();
      const listed = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'plan', surface: 'projects' } });
      expect((listed.structuredContent as any).rows.find((row: any) => row.id === ids.apollo).data).toMatchObject({ total: 12, most: 7 });
    } finally {
      await mcp.close();
    }

    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    clients.push(client);
    await synced(client);
    updateRowCells(client.doc, ids.test!, { done: true, est: 5 }, { source: 'test' });
    await acknowledged(client);
    expect(await project()).toMatchObject({ total: 10, allDone: true, most: 5 });
    // A project's own change is seen by the tasks that look it up.
    updateRowCells(client.doc, ids.apollo!, { budget: 200 }, { source: 'test' });
    await acknowledged(client);
    expect((await rest('GET', `${base}/rows/${ids.write}`)).body.data).toMatchObject({ projectBudget: [200], share: 1.5 });
    expect(await project()).toMatchObject({ budgets: 600, left: 190 });
  });

  it('a deleted linked row leaves the rollups; a row moved to another sheet stays linked and counted', async () => {
    const extra = (await rest('POST', `${base}/rows`, { data: { title: 'Extra', est: 100 } })).body.id;
    expect((await rest('PATCH', `${base}/rows/${ids.apollo}`, { data: { tasks: [ids.write, ids.test, ids.ship, extra] } })).status).toBe(200);
    expect(await project()).toMatchObject({ total: 110, n: 4 });
    expect((await rest('POST', `${base}/rows/move`, { rowIds: [extra], surface: 'archive' })).status).toBe(200);
    // Moved: still linked, its est read from its own cells; `points` is not a column of the archive, so it adds nothing there.
    expect(await project()).toMatchObject({ total: 110, n: 4, pointsTotal: 20 });
    expect((await rest('DELETE', `${base}/rows/${extra}?surface=archive`)).status).toBe(200);
    expect(await project()).toMatchObject({ total: 10, n: 3, names: 'Write, Test, Ship' });
  });

  it('refuses a rollup without a link column, a target field or a function, and circles through links, naming the columns', async () => {
    const refuse = async (column: Record<string, unknown>, status: number, detail: Record<string, unknown>) => {
      const res = await rest('POST', `${base}/columns?surface=projects`, { column: { label: 'R', type: 'rollup', ...column } });
      expect(res.status, res.text).toBe(status);
      expect(res.body.error.details).toEqual([expect.objectContaining(detail)]);
    };
    await refuse({ key: 'r1', link: 'budget', field: 'est', fn: 'sum' }, 422, { path: ['column', 'link'], code: 'unknown_link' });
    await refuse({ key: 'r2', link: 'tasks', field: 'nope', fn: 'sum' }, 422, { path: ['column', 'field'], code: 'unknown_field' });
    await refuse({ key: 'r3', link: 'tasks', field: 'est' }, 422, { path: ['column', 'fn'], code: 'invalid_function' });
    await refuse({ key: 'r4', link: 'tasks', field: 'est', fn: 'median' }, 400, { path: ['column', 'fn'] });

    // tasks.back looks up projects.echo, which rolls up tasks.back: a circle through both sheets.
    await add({ key: 'back', label: 'Back', type: 'lookup', link: 'project', field: 'title' });
    await add({ key: 'echo', label: 'Echo', type: 'rollup', link: 'tasks', field: 'back', fn: 'concat' }, 'projects');
    const columns = (await rest('GET', `${base}/columns`)).body.columns;
    const index = columns.findIndex((c: any) => c.key === 'back');
    const res = await rest('PUT', `${base}/columns`, { columns: columns.map((c: any) => (c.key === 'back' ? { ...c, field: 'echo' } : c)) });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: ['columns', String(index), 'field'], code: 'cycle', message: expect.stringContaining('back → echo (on projects) → back') }]);
    expect((await rest('PUT', `${base}/columns?surface=projects`, { columns: (await rest('GET', `${base}/columns?surface=projects`)).body.columns.filter((c: any) => c.key !== 'echo').map((c: any, position: number) => ({ ...c, position })) })).status).toBe(200);
  });

  it('a rollup follows its field renamed on the other sheet, and its link renamed on its own', async () => {
    const tasks = (await rest('GET', `${base}/columns`)).body.columns;
    expect((await rest('PUT', `${base}/columns`, { columns: tasks.map((c: any) => (c.key === 'est' ? { ...c, key: 'estimate' } : c)) })).status).toBe(200);
    let projects = (await rest('GET', `${base}/columns?surface=projects`)).body.columns;
    expect(projects.find((c: any) => c.key === 'total')).toMatchObject({ field: 'estimate', link: 'tasks' });
    expect((await rest('GET', `${base}/columns`)).body.columns.find((c: any) => c.key === 'points').formula).toBe('{estimate} * 2');
    expect(await project()).toMatchObject({ total: 10, pointsTotal: 20 });
    expect((await rest('PUT', `${base}/columns?surface=projects`, { columns: projects.map((c: any) => (c.key === 'tasks' ? { ...c, key: 'work' } : c)) })).status).toBe(200);
    projects = (await rest('GET', `${base}/columns?surface=projects`)).body.columns;
    expect(projects.find((c: any) => c.key === 'total')).toMatchObject({ field: 'estimate', link: 'work' });
    expect(await project()).toMatchObject({ total: 10, work: [ids.write, ids.test, ids.ship] });
  });
});

describe('rows the caller cannot read', () => {
  it('a rollup never counts a row held out by the row cap', { timeout: 120_000 }, async () => {
    // A free workspace at its cap of 500 rows: a sync client's 501st row is refused and removed.
    const full = await addWorkspaceWithRows(t, owner, 'full', 500);
    const [first] = full.rowIds;
    const fullBase = '/api/workspaces/full';
    for (const column of [
      { key: 'score', label: 'Score', type: 'number' },
      { key: 'rel', label: 'Related', type: 'link', targetSurface: 'table' },
      { key: 'relCount', label: 'Related count', type: 'rollup', link: 'rel', field: 'score', fn: 'count' },
      { key: 'relSum', label: 'Related sum', type: 'rollup', link: 'rel', field: 'score', fn: 'sum' },
    ]) {
      expect((await t.request('POST', `${fullBase}/columns`, { as: owner.as, body: { column } })).status).toBe(200);
    }
    const client = connectClient(t.url, tablesDocumentName(full.id), { cookie: owner.cookie });
    clients.push(client);
    await synced(client, 30_000);
    client.doc.transact(() => {
      insertRow(client.doc, { id: 'row_secret', surfaceId: full.surfaceId, data: { title: 'secret', score: 1234 } }, null);
      updateRowCells(client.doc, first!, { rel: ['row_secret'] }, null);
    });
    const seen: Array<Record<string, unknown>> = [];
    const matched: number[] = [];
    const read = async () => {
      const res = await t.request('GET', `${fullBase}/rows/${first}`, { as: owner.as });
      seen.push(res.body.data);
      matched.push((await t.request('GET', `${fullBase}/rows?filter[relSum][gt]=0`, { as: owner.as })).body.rows.length);
      return res.body.data;
    };
    // Reads while the row is judged, refused and removed, until the server's removal reached the client.
    await eventually(async () => (await read()) && !tableIndex(client.doc).placements.has('row_secret'), 30_000, 50);
    await read();
    for (const data of seen) expect(data).toMatchObject({ relCount: 0, relSum: 0 });
    expect(matched.every((count) => count === 0)).toBe(true);
  });
});

describe('where computed values show', () => {
  it('filters (query string and /rows/query) and multi-column sorts on formula and rollup columns, as their result type', async () => {
    const listIds = async (query: string) => ((await rest('GET', `${base}/rows?${query}`)).body.rows as any[]).map((row) => row.id);
    expect(await listIds('filter[points][gt]=7')).toEqual([ids.test]);
    expect(await listIds('filter[points][between]=4,6')).toEqual([ids.write, ids.ship]);
    expect(await listIds('surface=table&sort=-points,title')).toEqual([ids.test, ids.write, ids.ship]);
    expect(await listIds('surface=projects&filter[total][gte]=10')).toEqual([ids.apollo]);
    expect(await listIds('surface=projects&filter[names][contains]=ship')).toEqual([ids.apollo]);
    expect(await listIds('surface=projects&filter[allDone][eq]=false')).toEqual([ids.borealis]);
    expect(await listIds('surface=projects&filter[first][lt]=2026-02-01')).toEqual([ids.apollo]);
    expect(await listIds('surface=projects&sort=-n,title')).toEqual([ids.apollo, ids.borealis]);
    const query = await rest('POST', `${base}/rows/query`, {
      filter: { or: [{ column: 'points', op: 'lt', value: 5 }, { and: [{ column: 'share', op: 'gt', value: 2 }, { column: 'points', op: 'gte', value: 10 }] }] },
      sort: [{ column: 'share', direction: 'desc' }],
    });
    expect(query.status, query.text).toBe(200);
    expect(query.body.rows.map((row: any) => row.id)).toEqual([ids.test, ids.ship]);
    // A number formula takes number operators only.
    const wrong = await rest('GET', `${base}/rows?filter[points][contains]=4`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ path: ['filter', 'points', 'contains'], code: 'invalid_operator', message: expect.stringContaining('formula column of number values') })]);
  });

  it('saved views filter and sort on computed columns; a board cannot group by a formula', async () => {
    const view = await rest('POST', `${base}/views`, { name: 'Heavy', filter: { and: [{ column: 'points', op: 'gte', value: 6 }] }, sort: [{ column: 'points', direction: 'asc' }] });
    expect(view.status, view.text).toBe(200);
    expect(((await rest('GET', `${base}/rows?view=${view.body.view.id}`)).body.rows as any[]).map((row) => row.id)).toEqual([ids.write, ids.test]);
    const board = await rest('POST', `${base}/views`, { name: 'By points', kind: 'board', groupBy: 'points' });
    expect(board.status).toBe(422);
    expect(board.body.error.details).toEqual([expect.objectContaining({ path: ['groupBy'], code: 'not_status_column' })]);
  });

  it('CSV export writes computed values (an error as its code); an import skips computed columns', async () => {
    const broken = await add({ key: 'ratio', label: 'Ratio', type: 'formula', formula: '{points} / ({estimate} - 5)' });
    expect(broken.resultType).toBe('number');
    const csv = await t.request('GET', `${base}/rows.csv?fields=title,points,ratio,projectBudget`, { as: owner.as });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n')).toEqual([
      'id,title,points,ratio,projectBudget',
      `${ids.write},Write,6,-3,[200]`,
      `${ids.test},Test,10,#DIV/0!,[200]`,
      `${ids.ship},Ship,4,-1.33333333333333,[200]`,
      '',
    ]);
    const projects = await t.request('GET', `${base}/rows.csv?surface=projects&fields=title,total,allDone,first`, { as: owner.as });
    expect(projects.text).toContain(`${ids.apollo},Apollo,10,true,2026-01-15`);

    const form = new FormData();
    form.append('file', new Blob([`title,estimate,points,ratio\r\nImported,4,999,1\r\n`], { type: 'text/csv' }), 'rows.csv');
    const imported = await fetch(`${t.url}${base}/rows/import`, { method: 'POST', body: form, headers: { cookie: `svc-session=${owner.cookie}` } });
    const report = await imported.json();
    expect(imported.status, JSON.stringify(report)).toBe(200);
    expect(report).toMatchObject({ imported: 1, columnsCreated: [], errors: [] });
    const row = ((await rest('GET', `${base}/rows?filter[title][eq]=Imported`)).body.rows as any[])[0];
    expect(row.data).toMatchObject({ estimate: 4, points: 8, ratio: -8 });
    expect(await t.services.sync.read(tablesDocumentName(workspaceId), (doc) => Object.keys(doc.getMap<any>('rows').get(row.id).toJSON()).sort())).toEqual(['estimate', 'title']);
  });

  it('a row event carries the recomputed formula and rollup cells of the row that changed; the rows whose rollups changed with it raise none', async () => {
    const events = async () => ((await rest('GET', `${base}/events?action=row.updated&limit=100`)).body.events as any[]);
    const before = await events();
    expect((await rest('PATCH', `${base}/rows/${ids.write}`, { data: { estimate: 4 } })).status).toBe(200);
    const after = await events();
    expect(after.length).toBe(before.length + 1);
    expect(after[0].data).toMatchObject({ id: ids.write, changedKeys: ['estimate'], data: { estimate: 4, points: 8, share: 2 } });
    // The project's rollups changed too (read at once), but it raised no event.
    expect(await project()).toMatchObject({ total: 11 });
    expect(after.filter((event) => event.data.id === ids.apollo)).toEqual(before.filter((event) => event.data.id === ids.apollo));
  });

  it("a formula reads a link column as the linked rows' titles, and follows a linked row's new title", async () => {
    await add({ key: 'lead', label: 'Lead', type: 'link', targetSurface: 'table' }, 'projects');
    await add({ key: 'leadName', label: 'Lead name', type: 'formula', formula: 'UPPER({lead})' }, 'projects');
    expect((await rest('PATCH', `${base}/rows/${ids.borealis}`, { data: { lead: [ids.write, ids.test] } })).status).toBe(200);
    expect(await project(ids.borealis)).toMatchObject({ leadName: 'WRITE, TEST' });
    expect((await rest('PATCH', `${base}/rows/${ids.write}`, { data: { title: 'Draft' } })).status).toBe(200);
    expect(await project(ids.borealis)).toMatchObject({ leadName: 'DRAFT, TEST' });
  });
});

describe('a sorted or filtered listing after writes (what a listing keeps follows each write)', () => {
  const kept = '/api/workspaces/kept';
  const named: Record<string, string> = {};
  let keptId: string;
  let tableId: string;
  const call = (method: string, path: string, body?: unknown) => t.request(method, `${kept}${path}`, { as: owner.as, body });
  const nameOf = (id: string) => Object.keys(named).find((name) => named[name] === id) ?? id;
  /** The listing's rows by name, read twice (the second read answers from what the first kept, sorted), both reads the same. */
  async function listed(query: string, show: (row: any) => unknown = (row) => nameOf(row.id)) {
    const reads: unknown[][] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call('GET', `/rows?${query}`);
      expect(res.status, res.text).toBe(200);
      reads.push((res.body.rows as any[]).map(show));
    }
    expect(reads[1]).toEqual(reads[0]);
    return reads[0];
  }
  async function write(method: string, path: string, body?: unknown) {
    const res = await call(method, path, body);
    expect(res.status, res.text).toBeLessThan(300);
    return res.body;
  }

  beforeAll(async () => {
    keptId = (await createWorkspace(t, owner, { name: 'Kept', slug: 'kept' })).id;
    tableId = (await call('GET', '/surfaces')).body.surfaces.find((surface: any) => surface.slug === 'table').id;
    expect((await call('POST', '/surfaces', { kind: 'table', slug: 'teams', name: 'Teams' })).status).toBe(200);
    for (const column of [
      { key: 'est', label: 'Estimate', type: 'number' },
      { key: 'score', label: 'Score', type: 'formula', formula: '{est} * 10' },
    ]) {
      expect((await call('POST', '/columns', { column })).status).toBe(200);
    }
    for (const [name, est] of [['a', 1], ['b', 2], ['c', 3], ['d', 4], ['e', 5]] as const) named[name] = (await write('POST', '/rows', { data: { title: name, est } })).id;
  });

  it('a row written across the sort order, filtered out, added, deleted, or moved within its sheet is read in its new place, over REST and from a sync provider', async () => {
    const scored = 'surface=table&filter[score][gte]=20&sort=-score,title&fields=score';
    expect(await listed(scored)).toEqual(['e', 'd', 'c', 'b']);
    await write('PATCH', `/rows/${named.b}`, { data: { est: 9 } });
    expect(await listed(scored)).toEqual(['b', 'e', 'd', 'c']);
    // Down to the end, up a little, and back to the top.
    await write('PATCH', `/rows/${named.b}`, { data: { est: 2.5 } });
    expect(await listed(scored)).toEqual(['e', 'd', 'c', 'b']);
    await write('PATCH', `/rows/${named.b}`, { data: { est: 3.5 } });
    expect(await listed(scored)).toEqual(['e', 'd', 'b', 'c']);
    await write('PATCH', `/rows/${named.b}`, { data: { est: 9 } });
    expect(await listed(scored)).toEqual(['b', 'e', 'd', 'c']);
    await write('PATCH', `/rows/${named.e}`, { data: { est: 1 } });
    expect(await listed(scored)).toEqual(['b', 'd', 'c']);
    named.f = (await write('POST', '/rows', { data: { title: 'f', est: 6 } })).id;
    expect(await listed(scored)).toEqual(['b', 'f', 'd', 'c']);
    await write('DELETE', `/rows/${named.d}`);
    expect(await listed(scored)).toEqual(['b', 'f', 'c']);
    // Ties fall to the rows' places in the sheet, which shift when a row moves above them.
    const byScore = 'surface=table&sort=-score&fields=score';
    await write('PATCH', `/rows/${named.a}`, { data: { est: 6 } });
    const placed = (row: any) => `${nameOf(row.id)}@${row.position}`;
    expect(await listed(byScore, placed)).toEqual(['b@1', 'a@0', 'f@4', 'c@2', 'e@3']);
    await write('PATCH', `/rows/${named.f}`, { position: 0 });
    expect(await listed(byScore, placed)).toEqual(['b@2', 'f@0', 'a@1', 'c@3', 'e@4']);
    // A page boundary kept across a write: the next page starts after the row the first ended on, in the order after the write.
    const first = await call('GET', `/rows?${byScore}&limit=2`);
    expect((first.body.rows as any[]).map(placed)).toEqual(['b@2', 'f@0']);
    await write('PATCH', `/rows/${named.c}`, { data: { est: 50 } });
    const next = await call('GET', `/rows?${byScore}&limit=2&after=${first.body.nextCursor}`);
    expect((next.body.rows as any[]).map(placed)).toEqual(['a@1', 'e@4']);

    // A sync provider's write, acknowledged: the next read shows it in its place.
    const client = connectClient(t.url, tablesDocumentName(keptId), { cookie: owner.cookie });
    clients.push(client);
    await synced(client);
    expect(await listed(scored)).toEqual(['c', 'b', 'a', 'f']);
    updateRowCells(client.doc, named.a!, { est: 100 }, { source: 'test' });
    await acknowledged(client);
    expect(await listed(scored)).toEqual(['a', 'c', 'b', 'f']);

    // The provider's own copy lists the same way, following writes that reach it from the server.
    const onProvider = () => {
      const query = compileRowQuery(readColumns(client.doc, tableId), { filter: filterFromQueryString({ score: { gte: '20' } }).filter, sort: sortFromQueryString('-score,title') });
      const read = () => listRows(client.doc, { surfaceId: tableId, query, reading: openReading(client.doc) }).rows.map((row) => nameOf(row.id));
      const [once, again] = [read(), read()];
      expect(again).toEqual(once);
      return once;
    };
    expect(onProvider()).toEqual(['a', 'c', 'b', 'f']);
    await write('PATCH', `/rows/${named.b}`, { data: { est: 1_000 } });
    await write('DELETE', `/rows/${named.c}`);
    named.g = (await write('POST', '/rows', { data: { title: 'g', est: 7 } })).id;
    await eventually(() => client.doc.getMap('rows').has(named.g!));
    expect(onProvider()).toEqual(['b', 'a', 'g', 'f']);
  });

  it('a listing sorted by a rollup follows writes to the linked rows it rolls up, and one sorted through a link follows the linked row', async () => {
    const add = async (column: Record<string, unknown>, surface: string) => expect((await call('POST', `/columns?surface=${surface}`, { column })).status).toBe(200);
    await add({ key: 'budget', label: 'Budget', type: 'number' }, 'teams');
    await add({ key: 'members', label: 'Members', type: 'link', targetSurface: 'table' }, 'teams');
    // Two links deep: the rollup sums a formula of the linked rows.
    await add({ key: 'load', label: 'Load', type: 'rollup', link: 'members', field: 'score', fn: 'sum' }, 'teams');
    await add({ key: 'team', label: 'Team', type: 'link', targetSurface: 'teams' }, 'table');
    await add({ key: 'teamBudget', label: 'Team budget', type: 'rollup', link: 'team', field: 'budget', fn: 'max' }, 'table');
    const team = async (name: string, members: string[], budget: number) => {
      named[name] = (await write('POST', '/rows?surface=teams', { data: { title: name, budget, members: members.map((m) => named[m]) } })).id;
      for (const member of members) await write('PATCH', `/rows/${named[member]}`, { data: { team: [named[name]] } });
    };
    // Scores: a 1000, b 10000, f 60, g 70, e 10.
    await team('x', ['a', 'f'], 5);
    await team('y', ['g'], 20);
    await team('z', ['e'], 10);
    const teams = 'surface=teams&sort=-load,title&fields=load';
    const withLoad = (row: any) => `${nameOf(row.id)}=${row.data.load}`;
    expect(await listed(teams, withLoad)).toEqual(['x=1060', 'y=70', 'z=10']);
    // A member's own write reorders its team.
    await write('PATCH', `/rows/${named.e}`, { data: { est: 200 } });
    expect(await listed(teams, withLoad)).toEqual(['z=2000', 'x=1060', 'y=70']);
    // A team moves down, and back up, with a member's write.
    await write('PATCH', `/rows/${named.a}`, { data: { est: 0 } });
    expect(await listed(teams, withLoad)).toEqual(['z=2000', 'y=70', 'x=60']);
    await write('PATCH', `/rows/${named.a}`, { data: { est: 100 } });
    expect(await listed(teams, withLoad)).toEqual(['z=2000', 'x=1060', 'y=70']);
    // A member deleted leaves the rollup.
    await write('DELETE', `/rows/${named.a}`);
    expect(await listed(teams, withLoad)).toEqual(['z=2000', 'y=70', 'x=60']);
    // A member linked anew, on the team's side.
    await write('PATCH', `/rows/${named.y}`, { data: { members: [named.g, named.b] } });
    expect(await listed(teams, withLoad)).toEqual(['y=10070', 'z=2000', 'x=60']);

    // The other way: rows sorted by what they roll up from their team follow a write to the team.
    const members = 'surface=table&filter[teamBudget][gte]=1&sort=-teamBudget,title&fields=teamBudget';
    expect(await listed(members)).toEqual(['g', 'e', 'f']);
    await write('PATCH', `/rows/${named.x}`, { data: { budget: 50 } });
    expect(await listed(members)).toEqual(['f', 'g', 'e']);
    await write('PATCH', `/rows/${named.z}`, { data: { budget: 0 } });
    expect(await listed(members)).toEqual(['f', 'g']);
  });

  it("a listing sorted on a formula follows the formula's change", async () => {
    const scored = 'surface=table&filter[score][gte]=0&sort=-score,title&fields=score';
    const before = await listed(scored);
    expect(before).toEqual(['b', 'e', 'g', 'f']);
    const columns = (await call('GET', '/columns')).body.columns as any[];
    const put = await call('PUT', '/columns', { columns: columns.map((column) => (column.key === 'score' ? { ...column, formula: '100 - {est}' } : column)) });
    expect(put.status, put.text).toBe(200);
    expect(await listed(scored)).toEqual(['f', 'g']);
    expect(await listed('surface=table&sort=-score,title&fields=score')).toEqual(['f', 'g', 'e', 'b']);
  });
});
