import * as Y from 'yjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { readLoggedUpdates } from '../../src/persistence/document-log';
import { getRow, listRows } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/**
 * A REST write's commit carries its log append in the row projection's
 * statement where it can (document-log.ts `appendHead`), and appends on its
 * own first where it cannot (a delete, a change with no row to write). Either
 * way the answer means the update is in the log, the row in the projection
 * and the event in the audit log, all from one commit.
 */
let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: { cookie: string; orgSlug: string };
let workspaceId: string;
const base = '/api/workspaces/welcome';
const as = () => ({ as: { cookie: owner.cookie } });

beforeAll(async () => {
  t = await startTestApp();
  owner = await signIn(t, 'commit-append@example.com');
  workspaceId = (await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** The table document as its log alone rebuilds it (snapshot, then every logged update in order). */
async function fromLog(): Promise<Y.Doc> {
  const document = tablesDocumentName(workspaceId);
  const doc = new Y.Doc();
  const snapshot = await t.services.db.selectFrom('documentSnapshots').select('state').where('document', '=', document).executeTakeFirst();
  if (snapshot) Y.applyUpdateV2(doc, snapshot.state);
  for (const { update } of await readLoggedUpdates(t.services.db, document)) Y.applyUpdate(doc, update);
  return doc;
}

async function logged(): Promise<number> {
  return (await readLoggedUpdates(t.services.db, tablesDocumentName(workspaceId))).length;
}

async function events(event: string, subjectId?: string): Promise<number> {
  let query = t.services.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('workspaceId', '=', workspaceId).where('event', '=', event);
  if (subjectId) query = query.where('subjectId', '=', subjectId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

async function projected(ids: string[]): Promise<string[]> {
  const rows = await t.services.db.selectFrom('tableRows').select('id').where('workspaceId', '=', workspaceId).where('id', 'in', ids).execute();
  return rows.map((r) => r.id).sort();
}

describe("a REST write's log append", () => {
  it('concurrent creates sharing commits: each answered row is in the log, the projection and the audit log, once', async () => {
    const before = await logged();
    const createdBefore = await events('row.created');
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => t.request('POST', `${base}/rows`, { body: { data: { title: `burst ${i}`, status: 'todo' } }, ...as() })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const ids = answers.map((a) => a.body.id as string);
    // Every answer names its creator and a stored time: read back from the statement that also appended.
    for (const answer of answers) {
      expect(answer.body.createdAt).toEqual(expect.any(String));
      expect(answer.body.createdByPrincipalId).not.toBeNull();
    }
    expect(await logged()).toBe(before + 24);
    expect(await events('row.created')).toBe(createdBefore + 24);
    expect(await projected(ids)).toEqual([...ids].sort());
    const rebuilt = await fromLog();
    for (const [i, id] of ids.entries()) expect(getRow(rebuilt, id)?.data.title).toBe(`burst ${i}`);
  });

  it('creates that commit in one statement and creates whose commit needs more (a date cell to index) in one burst: each is logged, projected, indexed and in the audit log, once', async () => {
    // A commit of plain creates is written alone, without a transaction (observer.ts `persistAlone`); one that holds a date
    // cell needs an index insert too and is committed in a transaction. Interleaved, some commits hold both kinds.
    const before = await logged();
    const createdBefore = await events('row.created');
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        t.request('POST', `${base}/rows`, { body: { data: i % 3 === 0 ? { title: `dated ${i}`, due: `2027-01-${String(i + 1).padStart(2, '0')}` } : { title: `plain ${i}` } }, ...as() }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const ids = answers.map((a) => a.body.id as string);
    for (const answer of answers) expect(answer.body.createdByPrincipalId).not.toBeNull();
    expect(await logged()).toBe(before + 24);
    expect(await events('row.created')).toBe(createdBefore + 24);
    expect(await projected(ids)).toEqual([...ids].sort());
    const dated = ids.filter((_, i) => i % 3 === 0);
    const indexed = await t.services.db.selectFrom('rowDates').select(['rowId', 'columnKey']).where('workspaceId', '=', workspaceId).where('rowId', 'in', ids).execute();
    expect(indexed.map((entry) => entry.rowId).sort()).toEqual([...dated].sort());
    expect(new Set(indexed.map((entry) => entry.columnKey))).toEqual(new Set(['due']));
    const rebuilt = await fromLog();
    for (const [i, id] of ids.entries()) expect(getRow(rebuilt, id)?.data.title).toBe(i % 3 === 0 ? `dated ${i}` : `plain ${i}`);
  });

  it('a commit written alone that fails leaves nothing: the caller hears the failure, and the row is in neither the log, the projection nor the audit log', async () => {
    const before = await logged();
    const createdBefore = await events('row.created');
    t.services.failpoints.arm('document.commit');
    const failed = await t.request('POST', `${base}/rows`, { body: { data: { title: 'never' } }, ...as() });
    t.services.failpoints.disarm('document.commit');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await logged()).toBe(before);
    expect(await events('row.created')).toBe(createdBefore);
    const listed = await t.request('GET', `${base}/rows?limit=500`, as());
    expect(listed.body.rows.some((r: { data: { title?: string } }) => r.data.title === 'never')).toBe(false);
    // The next write commits (the document was rebuilt from its log).
    const next = await t.request('POST', `${base}/rows`, { body: { data: { title: 'after' } }, ...as() });
    expect(next.status).toBe(200);
    expect(await logged()).toBe(before + 1);
  });

  it('a patch and a delete are logged with their events; the log rebuilds what REST reads', async () => {
    const created = await t.request('POST', `${base}/rows`, { body: { data: { title: 'to change' } }, ...as() });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const before = await logged();
    const patched = await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { title: 'changed' } }, ...as() });
    expect(patched.status).toBe(200);
    expect(await logged()).toBe(before + 1);
    expect(await events('row.updated', id)).toBe(1);
    expect(getRow(await fromLog(), id)?.data.title).toBe('changed');

    // A delete writes the projection before any upsert: its append goes first, on its own.
    const deleted = await t.request('DELETE', `${base}/rows/${id}`, as());
    expect(deleted.status).toBe(200);
    expect(await logged()).toBe(before + 2);
    expect(await events('row.deleted', id)).toBe(1);
    expect(await projected([id])).toEqual([]);
    const rebuilt = await fromLog();
    expect(getRow(rebuilt, id)).toBeNull();
    const listed = await t.request('GET', `${base}/rows?limit=500`, as());
    expect(listRows(rebuilt).rows.map((r) => r.id).sort()).toEqual(listed.body.rows.map((r: { id: string }) => r.id).sort());
  });

  it("a dated row's index entries follow its cells through patches: a date kept is updated in place, a new one added, one no cell holds any more gone", async () => {
    // The entries ride in the projection's upsert (row-indexes.ts `reindexHead`): the delete spares what the insert writes.
    const entries = async (id: string) =>
      (await t.services.db.selectFrom('rowDates').select(['columnKey', 'at', 'reachDays']).where('workspaceId', '=', workspaceId).where('rowId', '=', id).execute())
        .map((entry) => ({ key: entry.columnKey, at: new Date(entry.at).toISOString().slice(0, 10), reach: entry.reachDays }))
        .sort((a, b) => a.key.localeCompare(b.key));
    const created = await t.request('POST', `${base}/rows`, { body: { data: { title: 'dated', due: '2027-01-05' } }, ...as() });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect(await entries(id)).toEqual([{ key: 'due', at: '2027-01-05', reach: 0 }]);
    // Another cell holds a date (any cell is read, whatever its column's type): its entry comes, and due's reach grows to it.
    expect((await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { title: '2027-01-15' } }, ...as() })).status).toBe(200);
    expect(await entries(id)).toEqual([
      { key: 'due', at: '2027-01-05', reach: 10 },
      { key: 'title', at: '2027-01-15', reach: 0 },
    ]);
    // due moves past title: both entries are updated in place.
    expect((await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { due: '2027-02-14' } }, ...as() })).status).toBe(200);
    expect(await entries(id)).toEqual([
      { key: 'due', at: '2027-02-14', reach: 0 },
      { key: 'title', at: '2027-01-15', reach: 30 },
    ]);
    // title is no date any more: its entry goes, due's stays.
    expect((await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { title: 'plain again' } }, ...as() })).status).toBe(200);
    expect(await entries(id)).toEqual([{ key: 'due', at: '2027-02-14', reach: 0 }]);
    // A dated commit that fails writes no entry, and leaves the old ones as they were.
    const before = await logged();
    t.services.failpoints.arm('document.commit');
    const failed = await t.request('PATCH', `${base}/rows/${id}`, { body: { data: { due: '2027-03-01', title: '2027-03-02' } }, ...as() });
    t.services.failpoints.disarm('document.commit');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await logged()).toBe(before);
    expect(await entries(id)).toEqual([{ key: 'due', at: '2027-02-14', reach: 0 }]);
    // The log holds what the projection does.
    const rebuilt = await fromLog();
    expect(getRow(rebuilt, id)?.data).toMatchObject({ title: 'plain again', due: '2027-02-14' });
  });

  it('a change with no row to write (a new column) is logged with its event', async () => {
    const before = await logged();
    const added = await t.request('POST', `${base}/columns`, { body: { column: { key: 'estimate', label: 'Estimate', type: 'number' } }, ...as() });
    expect(added.status).toBeLessThan(300);
    expect(await logged()).toBe(before + 1);
    expect(await events('columns.updated')).toBeGreaterThan(0);
  });
});
