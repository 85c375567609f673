import { ApiError, errors } from '../errors';
import type { CommentRow } from '../persistence/comments';
import type { CommentTargetType, Surface, SurfaceKind, Workspace } from '../persistence/schema';
import { findSurface, listSurfaces } from '../persistence/workspaces';
import { fileCommentTarget } from './files';
import type { Services } from './services';
import { anchorDocRange, anchorTextDrifted, DocAnchorError, resolveDocAnchors, type StoredDocAnchor } from '../sync/doc-anchors';
import { surfaceDocumentName, tablesDocumentName } from '../model/document-names';
import { getRow, listSheetIds, readColumns, type ColumnDef } from '../model/table/document';
import { hasPassed } from '../sync/table-passed';
import { lookUpPassedRows } from './tables';

/**
 * What a comment is about (SPEC "Comments", target union): validating a
 * target when a thread starts, checking that a reply names its thread's
 * target, and presenting targets as they read now (a cell under its
 * column's current key, a doc range at its current positions, with drift).
 */

export type CommentTargetInput =
  | { type: 'row'; rowId: string }
  | { type: 'cell'; rowId: string; columnKey: string }
  | { type: 'doc_range'; surfaceSlug: string; anchor: { from: number; to: number; text: string } }
  | { type: 'html_element'; surfaceSlug: string; anchor: { selector: string; text?: string } }
  | { type: 'surface'; surfaceSlug: string }
  | { type: 'workspace' }
  | { type: 'file'; fileId: string };

/** The `comments` columns that locate a target. */
export type StoredTarget = {
  targetType: CommentTargetType;
  targetId: string;
  surfaceId: string | null;
  columnId: string | null;
  columnKey: string | null;
  anchor: Record<string, unknown> | null;
};

/** A doc-range anchor as stored: the Yjs positions, the text snapshot, and the positions it was made at. */
type StoredDocRange = StoredDocAnchor & { text: string; createdFrom: number; createdTo: number };

type HtmlAnchor = { selector: string; text?: string };

/** A target as records show it: a cell under its column's current key, a doc range where it is now. */
export type PresentedTarget =
  | { type: 'row'; rowId: string }
  | { type: 'cell'; rowId: string; columnKey: string; columnId: string | null }
  | { type: 'doc_range'; surfaceSlug: string; anchor: { from: number; to: number; text: string } }
  | { type: 'html_element'; surfaceSlug: string | null; anchor: HtmlAnchor }
  | { type: 'surface'; surfaceSlug: string | null }
  | { type: 'workspace' }
  | { type: 'file'; fileId: string };

/** The surface a comment sits on, as records name it. */
export type SurfaceRef = { id: string; slug: string; name: string };

/** How a comment's target reads now. `currentText`/`expectedText` appear only once a doc range has drifted. */
export type TargetView = {
  target: PresentedTarget;
  surface: SurfaceRef | null;
  anchor?: { from: number; to: number; text: string };
  currentText?: string;
  expectedText?: string;
};

/** A new thread's validated target, and how it reads at this moment. */
export type ResolvedTarget = { stored: StoredTarget; view: TargetView };

/**
 * The file a `file` target names: a live (not archived) file of this
 * workspace, 404 otherwise. Its files surface places the thread, so comments
 * on it list under `surface=` and carry `surfaceSlug`.
 */
async function resolveFileTarget(services: Services, workspace: Workspace, fileId: string): Promise<{ surface: Surface }> {
  try {
    return await fileCommentTarget(services, workspace.id, fileId);
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 404) throw targetError(404, `File "${fileId}" not found.`, ['target', 'fileId'], 'file_not_found');
    throw error;
  }
}

function targetError(status: 404 | 422, message: string, path: string[], code: string): ApiError {
  return status === 404
    ? new ApiError(404, 'not_found', message, [{ path, code, message }])
    : errors.validation(message, [{ path, code, message }]);
}

async function surfaceOf(services: Services, workspace: Workspace, slugOrId: string, kind?: SurfaceKind): Promise<Surface> {
  const surface = await findSurface(services.db, workspace.id, slugOrId);
  if (!surface) throw targetError(404, `Surface "${slugOrId}" not found.`, ['target', 'surfaceSlug'], 'surface_not_found');
  if (kind && surface.kind !== kind) {
    throw targetError(422, `Surface "${surface.slug}" is a ${surface.kind} surface; this target needs a ${kind} surface.`, ['target', 'surfaceSlug'], 'wrong_surface_kind');
  }
  return surface;
}

const asView = (surface: Surface | null): SurfaceRef | null => (surface ? { id: surface.id, slug: surface.slug, name: surface.name } : null);

