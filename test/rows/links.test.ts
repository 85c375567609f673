import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import * as Y from 'yjs';
import { addColumn as addModelColumn, deleteRow, diffTableTransaction, ensureSheet, getRow, insertRow, removeSheet, updateRowCells, type TableChange } from '../../src/model/table/document';
import { orderOf, rowsRoot, sheetMapOf } from '../../src/model/table/layout';
import { tableIndex } from '../../src/model/table/row-index';
import { startTestApp, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced, type SyncClient } from '../helpers/sync';
import { addWorkspaceWithRows } from '../billing/helpers';
import { mcpClient } from '../oauth/helpers';
import { bearerOf } from '../mcp/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Linked rows (issue 24, item 4; docs/TABLES.md "Linked rows"): a link column's
 * cells name rows of another table surface of the workspace, a lookup reads
 * one field of them, a delete drops the link with an event however it was
 * made, a move keeps it, and a link never shows a row the caller cannot read.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let workspaceId: string;
const clients: SyncClient[] = [];
const base = '/api/workspaces/links';
let apollo: string;
let borealis: string;
let task: string;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'links@example.com');
  workspaceId = (await createWorkspace(t, owner, { name: 'Links', slug: 'links' })).id;
  for (const [slug, name] of [['projects', 'Projects'], ['archive', 'Archive']]) {
    const res = await rest('POST', `${base}/surfaces`, { kind: 'table', slug, name });
    expect(res.status).toBe(200);
  }
  apollo = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Apollo', budget: 'high' } })).body.id;
  borealis = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Borealis', budget: 'low' } })).body.id;
  task = (await rest('POST', `${base}/rows`, { data: { title: 'Write the plan' } })).body.id;
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

function rest(method: string, path: string, body?: unknown) {
  return t.request(method, path, { as: owner.as, body });
}

async function addColumn(column: Record<string, unknown>, surface = 'table') {
  return rest('POST', `${base}/columns?surface=${surface}`, { column });
}

/** The link cell as stored in the live document (not as a read resolves it). */
function storedCell(rowId: string, key: string) {
  return t.services.sync.read(tablesDocumentName(workspaceId), (doc) => getRow(doc, rowId)?.data[key]);
}

async function rowUpdates(rowId: string) {
  const res = await rest('GET', `${base}/events?action=row.updated&limit=100`);
  expect(res.status).toBe(200);
  return (res.body.events as any[]).filter((event) => event.data.id === rowId);
}

