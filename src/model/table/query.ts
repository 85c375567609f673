/**
 * Row queries: filters, multi-column sorts and field picks, checked against
 * a sheet's columns and evaluated on the table document itself, the same
 * way on the server and in the web app (docs/TABLES.md).
 */
import type { ColumnDef, ColumnType, TableIssue } from './types.js';

export const FILTER_OPS = ['eq', 'neq', 'contains', 'starts', 'empty', 'lt', 'lte', 'gt', 'gte', 'between', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export type FilterValue = string | number | boolean | null | Array<string | number>;

export interface FilterCondition {
  column: string;
  op: FilterOp;
  value?: FilterValue;
}

/** One level of nesting: a top-level group holds conditions and groups of conditions. */
export type FilterGroupInner = { and: FilterCondition[] } | { or: FilterCondition[] };

export interface RowFilter {
  and?: Array<FilterCondition | FilterGroupInner>;
  or?: Array<FilterCondition | FilterGroupInner>;
}

export interface SortKey {
  column: string;
  direction: 'asc' | 'desc';
}

/** Which operators each column type takes (`empty` is valid for every type). */
export const OPS_BY_TYPE: Record<ColumnType, readonly FilterOp[]> = {
  text: ['eq', 'neq', 'contains', 'starts', 'in', 'empty'],
  longtext: ['eq', 'neq', 'contains', 'starts', 'empty'],
  url: ['eq', 'neq', 'contains', 'starts', 'empty'],
  number: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'empty'],
  date: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'between', 'empty'],
  status: ['eq', 'neq', 'in', 'empty'],
  select: ['eq', 'neq', 'in', 'contains', 'empty'],
  person: ['eq', 'neq', 'in', 'empty'],
  checkbox: ['eq', 'empty'],
  // Links and lookups (docs/TABLES-LINKS.md) filter on emptiness only for now.
  link: ['empty'],
  lookup: ['empty'],
};

export type { ColumnDef, TableIssue };