/** Validates the target of a new thread: 404 for what does not exist, 422 for what cannot be anchored. */
export async function resolveTargetForWrite(services: Services, workspace: Workspace, input: CommentTargetInput): Promise<ResolvedTarget> {
  const none = { surfaceId: null, columnId: null, columnKey: null, anchor: null };
  switch (input.type) {
    case 'row':
    case 'cell': {
      // A row the row cap has not let through (yet) is not there for REST or MCP.
      await lookUpPassedRows(services, workspace.id);
      const found = await services.sync.read(tablesDocumentName(workspace.id), (doc) => {
        const row = hasPassed(doc, input.rowId) ? getRow(doc, input.rowId) : null;
        return row ? { surfaceId: row.surfaceId, columns: readColumns(doc, row.surfaceId) } : null;
      });
      if (!found) throw targetError(404, `Row "${input.rowId}" not found.`, ['target', 'rowId'], 'row_not_found');
      const surface = asView((await listSurfaces(services.db, workspace.id)).find((s) => s.id === found.surfaceId) ?? null);
      if (input.type === 'row') {
        return { stored: { ...none, targetType: 'row', targetId: input.rowId }, view: { target: { type: 'row', rowId: input.rowId }, surface } };
      }
      const column = found.columns.find((c) => c.key === input.columnKey);
      if (!column) throw targetError(404, `Column "${input.columnKey}" not found on this row's sheet.`, ['target', 'columnKey'], 'column_not_found');
      return {
        stored: { ...none, targetType: 'cell', targetId: input.rowId, columnId: column.id, columnKey: column.key },
        view: { target: { type: 'cell', rowId: input.rowId, columnKey: column.key, columnId: column.id }, surface },
      };
    }
    case 'doc_range': {
      const surface = await surfaceOf(services, workspace, input.surfaceSlug, 'doc');
      const { from, to } = input.anchor;
      const anchored = await services.sync
        .read(surfaceDocumentName(workspace.id, surface)!, (doc) => anchorDocRange(doc, from, to))
        .catch((error: unknown) => {
          if (!(error instanceof DocAnchorError)) throw error;
          throw targetError(422, error.message, ['target', 'anchor', error.code === 'inverted' ? 'from' : 'to'], error.code);
        });
      // An empty snapshot means "whatever is there now".
      const text = input.anchor.text === '' ? anchored.text : input.anchor.text;
      const stored: StoredDocRange = { ...anchored.stored, text, createdFrom: from, createdTo: to };
      const view = docRangeView(surface, { from, to, text: anchored.text }, text);
      return { stored: { ...none, targetType: 'doc_range', targetId: surface.id, surfaceId: surface.id, anchor: stored }, view };
    }
    case 'html_element': {
      const surface = await surfaceOf(services, workspace, input.surfaceSlug, 'html');
      const anchor = { selector: input.anchor.selector, ...(input.anchor.text === undefined ? {} : { text: input.anchor.text }) };
      return {
        stored: { ...none, targetType: 'html_element', targetId: surface.id, surfaceId: surface.id, anchor },
        view: { target: { type: 'html_element', surfaceSlug: surface.slug, anchor }, surface: asView(surface) },
      };
    }
    case 'surface': {
      const surface = await surfaceOf(services, workspace, input.surfaceSlug);
      return {
        stored: { ...none, targetType: 'surface', targetId: surface.id, surfaceId: surface.id },
        view: { target: { type: 'surface', surfaceSlug: surface.slug }, surface: asView(surface) },
      };
    }
    case 'workspace':
      return { stored: { ...none, targetType: 'workspace', targetId: workspace.id }, view: { target: { type: 'workspace' }, surface: null } };
    case 'file': {
      const { surface } = await resolveFileTarget(services, workspace, input.fileId);
      return {
        stored: { ...none, targetType: 'file', targetId: input.fileId, surfaceId: surface.id },
        view: { target: { type: 'file', fileId: input.fileId }, surface: asView(surface) },
      };
    }
  }
}

function docRangeView(surface: SurfaceRef, current: { from: number; to: number; text: string }, expected: string): TargetView {
  const anchor = { from: current.from, to: current.to, text: expected };
  const drift = anchorTextDrifted(expected, current.text) ? { currentText: current.text, expectedText: expected } : {};
  return { target: { type: 'doc_range', surfaceSlug: surface.slug, anchor }, surface: { id: surface.id, slug: surface.slug, name: surface.name }, anchor, ...drift };
}

/** The stored target of a thread's root, which its replies take over. */
export function storedTargetOf(root: CommentRow): StoredTarget {
  return {
    targetType: root.targetType,
    targetId: root.targetId,
    surfaceId: root.surfaceId,
    columnId: root.columnId,
    columnKey: root.columnKey,
    anchor: root.anchor,
  };
}

/**
 * A reply names its thread's target (SPEC "Comments" 1): the same type and
 * the same row, cell, surface or file. Anchor positions are not compared:
 * they move as the doc is edited, and the reply takes the thread's anchor.
 */