describe('link and lookup columns', () => {
  it('a link column names a table surface of the workspace; a lookup a link column of its sheet and a field of the target (422 with details otherwise)', async () => {
    const link = await addColumn({ key: 'project', label: 'Project', type: 'link', targetSurface: 'projects' });
    expect(link.status).toBe(200);
    expect(link.body.column).toMatchObject({ key: 'project', type: 'link', targetSurface: 'projects' });

    const unknownSurface = await addColumn({ key: 'other', label: 'Other', type: 'link', targetSurface: 'nowhere' });
    expect(unknownSurface.status).toBe(422);
    expect(unknownSurface.body.error.details).toEqual([expect.objectContaining({ path: ['column', 'targetSurface'], code: 'unknown_surface' })]);
    const noSurface = await addColumn({ key: 'other', label: 'Other', type: 'link' });
    expect(noSurface.status).toBe(422);
    expect(noSurface.body.error.details[0].path).toEqual(['column', 'targetSurface']);

    const notALink = await addColumn({ key: 'bad', label: 'Bad', type: 'lookup', link: 'title', field: 'title' });
    expect(notALink.status).toBe(422);
    expect(notALink.body.error.details).toEqual([expect.objectContaining({ path: ['column', 'link'], code: 'unknown_link' })]);
    const noField = await addColumn({ key: 'bad', label: 'Bad', type: 'lookup', link: 'project', field: 'nope' });
    expect(noField.status).toBe(422);
    expect(noField.body.error.details).toEqual([expect.objectContaining({ path: ['column', 'field'], code: 'unknown_field' })]);

    const lookup = await addColumn({ key: 'projectTitle', label: 'Project title', type: 'lookup', link: 'project', field: 'title' });
    expect(lookup.status).toBe(200);
    expect(lookup.body.column).toMatchObject({ key: 'projectTitle', type: 'lookup', link: 'project', field: 'title' });
    expect((await addColumn({ key: 'budget', label: 'Budget', type: 'lookup', link: 'project', field: 'budget' })).status).toBe(200);

    // A replacement is checked against the list as it will be.
    const columns = (await rest('GET', `${base}/columns`)).body.columns;
    const broken = columns.map((column: any) => (column.key === 'budget' ? { ...column, field: 'missing' } : column));
    const replaced = await rest('PUT', `${base}/columns`, { columns: broken });
    expect(replaced.status).toBe(422);
    expect(replaced.body.error.details).toEqual([expect.objectContaining({ path: ['columns', String(broken.findIndex((c: any) => c.key === 'budget')), 'field'], code: 'unknown_field' })]);
    expect((await rest('PUT', `${base}/columns`, { columns })).status).toBe(200);
  });

  it('writes links (one id or an array) and reads them as ids with the lookups of the linked rows, over REST and MCP', async () => {
    const one = await rest('PATCH', `${base}/rows/${task}`, { data: { project: apollo } });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ project: [apollo], projectTitle: ['Apollo'], budget: ['high'] });

    const two = await rest('PATCH', `${base}/rows/${task}`, { data: { project: [apollo, borealis, apollo] } });
    expect(two.body.data).toMatchObject({ project: [apollo, borealis], projectTitle: ['Apollo', 'Borealis'], budget: ['high', 'low'] });
    expect(await storedCell(task, 'project')).toEqual([apollo, borealis]);
    // Lookups are computed, never stored.
    expect(await storedCell(task, 'projectTitle')).toBeUndefined();

    const got = await rest('GET', `${base}/rows/${task}`);
    expect(got.body.data).toMatchObject({ project: [apollo, borealis], projectTitle: ['Apollo', 'Borealis'] });
    const listed = await rest('GET', `${base}/rows?surface=table`);
    expect(listed.body.rows.find((row: any) => row.id === task).data).toMatchObject({ project: [apollo, borealis], projectTitle: ['Apollo', 'Borealis'], budget: ['high', 'low'] });

    // Renaming the linked row shows at once in the lookup.
    await rest('PATCH', `${base}/rows/${borealis}`, { data: { title: 'Borealis 2' } });
    expect((await rest('GET', `${base}/rows/${task}`)).body.data.projectTitle).toEqual(['Apollo', 'Borealis 2']);

    const created = await rest('POST', `${base}/rows`, { data: { title: 'Second', project: [borealis] } });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ project: [borealis], projectTitle: ['Borealis 2'] });

    const agent = await insertKey(t, owner, { role: 'viewer', scopeWorkspaceId: workspaceId, agentName: 'reader' });
    const mcp: Client = await mcpClient(t, bearerOf(agent.as));
    try {
      const result = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'links', surface: 'table' } });
      expect(result.isError).toBeFalsy();
      const rows = (result.structuredContent as any).rows;
      expect(rows.find((row: any) => row.id === task).data).toMatchObject({ project: [apollo, borealis], projectTitle: ['Apollo', 'Borealis 2'] });
    } finally {
      await mcp.close();
    }
  });

  it('refuses links to unknown rows, to rows of another sheet or workspace, values that are not ids, and any write to a lookup (422)', async () => {
    const elsewhere = await createWorkspace(t, owner, { name: 'Elsewhere', slug: 'elsewhere' });
    const foreign = (await t.request('POST', '/api/workspaces/elsewhere/rows', { as: owner.as, body: { data: { title: 'Not yours' } } })).body.id;
    expect(elsewhere.id).not.toBe(workspaceId);
    const cases: Array<[unknown, string]> = [
      ['row_nope', 'row_not_found'],
      [[apollo, 'row_nope'], 'row_not_found'],
      [[foreign], 'row_not_found'],
      [[task], 'wrong_surface'],
      [42, 'invalid_type'],
      [{ id: apollo }, 'invalid_type'],
      [[apollo, 7], 'invalid_type'],
      [[''], 'invalid_format'],
    ];
    for (const [value, code] of cases) {
      const res = await rest('PATCH', `${base}/rows/${task}`, { data: { project: value } });
      expect(res.status, JSON.stringify(value)).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: ['data', 'project'], code })]);
    }
    for (const value of ['Apollo', ['Apollo'], null]) {
      const res = await rest('PATCH', `${base}/rows/${task}`, { data: { projectTitle: value } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: ['data', 'projectTitle'], code: 'read_only_column' })]);
    }
    const bulk = await rest('PATCH', `${base}/rows/bulk`, { updates: [{ id: task, data: { project: ['row_nope'] } }] });
    expect(bulk.status).toBe(422);
    expect(bulk.body.error.details[0].path).toEqual(['updates', '0', 'data', 'project']);
    // Nothing of it was written.
    expect(await storedCell(task, 'project')).toEqual([apollo, borealis]);
  });

  it('deleting a linked row over REST or MCP drops it from every link cell in the same change, with a row.updated by the deleter naming the link column', async () => {
    const doomed = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Doomed' } })).body.id;
    const a = (await rest('POST', `${base}/rows`, { data: { title: 'A', project: [doomed, apollo] } })).body.id;
    const b = (await rest('POST', `${base}/rows`, { data: { title: 'B', project: doomed } })).body.id;
    expect((await rest('DELETE', `${base}/rows/${doomed}?surface=projects`)).status).toBe(200);

    expect((await rest('GET', `${base}/rows/${a}`)).body.data).toMatchObject({ project: [apollo], projectTitle: ['Apollo'] });
    expect((await rest('GET', `${base}/rows/${b}`)).body.data).toMatchObject({ project: [], projectTitle: [] });
    expect(await storedCell(a, 'project')).toEqual([apollo]);
    expect(await storedCell(b, 'project')).toEqual([]);
    for (const id of [a, b]) {
      const updates = await rowUpdates(id);
      expect(updates).toHaveLength(1);
      expect(updates[0]).toMatchObject({ principal: { id: owner.userId }, data: { changedKeys: ['project'] } });
    }

    // The same through MCP's delete_row, attributed to the agent.
    const agentDoomed = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Doomed too' } })).body.id;
    const c = (await rest('POST', `${base}/rows`, { data: { title: 'C', project: [agentDoomed] } })).body.id;
    const agent = await insertKey(t, owner, { role: 'editor', scopeWorkspaceId: workspaceId, agentName: 'cleaner' });
    const mcp: Client = await mcpClient(t, bearerOf(agent.as));
    try {
      expect((await mcp.callTool({ name: 'delete_row', arguments: { slug: 'links', id: agentDoomed } })).isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
    expect(await storedCell(c, 'project')).toEqual([]);
    expect(await rowUpdates(c)).toEqual([expect.objectContaining({ principal: expect.objectContaining({ id: agent.agentId }), data: expect.objectContaining({ changedKeys: ['project'] }) })]);
  });

  it('a linked row moved to another sheet keeps its link and its lookups; new links must name rows of the target surface', async () => {
    const moved = await rest('POST', `${base}/rows/move`, { rowIds: [apollo], surface: 'archive' });
    expect(moved.body.moved).toEqual([apollo]);
    const got = await rest('GET', `${base}/rows/${task}`);
    expect(got.body.data).toMatchObject({ project: [apollo, borealis], projectTitle: ['Apollo', 'Borealis 2'] });
    expect(await rowUpdates(task)).toHaveLength(2); // the two link writes of the earlier test, nothing for the move

    const relink = await rest('PATCH', `${base}/rows/${task}`, { data: { project: [apollo] } });
    expect(relink.status).toBe(422);
    expect(relink.body.error.details[0].code).toBe('wrong_surface');
    await rest('POST', `${base}/rows/move`, { rowIds: [apollo], surface: 'projects' });
  });
});

