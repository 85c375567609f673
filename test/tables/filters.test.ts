import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { acknowledged, connectClient, synced } from '../helpers/sync';

/**
 * Filters, multi-column sorts and field picks on GET /rows and POST
 * /rows/query (docs/TABLES.md): every operator on every type it takes,
 * and/or groups, cursors through a filtered listing, rows a sync client
 * wrote, and the 400s that name what is wrong.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string; orgSlug: string };
let userId: string;
let workspaceId: string;
const base = '/api/workspaces/welcome';
const ids: Record<string, string> = {};

const as = () => ({ as: { cookie: owner.cookie } });

const COLUMNS = [
  { key: 'title', label: 'Title', type: 'text' },
  { key: 'notes', label: 'Notes', type: 'longtext' },
  { key: 'site', label: 'Site', type: 'url' },
  { key: 'amount', label: 'Amount', type: 'number' },
  { key: 'due', label: 'Due', type: 'date' },
  { key: 'stage', label: 'Stage', type: 'status', options: ['Todo', 'Doing', 'Done'].map((value) => ({ value, label: value })) },
  { key: 'tags', label: 'Tags', type: 'select', options: ['a', 'b', 'c'].map((value) => ({ value, label: value.toUpperCase() })) },
  { key: 'owner', label: 'Owner', type: 'person' },
  { key: 'done', label: 'Done', type: 'checkbox' },
].map((column, position) => ({ ...column, position }));

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'filters@example.com');
  const ws = await t.services.db.selectFrom('workspaces').select(['id', 'createdById']).where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  workspaceId = ws.id;
  userId = ws.createdById!;
  const put = await t.request('PUT', `${base}/columns`, { body: { columns: COLUMNS }, ...as() });
  expect(put.status).toBe(200);
  const rows = {
    alpha: { title: 'Alpha launch', notes: 'Ship it, now', site: 'https://a.example/x', amount: 10, due: '2026-11-30', stage: 'Todo', tags: ['a', 'b'], owner: userId, done: true },
    beta: { title: 'beta Review', amount: 25.5, due: '2026-12-01', stage: 'Doing', tags: ['c'], done: false },
    gamma: { title: 'Gamma', amount: -3, due: '2026-12-01T15:00:00Z', stage: 'Done', tags: [] },
    blank: { title: '', notes: 'Über, “quoted”' },
    comma: { title: 'Comma, inside', amount: 100, due: '2027-01-15', stage: 'Doing', tags: ['a'], done: true },
  };
  for (const [name, data] of Object.entries(rows)) {
    const created = await t.request('POST', `${base}/rows`, { body: { data }, ...as() });
    expect(created.status).toBe(200);
    ids[created.body.id] = name;
  }
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** Names of the rows a GET /rows with this query string lists, in order. */
async function listed(query: string): Promise<string[]> {
  const res = await t.request('GET', `${base}/rows?${query}`, as());
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.rows.map((row: { id: string }) => ids[row.id] ?? row.id);
}

async function queried(body: unknown): Promise<string[]> {
  const res = await t.request('POST', `${base}/rows/query`, { body, ...as() });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.rows.map((row: { id: string }) => ids[row.id] ?? row.id);
}

const f = (column: string, op: string, value: string) => `filter[${column}][${op}]=${encodeURIComponent(value)}`;

