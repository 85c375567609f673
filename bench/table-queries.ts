/**
 * Filtered pages at 50,000 rows (issue 24): GET /rows and POST /rows/query
 * over HTTP on the embedded database, with the model's own time beside it.
 * The rows go in through the engine as REST writes do (log, events,
 * projections), 1,000 a transaction. Prints figures; asserts nothing.
 *
 *   npm run bench -- table-queries            (ROWS=50000 by default)
 */
import { performance } from 'node:perf_hooks';
import { request as undiciRequest } from 'undici';
import { tablesDocumentName } from '../src/model/document-names';
import { listRows, readColumns } from '../src/model/table/document';
import { compileRowQuery, filterFromQueryString, type SortKey } from '../src/model/table/query';
import { findPrincipals } from '../src/persistence/workspaces';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { fillTable } from './seeded-table';
import { percentile, round, timeEach } from './tables';

type Figures = Record<string, number | string>;

const STAGES = ['Todo', 'Doing', 'Review', 'Done'];

export async function runTableQueriesBench(rows = Number(process.env.ROWS ?? 50_000)): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const { cookie } = await signIn(t, 'bench-queries@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const as = { as: { cookie } };
    const columns = [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'stage', label: 'Stage', type: 'status', options: STAGES.map((value) => ({ value, label: value })) },
      { key: 'amount', label: 'Amount', type: 'number' },
      { key: 'due', label: 'Due', type: 'date' },
      { key: 'done', label: 'Done', type: 'checkbox' },
    ].map((column, position) => ({ ...column, position }));
    const put = await t.request('PUT', '/api/workspaces/welcome/columns', { ...as, body: { columns } });
    if (put.status !== 200) throw new Error(`columns: ${put.text}`);
    const workspace = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
    const surface = await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', workspace.id).where('kind', '=', 'table').executeTakeFirstOrThrow();
    const owner = await t.services.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    const principal = (await findPrincipals(t.services.db, [owner.id])).get(owner.id)!;
    const documentName = tablesDocumentName(workspace.id);
    // The fill leaves background work (projections, search, the version pass): fillTable measures once the server is quiet.
    const fill = await fillTable(t, documentName, principal, rows, (i) => {
      const day = 1 + (i % 28);
      return {
        id: `q${i.toString(36).padStart(7, '0')}`,
        surfaceId: surface.id,
        data: { title: `Task ${i} ${i % 97 === 0 ? 'urgent' : 'routine'}`, stage: STAGES[i % 4]!, amount: (i * 7919) % 10_000, due: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(day).padStart(2, '0')}`, done: i % 5 === 0 },
      };
    });
    const figures: Figures = { rows, ...fill };
    // What the server's statistics job does within a minute of the fill (PGlite runs no autovacuum).
    figures.tablesAnalyzed = (await t.app.plannerStatistics.runOnce()).length;

    const headers = { cookie: `svc-session=${cookie}`, 'content-type': 'application/json' };
    const get = async (query: string) => {
      const res = await undiciRequest(`${t.url}/api/workspaces/welcome/rows?${query}`, { headers });
      const body = (await res.body.json()) as { rows: unknown[]; nextCursor: string | null };
      if (res.statusCode !== 200) throw new Error(`GET ${query}: ${res.statusCode} ${JSON.stringify(body)}`);
      return body;
    };
    const post = async (body: unknown) => {
      const res = await undiciRequest(`${t.url}/api/workspaces/welcome/rows/query`, { method: 'POST', headers, body: JSON.stringify(body) });
      const answer = (await res.body.json()) as { rows: unknown[] };
      if (res.statusCode !== 200) throw new Error(`POST query: ${res.statusCode} ${JSON.stringify(answer)}`);
      return answer;
    };
    const measure = async (name: string, run: () => Promise<{ rows: unknown[] }>, n = 40) => {
      await run();
      let shown = 0;
      const times = await timeEach(n, async () => {
        shown = (await run()).rows.length;
      });
      figures[`${name}P50Ms`] = round(percentile(times, 50), 1);
      figures[`${name}P95Ms`] = round(percentile(times, 95), 1);
      figures[`${name}Rows`] = shown;
    };
    await measure('unfiltered', () => get('limit=100'));
    await measure('statusEq', () => get('filter[stage][eq]=Done&limit=100'));
    await measure('twoConditions', () => get('filter[stage][in]=Todo,Doing&filter[amount][between]=1000,2000&limit=100'));
    await measure('rareMatch', () => get('filter[title][contains]=urgent&filter[done][eq]=true&limit=100'));
    await measure('noMatch', () => get('filter[title][eq]=nothing%20like%20this&limit=100'));
    await measure('filteredSorted', () => get('filter[stage][eq]=Review&sort=-amount,title&limit=100'));
    const firstPage = await get('filter[stage][eq]=Review&sort=-amount,title&limit=100');
    await measure('filteredSortedNextPage', () => get(`filter[stage][eq]=Review&sort=-amount,title&limit=100&after=${firstPage.nextCursor}`));
    await measure('orGroupsPost', () =>
      post({
        filter: { or: [{ and: [{ column: 'stage', op: 'eq', value: 'Todo' }, { column: 'due', op: 'lt', value: '2026-03-01' }] }, { column: 'amount', op: 'gte', value: 9_990 }] },
        limit: 100,
      }),
    );

    // The model alone on the same document: what the HTTP figures spend outside the filter.
    const model = async (name: string, filter: Record<string, Record<string, string>>, sort: SortKey[] = []) => {
      const times = await t.services.sync.read(documentName, async (doc) => {
        const query = compileRowQuery(readColumns(doc, surface.id), { filter: filterFromQueryString(filter).filter, sort });
        return timeEach(40, async () => {
          listRows(doc, { surfaceId: surface.id, query, limit: 100 });
        });
      });
      figures[`model${name}P50Ms`] = round(percentile(times, 50), 2);
    };
    await model('StatusEq', { stage: { eq: 'Done' } });
    await model('NoMatch', { title: { eq: 'nothing like this' } });
    await model('RareMatch', { title: { contains: 'urgent' }, done: { eq: 'true' } });
    await model('FilteredSorted', { stage: { eq: 'Review' } }, [{ column: 'amount', direction: 'desc' }, { column: 'title', direction: 'asc' }]);
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}
