import type { ComponentType } from 'preact';
import { lazy } from '../ui/lazy';
import type { SurfaceKind } from '../workspace-context/types';
import type { SurfaceViewProps } from '../workspace-context/context';

/**
 * What each surface kind shows. A new kind is one entry here; the page
 * around it (tabs, presence, side panel) does not change. Each is fetched
 * when first shown (docs/WEB.md "Loading"): the grid and the editor are
 * most of the app's code, and a page shows one of them at a time.
 */
export const SURFACE_VIEWS: Record<SurfaceKind, ComponentType<SurfaceViewProps>> = {
  table: lazy(() => import('../table/TableSurface').then((module) => module.TableSurface), 'The table'),
  doc: lazy(() => import('../doc/DocSurface').then((module) => module.DocSurface), 'The doc editor'),
  html: lazy(() => import('./HtmlSurface').then((module) => module.HtmlSurface), 'The page'),
  files: lazy(() => import('../files/FilesSurface').then((module) => module.FilesSurface), 'The files view'),
};
