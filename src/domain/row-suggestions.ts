import type * as Y from 'yjs';
import { errors } from '../errors';
import type { Actor, Principal } from '../policy/actor';
import type { Workspace } from '../persistence/schema';
import type { Services } from './services';
import type { ResolvedWorkspace } from './resolved-workspace';
import { tablesDocumentName } from '../model/document-names';
import { callerOrigin, type ServerChangeContext } from '../sync/origins';
import { rowDataAt } from '../sync/version-index';
import { createTableId, deleteRow, ensureSheet, insertRow, readColumns, seedColumnsFor, updateRows, type RowData } from '../model/table/document';
import { rowMapOf } from '../model/table/layout';
import {
  addRowSuggestion,
  getRowSuggestion,
  rowSuggestionEntries,
  rowSuggestionSummary,
  setRowSuggestionStatus,
  type RowSuggestionEntry,
  type SuggestionPerson,
} from '../model/table/suggestions';
import type { Suggestion } from '../model/schemas/suggestions';
import {
  checkValues,
  linkChecks,
  lookUpPassedRows,
  namedTableSurface,
  passedRow,
  pickTableSurface,
  tableError,
  tableSurfaces,
  transactWithinRowCap,
  type SurfaceSelector,
} from './tables';
import { baseOfWrite, preconditionFailed, type WriteBase } from './version-tags';

/**
 * Suggested row changes (issue 25 item 2, docs/SUGGESTIONS.md "Tables"): a
 * new row, cell values or a delete, held as an entry in the table document's
 * `suggestions` root (src/model/table/suggestions.ts) beside the row instead
 * of applied. A suggestion is checked exactly as the plain write would be,
 * so an accepted one rarely fails for its own values; accepting applies it
 * as an ordinary row change by the decider (the usual `row.*` events, the
 * row cap) in the same transaction that records the decision. The records
 * the API lists, the `suggestion.*` events and inbox notices are the
 * projection's (src/domain/suggestions.ts), which reads these entries.
 */

type Via = ServerChangeContext['via'];

function personOf(principal: Principal): SuggestionPerson {
  return { principalType: principal.principalType, id: principal.id, name: principal.name };
}

async function writeEntry(services: Services, actor: Actor, workspace: Workspace, via: Via, make: (doc: Y.Doc) => Omit<RowSuggestionEntry, 'id' | 'author' | 'at' | 'status'>): Promise<Suggestion> {
  await lookUpPassedRows(services, workspace.id);
  const entry = await services.sync
    .transact(tablesDocumentName(workspace.id), callerOrigin(actor, via), (doc) => {
      const fields = make(doc);
      return addRowSuggestion(doc, { id: `sug_${createTableId(16)}`, ...fields, author: personOf(actor.principal), at: services.clock.now().toISOString(), status: 'open' }, null);
    })
    .catch(tableError);
  // The entry keeps a name only; the answer shows the suggester as every response does.
  return { ...(await services.sync.read(tablesDocumentName(workspace.id), (doc) => present(doc, entry))), author: actor.principal };
}

/** A new row, suggested: the sheet must exist (a suggestion makes no sheet), the values pass the column checks (422). */
export async function suggestRowCreate(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: SurfaceSelector,
  values: Record<string, unknown>,
  via: Via = 'rest',
): Promise<Suggestion> {
  const { workspace } = resolved;
  const surface = await pickTableSurface(services, workspace, selector);
  if (!surface) throw errors.notFound('Table surface');
  const surfaces = await tableSurfaces(services, workspace.id);
  return writeEntry(services, actor, workspace, via, (doc) => {
    const cells = checkValues(readColumns(doc, surface.id), values, ['data'], linkChecks(doc, surfaces));
    // The id the row will have once accepted, so the grid can show it where it will land and the events name it.
    return { kind: 'create', sheetId: surface.id, rowId: createTableId(), values: cells };
  });
}

/**
 * New values for some cells of a row, suggested. `base` (`If-Match` or
 * `baseVersion`) names the version the suggester read: its cells are kept
 * as the suggestion's base, so a cell someone changed since shows as a
 * conflict. Without one, the cells as they are now are the base.
 */
