/**
 * Formula and rollup columns at 50,000 rows (issue 36, point 5): a sheet of
 * 50,000 tasks, each linking one of 1,000 projects, read over HTTP on the
 * embedded database first as it is, then with three formula columns (one of
 * them reading TODAY(), so never kept past a read) and a rollup over the
 * project link added to the same table; and the projects rolling up their
 * 50 tasks each. Prints figures; asserts nothing but that values are current.
 *
 *   npm run bench -- formulas            (ROWS=50000, PROJECTS=1000 by default)
 */
import { performance } from 'node:perf_hooks';
import { request as undiciRequest } from 'undici';
import { tablesDocumentName } from '../src/model/document-names';
import { insertRows, updateRowCells } from '../src/model/table/document';
import { findPrincipals } from '../src/persistence/workspaces';
import { serverOrigin } from '../src/sync/origins';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { fillTable, quiet } from './seeded-table';
import { percentile, round, timeEach } from './tables';

type Figures = Record<string, number | string>;

/** The tasks' stored columns, and the computed ones added to them (bench/formulas-model.ts reads the same table in the model alone). */
export const TASK_COLUMNS = [
  { key: 'title', label: 'Title', type: 'text' },
  { key: 'amount', label: 'Amount', type: 'number' },
  { key: 'rate', label: 'Rate', type: 'number' },
  { key: 'due', label: 'Due', type: 'date' },
  { key: 'done', label: 'Done', type: 'checkbox' },
  { key: 'project', label: 'Project', type: 'link', targetSurface: 'projects' },
].map((column, position) => ({ ...column, position }));
export const COMPUTED_COLUMNS = [
  { key: 'total', label: 'Total', type: 'formula', formula: 'ROUND({amount} * {rate} / 100, 2)' },
  { key: 'band', label: 'Band', type: 'formula', formula: 'IF({amount} > 5000, "high", IF({amount} > 1000, "mid", "low")) & " " & UPPER(LEFT({title}, 4))' },
  { key: 'daysLeft', label: 'Days left', type: 'formula', formula: 'DATETIME_DIFF({due}, TODAY(), "days")' },
  { key: 'projectBudget', label: 'Project budget', type: 'rollup', link: 'project', field: 'budget', fn: 'sum' },
];
export const projectId = (i: number) => `p${i.toString(36).padStart(5, '0')}`;
export const taskId = (i: number) => `q${i.toString(36).padStart(7, '0')}`;
export const taskData = (i: number, projects: number) => ({
  title: `Task ${i}`,
  amount: (i * 7919) % 10_000,
  rate: 1 + (i % 7),
  due: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
  done: i % 5 === 0,
  project: [projectId(i % projects)],
});

