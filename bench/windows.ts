/**
 * Calendar and timeline windows at 50,000 rows (issue 37): `GET /rows?view=&from=&to=`
 * over HTTP on the embedded database, for a month of a calendar (one date
 * column) and of a timeline (start and end columns), with the date index's
 * own query beside it. The rows' dates spread over two years, so a month
 * holds about 2,000 of them. The rows go in through the engine as REST
 * writes do (log, events, projections), 1,000 a transaction. Prints
 * figures; asserts nothing.
 *
 *   npm run bench -- windows            (ROWS=50000 by default)
 */
import { performance } from 'node:perf_hooks';
import { request as undiciRequest } from 'undici';
import { tablesDocumentName } from '../src/model/document-names';
import { findRowsInWindow } from '../src/persistence/row-indexes';
import { findPrincipals } from '../src/persistence/workspaces';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { fillTable } from './seeded-table';
import { percentile, round, timeEach } from './tables';

type Figures = Record<string, number | string>;

const DAY = 86_400_000;
const FIRST_DAY = Date.parse('2025-01-01T00:00:00Z');
const SPREAD_DAYS = 730;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function runWindowsBench(rows = Number(process.env.ROWS ?? 50_000)): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const { cookie } = await signIn(t, 'bench-windows@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const as = { as: { cookie } };
    const columns = [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'start', label: 'Start', type: 'date' },
      { key: 'end', label: 'End', type: 'date' },
      { key: 'owner', label: 'Owner', type: 'text' },
    ].map((column, position) => ({ ...column, position }));
    const put = await t.request('PUT', '/api/workspaces/welcome/columns', { ...as, body: { columns } });
    if (put.status !== 200) throw new Error(`columns: ${put.text}`);
    const workspace = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
    const surface = await t.services.db.selectFrom('surfaces').select('id').where('workspaceId', '=', workspace.id).where('kind', '=', 'table').executeTakeFirstOrThrow();
    const owner = await t.services.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    const principal = (await findPrincipals(t.services.db, [owner.id])).get(owner.id)!;
    const documentName = tablesDocumentName(workspace.id);
    const fill = await fillTable(t, documentName, principal, rows, (i) => {
      const start = FIRST_DAY + ((i * 7919) % SPREAD_DAYS) * DAY;
      // Most tasks take days, one in fifty months.
      const length = i % 50 === 0 ? 30 + (i % 90) : i % 15;
      return {
        id: `w${i.toString(36).padStart(7, '0')}`,
        surfaceId: surface.id,
        data: { title: `Task ${i}`, start: day(start), end: day(start + length * DAY), owner: i % 7 === 0 ? 'ann' : 'bob' },
      };
    });
    const figures: Figures = { rows, ...fill };
    figures.tablesAnalyzed = (await t.app.plannerStatistics.runOnce()).length;

    const view = async (body: Record<string, unknown>) => {
      const res = await t.request('POST', '/api/workspaces/welcome/views', { ...as, body });
      if (res.status !== 200) throw new Error(`view: ${res.text}`);
      return res.body.view.id as string;
    };
    const calendar = await view({ name: 'Calendar', kind: 'calendar', dateColumn: 'start' });
    const timeline = await view({ name: 'Timeline', kind: 'timeline', dateColumn: 'start', endDateColumn: 'end' });
    const filtered = await view({ name: 'Ann', kind: 'calendar', dateColumn: 'start', endDateColumn: 'end', filter: { and: [{ column: 'owner', op: 'eq', value: 'ann' }] } });

    const headers = { cookie: `svc-session=${cookie}` };
    const get = async (query: string) => {
      const res = await undiciRequest(`${t.url}/api/workspaces/welcome/rows?${query}`, { headers });
      const body = (await res.body.json()) as { rows: unknown[]; nextCursor: string | null };
      if (res.statusCode !== 200) throw new Error(`GET ${query}: ${res.statusCode} ${JSON.stringify(body)}`);
      return body;
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
    const month = 'from=2026-03-01&to=2026-03-31';
    await measure('calendarMonth', () => get(`view=${calendar}&${month}&limit=1000`));
    await measure('calendarMonthFirst100', () => get(`view=${calendar}&${month}&limit=100`));
    await measure('timelineMonth', () => get(`view=${timeline}&${month}&limit=1000`));
    await measure('filteredCalendarMonth', () => get(`view=${filtered}&${month}&limit=1000`));
    await measure('calendarWeek', () => get(`view=${calendar}&from=2026-03-02&to=2026-03-08&limit=1000`));

    // The index alone: the candidates of a month, as the listing asks for them.
    const monthBounds = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-04-01T00:00:00Z') };
    for (const [name, reach] of [
      ['indexCalendarMonth', false],
      ['indexTimelineMonth', true],
    ] as const) {
      let found = 0;
      const times = await timeEach(40, async () => {
        found = (await findRowsInWindow(t.services.db, workspace.id, { startKey: 'start', ...monthBounds, reach })).length;
      });
      figures[`${name}P50Ms`] = round(percentile(times, 50), 1);
      figures[`${name}Candidates`] = found;
    }
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}