export async function assertReplyTarget(services: Services, workspace: Workspace, root: CommentRow, rootView: TargetView, input: CommentTargetInput) {
  const mismatch = (what: string) =>
    errors.badRequest(`A reply takes its thread's target: ${what}.`, [{ path: ['target'], code: 'target_mismatch', message: what }]);
  if (input.type !== root.targetType) throw mismatch(`the thread is on a ${root.targetType}, not a ${input.type}`);
  switch (input.type) {
    case 'row':
    case 'file':
      if ((input.type === 'row' ? input.rowId : input.fileId) !== root.targetId) throw mismatch(`the thread is on ${root.targetType} "${root.targetId}"`);
      return;
    case 'cell': {
      const columnKey = rootView.target.type === 'cell' ? rootView.target.columnKey : root.columnKey;
      if (input.rowId !== root.targetId || input.columnKey !== columnKey) throw mismatch(`the thread is on the cell ${root.targetId}/${columnKey}`);
      return;
    }
    case 'doc_range':
    case 'html_element':
    case 'surface': {
      const surface = await findSurface(services.db, workspace.id, input.surfaceSlug);
      if (surface?.id !== root.surfaceId) throw mismatch(`the thread is on surface "${rootView.surface?.slug ?? root.surfaceId}"`);
      return;
    }
    case 'workspace':
      return;
  }
}

/** The surface a stored comment sits on now (a row comment: its row's current sheet). */
export function surfaceOfRow(row: CommentRow): SurfaceRef | null {
  return row.currentSurfaceId && row.surfaceSlug ? { id: row.currentSurfaceId, slug: row.surfaceSlug, name: row.surfaceName ?? row.surfaceSlug } : null;
}

/**
 * How each comment's target reads now, read in one pass per document: one
 * read of the table document for every cell (the column's current key, by
 * id, on the row's current sheet or any other), one per doc surface for
 * every range (current positions; drift when the words changed).
 */
export async function viewTargets(services: Services, workspace: Workspace, rows: CommentRow[]): Promise<Map<string, TargetView>> {
  const views = new Map<string, TargetView>();

  const cells = rows.filter((r) => r.targetType === 'cell');
  if (cells.length > 0) {
    const keys = await services.sync.read(tablesDocumentName(workspace.id), (doc) => {
      const columnsBySheet = new Map<string, ColumnDef[]>();
      const columnsOf = (sheetId: string) => columnsBySheet.get(sheetId) ?? columnsBySheet.set(sheetId, readColumns(doc, sheetId)).get(sheetId)!;
      return cells.map((cell) => {
        const sheet = getRow(doc, cell.targetId)?.surfaceId;
        const sheets = sheet ? [sheet, ...listSheetIds(doc).filter((s) => s !== sheet)] : listSheetIds(doc);
        for (const sheetId of sheets) {
          const column = columnsOf(sheetId).find((c) => c.id === cell.columnId);
          if (column) return column.key;
        }
        return cell.columnKey ?? '';
      });
    });
    cells.forEach((cell, i) => {
      views.set(cell.id, { target: { type: 'cell', rowId: cell.targetId, columnKey: keys[i], columnId: cell.columnId }, surface: surfaceOfRow(cell) });
    });
  }

  const ranges = rows.filter((r) => r.targetType === 'doc_range');
  for (const surfaceId of new Set(ranges.map((r) => r.surfaceId!))) {
    const onSurface = ranges.filter((r) => r.surfaceId === surfaceId);
    const surface = { id: surfaceId, slug: onSurface[0]!.surfaceSlug ?? surfaceId, name: onSurface[0]!.surfaceName ?? onSurface[0]!.surfaceSlug ?? surfaceId };
    const resolved = await services.sync.read(surfaceDocumentName(workspace.id, { id: surfaceId, kind: 'doc' })!, (doc) =>
      resolveDocAnchors(doc, onSurface.map((r) => r.anchor as StoredDocRange)),
    );
    onSurface.forEach((range, i) => {
      const stored = range.anchor as StoredDocRange;
      const current = resolved[i] ?? { from: stored.createdFrom, to: stored.createdFrom, text: '' };
      views.set(range.id, docRangeView(surface, current, stored.text));
    });
  }

  for (const row of rows) {
    if (views.has(row.id)) continue;
    const surface = surfaceOfRow(row);
    switch (row.targetType) {
      case 'row':
        views.set(row.id, { target: { type: 'row', rowId: row.targetId }, surface });
        break;
      case 'html_element':
        views.set(row.id, { target: { type: 'html_element', surfaceSlug: surface?.slug ?? null, anchor: row.anchor as HtmlAnchor }, surface });
        break;
      case 'surface':
        views.set(row.id, { target: { type: 'surface', surfaceSlug: surface?.slug ?? null }, surface });
        break;
      case 'workspace':
        views.set(row.id, { target: { type: 'workspace' }, surface: null });
        break;
      case 'file':
        views.set(row.id, { target: { type: 'file', fileId: row.targetId }, surface });
        break;
    }
  }
  return views;
}

/**
 * Comments on one thread location share a key: the wake dedup counts per thread location and recipient.
 * Row ids are unique only within a workspace (sync clients choose them), so the key names the workspace.
 */
export function threadKeyOf(workspaceId: string, target: StoredTarget): string {
  const place = target.targetType === 'cell' ? `cell:${target.targetId}:${target.columnId}` : `${target.targetType}:${target.targetId}`;
  return `${workspaceId}:${place}`;
}
