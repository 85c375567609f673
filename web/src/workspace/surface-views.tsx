import type { ComponentType } from 'preact';
import { DocSurface } from '../doc/DocSurface';
import { FilesSurface } from '../files/FilesSurface';
import { TableSurface } from '../table/TableSurface';
import { HtmlSurface } from './HtmlSurface';
import type { SurfaceKind } from '../workspace-context/types';
import type { SurfaceViewProps } from '../workspace-context/context';

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