export async function suggestRowUpdate(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  rowId: string,
  values: Record<string, unknown>,
  base: WriteBase = {},
  selector: SurfaceSelector = {},
  via: Via = 'rest',
): Promise<Suggestion> {
  const { workspace } = resolved;
  if (Object.keys(values).length === 0) {
    throw errors.badRequest('A suggested update names at least one cell in `data`.', [{ path: ['data'], code: 'empty_suggestion', message: 'no cells' }]);
  }
  const named = await namedTableSurface(services, workspace, selector);
  const document = tablesDocumentName(workspace.id);
  const baseSeq = await baseOfWrite(services, document, base);
  const baseData = baseSeq === null ? null : await rowDataAt(services.db, document, rowId, baseSeq);
  if (baseSeq !== null && baseData === undefined) {
    throw preconditionFailed('base_unavailable', 'The base version is no longer kept (bases stay usable for an hour after the read); read the row again and suggest on it.');
  }
  const surfaces = await tableSurfaces(services, workspace.id);
  return writeEntry(services, actor, workspace, via, (doc) => {
    const current = passedRow(doc, rowId);
    if (!current || (named && current.surfaceId !== named.id)) throw errors.notFound('Row');
    const cells = checkValues(readColumns(doc, current.surfaceId), values, ['data'], linkChecks(doc, surfaces));
    // A row made after the base has no cells there: the suggester read it as it is now.
    const read = baseData ?? current.data;
    return { kind: 'update', sheetId: current.surfaceId, rowId, values: cells, base: pick(read, Object.keys(cells)) };
  });
}

/** Deleting a row, suggested; its cells as they are now are the base. */
export async function suggestRowDelete(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  rowId: string,
  selector: SurfaceSelector = {},
  via: Via = 'rest',
): Promise<Suggestion> {
  const { workspace } = resolved;
  const named = await namedTableSurface(services, workspace, selector);
  return writeEntry(services, actor, workspace, via, (doc) => {
    const current = passedRow(doc, rowId);
    if (!current || (named && current.surfaceId !== named.id)) throw errors.notFound('Row');
    return { kind: 'delete', sheetId: current.surfaceId, rowId, base: { ...current.data } };
  });
}

/**
 * Accepts or rejects an open row suggestion of the sheet `surfaceId`: 404
 * when there is none there, 409 when it was decided already. Accepting
 * applies the change as the decider's (row cap, column checks as at
 * suggestion time); if that fails the entry stays open: a new row past the
 * cap is 402, an update or delete of a row deleted since is 409.
 */
export async function decideRowSuggestion(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  surfaceId: string,
  suggestionId: string,
  decision: 'accept' | 'reject',
  via: Via = 'rest',
): Promise<Suggestion> {
  const { workspace } = resolved;
  const document = tablesDocumentName(workspace.id);
  const decider = personOf(actor.principal);
  const now = () => services.clock.now().toISOString();
  /** The entry, open: read again inside each transaction, so two deciders racing get one 409. */
  const openEntry = (doc: Y.Doc): RowSuggestionEntry => {
    const entry = getRowSuggestion(doc, suggestionId);
    if (!entry || entry.sheetId !== surfaceId) throw errors.notFound('Suggestion');
    if (entry.status !== 'open') throw errors.conflict(`The suggestion was already ${entry.status}.`);
    return entry;
  };
  const first = await services.sync.read(document, (doc) => getRowSuggestion(doc, suggestionId));
  if (!first || first.sheetId !== surfaceId) throw errors.notFound('Suggestion');
  if (first.status !== 'open') throw errors.conflict(`The suggestion was already ${first.status}.`);
  await lookUpPassedRows(services, workspace.id);

  let decided: RowSuggestionEntry | null;
  if (decision === 'reject') {
    decided = await services.sync.transact(document, callerOrigin(actor, via), (doc) => {
      openEntry(doc);
      return setRowSuggestionStatus(doc, suggestionId, 'rejected', decider, now(), null);
    });
  } else if (first.kind === 'create') {
    const surfaces = await tableSurfaces(services, workspace.id);
    if (!surfaces.some((surface) => surface.id === surfaceId)) throw errors.conflict('The sheet of this suggestion was deleted since.');
    decided = (
      await transactWithinRowCap(
        services,
        actor,
        resolved,
        () => 1,
        (doc) => {
          const entry = openEntry(doc);
          if (rowMapOf(doc, entry.rowId)) throw errors.conflict('A row with the suggested row id exists already.');
          const cells = checkValues(readColumns(doc, surfaceId), entry.values ?? {}, ['values'], linkChecks(doc, surfaces));
          ensureSheet(doc, surfaceId, null);
          seedColumnsFor(doc, surfaceId, Object.keys(cells), null);
          insertRow(doc, { id: entry.rowId, surfaceId, data: cells as RowData }, null);
          return setRowSuggestionStatus(doc, suggestionId, 'accepted', decider, now(), null);
        },
      )
    ).result;
  } else {
    const surfaces = await tableSurfaces(services, workspace.id);
    decided = await services.sync
      .transact(document, callerOrigin(actor, via), (doc) => {
        const entry = openEntry(doc);
        const current = passedRow(doc, entry.rowId);
        if (!current) throw errors.conflict('The row was deleted since the suggestion; reject it, or suggest again.');
        if (entry.kind === 'delete') {
          deleteRow(doc, entry.rowId, null);
          return setRowSuggestionStatus(doc, suggestionId, 'accepted', decider, now(), null, { ...current.data });
        }
        const cells = checkValues(readColumns(doc, current.surfaceId), entry.values ?? {}, ['values'], linkChecks(doc, surfaces));
        seedColumnsFor(doc, current.surfaceId, Object.keys(cells), null);
        updateRows(doc, [{ id: entry.rowId, data: cells as RowData }], null);
        return setRowSuggestionStatus(doc, suggestionId, 'accepted', decider, now(), null, pick(current.data, Object.keys(cells)));
      })
      .catch(tableError);
  }
  if (!decided) throw errors.notFound('Suggestion');
  return services.sync.read(document, (doc) => present(doc, decided!));
}

