/**
 * Saved views of a sheet, kept in the table document so that they sync live
 * and work offline like the rows they show (docs/TABLES.md):
 *
 *   views: Y.Map<viewId, Y.Map{ surfaceId, name, kind, filter, sort,
 *                                hiddenColumns, columnOrder, groupBy, rowHeight, position,
 *                                dateColumn?, endDateColumn?,   (calendar, timeline)
 *                                coverColumn?, cardFields?,     (gallery)
 *                                form? }>                        (form)
 *
 * Each field is a plain JSON value set as a whole, so two people changing
 * different fields of one view both keep their change, and two changing the
 * same field end with one of them (last writer wins, the same on every
 * peer). Reads are forgiving of what a peer may leave: a view whose sheet is
 * gone is not listed, fields of the wrong shape read as their defaults, and
 * column keys the sheet no longer has are dropped. The fields of a kind are
 * read only on views of that kind, and kept when a view changes kind, so
 * turning it back finds them again.
 */
import * as Y from 'yjs';
import { readColumns } from './columns.js';
import { createTableId } from './ids.js';
import { compareCodeUnits, copyJson, sameJson, sheetMapOf } from './layout.js';
import type { RowFilter, SortKey } from './query.js';
import { TableDocumentError } from './types.js';

export const VIEWS_ROOT = 'views';

export const VIEW_KINDS = ['grid', 'board', 'calendar', 'timeline', 'gallery', 'form'] as const;
export type ViewKind = (typeof VIEW_KINDS)[number];
export type RowHeight = 'short' | 'medium' | 'tall' | 'extra';

/** Column types a form may ask: what a person outside the workspace can answer (not a member, a row id, a computed value). */
export const FORM_COLUMN_TYPES: ReadonlySet<string> = new Set(['text', 'longtext', 'number', 'status', 'select', 'date', 'url', 'checkbox', 'attachment']);

/** A question of a form view: the column it fills, how it is asked, and whether an answer is required. */
export interface FormField {
  column: string;
  label?: string;
  help?: string;
  required: boolean;
}

/** What a form view asks and says (docs/TABLES.md "Forms"); `open` publishes it at its public link. */
export interface FormSettings {
  title: string;
  description: string;
  fields: FormField[];
  submitLabel?: string;
  successMessage?: string;
  open: boolean;
}

export interface ViewFields {
  name: string;
  kind: ViewKind;
  filter: RowFilter | null;
  sort: SortKey[];
  hiddenColumns: string[];
  columnOrder: string[];
  /** A board's lanes (a status column), a timeline's lanes (a status or person column), or null. */
  groupBy: string | null;
  rowHeight: RowHeight;
  position: number;
  /** Calendar and timeline: the date column a row is placed by (its start). */
  dateColumn?: string | null;
  /** Calendar and timeline: the date column a row ends on; null for rows of one date. */
  endDateColumn?: string | null;
  /** Gallery: the attachment or url column a card's cover image comes from, or null for none. */
  coverColumn?: string | null;
  /** Gallery: the columns shown under a card's cover, in order. */
  cardFields?: string[];
  /** Form: its questions and texts. */
  form?: FormSettings;
}

/** The fields only views of some kinds have, and which kinds read them. */
export const KIND_FIELDS = {
  dateColumn: ['calendar', 'timeline'],
  endDateColumn: ['calendar', 'timeline'],
  coverColumn: ['gallery'],
  cardFields: ['gallery'],
  form: ['form'],
} as const satisfies Record<string, readonly ViewKind[]>;

export interface ViewDef extends ViewFields {
  id: string;
  surfaceId: string;
}

export type ViewPatch = Partial<ViewFields>;

type ViewMap = Y.Map<unknown>;

export function viewsRoot(doc: Y.Doc): Y.Map<ViewMap> {
  return doc.getMap<ViewMap>(VIEWS_ROOT);
}

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

/**
 * The view as it would read with `patch` written over what is stored (for a
 * new view, `id` null, over nothing), without writing it: so a write can be
 * checked whole, as it would leave the view, before anything changes.
 */
