import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { getRow, insertRow, rowAsRead } from '../../src/model/table/document';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { acknowledged, connectClient, synced, type SyncClient } from '../helpers/sync';
import { mcpClient } from '../oauth/helpers';
import { bearerOf } from '../mcp/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { caseColumns, caseKey, caseResults, FORMULA_CASES, INPUT_ROW, NOW } from './formula-cases';

/**
 * Formula columns (issue 36, items 1, 3 and 4; docs/FORMULAS.md): one table
 * of cases for every operator and function, with errors and blanks, read
 * through REST, MCP and a sync provider, and by the model on the provider's
 * own copy; then the rules of formula columns: refused formulas, circles,
 * renames, deletes, read-only cells, trying a formula, TODAY() at read time.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let workspaceId: string;
let surfaceId: string;
const clock = new ManualClock(NOW);
const clients: SyncClient[] = [];
const base = '/api/workspaces/sums';
const expected = FORMULA_CASES.map((c) => c.expected);

beforeAll(async () => {
  t = await startTestApp({ clock });
  owner = await signInUser(t, 'formulas@example.com');
  workspaceId = (await createWorkspace(t, owner, { name: 'Sums', slug: 'sums' })).id;
  surfaceId = (await rest('GET', `${base}/surfaces`)).body.surfaces[0].id;
  const put = await rest('PUT', `${base}/columns`, { columns: caseColumns() });
  expect(put.status, put.text).toBe(200);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.destroy();
  await t.close();
  await t.store.dispose();
});

function rest(method: string, path: string, body?: unknown) {
  return t.request(method, path, { as: owner.as, body });
}

async function withMcp<T>(use: (mcp: Client) => Promise<T>, role: 'editor' | 'viewer' = 'editor'): Promise<T> {
  const agent = await insertKey(t, owner, { role, scopeWorkspaceId: workspaceId, agentName: `formula-${role}` });
  const mcp = await mcpClient(t, bearerOf(agent.as));
  try {
    return await use(mcp);
  } finally {
    await mcp.close();
  }
}

describe('one table of cases: every operator and function, with errors and blanks', () => {
  it(`reads ${FORMULA_CASES.length} formula columns over REST with their result types, in a row's read and in a listing`, async () => {
    const columns = (await rest('GET', `${base}/columns`)).body.columns as Array<{ key: string; resultType?: string }>;
    expect(FORMULA_CASES.map((_, i) => columns.find((column) => column.key === caseKey(i))?.resultType)).toEqual(FORMULA_CASES.map((c) => c.resultType));

    const created = await rest('POST', `${base}/rows`, { data: INPUT_ROW });
    expect(created.status, created.text).toBe(200);
    expect(caseResults(created.body.data)).toEqual(expected);
    expect(caseResults((await rest('GET', `${base}/rows/${created.body.id}`)).body.data)).toEqual(expected);
    const listed = (await rest('GET', `${base}/rows`)).body.rows.find((row: any) => row.id === created.body.id);
    expect(caseResults(listed.data)).toEqual(expected);
    // An error cell names its error.
    const division = listed.data[caseKey(FORMULA_CASES.findIndex((c) => c.formula === '{n} / {zero}'))];
    expect(division).toEqual({ error: '#DIV/0!', message: expect.stringMatching(/zero/i) });
  });

  it('reads the same values over MCP (create_row, list_rows)', async () => {
    await withMcp(async (mcp) => {
      const created = await mcp.callTool({ name: 'create_row', arguments: { slug: 'sums', data: INPUT_ROW } });
      expect(created.isError).toBeFalsy();
      const id = (created.structuredContent as any).id;
      expect(caseResults((created.structuredContent as any).data)).toEqual(expected);
      const listed = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'sums', limit: 100 } });
      expect(caseResults((listed.structuredContent as any).rows.find((row: any) => row.id === id).data)).toEqual(expected);
    });
  });

  it('reads the same values when a sync provider writes the row, over REST and from the model on the provider\'s own copy', async () => {
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    clients.push(client);
    await synced(client);
    insertRow(client.doc, { id: 'row_synced', surfaceId, data: INPUT_ROW }, { source: 'test' });
    await acknowledged(client);
    expect(caseResults((await rest('GET', `${base}/rows/row_synced`)).body.data)).toEqual(expected);
    // The browser-side model (what the web app and the typed client run) computes the same from the same document.
    expect(caseResults(rowAsRead(client.doc, getRow(client.doc, 'row_synced')!, { now: NOW }).data)).toEqual(expected);
  });
});

describe('formula columns', () => {
  const column = (key: string, formula: unknown) => ({ key, label: key, type: 'formula', ...(formula === undefined ? {} : { formula }) });

  it('refuses a formula that does not parse, names an unknown column or function, or has the wrong arguments: 422 at ["formula"] naming the column and the position', async () => {
    const cases: Array<[unknown, string, RegExp, number]> = [
      ['{n} + ', 'invalid_formula', /ends too early at position 6/, 6],
      ['{n} ** 2', 'invalid_formula', /position 5/, 5],
      ['{nope} + 1', 'unknown_column', /no column "nope"/, 0],
      ['1 + {n} + {ghost}', 'unknown_column', /no column "ghost"/, 10],
      ['FOO({n})', 'invalid_formula', /Unknown function FOO/, 0],
      ['ROUND()', 'invalid_formula', /ROUND at position 0 takes 1 to 2 arguments, not 0/, 0],
      ['n + 1', 'invalid_formula', /write \{n\} for a column/, 0],
      ['"open', 'invalid_formula', /not closed/, 0],
      [undefined, 'required', /needs its expression/, 0],
    ];
    for (const [formula, code, message, position] of cases) {
      const res = await rest('POST', `${base}/columns`, { column: column('bad', formula) });
      expect(res.status, String(formula)).toBe(422);
      expect(res.body.error.details).toEqual([{ path: ['formula'], code, message: expect.stringMatching(message), column: 'bad', position }]);
    }
    const replaced = await rest('PUT', `${base}/columns`, { columns: [...caseColumns(), { ...column('bad', '{gone}'), position: caseColumns().length }] });
    expect(replaced.status).toBe(422);
    expect(replaced.body.error.details).toEqual([expect.objectContaining({ path: ['formula'], code: 'unknown_column', column: 'bad', message: expect.stringContaining('"gone"') })]);
    expect((await rest('GET', `${base}/columns`)).body.columns.some((c: any) => c.key === 'bad')).toBe(false);
  });

  it('refuses columns that would depend on themselves, naming the columns of the circle', async () => {
    expect((await rest('POST', `${base}/columns`, { column: column('ca', '{n} + 1') })).status).toBe(200);
    expect((await rest('POST', `${base}/columns`, { column: column('cb', '{ca} * 2') })).status).toBe(200);
    const self = await rest('POST', `${base}/columns`, { column: column('cc', '{cc} + 1') });
    expect(self.status).toBe(422);
    expect(self.body.error.details).toEqual([expect.objectContaining({ path: ['formula'], code: 'cycle', column: 'cc', message: expect.stringContaining('cc → cc') })]);

    const columns = (await rest('GET', `${base}/columns`)).body.columns;
    const circular = columns.map((c: any) => (c.key === 'ca' ? { ...c, formula: '{cb} - 1' } : c));
    const res = await rest('PUT', `${base}/columns`, { columns: circular });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: ['formula'], code: 'cycle', column: 'ca', message: expect.stringContaining('ca → cb → ca') })]);
    expect((await rest('GET', `${base}/columns`)).body.columns.find((c: any) => c.key === 'ca').formula).toBe('{n} + 1');
  });

  it('a key renamed through PUT /columns is followed by the formulas that use it; a deleted column makes them read #REF! naming it', async () => {
    const row = (await rest('POST', `${base}/rows`, { data: { n: 5 } })).body.id;
    expect((await rest('GET', `${base}/rows/${row}`)).body.data).toMatchObject({ ca: 6, cb: 12 });
    const columns = (await rest('GET', `${base}/columns`)).body.columns;
    const renamed = await rest('PUT', `${base}/columns`, { columns: columns.map((c: any) => (c.key === 'n' ? { ...c, key: 'qty' } : c.key === 'ca' ? { ...c, key: 'plus_one' } : c)) });
    expect(renamed.status, renamed.text).toBe(200);
    const after = renamed.body.columns;
    expect(after.find((c: any) => c.key === 'plus_one').formula).toBe('{qty} + 1');
    expect(after.find((c: any) => c.key === 'cb').formula).toBe('{plus_one} * 2');
    expect(after.find((c: any) => c.key === caseKey(0)).formula).toBe('{qty} + {m}');
    expect((await rest('GET', `${base}/rows/${row}`)).body.data).toMatchObject({ qty: 5, plus_one: 6, cb: 12 });

    const without = await rest('PUT', `${base}/columns`, { columns: after.filter((c: any) => c.key !== 'plus_one').map((c: any, position: number) => ({ ...c, position })) });
    expect(without.status, without.text).toBe(200);
    expect((await rest('GET', `${base}/rows/${row}`)).body.data.cb).toEqual({ error: '#REF!', message: 'There is no column "plus_one".' });
    // Put the sheet back as the cases expect it.
    const restored = await rest('PUT', `${base}/columns`, { columns: caseColumns() });
    expect(restored.status, restored.text).toBe(200);
  });

  it('refuses writes to a formula cell (422 read_only_column) over REST, MCP and in a bulk update', async () => {
    const row = (await rest('POST', `${base}/rows`, { data: { n: 1 } })).body.id;
    for (const value of [5, null]) {
      const res = await rest('PATCH', `${base}/rows/${row}`, { data: { [caseKey(0)]: value } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ path: ['data', caseKey(0)], code: 'read_only_column', message: expect.stringContaining('formula column') }]);
    }
    expect((await rest('POST', `${base}/rows`, { data: { [caseKey(0)]: 1 } })).status).toBe(422);
    const bulk = await rest('PATCH', `${base}/rows/bulk`, { updates: [{ id: row, data: { [caseKey(3)]: 'x' } }] });
    expect(bulk.body.error.details[0]).toMatchObject({ path: ['updates', '0', 'data', caseKey(3)], code: 'read_only_column' });
    await withMcp(async (mcp) => {
      const res = await mcp.callTool({ name: 'update_row', arguments: { slug: 'sums', id: row, data: { [caseKey(0)]: 2 } } });
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toContain('read_only_column');
    });
  });

  it('TODAY() and NOW() are read at the moment of the read, with no write in between', async () => {
    const row = (await rest('POST', `${base}/rows`, { data: { d: '2026-07-01' } })).body.id;
    const today = caseKey(FORMULA_CASES.findIndex((c) => c.formula === 'TODAY()'));
    const now = caseKey(FORMULA_CASES.findIndex((c) => c.formula === 'NOW()'));
    expect((await rest('GET', `${base}/rows/${row}`)).body.data).toMatchObject({ [today]: '2026-07-04', [now]: '2026-07-04T10:20:30.000Z' });
    clock.advance(15 * 3_600_000);
    expect((await rest('GET', `${base}/rows/${row}`)).body.data).toMatchObject({ [today]: '2026-07-05', [now]: '2026-07-05T01:20:30.000Z' });
    // A filter on a TODAY() formula reads the same moment.
    const listed = await rest('GET', `${base}/rows?filter[${today}][eq]=2026-07-05&fields=${today}`);
    expect(listed.body.rows.length).toBeGreaterThan(0);
    clock.set(NOW);
  });
});

describe('sorts on formulas that read the clock', () => {
  it('a sort on a TODAY() formula follows the day, asked again and paged (what a listing keeps holds for one day)', async () => {
    const added = await rest('POST', `${base}/columns`, { column: { key: 'away', label: 'away', type: 'formula', formula: 'ABS(DATETIME_DIFF({d}, TODAY(), "days"))' } });
    expect(added.status, added.text).toBe(200);
    const first = (await rest('POST', `${base}/rows`, { data: { t: 'first', d: '2026-07-10' } })).body.id;
    const third = (await rest('POST', `${base}/rows`, { data: { t: 'third', d: '2026-07-12' } })).body.id;
    const listing = `${base}/rows?filter[t][in]=first,third&sort=away&fields=away`;
    const order = async () => {
      const pages: string[] = [];
      for (let i = 0; i < 3; i++) {
        const read = await rest('GET', listing);
        expect(read.status, read.text).toBe(200);
        pages.push(...read.body.rows.map((row: any) => row.id));
      }
      const paged = await rest('GET', `${listing}&limit=1`);
      const next = await rest('GET', `${listing}&limit=1&after=${paged.body.nextCursor}`);
      return { repeated: pages, paged: [...paged.body.rows, ...next.body.rows].map((row: any) => row.id) };
    };
    clock.set(Date.parse('2026-07-10T10:00:00Z'));
    expect(await order()).toEqual({ repeated: [first, third, first, third, first, third], paged: [first, third] });
    clock.set(Date.parse('2026-07-12T10:00:00Z'));
    expect(await order()).toEqual({ repeated: [third, first, third, first, third, first], paged: [third, first] });
    clock.set(NOW);
    for (const row of [first, third]) expect((await rest('DELETE', `${base}/rows/${row}`)).status).toBeLessThan(300);
  });
});

describe("the workspace's time zone", () => {
  it('TODAY() and NOW() read in the time zone set through PATCH /api/workspaces/{slug}, over REST, MCP and on a sync provider\'s own copy', async () => {
    const todayKey = caseKey(FORMULA_CASES.findIndex((c) => c.formula === 'TODAY()'));
    const row = (await rest('POST', `${base}/rows`, { data: { d: '2026-07-01' } })).body.id;
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    clients.push(client);
    await synced(client);
    const onProvider = () => rowAsRead(client.doc, getRow(client.doc, row)!, { now: NOW }).data[todayKey];
    expect((await rest('GET', base)).body.timeZone).toBe('UTC');
    // 10:20 UTC on 4 July is already 5 July at UTC+14.
    const set = await rest('PATCH', base, { timeZone: 'pacific/kiritimati' });
    expect(set.status, set.text).toBe(200);
    expect(set.body.timeZone).toBe('Pacific/Kiritimati');
    expect((await rest('GET', base)).body.timeZone).toBe('Pacific/Kiritimati');
    expect((await rest('GET', `${base}/rows/${row}`)).body.data[todayKey]).toBe('2026-07-05');
    expect((await rest('GET', `${base}/rows?filter[${todayKey}][eq]=2026-07-05&fields=${todayKey}`)).body.rows.map((r: any) => r.id)).toContain(row);
    await withMcp(async (mcp) => {
      const listed = await mcp.callTool({ name: 'list_rows', arguments: { slug: 'sums', limit: 500 } });
      expect((listed.structuredContent as any).rows.find((r: any) => r.id === row).data[todayKey]).toBe('2026-07-05');
    });
    await expect.poll(onProvider).toBe('2026-07-05');
    // Back to UTC: the day the server and the provider read is 4 July again.
    expect((await rest('PATCH', base, { timeZone: 'UTC' })).body.timeZone).toBe('UTC');
    expect((await rest('GET', `${base}/rows/${row}`)).body.data[todayKey]).toBe('2026-07-04');
    await expect.poll(onProvider).toBe('2026-07-04');
  });

  it('refuses a name that is not an IANA time zone: 422 invalid_time_zone at ["timeZone"], and nothing changes', async () => {
    const todayKey = caseKey(FORMULA_CASES.findIndex((c) => c.formula === 'TODAY()'));
    const row = (await rest('POST', `${base}/rows`, { data: { d: '2026-07-01' } })).body.id;
    expect((await rest('PATCH', base, { timeZone: 'Pacific/Kiritimati' })).status).toBe(200);
    for (const timeZone of ['Mars/Olympus_Mons', 'GMT+25', '']) {
      const refused = await rest('PATCH', base, { timeZone, name: 'Renamed' });
      expect(refused.status, timeZone).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'validation', details: [{ path: ['timeZone'], code: 'invalid_time_zone', message: expect.stringContaining('IANA') }] });
    }
    const wrongType = await rest('PATCH', base, { timeZone: 9 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details).toEqual([expect.objectContaining({ path: ['timeZone'] })]);
    const workspace = (await rest('GET', base)).body;
    expect(workspace).toMatchObject({ timeZone: 'Pacific/Kiritimati', name: 'Sums' });
    expect((await rest('GET', `${base}/rows/${row}`)).body.data[todayKey]).toBe('2026-07-05');
    expect((await rest('PATCH', base, { timeZone: 'UTC' })).status).toBe(200);
  });
});

describe('trying a formula: POST /formula/check and the check_formula tool', () => {
  it('answers the result type, or the message and position of the fault, without saving anything', async () => {
    const check = (body: Record<string, unknown>) => rest('POST', `${base}/formula/check`, body);
    expect((await check({ formula: 'IF({n} > 2, "big", "small")' })).body).toEqual({ ok: true, resultType: 'text' });
    expect((await check({ formula: 'DATEADD({d}, 1, "days")' })).body).toEqual({ ok: true, resultType: 'date' });
    expect((await check({ formula: '{n} * {m}', surface: 'table' })).body).toEqual({ ok: true, resultType: 'number' });
    expect((await check({ formula: '{n} +' })).body).toEqual({ ok: false, error: { message: expect.stringContaining('position 5'), position: 5 } });
    expect((await check({ formula: 'SUM({n}, {zz})' })).body).toEqual({ ok: false, error: { message: expect.stringContaining('"zz"'), position: 9 } });
    // As the formula of an existing column, a circle through it is found.
    expect((await rest('POST', `${base}/columns`, { column: { key: 'ka', label: 'ka', type: 'formula', formula: '{n}' } })).status).toBe(200);
    expect((await rest('POST', `${base}/columns`, { column: { key: 'kb', label: 'kb', type: 'formula', formula: '{ka} & "!"' } })).status).toBe(200);
    const circle = await check({ formula: '{kb} + 1', column: 'ka' });
    expect(circle.body).toEqual({ ok: false, error: { message: expect.stringContaining('ka → kb → ka'), position: 0 } });
    expect((await check({ formula: '{n} + 1', column: 'ka' })).body).toEqual({ ok: true, resultType: 'number' });
    expect((await check({ formula: '1', surface: 'nowhere' })).status).toBe(404);
    expect((await rest('GET', `${base}/columns`)).body.columns.some((c: any) => c.formula === '{n} +')).toBe(false);

    await withMcp(async (mcp) => {
      const ok = await mcp.callTool({ name: 'check_formula', arguments: { slug: 'sums', formula: 'ROUND({n} / {m}, 1)' } });
      expect(ok.structuredContent).toEqual({ ok: true, resultType: 'number' });
      const bad = await mcp.callTool({ name: 'check_formula', arguments: { slug: 'sums', formula: 'LEFT({t}' } });
      expect(bad.structuredContent).toEqual({ ok: false, error: { message: expect.any(String), position: 8 } });
    }, 'viewer');
  });

  it('agents list columns and add formula and rollup columns over MCP, with the same checks', async () => {
    await withMcp(async (mcp) => {
      const added = await mcp.callTool({ name: 'add_column', arguments: { slug: 'sums', column: { key: 'double', label: 'Double', type: 'formula', formula: '{n} * 2' } } });
      expect(added.isError).toBeFalsy();
      expect((added.structuredContent as any).column).toMatchObject({ key: 'double', type: 'formula', formula: '{n} * 2', resultType: 'number' });
      const refused = await mcp.callTool({ name: 'add_column', arguments: { slug: 'sums', column: { key: 'worse', label: 'Worse', type: 'formula', formula: '{nope}' } } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('unknown_column');
      const listed = await mcp.callTool({ name: 'list_columns', arguments: { slug: 'sums' } });
      expect((listed.structuredContent as any).columns.find((c: any) => c.key === 'double')).toMatchObject({ resultType: 'number' });
      const row = await mcp.callTool({ name: 'create_row', arguments: { slug: 'sums', data: { n: 21 } } });
      expect((row.structuredContent as any).data.double).toBe(42);
    });
  });
});
