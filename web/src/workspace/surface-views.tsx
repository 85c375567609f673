import type { ComponentType } from 'preact';
import { DocSurface } from '../doc/DocSurface';
import { FilesSurface } from '../files/FilesSurface';
import type { OpenDocument } from '../sync/connection';
import { TableSurface } from '../table/TableSurface';
import { HtmlSurface } from './HtmlSurface';
import type { Surface, SurfaceKind } from './types';
import type { WorkspaceContext } from './WorkspacePage';

export interface SurfaceViewProps {
  context: WorkspaceContext;
  surface: Surface;
  /** Every surface of the workspace, in tab order (a table moves rows to its sibling sheets). */
  surfaces: Surface[];
  /** The surface's sync document, opened by the page (null for files surfaces, or while it opens). */
  document: OpenDocument | null;
  myId: string;
}

/**
 * What each surface kind shows. A new kind is one entry here; the page
 * around it (tabs, presence, side panel) does not change.
 */
export const SURFACE_VIEWS: Record<SurfaceKind, ComponentType<SurfaceViewProps>> = {
  table: TableSurface,
  doc: DocSurface,
  html: HtmlSurface,
  files: FilesSurface,
};
