/**
 * TEMPORARY: stands in for `checkRowQuery` / `compileRowQuery` of
 * src/model/table/query.ts until they land on main; deleted after the merge.
 */
import type { ColumnDef, FilterCondition, FilterGroupInner, RowFilter, SortKey, TableIssue } from '../../../src/model/table/query';
import { OPS_BY_TYPE } from '../../../src/model/table/query';
import type { RowData } from '../../../src/model/table/document';

export function checkRowQuery(columns: ColumnDef[], query: { filter?: RowFilter | null; sort?: SortKey[] }): TableIssue[] {
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const issues: TableIssue[] = [];
  const check = (condition: FilterCondition, path: string[]) => {
    const column = byKey.get(condition.column);
    if (!column) return issues.push({ path, code: 'unknown_column', message: `Unknown column ${condition.column}.` });
    if (!OPS_BY_TYPE[column.type].includes(condition.op)) issues.push({ path, code: 'invalid_op', message: `${condition.op} is not valid for ${column.type}.` });
    if (condition.op !== 'empty' && (condition.value === undefined || condition.value === null || condition.value === '')) issues.push({ path, code: 'invalid_value', message: 'A value is needed.' });
    return 0;
  };
  for (const group of ['and', 'or'] as const) {
    (query.filter?.[group] ?? []).forEach((item, i) => {
      if ('column' in item) check(item, ['filter', group, String(i)]);
      else for (const [j, inner] of innerOf(item).entries()) check(inner, ['filter', group, String(i), String(j)]);
    });
  }
  return issues;
}

function innerOf(group: FilterGroupInner): FilterCondition[] {
  return 'and' in group ? group.and : group.or;
}

export function compileRowQuery(columns: ColumnDef[], query: { filter?: RowFilter | null; sort?: SortKey[] }) {
  const issues = checkRowQuery(columns, query);
  if (issues.length) throw new Error(issues[0]!.message);
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const test = (condition: FilterCondition, data: RowData): boolean => {
    const type = byKey.get(condition.column)!.type;
    const raw = data[condition.column];
    const isEmpty = raw === undefined || raw === null || raw === '' || (Array.isArray(raw) && raw.length === 0);
    if (condition.op === 'empty') return isEmpty === (condition.value === true || condition.value === 'true');
    const numeric = type === 'number';
    const norm = (value: unknown) => (numeric ? Number(value) : type === 'checkbox' ? String(value === true || value === 'true') : String(value ?? '').toLowerCase());
    const value = norm(type === 'checkbox' ? raw === true : raw);
    const target = condition.value;
    const list = Array.isArray(target) ? target : String(target).split(',');
    switch (condition.op) {
      case 'eq':
        return Array.isArray(raw) ? raw.map(norm).includes(norm(target)) : value === norm(target);
      case 'neq':
        return Array.isArray(raw) ? !raw.map(norm).includes(norm(target)) : value !== norm(target);
      case 'contains':
        return Array.isArray(raw) ? raw.map(norm).includes(norm(target)) : String(value).includes(String(norm(target)));
      case 'starts':
        return String(value).startsWith(String(norm(target)));
      case 'in':
        return list.map(norm).some((item) => (Array.isArray(raw) ? raw.map(norm).includes(item) : item === value));
      case 'lt':
        return !isEmpty && value < norm(target);
      case 'lte':
        return !isEmpty && value <= norm(target);
      case 'gt':
        return !isEmpty && value > norm(target);
      case 'gte':
        return !isEmpty && value >= norm(target);
      case 'between':
        return !isEmpty && value >= norm(list[0]) && value <= norm(list[1]);
    }
    return false;
  };
  const holds = (item: FilterCondition | FilterGroupInner, data: RowData) =>
    'column' in item ? test(item, data) : 'and' in item ? item.and.every((c) => test(c, data)) : item.or.some((c) => test(c, data));
  const sort = query.sort ?? [];
  return {
    matches(data: RowData): boolean {
      const and = query.filter?.and ?? [];
      const or = query.filter?.or ?? [];
      return and.every((item) => holds(item, data)) && (or.length === 0 || or.some((item) => holds(item, data)));
    },
    compare(a: RowData, b: RowData): number {
      for (const key of sort) {
        const x = a[key.column];
        const y = b[key.column];
        const ex = x === undefined || x === null || x === '';
        const ey = y === undefined || y === null || y === '';
        let order = ex && ey ? 0 : ex ? 1 : ey ? -1 : typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        if (key.direction === 'desc' && !(ex || ey)) order = -order;
        if (order) return order;
      }
      return 0;
    },
  };
}