describe('links over sync', () => {
  it('a sync client deletes a linked row with plain Yjs: the server drops the link after the commit, with a row.updated by the same person', async () => {
    const gone = (await rest('POST', `${base}/rows?surface=projects`, { data: { title: 'Gone soon' } })).body.id;
    const holder = (await rest('POST', `${base}/rows`, { data: { title: 'Holder', project: [gone, borealis] } })).body.id;
    const projects = (await rest('GET', `${base}/surfaces`)).body.surfaces.find((s: any) => s.slug === 'projects').id;

    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    clients.push(client);
    await synced(client);
    // What a client that knows only the documented layout does: no dropLinksTo.
    client.doc.transact(() => {
      const order = orderOf(sheetMapOf(client.doc, projects)!)!;
      order.delete(order.toArray().indexOf(gone), 1);
      rowsRoot(client.doc).delete(gone);
    });
    await acknowledged(client);

    expect((await rest('GET', `${base}/rows/${holder}`)).body.data).toMatchObject({ project: [borealis], projectTitle: ['Borealis 2'] });
    const updates = await eventually(async () => ((await rowUpdates(holder)).length === 1 ? rowUpdates(holder) : null));
    expect(updates[0]).toMatchObject({ principal: { id: owner.userId }, data: { changedKeys: ['project'] } });
    expect(await storedCell(holder, 'project')).toEqual([borealis]);
    await eventually(() => JSON.stringify(getRow(client.doc, holder)?.data.project) === JSON.stringify([borealis]));
  });

  it('never shows a row held out by the row cap, through a link or a lookup', { timeout: 120_000 }, async () => {
    // A free workspace at its cap of 500 rows: a sync client's 501st row is refused and removed.
    const full = await addWorkspaceWithRows(t, owner, 'full', 500);
    const [first] = full.rowIds;
    const fullBase = '/api/workspaces/full';
    expect((await t.request('POST', `${fullBase}/columns`, { as: owner.as, body: { column: { key: 'rel', label: 'Related', type: 'link', targetSurface: 'table' } } })).status).toBe(200);
    expect((await t.request('POST', `${fullBase}/columns`, { as: owner.as, body: { column: { key: 'relTitle', label: 'Related title', type: 'lookup', link: 'rel', field: 'title' } } })).status).toBe(200);

    const client = connectClient(t.url, tablesDocumentName(full.id), { cookie: owner.cookie });
    clients.push(client);
    await synced(client, 30_000);
    client.doc.transact(() => {
      insertRow(client.doc, { id: 'row_secret', surfaceId: full.surfaceId, data: { title: 'secret' } }, null);
      updateRowCells(client.doc, first!, { rel: ['row_secret'] }, null);
    });

    const seen: string[] = [];
    const read = async () => {
      const res = await t.request('GET', `${fullBase}/rows/${first}`, { as: owner.as });
      seen.push(JSON.stringify(res.body.data));
      return res.body.data;
    };
    // Reads while the row is judged, refused and removed, until the server's removal reached the client.
    await eventually(async () => (await read()) && !tableIndex(client.doc).placements.has('row_secret') && JSON.stringify(getRow(client.doc, first!)?.data.rel) === '[]', 30_000, 50);
    await read();
    for (const data of seen) {
      expect(data).not.toContain('row_secret');
      expect(data).not.toContain('secret');
    }
    expect(JSON.parse(seen.at(-1)!)).toMatchObject({ rel: [], relTitle: [] });
    const events = (await t.request('GET', `${fullBase}/events?action=row.updated&limit=100`, { as: owner.as })).body.events as any[];
    expect(events.find((event) => event.data.id === first && event.principal?.id === 'system')).toMatchObject({ data: { changedKeys: ['rel'] } });
  });
});

