/**
 * A surface's content as plain data, for version history: what a version
 * stores, shows, compares and restores. Doc and html surfaces have a Y
 * document each; a table surface is one sheet of the workspace's table
 * document. The Y layouts stay behind their modules (src/model: doc/body,
 * html, table/document); this module only picks the right one.
 */
import type * as Y from 'yjs';
import { docFromJSONLenient } from '../model/doc/json.js';
import { readDocBody, replaceDocBody } from '../model/doc/body.js';
import { readHtml, replaceHtml } from '../model/html.js';
import { diffTableTransaction, listRows, sheetsOfRowCreations, readColumns, type ColumnDef, type RowData } from '../model/table/document.js';
import { restoreSheet, rowsAddedByRestore } from '../model/table/restore.js';

export type HistorySurfaceKind = 'table' | 'doc' | 'html';
export type HistorySurface = { id: string; kind: HistorySurfaceKind };

export type SheetContent = { kind: 'sheet'; columns: ColumnDef[]; rows: Array<{ id: string; data: RowData }> };
export type DocContent = { kind: 'doc'; content: Record<string, unknown> };
export type HtmlContent = { kind: 'html'; html: string };
export type SurfaceContent = SheetContent | DocContent | HtmlContent;

export function readSurfaceContent(doc: Y.Doc, surface: HistorySurface): SurfaceContent {
  switch (surface.kind) {
    case 'doc':
      return { kind: 'doc', content: readDocBody(doc).toJSON() as Record<string, unknown> };
    case 'html':
      return { kind: 'html', html: readHtml(doc) };
    case 'table':
      return {
        kind: 'sheet',
        columns: readColumns(doc, surface.id),
        rows: listRows(doc, { surfaceId: surface.id }).rows.map((row) => ({ id: row.id, data: row.data })),
      };
  }
}

/** Whether there is anything in it (an empty doc body reads as one empty paragraph). */
export function isEmptyContent(content: SurfaceContent): boolean {
  switch (content.kind) {
    case 'doc': {
      const blocks = (content.content.content as Array<{ type: string; content?: unknown[] }> | undefined) ?? [];
      return blocks.length === 0 || (blocks.length === 1 && blocks[0]!.type === 'paragraph' && !blocks[0]!.content?.length);
    }
    case 'html':
      return content.html === '';
    case 'sheet':
      return content.rows.length === 0 && content.columns.length === 0;
  }
}

/**
 * The surfaces one applied transaction changed: the sheets whose rows or
 * columns it touched in a table document, else the document's own surface
 * when it changed anything. Call from `afterTransaction` (deleted content is
 * collected right after).
 */
export function surfacesChangedBy(transaction: Y.Transaction, own: HistorySurface | null): string[] {
  if (own) return transaction.changed.size > 0 || transaction.deleteSet.clients.size > 0 ? [own.id] : [];
  const created = sheetsOfRowCreations(transaction);
  if (created) return created;
  const sheets = new Set<string>();
  for (const change of diffTableTransaction(transaction)) {
    // Saved views are not a sheet's content: a version never holds or restores them.
    if (change.kind.startsWith('view.')) continue;
    if (change.kind === 'row.moved_surface') {
      sheets.add(change.fromSurfaceId);
      sheets.add(change.toSurfaceId);
    } else if (change.surfaceId) {
      sheets.add(change.surfaceId);
    }
  }
  return [...sheets];
}

/** How many rows a restore would add to the table document (negative when it removes more); 0 for other surfaces. */
export function rowsAddedByRestoring(doc: Y.Doc, surface: HistorySurface, content: SurfaceContent): number {
  return surface.kind === 'table' && content.kind === 'sheet' ? rowsAddedByRestore(doc, surface.id, content) : 0;
}

/** Makes the surface equal to `content` in one transaction with `origin`, changing only what differs. */
export function restoreSurfaceContent(doc: Y.Doc, surface: HistorySurface, content: SurfaceContent, origin: unknown): void {
  if (surface.kind === 'doc' && content.kind === 'doc') replaceDocBody(doc, docFromJSONLenient(content.content), origin);
  else if (surface.kind === 'html' && content.kind === 'html') replaceHtml(doc, content.html, origin);
  else if (surface.kind === 'table' && content.kind === 'sheet') restoreSheet(doc, surface.id, content, origin);
  else throw new TypeError(`cannot restore ${content.kind} content into a ${surface.kind} surface`);
}