export async function runFormulasBench(rows = Number(process.env.ROWS ?? 50_000), projects = Number(process.env.PROJECTS ?? 1_000)): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const { cookie } = await signIn(t, 'bench-formulas@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const headers = { cookie: `svc-session=${cookie}`, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await undiciRequest(`${t.url}/api/workspaces/welcome${path}`, { method: method as 'GET', headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const answer = (await res.body.json()) as any;
      if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
      return answer;
    };
    await call('POST', '/surfaces', { kind: 'table', slug: 'projects', name: 'Projects' });
    await call('PUT', '/columns?surface=projects', { columns: [{ key: 'name', label: 'Name', type: 'text', position: 0 }, { key: 'budget', label: 'Budget', type: 'number', position: 1 }] });
    await call('PUT', '/columns', { columns: TASK_COLUMNS });

    const workspace = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
    const sheets = await t.services.db.selectFrom('surfaces').select(['id', 'slug']).where('workspaceId', '=', workspace.id).where('kind', '=', 'table').execute();
    const tasksId = sheets.find((s) => s.slug !== 'projects')!.id;
    const projectsId = sheets.find((s) => s.slug === 'projects')!.id;
    const owner = await t.services.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    const principal = (await findPrincipals(t.services.db, [owner.id])).get(owner.id)!;
    const documentName = tablesDocumentName(workspace.id);
    const fillStart = performance.now();
    await t.services.sync.transact(documentName, serverOrigin(principal, 'system'), (doc) =>
      insertRows(doc, Array.from({ length: projects }, (_, i) => ({ id: projectId(i), surfaceId: projectsId, data: { name: `Project ${i}`, budget: 1_000 + i } })), null),
    );
    const projectsSeconds = (performance.now() - fillStart) / 1000;
    const fill = await fillTable(t, documentName, principal, rows, (i) => ({ id: taskId(i), surfaceId: tasksId, data: taskData(i, projects) }));
    const figures: Figures = { rows, projects, fillSeconds: round(projectsSeconds + fill.fillSeconds, 1), settleSeconds: fill.settleSeconds };
    await t.app.plannerStatistics.runOnce();

    const measure = async (name: string, run: () => Promise<unknown>, n = 30) => {
      await run();
      const times = await timeEach(n, async () => {
        await run();
      });
      figures[`${name}P50Ms`] = round(percentile(times, 50), 1);
      figures[`${name}P95Ms`] = round(percentile(times, 95), 1);
      return percentile(times, 50);
    };
    // A write to one project, and the read of a task that links it, without computed columns.
    let budget = 5_000;
    const writeProject = () => call('PATCH', `/rows/${projectId(7)}?surface=projects`, { data: { budget: ++budget } });
    const plainPage = await measure('pagePlain', () => call('GET', '/rows?limit=100&surface=table'));
    await measure('projectWritePlain', writeProject, 20);

    // The same table with three formula columns and a rollup over the link (and the projects rolling up their tasks).
    for (const column of COMPUTED_COLUMNS) await call('POST', '/columns', { column });
    await call('POST', '/columns?surface=projects', { column: { key: 'tasks', label: 'Tasks', type: 'link', targetSurface: 'table' } });
    await call('POST', '/columns?surface=projects', { column: { key: 'taskTotal', label: 'Task total', type: 'rollup', link: 'tasks', field: 'total', fn: 'sum' } });
    await t.services.sync.transact(documentName, serverOrigin(principal, 'system'), (doc) => {
      const byProject = new Map<number, string[]>();
      for (let i = 0; i < rows; i++) byProject.set(i % projects, [...(byProject.get(i % projects) ?? []), taskId(i)]);
      for (const [p, tasks] of byProject) updateRowCells(doc, projectId(p), { tasks: tasks.slice(0, 1_000) }, null);
    });
    await t.services.sync.drain();
    await quiet();

    const firstComputedPage = performance.now();
    await call('GET', '/rows?limit=100&surface=table');
    figures.pageComputedFirstMs = round(performance.now() - firstComputedPage, 1);
    const computedPage = await measure('pageComputed', () => call('GET', '/rows?limit=100&surface=table'));
    figures.pageRatio = round(computedPage / plainPage, 2);

    const coldFilter = performance.now();
    const filtered = await call('GET', '/rows?limit=100&surface=table&filter[total][gt]=40');
    figures.filterFormulaColdMs = round(performance.now() - coldFilter, 1);
    figures.filterFormulaRows = filtered.rows.length;
    await measure('filterFormula', () => call('GET', '/rows?limit=100&surface=table&filter[total][gt]=40'));
    await measure('filterTextFormula', () => call('GET', '/rows?limit=100&surface=table&filter[band][starts]=high'));
    await measure('filterTodayFormula', () => call('GET', '/rows?limit=100&surface=table&filter[daysLeft][lt]=0'));
    await measure('filterRollup', () => call('GET', '/rows?limit=100&surface=table&filter[projectBudget][gt]=1990'));
    await measure('sortFormula', () => call('GET', '/rows?limit=100&surface=table&sort=-total,title'));
    await measure('sortTodayFormula', () => call('GET', '/rows?limit=100&surface=table&sort=daysLeft'));
    await measure('filterSortFormula', () => call('GET', '/rows?limit=100&surface=table&filter[band][starts]=mid&sort=-total'));
    await measure('projectsPage', () => call('GET', '/rows?limit=100&surface=projects'));
    await measure('sortProjectsByRollup', () => call('GET', '/rows?limit=100&surface=projects&sort=-taskTotal'));

    // A change to one linked row: the write's acknowledgement, then the tasks that link it read the new budget.
    await measure('projectWriteComputed', writeProject, 20);
    const linked = await call('GET', `/rows?surface=table&filter[project][eq]=${projectId(7)}&limit=1000`);
    const ackStart = performance.now();
    await call('PATCH', `/rows/${projectId(7)}?surface=projects`, { data: { budget: 123_456 } });
    figures.linkedWriteAckMs = round(performance.now() - ackStart, 1);
    const readStart = performance.now();
    const after = await call('GET', `/rows?surface=table&filter[project][eq]=${projectId(7)}&limit=1000`);
    figures.linkedReadAfterAckMs = round(performance.now() - readStart, 1);
    figures.linkedRows = linked.rows.length;
    figures.rollupsCurrentAfterAck = String(after.rows.length === linked.rows.length && after.rows.every((row: any) => row.data.projectBudget === 123_456));
    // And the other way round: a task's change in its project's rollup over 50 tasks.
    const task = taskId(7);
    await call('PATCH', `/rows/${task}`, { data: { amount: 9_999, rate: 7 } });
    const project = await call('GET', `/rows/${projectId(7)}?surface=projects`);
    const tasksOfProject = await call('GET', `/rows?surface=table&filter[project][eq]=${projectId(7)}&limit=1000&fields=total`);
    figures.projectRollupCurrentAfterAck = String(round(tasksOfProject.rows.reduce((sum: number, row: any) => sum + row.data.total, 0), 2) === project.data.taskTotal);
    const filterAfterWrite = performance.now();
    await call('GET', '/rows?limit=100&surface=table&filter[total][gt]=40');
    figures.filterFormulaAfterOneWriteMs = round(performance.now() - filterAfterWrite, 1);
    // The first sorted page after a write: a kept listing no longer answers it.
    const afterWrite: number[] = [];
    const afterWriteToday: number[] = [];
    // The floor of a read right after a write: the unsorted page, which reads 100 rows.
    const pageAfterWrite: number[] = [];
    for (let i = 0; i < 10; i++) {
      await call('PATCH', `/rows/${taskId(300 + i)}`, { data: { amount: 900 + i } });
      const start = performance.now();
      await call('GET', '/rows?limit=100&surface=table');
      pageAfterWrite.push(performance.now() - start);
    }
    figures.pageAfterOneWriteP50Ms = round(percentile(pageAfterWrite, 50), 1);
    for (let i = 0; i < 10; i++) {
      await call('PATCH', `/rows/${taskId(100 + i)}`, { data: { amount: 500 + i } });
      let start = performance.now();
      await call('GET', '/rows?limit=100&surface=table&sort=-total,title');
      afterWrite.push(performance.now() - start);
      await call('PATCH', `/rows/${taskId(200 + i)}`, { data: { amount: 700 + i } });
      start = performance.now();
      await call('GET', '/rows?limit=100&surface=table&sort=daysLeft');
      afterWriteToday.push(performance.now() - start);
    }
    figures.sortFormulaAfterOneWriteP50Ms = round(percentile(afterWrite, 50), 1);
    figures.sortFormulaAfterOneWriteMaxMs = round(Math.max(...afterWrite), 1);
    figures.sortTodayFormulaAfterOneWriteP50Ms = round(percentile(afterWriteToday, 50), 1);
    figures.sortTodayFormulaAfterOneWriteMaxMs = round(Math.max(...afterWriteToday), 1);
    figures.heapUsedMb = round(process.memoryUsage().heapUsed / 2 ** 20, 0);
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}