describe('filters in the query string, per type and operator', () => {
  it('text: eq and neq (case-insensitive), contains, starts, in (comma list and JSON array), empty', async () => {
    expect(await listed(f('title', 'eq', 'gamma'))).toEqual(['gamma']);
    expect(await listed(f('title', 'neq', 'Gamma'))).toEqual(['alpha', 'beta', 'blank', 'comma']);
    expect(await listed(f('title', 'contains', 'LAUNCH'))).toEqual(['alpha']);
    expect(await listed(f('title', 'starts', 'be'))).toEqual(['beta']);
    expect(await listed(f('title', 'in', 'Gamma, Alpha launch'))).toEqual(['alpha', 'gamma']);
    expect(await listed(f('title', 'in', '["Comma, inside","Gamma"]'))).toEqual(['gamma', 'comma']);
    expect(await listed(`${f('title', 'in', 'gamma')}&${f('title', 'in', 'beta review')}`)).toEqual(['beta', 'gamma']);
    expect(await listed(f('title', 'empty', 'true'))).toEqual(['blank']);
    expect(await listed(f('title', 'empty', 'false'))).toEqual(['alpha', 'beta', 'gamma', 'comma']);
    expect(await listed(f('notes', 'contains', 'über, “'))).toEqual(['blank']);
    expect(await listed(f('notes', 'empty', 'true'))).toEqual(['beta', 'gamma', 'comma']);
    expect(await listed(f('site', 'starts', 'https://a.'))).toEqual(['alpha']);
  });

  it('number: eq, neq (rows without a value included), lt, lte, gt, gte, between, in, empty', async () => {
    expect(await listed(f('amount', 'eq', '10'))).toEqual(['alpha']);
    expect(await listed(f('amount', 'neq', '10'))).toEqual(['beta', 'gamma', 'blank', 'comma']);
    expect(await listed(f('amount', 'lt', '10'))).toEqual(['gamma']);
    expect(await listed(f('amount', 'lte', '10'))).toEqual(['alpha', 'gamma']);
    expect(await listed(f('amount', 'gt', '25.5'))).toEqual(['comma']);
    expect(await listed(f('amount', 'gte', '25.5'))).toEqual(['beta', 'comma']);
    expect(await listed(f('amount', 'between', '0,30'))).toEqual(['alpha', 'beta']);
    expect(await listed(f('amount', 'in', '10,100'))).toEqual(['alpha', 'comma']);
    expect(await listed(f('amount', 'empty', 'true'))).toEqual(['blank']);
  });

  it('date: compared as instants in UTC, a date alone being its midnight', async () => {
    expect(await listed(f('due', 'lt', '2026-12-01'))).toEqual(['alpha']);
    expect(await listed(f('due', 'gte', '2026-12-01'))).toEqual(['beta', 'gamma', 'comma']);
    expect(await listed(f('due', 'gt', '2026-12-01T12:00:00Z'))).toEqual(['gamma', 'comma']);
    expect(await listed(f('due', 'lte', '2026-12-01'))).toEqual(['alpha', 'beta']);
    expect(await listed(f('due', 'eq', '2026-12-01'))).toEqual(['beta']);
    expect(await listed(f('due', 'neq', '2026-12-01'))).toEqual(['alpha', 'gamma', 'blank', 'comma']);
    expect(await listed(f('due', 'between', '2026-12-01,2026-12-31'))).toEqual(['beta', 'gamma']);
    expect(await listed(f('due', 'empty', 'true'))).toEqual(['blank']);
  });

  it('status and select: is, is not, is any of (multi-select cells match on any value), empty', async () => {
    expect(await listed(f('stage', 'eq', 'Doing'))).toEqual(['beta', 'comma']);
    expect(await listed(f('stage', 'neq', 'Doing'))).toEqual(['alpha', 'gamma', 'blank']);
    expect(await listed(f('stage', 'in', 'Todo,Done'))).toEqual(['alpha', 'gamma']);
    expect(await listed(f('stage', 'empty', 'true'))).toEqual(['blank']);
    expect(await listed(f('tags', 'eq', 'a'))).toEqual(['alpha', 'comma']);
    expect(await listed(f('tags', 'neq', 'a'))).toEqual(['beta', 'gamma', 'blank']);
    expect(await listed(f('tags', 'in', 'b,c'))).toEqual(['alpha', 'beta']);
    expect(await listed(f('tags', 'empty', 'true'))).toEqual(['gamma', 'blank']);
  });

  it('checkbox: eq true or false (no value is false); person: eq, in, empty', async () => {
    expect(await listed(f('done', 'eq', 'true'))).toEqual(['alpha', 'comma']);
    expect(await listed(f('done', 'eq', 'false'))).toEqual(['beta', 'gamma', 'blank']);
    expect(await listed(f('owner', 'eq', userId))).toEqual(['alpha']);
    expect(await listed(f('owner', 'in', `${userId},someone-else`))).toEqual(['alpha']);
    expect(await listed(f('owner', 'empty', 'false'))).toEqual(['alpha']);
  });

  it('several conditions all hold; fields picks columns; both URL forms', async () => {
    expect(await listed(`${f('stage', 'eq', 'Doing')}&${f('amount', 'gt', '50')}`)).toEqual(['comma']);
    const picked = await t.request('GET', `${base}/rows?${f('stage', 'eq', 'Doing')}&fields=title,amount`, as());
    expect(picked.body.rows.map((row: { data: unknown }) => row.data)).toEqual([
      { title: 'beta Review', amount: 25.5 },
      { title: 'Comma, inside', amount: 100 },
    ]);
    const orgForm = await t.request('GET', `/api/orgs/${owner.orgSlug}/workspaces/welcome/rows?${f('stage', 'eq', 'Doing')}&surface=table`, as());
    expect(orgForm.status, JSON.stringify(orgForm.body)).toBe(200);
    expect(orgForm.body.rows.map((row: { id: string }) => ids[row.id])).toEqual(['beta', 'comma']);
  });
});

