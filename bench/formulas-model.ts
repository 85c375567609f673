/**
 * The formula bench's table in the model alone (no HTTP, no database): for
 * profiling the computed page and the formula filter and sort paths.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/formulas-model.ts
 */
import { performance } from 'node:perf_hooks';
import * as Y from 'yjs';
import { readColumns, replaceColumns } from '../src/model/table/columns';
import { insertRows, listRows, openReading, rowsAsRead, updateRowCells } from '../src/model/table/document';
import { compileRowQuery, filterFromQueryString, sortFromQueryString } from '../src/model/table/query';
import { COMPUTED_COLUMNS, projectId, TASK_COLUMNS, taskData, taskId } from './formulas';

const ROWS = Number(process.env.ROWS ?? 50_000);
const PROJECTS = 1_000;
const doc = new Y.Doc();
replaceColumns(doc, 'projects', [{ key: 'name', label: 'Name', type: 'text' }, { key: 'budget', label: 'Budget', type: 'number' }].map((c, position) => ({ ...c, position })) as any, null);
replaceColumns(doc, 'tasks', TASK_COLUMNS as any, null);
insertRows(doc, Array.from({ length: PROJECTS }, (_, i) => ({ id: projectId(i), surfaceId: 'projects', data: { name: `Project ${i}`, budget: 1_000 + i } })), null);
for (let from = 0; from < ROWS; from += 1_000) {
  insertRows(doc, Array.from({ length: Math.min(1_000, ROWS - from) }, (_, j) => ({ id: taskId(from + j), surfaceId: 'tasks', data: taskData(from + j, PROJECTS) })), null);
}

function time(name: string, n: number, run: () => unknown) {
  run();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(28)} p50 ${times[Math.floor(n / 2)]!.toFixed(2)} ms  min ${times[0]!.toFixed(2)} ms`);
}

function page(query: string) {
  const params = new URLSearchParams(query);
  const columns = readColumns(doc, 'tasks');
  const conditions: Record<string, Record<string, string>> = {};
  for (const [k, v] of params) {
    const m = /^filter\[(\w+)\]\[(\w+)\]$/.exec(k);
    if (m) (conditions[m[1]!] ??= {})[m[2]!] = v;
  }
  const filter = Object.keys(conditions).length ? filterFromQueryString(conditions).filter : null;
  const sort = params.get('sort') ? sortFromQueryString(params.get('sort')!) : [];
  const compiled = compileRowQuery(columns, { filter, sort });
  const reading = openReading(doc, { hidden: new Set() });
  const listed = listRows(doc, { surfaceId: 'tasks', query: compiled, limit: 100, reading });
  return rowsAsRead(doc, listed.rows, reading);
}

time('page plain', 50, () => page(''));
replaceColumns(doc, 'tasks', [...TASK_COLUMNS, ...COMPUTED_COLUMNS.map((c, i) => ({ ...c, position: TASK_COLUMNS.length + i }))] as any, null);
const first = performance.now();
page('');
console.log(`first computed page          ${(performance.now() - first).toFixed(2)} ms`);
time('page computed', 50, () => page(''));
const only = (process.env.ONLY ?? '').split(',').filter(Boolean);
const cases: Array<[string, string]> = [
  ['filter number formula', 'filter[total][gt]=40'],
  ['filter text formula', 'filter[band][starts]=high'],
  ['filter TODAY formula', 'filter[daysLeft][lt]=0'],
  ['filter rollup', 'filter[projectBudget][gt]=1990'],
  ['sort number formula', 'sort=-total,title'],
  ['sort TODAY formula', 'sort=daysLeft'],
  ['filter+sort formulas', 'filter[band][starts]=mid&sort=-total'],
];
for (const [name, query] of cases) if (only.length === 0 || only.some((o) => name.includes(o))) time(name, Number(process.env.N ?? 20), () => page(query));
// After a write: a kept listing reads again only the rows the write reached (here the task itself).
let amount = 9_000;
let task = 100;
time('filter after one write', 20, () => {
  updateRowCells(doc, taskId(7), { amount: ++amount }, null);
  page('filter[total][gt]=40');
});
time('sort after one write', 20, () => {
  updateRowCells(doc, taskId(++task), { amount: ++amount }, null);
  page('sort=-total,title');
});
time('sort TODAY after one write', 20, () => {
  updateRowCells(doc, taskId(++task), { amount: ++amount }, null);
  page('sort=daysLeft');
});
// A listing never asked for before, after a write: every row's kept value read once.
let fresh = 0;
time('new sort after one write', 10, () => {
  updateRowCells(doc, taskId(++task), { amount: ++amount }, null);
  page(`filter[amount][gt]=${fresh++}&sort=-total`);
});
time('new TODAY sort after a write', 10, () => {
  updateRowCells(doc, taskId(++task), { amount: ++amount }, null);
  page(`filter[amount][gt]=${fresh++}&sort=daysLeft`);
});