export type RowSuggestionChange = NonNullable<Suggestion['change']>;

/**
 * The `change` of each row suggestion of a workspace (of one sheet when
 * `surfaceId` is given), by suggestion id: the projection's records take it
 * (src/domain/suggestions.ts).
 */
export async function rowSuggestionViews(services: Services, workspace: Workspace, surfaceId?: string): Promise<Map<string, RowSuggestionChange>> {
  const listed = await listRowSuggestions(services, workspace, surfaceId);
  return new Map(listed.map((suggestion) => [suggestion.id, suggestion.change!]));
}

/** The row suggestions of a workspace (of one sheet when `surfaceId` is given), oldest first, as read from the document alone. */
export async function listRowSuggestions(services: Services, workspace: Workspace, surfaceId?: string): Promise<Suggestion[]> {
  await lookUpPassedRows(services, workspace.id);
  return services.sync.read(tablesDocumentName(workspace.id), (doc) =>
    rowSuggestionEntries(doc)
      .filter((entry) => surfaceId === undefined || entry.sheetId === surfaceId)
      .map((entry) => present(doc, entry)),
  );
}

// ---------------------------------------------------------------------------
// Presenting an entry

function principalOf(person: SuggestionPerson): Principal {
  return { ...person, avatarUrl: null };
}

/**
 * An entry as a `Suggestion`: `previous` the cells now (or just before an
 * accepted change), `conflicts` the cells of an open suggestion someone
 * changed since the suggester's base.
 */
function present(doc: Y.Doc, entry: RowSuggestionEntry): Suggestion {
  const row = passedRow(doc, entry.rowId);
  const now: Record<string, unknown> | null = row ? row.data : null;
  const keys = entry.kind === 'delete' ? Object.keys({ ...entry.base, ...now }) : Object.keys(entry.values ?? {});
  const previous = entry.previous ?? (entry.kind !== 'create' && now ? pick(now, keys) : undefined);
  const conflicts =
    entry.status === 'open' && entry.kind !== 'create' && now && entry.base
      ? keys
          .filter((column) => !sameValue(entry.base![column], now[column]))
          .map((column) => ({ column, base: entry.base![column] ?? null, current: now[column] ?? null, suggested: entry.values?.[column] ?? null }))
      : [];
  return {
    id: entry.id,
    surfaceId: entry.sheetId,
    target: 'row',
    rowId: entry.rowId,
    status: entry.status,
    author: principalOf(entry.author),
    createdAt: entry.at,
    ...(entry.decidedBy ? { decidedBy: principalOf(entry.decidedBy) } : {}),
    ...(entry.decidedAt ? { decidedAt: entry.decidedAt } : {}),
    summary: rowSuggestionSummary(entry),
    change: {
      kind: entry.kind,
      ...(entry.values ? { values: entry.values } : {}),
      ...(previous ? { previous } : {}),
      ...(conflicts.length ? { conflicts } : {}),
    },
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function pick(data: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(data, key)) picked[key] = data[key];
  return picked;
}