describe('sorting and paging', () => {
  it('sorts by several keys with directions, empty cells last either way', async () => {
    expect(await listed('sort=stage,-amount')).toEqual(['comma', 'beta', 'gamma', 'alpha', 'blank']);
    expect(await listed('sort=-stage,title')).toEqual(['alpha', 'gamma', 'beta', 'comma', 'blank']);
    expect(await queried({ sort: [{ column: 'done', direction: 'desc' }, { column: 'amount', direction: 'asc' }] })).toEqual(['alpha', 'comma', 'beta', 'gamma', 'blank']);
  });

  it('pages through a filtered, sorted listing with cursors, and refuses a cursor of another filter', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    const query = `${f('amount', 'empty', 'false')}&sort=-amount&limit=1`;
    do {
      const res: { status: number; body: { rows: Array<{ id: string }>; nextCursor: string | null } } = await t.request(
        'GET',
        `${base}/rows?${query}${after ? `&after=${after}` : ''}`,
        as(),
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.rows.map((row) => ids[row.id]!));
      after = res.body.nextCursor;
    } while (after);
    expect(seen).toEqual(['comma', 'beta', 'alpha', 'gamma']);

    const first = await t.request('GET', `${base}/rows?${f('stage', 'eq', 'Doing')}&limit=1`, as());
    expect(first.body.rows.map((row: { id: string }) => ids[row.id])).toEqual(['beta']);
    const next = await t.request('GET', `${base}/rows?${f('stage', 'eq', 'Doing')}&limit=1&after=${first.body.nextCursor}`, as());
    expect(next.body.rows.map((row: { id: string }) => ids[row.id])).toEqual(['comma']);
    expect(next.body.nextCursor).toBeNull();
    const other = await t.request('GET', `${base}/rows?${f('stage', 'eq', 'Todo')}&limit=1&after=${first.body.nextCursor}`, as());
    expect(other.status).toBe(400);
    expect(other.body.error.details[0]).toMatchObject({ path: ['after'], code: 'invalid_cursor' });
  });
});

describe('POST /rows/query', () => {
  it('and/or with one level of groups, typed values, the GET /rows envelope', async () => {
    const body = {
      or: [
        { column: 'stage', op: 'eq', value: 'Todo' },
        { and: [{ column: 'amount', op: 'gt', value: 50 }, { column: 'done', op: 'eq', value: true }] },
      ],
    };
    expect(await queried({ filter: body })).toEqual(['alpha', 'comma']);
    expect(await queried({ filter: { and: [{ column: 'amount', op: 'between', value: [0, 30] }], or: [{ column: 'tags', op: 'in', value: ['c'] }, { column: 'title', op: 'starts', value: 'zzz' }] } })).toEqual([
      'beta',
    ]);
    const res = await t.request('POST', `${base}/rows/query`, { body: { filter: { and: [{ column: 'title', op: 'eq', value: 'Gamma' }] }, fields: ['title'] }, ...as() });
    expect(res.body).toEqual({ rows: [expect.objectContaining({ data: { title: 'Gamma' }, workspaceId })], nextCursor: null });
  });

  it('refuses groups nested deeper than one level', async () => {
    const res = await t.request('POST', `${base}/rows/query`, {
      body: { filter: { or: [{ and: [{ or: [{ column: 'title', op: 'eq', value: 'x' }] }] }] } },
      ...as(),
    });
    expect(res.status).toBe(400);
  });
});