export function previewView(doc: Y.Doc, surfaceId: string, id: string | null, patch: ViewPatch): ViewDef | null {
  const map: unknown = id === null ? undefined : viewsRoot(doc).get(id);
  const stored = map instanceof Y.Map ? (map as ViewMap) : null;
  return readView(doc, id ?? '', {
    get: (key) => (key === 'surfaceId' ? (stored?.get('surfaceId') ?? surfaceId) : Object.hasOwn(patch, key) && (patch as Record<string, unknown>)[key] !== undefined ? (patch as Record<string, unknown>)[key] : stored?.get(key)),
  });
}

/** A view as read from its map, or from anything that answers its fields (a preview of a write). */
function readView(doc: Y.Doc, id: string, map: { get(key: string): unknown }): ViewDef | null {
  const surfaceId = map.get('surfaceId');
  if (typeof surfaceId !== 'string' || !sheetMapOf(doc, surfaceId)) return null;
  const keys = new Set(readColumns(doc, surfaceId).map((column) => column.key));
  const name = map.get('name');
  const kind = map.get('kind');
  const rowHeight = map.get('rowHeight');
  const position = map.get('position');
  const groupBy = map.get('groupBy');
  const filter = map.get('filter');
  const shownKind = VIEW_KINDS.includes(kind as ViewKind) ? (kind as ViewKind) : 'grid';
  const shownName = typeof name === 'string' && name !== '' ? name : 'Untitled view';
  const column = (value: unknown) => (typeof value === 'string' && keys.has(value) ? value : null);
  const extras: Partial<ViewFields> = {};
  if (shownKind === 'calendar' || shownKind === 'timeline') {
    extras.dateColumn = column(map.get('dateColumn'));
    extras.endDateColumn = column(map.get('endDateColumn'));
  } else if (shownKind === 'gallery') {
    extras.coverColumn = column(map.get('coverColumn'));
    extras.cardFields = stringArray(map.get('cardFields')).filter((key) => keys.has(key));
  } else if (shownKind === 'form') {
    extras.form = readForm(map.get('form'), shownName, keys);
  }
  return {
    id,
    surfaceId,
    name: shownName,
    kind: shownKind,
    filter: filter !== null && typeof filter === 'object' && !Array.isArray(filter) ? (copyJson(filter) as RowFilter) : null,
    sort: sortKeys(map.get('sort')).filter((key) => keys.has(key.column)),
    hiddenColumns: stringArray(map.get('hiddenColumns')).filter((key) => keys.has(key)),
    columnOrder: stringArray(map.get('columnOrder')).filter((key) => keys.has(key)),
    groupBy: typeof groupBy === 'string' && keys.has(groupBy) ? groupBy : null,
    rowHeight: HEIGHTS.includes(rowHeight as RowHeight) ? (rowHeight as RowHeight) : 'short',
    position: typeof position === 'number' && Number.isFinite(position) ? position : 0,
    ...extras,
  };
}

/** A form as a peer may have left it: questions on columns the sheet no longer has are dropped, a column asked twice is asked once. */
function readForm(value: unknown, viewName: string, keys: ReadonlySet<string>): FormSettings {
  const source = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const text = (field: unknown) => (typeof field === 'string' ? field : undefined);
  const asked = new Set<string>();
  const fields: FormField[] = [];
  for (const item of Array.isArray(source.fields) ? source.fields : []) {
    if (item === null || typeof item !== 'object') continue;
    const { column, label, help, required } = item as Record<string, unknown>;
    if (typeof column !== 'string' || !keys.has(column) || asked.has(column)) continue;
    asked.add(column);
    fields.push({ column, ...(text(label) ? { label: text(label) } : {}), ...(text(help) ? { help: text(help) } : {}), required: required === true });
  }
  const submitLabel = text(source.submitLabel);
  const successMessage = text(source.successMessage);
  return {
    title: text(source.title) || viewName,
    description: text(source.description) ?? '',
    fields,
    ...(submitLabel ? { submitLabel } : {}),
    ...(successMessage ? { successMessage } : {}),
    open: source.open === true,
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
