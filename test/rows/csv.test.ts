import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { capsFor } from '../../src/limits/plans';
import { startTestApp, type Credential, type TestApp } from '../helpers/app';
import { setPlan } from '../billing/helpers';
import { addMembership, createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { bearerOf, checkedClients, refusal } from '../mcp/helpers';

/**
 * CSV in and out of a sheet (docs/TABLES.md "CSV"): `GET /rows` with
 * `Accept: text/csv` or `format=csv`, `GET /rows.csv`, and
 * `POST /rows/import` with a multipart `file`.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInUser(t, 'owner@csv.test');
  viewer = await signInUser(t, 'viewer@csv.test');
  // More workspaces than the free plan's 20; the tests of the free plan's row cap switch to it for their imports.
  await setPlan(t, owner.orgId, 'pro');
});

/** Runs `imports` with the owner's organisation on the free plan (its row cap), back on pro after. */
async function onFreePlan<T>(imports: () => Promise<T>): Promise<T> {
  await setPlan(t, owner.orgId, 'free');
  try {
    return await imports();
  } finally {
    await setPlan(t, owner.orgId, 'pro');
  }
}

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

let workspaceCount = 0;
async function tableWorkspace() {
  const slug = `csv-${++workspaceCount}`;
  const workspace = await createWorkspace(t, owner, { name: slug, slug });
  const base = `/api/orgs/${owner.orgSlug}/workspaces/${slug}`;
  return { id: workspace.id as string, slug, base, bare: `/api/workspaces/${workspace.id}` };
}

async function addSheet(base: string, slug: string) {
  const res = await t.request('POST', `${base}/surfaces`, { as: owner.as, body: { kind: 'table', slug, name: slug } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

async function putColumns(base: string, surface: string, columns: Array<Record<string, unknown>>) {
  const res = await t.request('PUT', `${base}/columns?surface=${surface}`, { as: owner.as, body: { columns: columns.map((c, position) => ({ ...c, position })) } });
  expect(res.status, res.text).toBe(200);
}

async function createRows(base: string, surface: string, rows: Array<Record<string, unknown>>) {
  const ids: string[] = [];
  for (const data of rows) {
    const res = await t.request('POST', `${base}/rows?surface=${surface}`, { as: owner.as, body: { data } });
    expect(res.status, res.text).toBe(200);
    ids.push(res.body.id);
  }
  return ids;
}

async function importCsv(base: string, csv: string, query: string, as: Credential = owner.as) {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
  const headers: Record<string, string> = 'cookie' in as ? { cookie: `svc-session=${as.cookie}` } : { authorization: `Bearer ${as.bearer}` };
  const response = await fetch(`${t.url}${base}/rows/import?${query}`, { method: 'POST', body: form, headers });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/**
 * An import whose upload stops after its first row until `finish()` sends
 * the rest: the server has started it (and holds its place) meanwhile.
 */
function heldImport(base: string) {
  const boundary = `----held${Math.random().toString(16).slice(2)}`;
  const encoder = new TextEncoder();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="held.csv"\r\nContent-Type: text/csv\r\n\r\ntitle\nheld\n`));
      await released;
      controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
      controller.close();
    },
  });
  const response = fetch(`${t.url}${base}/rows/import`, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { cookie: `svc-session=${(owner.as as { cookie: string }).cookie}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit);
  return {
    async finish() {
      release();
      const res = await response;
      return { status: res.status, body: await res.json() };
    },
  };
}

/** Health answers an import must let through (the unfixed import let 2 through in 9 s; the streaming one 65 in 5 s). */
const HEALTH_ANSWERS_DURING_IMPORT = 20;

/** The body's bytes as sent (a text decode would drop a byte order mark). */
async function bytesOf(path: string): Promise<Uint8Array> {
  const response = await fetch(`${t.url}${path}`, { headers: { cookie: `svc-session=${(owner.as as { cookie: string }).cookie}` } });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

async function allRows(base: string, surface: string) {
  const rows: Array<{ id: string; data: Record<string, unknown> }> = [];
  let after: string | null = null;
  do {
    const res = await t.request('GET', `${base}/rows?surface=${surface}&limit=1000${after ? `&after=${after}` : ''}`, { as: owner.as });
    expect(res.status).toBe(200);
    rows.push(...res.body.rows);
    after = res.body.nextCursor;
  } while (after);
  return rows;
}

async function columnsOf(base: string, surface: string) {
  const res = await t.request('GET', `${base}/columns?surface=${surface}`, { as: owner.as });
  expect(res.status).toBe(200);
  return res.body.columns as Array<{ key: string; label: string; type: string; options?: Array<{ value: string }> }>;
}

const TRICKY = [
  { title: 'Plain', notes: 'simple', amount: 3, due: '2026-12-01', done: true, stage: 'todo', tags: ['a', 'b'] },
  { title: 'He said "hi", then left', notes: 'line one\nline two\r\nline three', amount: -12.5, due: '2026-01-31', done: false, stage: 'doing', tags: ['comma, inside', 'quote " inside'] },
  { title: 'Ünïcödé ✓ 日本語', notes: 'emoji 🎉👩‍💻 and tabs\tinside', amount: 0, due: '2026-02-28T09:30:00Z', done: true, stage: 'todo', tags: ['b'] },
  { title: '  leading and trailing spaces  ', notes: '=SUM(A1:A2)', amount: 1e21, due: '2026-03-01', done: false, stage: 'doing', tags: [] },
  { title: 'Missing cells' },
];

const TRICKY_COLUMNS = [
  { key: 'title', label: 'Title', type: 'text' },
  { key: 'notes', label: 'Notes', type: 'text' },
  { key: 'amount', label: 'Amount', type: 'number' },
  { key: 'due', label: 'Due', type: 'date' },
  { key: 'done', label: 'Done', type: 'checkbox' },
  { key: 'stage', label: 'Stage', type: 'select', options: [{ value: 'todo', label: 'To do' }, { value: 'doing', label: 'Doing' }] },
  { key: 'tags', label: 'Tags', type: 'select', options: ['a', 'b', 'comma, inside', 'quote " inside'].map((value) => ({ value, label: value })) },
];

describe('CSV export', { timeout: 120_000 }, () => {
  it('Accept: text/csv, format=csv and GET /rows.csv send the same RFC 4180 text: a header of id and the column keys in column order, a record per row, as an attachment named after the sheet', async () => {
    const w = await tableWorkspace();
    await addSheet(w.base, 'ledger');
    await putColumns(w.base, 'ledger', TRICKY_COLUMNS);
    const ids = await createRows(w.base, 'ledger', TRICKY);

    const byAccept = await t.request('GET', `${w.base}/rows?surface=ledger`, { as: owner.as, headers: { accept: 'text/csv' } });
    const byFormat = await t.request('GET', `${w.bare}/rows?surface=ledger&format=csv`, { as: owner.as });
    const byPath = await t.request('GET', `${w.base}/rows.csv?surface=ledger`, { as: owner.as });
    const json = await t.request('GET', `${w.base}/rows?surface=ledger`, { as: owner.as, headers: { accept: 'application/json' } });
    for (const res of [byAccept, byFormat, byPath]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="ledger\.csv"/);
      expect(res.text).toBe(byPath.text);
    }
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);

    const lines = byPath.text.split('\r\n');
    expect(lines[0]).toBe('id,title,notes,amount,due,done,stage,tags');
    expect(lines[1]).toBe(`${ids[0]},Plain,simple,3,2026-12-01,true,todo,"[""a"",""b""]"`);
    const records = parse(byPath.text) as string[][];
    expect(records).toHaveLength(1 + TRICKY.length);
    expect(records[2]).toEqual([ids[1], 'He said "hi", then left', 'line one\nline two\r\nline three', '-12.5', '2026-01-31', 'false', 'doing', '["comma, inside","quote \\" inside"]']);
    expect(records[3]![1]).toBe('Ünïcödé ✓ 日本語');
    expect(records[4]![3]).toBe('1e+21');
    expect(records[5]).toEqual([ids[4], 'Missing cells', '', '', '', '', '', '']);
  });

  it('streams every row past one page, in the listing order, and sort applies as in GET /rows', async () => {
    const w = await tableWorkspace();
    const rows = Array.from({ length: 1205 }, (_, i) => `r${i},row ${i},${i % 7}`);
    const imported = await importCsv(w.base, `id,title,rank\n${rows.join('\n')}\n`, '');
    expect(imported.body).toMatchObject({ imported: 1205, refused: 0 });
    const res = await t.request('GET', `${w.base}/rows.csv`, { as: owner.as });
    const records = parse(res.text) as string[][];
    expect(records).toHaveLength(1206);
    expect(records.slice(1).map((r) => r[0])).toEqual(Array.from({ length: 1205 }, (_, i) => `r${i}`));
    const sorted = parse((await t.request('GET', `${w.base}/rows.csv?sort=-rank`, { as: owner.as })).text) as string[][];
    expect(sorted.slice(1).map((r) => Number(r[2]))).toEqual([...records.slice(1).map((r) => Number(r[2]))].sort((a, b) => b - a));
  });

  it('every field holding a CR or an LF is quoted, so a CSV reader gets the same cells back (issue 33 item 4)', async () => {
    const w = await tableWorkspace();
    const texts = ['line one\nline two', 'carriage\rreturn', 'both\r\nends', '\nleading line feed', 'trailing line feed\n'];
    await createRows(w.base, 'table', texts.map((notes, i) => ({ title: `row ${i}`, notes })));
    const csv = (await t.request('GET', `${w.base}/rows.csv`, { as: owner.as })).text;
    // As spreadsheets and Python's csv read: a record ends at any line break outside quotes.
    const records = parse(csv, { record_delimiter: ['\r\n', '\n', '\r'] }) as string[][];
    expect(records.slice(1).map((r) => r[3])).toEqual(texts);
    expect(csv).toContain('"line one\nline two"');
    expect(records.every((r) => r.length === 4)).toBe(true);
    // The MCP tool writes the same text.
    const key = await insertKey(t, owner, { role: 'viewer', scopeWorkspaceId: w.id });
    const clients = checkedClients(() => t);
    try {
      const client = await clients.open(bearerOf(key.as));
      const tool = await client.callTool({ name: 'export_rows_csv', arguments: { slug: w.slug } });
      expect((tool.structuredContent as { csv: string }).csv).toBe(csv);
    } finally {
      await clients.closeAll();
    }
  });

  it('neutralize=formulas prefixes with a quote the fields a spreadsheet would run, but not plain numbers; without it the cells go out as they are (issue 33 item 9)', async () => {
    const w = await tableWorkspace();
    await putColumns(w.base, 'table', [
      { key: 'title', label: '=Title', type: 'text' },
      { key: 'amount', label: 'Amount', type: 'number' },
    ]);
    const cells = ['=SUM(A1:A2)', '+1+2', '-2+3+cmd|\' /C calc\'!A0', '@SUM(1)', '\tTab', '\rReturn', '-5', '+3.25', 'plain', "'already quoted"];
    await createRows(w.base, 'table', cells.map((title, i) => ({ title, amount: -i })));
    const neutral = parse((await t.request('GET', `${w.base}/rows.csv?neutralize=formulas`, { as: owner.as })).text) as string[][];
    expect(neutral.slice(1).map((r) => r[1])).toEqual([
      "'=SUM(A1:A2)",
      "'+1+2",
      "'-2+3+cmd|' /C calc'!A0",
      "'@SUM(1)",
      "'\tTab",
      "'\rReturn",
      '-5',
      '+3.25',
      'plain',
      "'already quoted",
    ]);
    // A negative number in a number column is a number, not a formula.
    expect(neutral.slice(1).map((r) => r[2])).toEqual(cells.map((_, i) => String(-i)));
    const labels = parse((await t.request('GET', `${w.base}/rows.csv?neutralize=formulas&headers=labels`, { as: owner.as })).text) as string[][];
    expect(labels[0]).toEqual(["'=Title", 'Amount']);
    const raw = parse((await t.request('GET', `${w.base}/rows.csv`, { as: owner.as })).text) as string[][];
    expect(raw.slice(1).map((r) => r[1])).toEqual(cells);
    const bad = await t.request('GET', `${w.base}/rows.csv?neutralize=everything`, { as: owner.as });
    expect(bad.status).toBe(400);
  });

  it('headers=labels, bom=true and a view give the file people see: labels without ids, a BOM, the view\'s columns in its order and its rows, named after the view; the default stays the round-trip form (issue 34 item 5)', async () => {
    const w = await tableWorkspace();
    await addSheet(w.base, 'ledger');
    await putColumns(w.base, 'ledger', TRICKY_COLUMNS);
    await t.request('PATCH', `${w.base}/surfaces/ledger`, { as: owner.as, body: { name: 'Ledger ’26: Ünïcode' } });
    await createRows(w.base, 'ledger', TRICKY);
    const view = await t.request('POST', `${w.base}/views?surface=ledger`, {
      as: owner.as,
      body: { name: 'Open items', filter: { and: [{ column: 'done', op: 'eq', value: true }] }, columnOrder: ['amount', 'title'], hiddenColumns: ['notes', 'tags', 'due'] },
    });
    expect(view.status, view.text).toBe(200);
    const viewId = view.body.view.id as string;

    const res = await t.request('GET', `${w.base}/rows.csv?view=${viewId}&headers=labels&bom=true`, { as: owner.as });
    expect(res.status, res.text).toBe(200);
    expect([...(await bytesOf(`${w.base}/rows.csv?view=${viewId}&headers=labels&bom=true`)).subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 'A'.charCodeAt(0)]);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Open items.csv"; filename*=UTF-8''Open%20items.csv`);
    expect(parse(res.text, { bom: true })).toEqual([
      ['Amount', 'Title', 'Done', 'Stage'],
      ['3', 'Plain', 'true', 'todo'],
      ['0', 'Ünïcödé ✓ 日本語', 'true', 'todo'],
    ]);
    // The plain sheet, named after its title; fields= picks and orders; the default has no BOM, and ids and keys.
    const sheet = await t.request('GET', `${w.base}/rows.csv?surface=ledger&headers=labels&fields=title,amount`, { as: owner.as });
    expect(sheet.headers.get('content-disposition')).toBe(`attachment; filename="Ledger _26: _n_code.csv"; filename*=UTF-8''Ledger%20%E2%80%9926%3A%20%C3%9Cn%C3%AFcode.csv`);
    expect((parse(sheet.text) as string[][])[0]).toEqual(['Title', 'Amount']);
    const plain = await bytesOf(`${w.base}/rows.csv?surface=ledger`);
    expect(new TextDecoder('utf-8', { ignoreBOM: true }).decode(plain).split('\r\n')[0]).toBe('id,title,notes,amount,due,done,stage,tags');
  });

  it('a viewer may export; an unknown sheet is 404 in JSON', async () => {
    const w = await tableWorkspace();
    await addMembership(t, w.id, viewer.userId, 'viewer');
    const res = await t.request('GET', `${w.base}/rows.csv`, { as: viewer.as });
    expect(res.status).toBe(200);
    expect(res.text.split('\r\n')[0]).toBe('id,title,status,notes');
    const missing = await t.request('GET', `${w.base}/rows.csv?surface=nope`, { as: owner.as });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });
});

describe('CSV over MCP', { timeout: 120_000 }, () => {
  it('list_rows answers JSON, and has no format argument (the CSV is export_rows_csv, or the REST download)', async () => {
    const w = await tableWorkspace();
    const key = await insertKey(t, owner, { role: 'viewer', scopeWorkspaceId: w.id });
    const clients = checkedClients(() => t);
    try {
      const client = await clients.open(bearerOf(key.as));
      const listed = await client.callTool({ name: 'list_rows', arguments: { slug: w.slug } });
      expect(listed.isError).toBeFalsy();
      await expect(client.callTool({ name: 'list_rows', arguments: { slug: w.slug, format: 'csv' } })).rejects.toThrow(/-32602.*format/);
    } finally {
      await clients.closeAll();
    }
  });

  it('export_rows_csv answers the same CSV as the REST download, up to `limit` rows, and says when it left rows out', async () => {
    const w = await tableWorkspace();
    await createRows(w.base, 'table', [{ title: 'one, with a comma', notes: 'two\nlines' }, { title: 'two' }, { title: 'three' }]);
    const key = await insertKey(t, owner, { role: 'viewer', scopeWorkspaceId: w.id });
    const rest = (await t.request('GET', `${w.base}/rows.csv`, { as: owner.as })).text;
    const clients = checkedClients(() => t);
    try {
      const client = await clients.open(bearerOf(key.as));
      const all = await client.callTool({ name: 'export_rows_csv', arguments: { slug: w.slug } });
      expect(all.structuredContent).toEqual({ csv: rest, rows: 3, truncated: false });
      const two = await client.callTool({ name: 'export_rows_csv', arguments: { slug: w.slug, limit: 2, fields: 'title' } });
      const content = two.structuredContent as { csv: string; rows: number; truncated: boolean };
      expect(content.rows).toBe(2);
      expect(content.truncated).toBe(true);
      expect(parse(content.csv)).toEqual([['id', 'title'], [expect.any(String), 'one, with a comma'], [expect.any(String), 'two']]);
    } finally {
      await clients.closeAll();
    }
  });
});

describe('CSV import', { timeout: 120_000 }, () => {
  it('round trip: export, then import into another workspace, gives the same rows, ids and column types (quotes, commas, line breaks, non-ASCII, emoji, arrays)', async () => {
    const from = await tableWorkspace();
    await addSheet(from.base, 'ledger');
    await putColumns(from.base, 'ledger', TRICKY_COLUMNS);
    await createRows(from.base, 'ledger', TRICKY);
    const csv = (await t.request('GET', `${from.base}/rows.csv?surface=ledger`, { as: owner.as })).text;

    const to = await tableWorkspace();
    await addSheet(to.base, 'copy');
    await putColumns(to.base, 'copy', []);
    const res = await importCsv(to.base, csv, 'surface=copy');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ imported: TRICKY.length, refused: 0, columnsCreated: TRICKY_COLUMNS.map((c) => c.key), errors: [] });

    const types = Object.fromEntries((await columnsOf(to.base, 'copy')).map((c) => [c.key, c.type]));
    expect(types).toEqual({ title: 'text', notes: 'text', amount: 'number', due: 'date', done: 'checkbox', stage: 'select', tags: 'select' });
    const original = await allRows(from.base, 'ledger');
    const copied = await allRows(to.base, 'copy');
    // An empty array exports as [] and comes back as []; empty fields come back as no value.
    expect(copied.map((r) => ({ id: r.id, data: r.data }))).toEqual(original.map((r) => ({ id: r.id, data: r.data })));

    // Into a sheet that has the columns already, the second export is the same text.
    const again = (await t.request('GET', `${to.base}/rows.csv?surface=copy`, { as: owner.as })).text;
    expect(again).toBe(csv);
  });

  it('maps headers to columns by key, then key or label ignoring case; creates the others with inferred types and options', async () => {
    const w = await tableWorkspace();
    const csv = [
      'TITLE,Notes,Score,When,Active,Team,Comment,Empty',
      'one,n1,1.5,2026-01-01,true,Red,hello world,',
      'two,n2,2,2026-01-02,FALSE,Blue,"another, longer",',
      'three,n3,-3,2026-01-03T10:00:00Z,true,Red,third,',
      'four,n4,40,2026-01-04,false,Red,fourth,',
    ].join('\r\n');
    const res = await importCsv(w.base, csv, '');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ imported: 4, refused: 0, columnsCreated: ['score', 'when', 'active', 'team', 'comment', 'empty'], errors: [] });
    const columns = await columnsOf(w.base, 'table');
    expect(columns.map((c) => [c.key, c.label, c.type])).toEqual([
      ['title', 'Title', 'text'],
      ['status', 'Status', 'status'],
      ['notes', 'Notes', 'longtext'],
      ['score', 'Score', 'number'],
      ['when', 'When', 'date'],
      ['active', 'Active', 'checkbox'],
      ['team', 'Team', 'select'],
      ['comment', 'Comment', 'text'],
      ['empty', 'Empty', 'text'],
    ]);
    expect(columns.find((c) => c.key === 'team')!.options!.map((o) => o.value)).toEqual(['Red', 'Blue']);
    const rows = await allRows(w.base, 'table');
    expect(rows.map((r) => r.data)).toEqual([
      { title: 'one', notes: 'n1', score: 1.5, when: '2026-01-01', active: true, team: 'Red', comment: 'hello world' },
      { title: 'two', notes: 'n2', score: 2, when: '2026-01-02', active: false, team: 'Blue', comment: 'another, longer' },
      { title: 'three', notes: 'n3', score: -3, when: '2026-01-03T10:00:00Z', active: true, team: 'Red', comment: 'third' },
      { title: 'four', notes: 'n4', score: 40, when: '2026-01-04', active: false, team: 'Red', comment: 'fourth' },
    ]);
  });

  it('a malformed line and a value invalid for a typed column are reported by line number, and nothing is written', async () => {
    const w = await tableWorkspace();
    const before = await allRows(w.base, 'table');
    const csv = ['title,status,extra', 'fine,todo,x', '"multi', 'line",doing,y', 'bad,nope,z', 'short', '"bad"quote,todo,w', 'last,done,v'].join('\n');
    const res = await importCsv(w.base, csv, '');
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('import_failed');
    expect(res.body.imported).toBe(0);
    expect(res.body.errors.map((e: { line: number }) => e.line)).toEqual([5, 6, 7]);
    expect(res.body.errors[0].message).toMatch(/status takes one of/);
    expect(res.body.errors[1].message).toMatch(/Malformed CSV|Expected 3 fields/);
    expect(res.body.errors[2].message).toMatch(/Malformed CSV/);
    expect(await allRows(w.base, 'table')).toEqual(before);
    expect((await columnsOf(w.base, 'table')).map((c) => c.key)).toEqual(['title', 'status', 'notes']);
  });

  it('a line with more fields than the header fails the import without partial=true: 422 import_failed naming the line, nothing written (issue 33 item 5)', async () => {
    const w = await tableWorkspace();
    const csv = ['title,notes', 'one,1', 'two,2', 'three,3', 'four,4,extra,more', 'five,5'].join('\n');
    const res = await importCsv(w.base, csv, '');
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.code).toBe('import_failed');
    expect(res.body.imported).toBe(0);
    expect(res.body.errors).toEqual([{ line: 5, message: expect.stringMatching(/Malformed CSV/) }]);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: ['line', '5'] })]);
    expect(await allRows(w.base, 'table')).toEqual([]);
    const partial = await importCsv(w.base, csv, 'partial=true');
    expect(partial.body).toMatchObject({ imported: 4, errors: [{ line: 5 }] });
  });

  it('partial=true writes the good lines and reports the bad ones', async () => {
    const w = await tableWorkspace();
    const csv = ['title,status,amount', 'one,todo,1', 'two,bogus,2', 'three,done,3', 'four,doing'].join('\n');
    const res = await importCsv(w.base, csv, 'partial=true');
    expect(res.status, res.text).toBe(200);
    expect(res.body.imported).toBe(2);
    expect(res.body.columnsCreated).toEqual(['amount']);
    expect(res.body.errors.map((e: { line: number }) => e.line)).toEqual([3, 5]);
    const rows = await allRows(w.base, 'table');
    expect(rows.map((r) => r.data)).toEqual([
      { title: 'one', status: 'todo', amount: 1 },
      { title: 'three', status: 'done', amount: 3 },
    ]);
  });

  it('an id column gives row ids when free; a taken id (or one given twice) is its line\'s error', async () => {
    const w = await tableWorkspace();
    const [taken] = await createRows(w.base, 'table', [{ title: 'existing' }]);
    const csv = ['id,title', `${taken},clash`, 'fresh-1,new', 'fresh-1,again', ',no id'].join('\n');
    const failed = await importCsv(w.base, csv, '');
    expect(failed.status).toBe(422);
    expect(failed.body.errors.map((e: { line: number }) => e.line)).toEqual([2, 4]);
    expect(failed.body.errors[0].message).toMatch(/already taken/);
    const partial = await importCsv(w.base, csv, 'partial=true');
    expect(partial.body.imported).toBe(2);
    const rows = await allRows(w.base, 'table');
    expect(rows.map((r) => r.data.title)).toEqual(['existing', 'new', 'no id']);
    expect(rows[1]!.id).toBe('fresh-1');
    expect(rows[2]!.id).not.toBe('');
  });

  it('emits one row.created per row, attributed to the importer, and columns.updated for the new column', async () => {
    const w = await tableWorkspace();
    const res = await importCsv(w.base, 'title,size\na,1\nb,2\nc,3\n', '');
    expect(res.body.imported).toBe(3);
    const events = (await t.request('GET', `${w.base}/events?limit=50`, { as: owner.as })).body.events as Array<{ event: string; principal: { id: string } | null; data: { id?: string } }>;
    const ids = (await allRows(w.base, 'table')).map((r) => r.id);
    const created = events.filter((e) => e.event === 'row.created');
    expect(created.map((e) => e.data.id).sort()).toEqual([...ids].sort());
    expect(created.every((e) => e.principal?.id === owner.userId)).toBe(true);
    expect(events.filter((e) => e.event === 'columns.updated').length).toBeGreaterThanOrEqual(1);
  });

  it('without partial=true, a file with more rows than fit under the row cap is 402 naming the cap, nothing written, and the file is not read past the first row that does not fit (issue 33 item 3)', async () => {
    const cap = capsFor('free').rowsPerWorkspace;
    const w = await tableWorkspace();
    await createRows(w.base, 'table', [{ title: 'existing 1' }, { title: 'existing 2' }]);
    const room = cap - 2;
    // A malformed line far past the cap: an import that read it would answer 422, not 402.
    const csv = `title\n${Array.from({ length: room + 37 }, (_, i) => `row ${i}`).join('\n')}\n"never read\n`;
    const res = await onFreePlan(() => importCsv(w.base, csv, ''));
    expect(res.status, res.text).toBe(402);
    expect(res.body).toMatchObject({ code: 'over_limit', limit: 'rows', current: 2, cap });
    expect(res.body.message).toContain(`allows ${cap} rows`);
    expect(res.body.message).toContain(`line ${2 + room}`);
    expect(res.body.message).toContain('partial=true');
    expect((await allRows(w.base, 'table')).map((r) => r.data.title)).toEqual(['existing 1', 'existing 2']);
  });

  it('with partial=true the rows that fit are written, exactly up to the cap, and the import stops reading at the first row past it (issue 33 item 3)', async () => {
    const cap = capsFor('free').rowsPerWorkspace;
    const w = await tableWorkspace();
    await createRows(w.base, 'table', [{ title: 'existing' }]);
    const room = cap - 1;
    const csv = `title\n${Array.from({ length: room + 37 }, (_, i) => `row ${i}`).join('\n')}\n"never read\n`;
    const [res, more, whole] = await onFreePlan(async () => [
      await importCsv(w.base, csv, 'partial=true'),
      // Full: the next import refuses its first row, or all of it without partial=true.
      await importCsv(w.base, 'title\nx\ny\n', 'partial=true'),
      await importCsv(w.base, 'title\nx\n', ''),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.imported).toBe(room);
    // The one good row read past the room; nothing after it was read, so the malformed last line is not reported.
    expect(res.body.refused).toBe(1);
    expect(res.body.errors).toEqual([{ line: 2 + room, message: expect.stringMatching(new RegExp(`allows ${cap} rows.*stopped at this line`)) }]);
    const rows = await allRows(w.base, 'table');
    expect(rows).toHaveLength(cap);
    expect(rows.at(-1)!.data.title).toBe(`row ${room - 1}`);
    expect(more.body).toMatchObject({ imported: 0, refused: 1, errors: [{ line: 2 }] });
    expect(whole.status).toBe(402);
    expect(await allRows(w.base, 'table')).toHaveLength(cap);
  });

  it('an organisation runs at most two imports at once: a third is 429 with Retry-After and nothing written; another organisation is not held back (issue 33 item 3)', async () => {
    const w = await tableWorkspace();
    const held = [heldImport(w.base), heldImport(w.base)];
    let finished: Array<{ status: number; body: any }> = [];
    try {
      // The two held imports have started once a third is refused; until then a third finds room and imports its no rows.
      let refused: Awaited<ReturnType<typeof importCsv>> | null = null;
      for (let attempt = 0; attempt < 50 && !refused; attempt++) {
        const third = await importCsv(w.base, 'title\n', '');
        if (third.status === 429) refused = third;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(refused, 'a third import at once was never refused').not.toBeNull();
      expect(refused!.body).toMatchObject({ code: 'rate_limited', endpoint: 'csv_imports', limit: 2, window: 'concurrent', resetAt: expect.any(String), requestId: expect.any(String) });
      expect(refused!.body.message).toMatch(/at once.*Retry in 5 s/);
      const withRows = await importCsv(w.base, 'title\nnot written\n', '');
      expect(withRows.status).toBe(429);
      expect(withRows.headers.get('retry-after')).toBe('5');

      const other = await signInUser(t, 'other-org@csv.test');
      const theirs = await createWorkspace(t, other, { name: 'theirs', slug: 'theirs' });
      const elsewhere = await importCsv(`/api/workspaces/${theirs.id}`, 'title\nfrom another org\n', '', other.as);
      expect(elsewhere.status, elsewhere.text).toBe(200);
    } finally {
      finished = await Promise.all(held.map((upload) => upload.finish()));
    }
    expect(finished.map((r) => [r.status, r.body.imported])).toEqual([
      [200, 1],
      [200, 1],
    ]);
    expect((await allRows(w.base, 'table')).map((r) => r.data.title).sort()).toEqual(['held', 'held']);
    expect((await importCsv(w.base, 'title\nafter\n', '')).status).toBe(200);
  });

  it('a file of many batches and pieces, with records spanning the pieces, imports every row in order (issue 33 item 3)', async () => {
    const w = await tableWorkspace();
    {
      const total = 4_321;
      const note = (i: number) => `${'x'.repeat(300 + (i % 50))}, "quoted"\nline two of ${i}`;
      const csv = `id,title,amount,notes\r\n${Array.from({ length: total }, (_, i) => `big-${i},Row ${i},${i * 1.5},"${note(i).replace(/"/g, '""')}"`).join('\r\n')}\r\n`;
      expect(csv.length).toBeGreaterThan(1_400_000);
      const res = await importCsv(w.base, csv, '');
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ imported: total, refused: 0, columnsCreated: ['amount'], errors: [] });
      const rows = await allRows(w.base, 'table');
      expect(rows).toHaveLength(total);
      rows.forEach((row, i) => expect({ id: row.id, data: row.data }).toEqual({ id: `big-${i}`, data: { title: `Row ${i}`, amount: i * 1.5, notes: note(i) } }));
    }
  });

  it('the server answers other requests while an import reads a large file: health checks keep coming back all through it (issue 33 item 3)', async () => {
    const w = await tableWorkspace();
    await putColumns(w.base, 'table', [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'n', label: 'N', type: 'number' },
    ]);
    // Short lines are the most parsing per byte; none fits the number column, so the whole file is read (twice, with partial=true) and nothing is written.
    const lines = 300_000;
    const csv = `title,n\n${Array.from({ length: lines }, (_, i) => `r${i},x`).join('\n')}\n`;
    let importing = true;
    const healthAnswers = (async () => {
      let answered = 0;
      while (importing) {
        const response = await fetch(`${t.url}/api/health`);
        await response.arrayBuffer();
        if (importing && response.status === 200) answered++;
      }
      return answered;
    })();
    const res = await importCsv(w.base, csv, 'partial=true');
    importing = false;
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ imported: 0, refused: 0 });
    expect(res.body.errors.at(-1).message).toContain(`${lines - 1000} more lines with errors`);
    const answered = await healthAnswers;
    // An import that held the event loop through its parse would let through only the few answered while the upload arrived.
    expect(answered).toBeGreaterThanOrEqual(HEALTH_ANSWERS_DURING_IMPORT);
    expect(await allRows(w.base, 'table')).toEqual([]);
  });

  it('a viewer cannot import (403); a request without a file is 400; an empty file is 400; a file over 25 MB is 413', async () => {
    const w = await tableWorkspace();
    await addMembership(t, w.id, viewer.userId, 'viewer');
    const refused = await importCsv(w.base, 'title\nx\n', '', viewer.as);
    expect(refused.status).toBe(403);
    const empty = await importCsv(w.base, '', '');
    expect(empty.status).toBe(400);
    const noFile = await t.request('POST', `${w.base}/rows/import`, { as: owner.as, body: {} });
    expect(noFile.status).toBe(400);
    // The upload limit of every multipart route: 25 MB.
    const tooLarge = await importCsv(w.base, `title\n${'x'.repeat(99)}\n`.repeat(26 * 10_486), '');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe('payload_too_large');
    expect((await allRows(w.base, 'table')).length).toBe(0);
  });
});