describe('bad filters are 400 naming the part that is wrong, and change nothing', () => {
  const refused = async (url: string, code: string, path: string[]) => {
    const res = await t.request('GET', `${base}/rows?${url}`, as());
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(res.body.error.details).toEqual([expect.objectContaining({ code, path })]);
    return res.body.error.message as string;
  };

  it('unknown column, unknown operator, operator not valid for the type, unparsable values', async () => {
    expect(await refused(f('nope', 'eq', 'x'), 'unknown_column', ['filter', 'nope', 'eq'])).toContain('"nope"');
    expect(await refused(f('title', 'like', 'x'), 'unknown_operator', ['filter', 'title', 'like'])).toContain('like');
    expect(await refused(f('done', 'lt', 'true'), 'invalid_operator', ['filter', 'done', 'lt'])).toContain('checkbox');
    expect(await refused(f('stage', 'contains', 'o'), 'invalid_operator', ['filter', 'stage', 'contains'])).toBeTruthy();
    expect(await refused(f('amount', 'gt', 'ten'), 'invalid_value', ['filter', 'amount', 'gt', 'value'])).toContain('number');
    expect(await refused(f('due', 'lt', '2026-02-30'), 'invalid_value', ['filter', 'due', 'lt', 'value'])).toContain('date');
    expect(await refused(f('amount', 'between', '1'), 'invalid_value', ['filter', 'amount', 'between', 'value'])).toContain('two');
    expect(await refused(f('done', 'eq', 'yes'), 'invalid_value', ['filter', 'done', 'eq', 'value'])).toBeTruthy();
    expect(await refused(f('title', 'empty', 'maybe'), 'invalid_value', ['filter', 'title', 'empty', 'value'])).toBeTruthy();
    expect(await refused(f('amount', 'in', '[1,'), 'invalid_value', ['filter', 'amount', 'in', 'value'])).toBeTruthy();
    const proto = await t.request('GET', `${base}/rows?${f('__proto__', 'eq', 'x')}`, as());
    expect(proto.status).toBe(400);
    expect(JSON.stringify(proto.body.error)).toContain('__proto__');
    expect(await refused('sort=nope', 'unknown_column', ['sort', '0'])).toBeTruthy();
    expect(await refused('fields=title,nope', 'unknown_column', ['fields', '1'])).toBeTruthy();
  });

  it('POST /rows/query names the column, operator or value at fault in the same words as GET /rows (issue 33 item 6)', async () => {
    const queryRefused = async (condition: Record<string, unknown>, code: string, path: string[]) => {
      const res = await t.request('POST', `${base}/rows/query`, { body: { filter: { and: [condition] } }, ...as() });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ code, path })]);
      return res.body.error.details[0].message as string;
    };
    const getMessage = async (url: string) => (await t.request('GET', `${base}/rows?${url}`, as())).body.error.details[0].message as string;
    const unknownOp = await queryRefused({ column: 'title', op: 'resembles', value: 'x' }, 'unknown_operator', ['filter', 'and', '0', 'op']);
    expect(unknownOp).toContain('"resembles"');
    expect(unknownOp).toContain('"title"');
    expect(unknownOp).toBe(await getMessage(f('title', 'resembles', 'x')));
    const badValue = await queryRefused({ column: 'amount', op: 'gt', value: 'ten' }, 'invalid_value', ['filter', 'and', '0', 'value']);
    expect(badValue).toBe(await getMessage(f('amount', 'gt', 'ten')));
    expect(await queryRefused({ column: 'nope', op: 'eq', value: 'x' }, 'unknown_column', ['filter', 'and', '0', 'column'])).toBe(await getMessage(f('nope', 'eq', 'x')));
    // In a group, too; and the parts only a JSON body can get wrong are named by their path rather than "Invalid input" at the condition.
    await queryRefused({ or: [{ column: 'title', op: 'resembles', value: 'x' }] }, 'unknown_operator', ['filter', 'and', '0', 'or', '0', 'op']);
    const objectValue = await queryRefused({ column: 'title', op: 'eq', value: { $gt: '' } }, 'invalid_union', ['filter', 'and', '0', 'value']);
    expect(objectValue).toMatch(/expected string, number, boolean, null or array/);
    await queryRefused({ op: 'eq', value: 'x' }, 'invalid_type', ['filter', 'and', '0', 'column']);
  });

  it('hostile shapes: a plain filter value, a repeated condition, lone surrogates, huge lists', async () => {
    expect((await t.request('GET', `${base}/rows?filter=x`, as())).status).toBe(400);
    expect((await t.request('GET', `${base}/rows?filter[title]=x`, as())).status).toBe(400);
    const repeated = await t.request('GET', `${base}/rows?${f('amount', 'gt', '1')}&${f('amount', 'gt', '2')}`, as());
    expect(repeated.status).toBe(400);
    expect(await queried({ filter: { and: [{ column: 'title', op: 'contains', value: 'Gam\ud800' }] } })).toEqual([]);
    const many = Array.from({ length: 900 }, (_, i) => `v${i}`).join(',');
    expect(await listed(f('title', 'in', `${many},gamma`))).toEqual(['gamma']);
    const deep = await t.request('POST', `${base}/rows/query`, { body: { filter: { and: [{ column: 'title', op: 'eq', value: { $gt: '' } }] } }, ...as() });
    expect(deep.status).toBe(400);
    const unknownKey = await t.request('POST', `${base}/rows/query`, { body: { filter: { not: [] } }, ...as() });
    expect(unknownKey.status).toBe(400);
    const rows = await t.request('GET', `${base}/rows`, as());
    expect(rows.body.rows).toHaveLength(5);
  });
});

