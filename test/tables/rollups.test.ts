import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow, updateRowCells } from '../../src/model/table/document';
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
 * views, boards, CSV and row events on computed columns.
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
