/**
 * Saved views of a sheet, kept in the table document so that they sync live
 * and work offline like the rows they show (docs/TABLES.md):
 *
 *   views: Y.Map<viewId, Y.Map{ surfaceId, name, kind, filter, sort,
 *                                hiddenColumns, columnOrder, groupBy, rowHeight, position }>
 *
 * Each field is a plain JSON value set as a whole, so two people changing
 * different fields of one view both keep their change, and two changing the
 * same field end with one of them (last writer wins, the same on every
 * peer). Reads are forgiving of what a peer may leave: a view whose sheet is
 * gone is not listed, fields of the wrong shape read as their defaults, and
 * column keys the sheet no longer has are dropped.
 */
import * as Y from 'yjs';
import { readColumns } from './columns.js';
import { createTableId } from './ids.js';
import { compareCodeUnits, copyJson, sameJson, sheetMapOf } from './layout.js';
import type { RowFilter, SortKey } from './query.js';
import { TableDocumentError } from './types.js';

export const VIEWS_ROOT = 'views';

export type ViewKind = 'grid' | 'board';
export type RowHeight = 'short' | 'medium' | 'tall' | 'extra';

export interface ViewFields {
  name: string;
  kind: ViewKind;
  filter: RowFilter | null;
  sort: SortKey[];
  hiddenColumns: string[];
  columnOrder: string[];
  groupBy: string | null;
  rowHeight: RowHeight;
  position: number;
}

export interface ViewDef extends ViewFields {
  id: string;
  surfaceId: string;
}

export type ViewPatch = Partial<ViewFields>;

type ViewMap = Y.Map<unknown>;

export function viewsRoot(doc: Y.Doc): Y.Map<ViewMap> {
  return doc.getMap<ViewMap>(VIEWS_ROOT);
}

const KINDS: readonly ViewKind[] = ['grid', 'board'];
const HEIGHTS: readonly RowHeight[] = ['short', 'medium', 'tall', 'extra'];

/** The sheet's views in display order (position, then id); every sheet's when `surfaceId` is omitted. */
export function listViews(doc: Y.Doc, surfaceId?: string): ViewDef[] {
  const views: ViewDef[] = [];
  for (const [id, map] of viewsRoot(doc).entries()) {
    const view = readView(doc, id, map);
    if (view && (surfaceId === undefined || view.surfaceId === surfaceId)) views.push(view);
  }
  return views.sort((a, b) => a.position - b.position || compareCodeUnits(a.id, b.id));
}

export function getView(doc: Y.Doc, id: string): ViewDef | null {
  const map: unknown = viewsRoot(doc).get(id);
  return map instanceof Y.Map ? readView(doc, id, map as ViewMap) : null;
}

export function createView(doc: Y.Doc, surfaceId: string, fields: Partial<ViewFields> & { name: string }, origin: unknown, id = createTableId()): ViewDef {
  if (!sheetMapOf(doc, surfaceId)) {
    throw new TableDocumentError('sheet_not_found', `No sheet for surface ${surfaceId} in this table document.`, [
      { path: ['surface'], code: 'sheet_not_found', message: `Unknown surface ${surfaceId}.` },
    ]);
  }
  const siblings = listViews(doc, surfaceId);
  const position = fields.position ?? (siblings.length ? Math.max(...siblings.map((v) => v.position)) + 1 : 0);
  doc.transact(() => {
    const map: ViewMap = new Y.Map();
    viewsRoot(doc).set(id, map);
    map.set('surfaceId', surfaceId);
    writeFields(map, { kind: 'grid', filter: null, sort: [], hiddenColumns: [], columnOrder: [], groupBy: null, rowHeight: 'short', ...fields, position });
  }, origin);
  return getView(doc, id)!;
}

/** Sets the fields given (the others are kept); returns the view as it now reads, or null when there is no such view. */
export function updateView(doc: Y.Doc, id: string, patch: ViewPatch, origin: unknown): ViewDef | null {
  const map: unknown = viewsRoot(doc).get(id);
  if (!(map instanceof Y.Map)) return null;
  doc.transact(() => writeFields(map as ViewMap, patch), origin);
  return getView(doc, id);
}

export function deleteView(doc: Y.Doc, id: string, origin: unknown): boolean {
  if (!viewsRoot(doc).has(id)) return false;
  doc.transact(() => viewsRoot(doc).delete(id), origin);
  return true;
}

function writeFields(map: ViewMap, fields: ViewPatch): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    // Yjs keeps a set value by reference: a copy, so the caller's object never edits the document.
    if (!sameJson(map.get(key), value)) map.set(key, copyJson(value));
  }
}

function readView(doc: Y.Doc, id: string, map: ViewMap): ViewDef | null {
  const surfaceId = map.get('surfaceId');
  if (typeof surfaceId !== 'string' || !sheetMapOf(doc, surfaceId)) return null;
  const keys = new Set(readColumns(doc, surfaceId).map((column) => column.key));
  const name = map.get('name');
  const kind = map.get('kind');
  const rowHeight = map.get('rowHeight');
  const position = map.get('position');
  const groupBy = map.get('groupBy');
  const filter = map.get('filter');
  return {
    id,
    surfaceId,
    name: typeof name === 'string' && name !== '' ? name : 'Untitled view',
    kind: KINDS.includes(kind as ViewKind) ? (kind as ViewKind) : 'grid',
    filter: filter !== null && typeof filter === 'object' && !Array.isArray(filter) ? (copyJson(filter) as RowFilter) : null,
    sort: sortKeys(map.get('sort')).filter((key) => keys.has(key.column)),
    hiddenColumns: stringArray(map.get('hiddenColumns')).filter((key) => keys.has(key)),
    columnOrder: stringArray(map.get('columnOrder')).filter((key) => keys.has(key)),
    groupBy: typeof groupBy === 'string' && keys.has(groupBy) ? groupBy : null,
    rowHeight: HEIGHTS.includes(rowHeight as RowHeight) ? (rowHeight as RowHeight) : 'short',
    position: typeof position === 'number' && Number.isFinite(position) ? position : 0,
  };
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? [...new Set(value.filter((item): item is string => typeof item === 'string'))] : [];
}

function sortKeys(value: unknown): SortKey[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((item): item is { column: string; direction?: unknown } => item !== null && typeof item === 'object' && typeof item.column === 'string')
    .map((item) => ({ column: item.column, direction: item.direction === 'desc' ? 'desc' : 'asc' }));
}