describe('rows from a sync client', () => {
  it('a row a provider writes is filtered like any other once acknowledged', async () => {
    const client = connectClient(t.url, tablesDocumentName(workspaceId), { cookie: owner.cookie });
    await synced(client);
    const surfaceId = (await t.request('GET', `${base}/rows`, as())).body.rows[0].surfaceId;
    insertRow(client.doc, { id: 'from-sync', surfaceId, data: { title: 'Delta from sync', amount: 42, stage: 'Doing', done: true } }, 'test');
    await acknowledged(client);
    expect(await listed(`${f('stage', 'eq', 'Doing')}&${f('amount', 'between', '40,50')}`)).toEqual(['from-sync']);
    expect(await queried({ filter: { or: [{ column: 'title', op: 'contains', value: 'from sync' }] } })).toEqual(['from-sync']);

    // Cells change under a filter that was just answered: a sync edit, a REST edit, a delete.
    client.doc.transact(() => (client.doc.getMap('rows').get('from-sync') as any).set('stage', 'Done'), 'test');
    await acknowledged(client);
    expect(await listed(f('stage', 'eq', 'Doing'))).toEqual(['beta', 'comma']);
    expect(await listed(f('stage', 'eq', 'Done'))).toEqual(['gamma', 'from-sync']);
    const beta = Object.keys(ids).find((id) => ids[id] === 'beta')!;
    expect((await t.request('PATCH', `${base}/rows/${beta}`, { body: { data: { stage: 'Done', amount: null } }, ...as() })).status).toBe(200);
    expect(await listed(f('stage', 'eq', 'Done'))).toEqual(['beta', 'gamma', 'from-sync']);
    expect(await listed(f('amount', 'empty', 'true'))).toEqual(['beta', 'blank']);
    expect((await t.request('DELETE', `${base}/rows/from-sync`, as())).status).toBe(200);
    expect(await listed(f('stage', 'eq', 'Done'))).toEqual(['beta', 'gamma']);
    client.destroy();
  });
});

describe('link columns', () => {
  it('filters rows by the rows they link to: eq, neq, in, empty', async () => {
    const projects = await t.request('POST', `${base}/surfaces`, { body: { kind: 'table', name: 'Projects', slug: 'projects' }, ...as() });
    expect(projects.status, projects.text).toBe(200);
    const launch = (await t.request('POST', `${base}/rows?surface=projects`, { body: { data: { title: 'Launch' } }, ...as() })).body.id;
    const hiring = (await t.request('POST', `${base}/rows?surface=projects`, { body: { data: { title: 'Hiring' } }, ...as() })).body.id;
    const column = await t.request('POST', `${base}/columns`, { body: { column: { key: 'project', label: 'Project', type: 'link', targetSurface: 'projects' } }, ...as() });
    expect(column.status, column.text).toBe(200);
    const idOf = (name: string) => Object.keys(ids).find((id) => ids[id] === name)!;
    for (const [name, linked] of [['alpha', [launch]], ['gamma', [launch, hiring]], ['comma', [hiring]]] as const) {
      expect((await t.request('PATCH', `${base}/rows/${idOf(name)}`, { body: { data: { project: linked } }, ...as() })).status).toBe(200);
    }
    const sheet = 'surface=table';
    expect(await listed(`${sheet}&${f('project', 'eq', launch)}`)).toEqual(['alpha', 'gamma']);
    expect(await listed(`${sheet}&${f('project', 'neq', launch)}`)).toEqual(['beta', 'blank', 'comma']);
    expect(await listed(`${sheet}&${f('project', 'in', `${hiring},nope`)}`)).toEqual(['gamma', 'comma']);
    expect(await listed(`${sheet}&${f('project', 'empty', 'true')}`)).toEqual(['beta', 'blank']);
    const lookupIssue = await t.request('GET', `${base}/rows?${sheet}&${f('project', 'lt', 'x')}`, as());
    expect(lookupIssue.status).toBe(400);
  });
});