describe('links in the table model (what REST, MCP, the web app and the observer all call)', () => {
  function table() {
    const doc = new Y.Doc();
    for (const sheet of ['tasks', 'projects', 'people']) ensureSheet(doc, sheet, null);
    addModelColumn(doc, 'tasks', { key: 'project', label: 'Project', type: 'link', targetSurface: 'projects' }, null);
    addModelColumn(doc, 'tasks', { key: 'owner', label: 'Owner', type: 'link', targetSurface: 'people' }, null);
    insertRow(doc, { id: 'p1', surfaceId: 'projects', data: { title: 'Apollo' } }, null);
    insertRow(doc, { id: 'p2', surfaceId: 'projects', data: { title: 'Borealis' } }, null);
    insertRow(doc, { id: 'u1', surfaceId: 'people', data: { title: 'Ann' } }, null);
    insertRow(doc, { id: 't1', surfaceId: 'tasks', data: { project: ['p1', 'p2'], owner: ['u1'] } }, null);
    insertRow(doc, { id: 't2', surfaceId: 'tasks', data: { project: ['p2'] } }, null);
    const changes: TableChange[][] = [];
    doc.on('afterTransaction', (transaction: Y.Transaction) => changes.push(diffTableTransaction(transaction)));
    return { doc, changes };
  }

  it('removing a sheet takes its rows out of the other sheets\' link cells in the same transaction', () => {
    const { doc, changes } = table();
    removeSheet(doc, 'projects', { source: 'test' });
    expect(changes).toHaveLength(1);
    expect(changes[0]).toEqual(
      expect.arrayContaining([
        { kind: 'row.updated', rowId: 't1', surfaceId: 'tasks', changedKeys: ['project'] },
        { kind: 'row.updated', rowId: 't2', surfaceId: 'tasks', changedKeys: ['project'] },
      ]),
    );
    expect(getRow(doc, 't1')!.data).toEqual({ project: [], owner: ['u1'] });
    expect(getRow(doc, 't2')!.data).toEqual({ project: [] });
  });

  it('a delete changes only the link cells that held the row', () => {
    const { doc, changes } = table();
    deleteRow(doc, 'p1', { source: 'test' });
    expect(changes[0]!.filter((change) => change.kind === 'row.updated')).toEqual([{ kind: 'row.updated', rowId: 't1', surfaceId: 'tasks', changedKeys: ['project'] }]);
    expect(getRow(doc, 't1')!.data.project).toEqual(['p2']);
  });
});
