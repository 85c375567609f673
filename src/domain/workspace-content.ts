import type { Surface, SurfaceKind, Workspace } from '../persistence/schema';
import type { ColumnDef } from '../model/table/types';
import type { ChangeCaller } from '../sync/origins';

/** What creating a workspace made: its id and surfaces, for the content to fill. */
export type CreatedWorkspace = { id: string; surfaces: Array<{ id: string; slug: string; kind: SurfaceKind }> };

/**
 * What the workspace and surface routes need to know about a workspace's
 * content, which lives in its Y documents rather than in SQL. The
 * operations take the implementation `documentContent(services)` builds
 * over the sync engine, so the domain does not depend on the engine's
 * layouts; without an engine `placeholderContent` answers.
 */

export type WorkspaceContent = {
  /**
   * Fills a new workspace's documents once its rows are committed: the
   * default columns of its table surface, the doc body from
   * `initialMarkdown`. Called outside any database transaction (the sync
   * engine commits through its own).
   */
  seedWorkspace(workspace: Workspace, surfaces: CreatedWorkspace['surfaces'], seed: { initialMarkdown?: string }): Promise<void>;
  /**
   * The columns of the workspace's primary table surface, in position
   * order, for the workspace detail. `surface` is null when the workspace
   * has no table surface.
   */
  primaryColumns(workspace: Workspace, surface: Surface | null): Promise<ColumnDef[]>;
  /**
   * Whether a table or doc surface holds data (rows in its sheet, a
   * non-empty doc body). Deleting the last surface of its kind that holds
   * data needs `?force=1`.
   */
  surfaceHoldsData(workspace: Workspace, surface: Surface): Promise<boolean>;
  /**
   * Gives the table document the workspace's new time zone, which every
   * reader of computed cells reads there (src/model/table/settings.ts).
   * Called once the setting is committed.
   */
  setTimeZone(workspace: Workspace, timeZone: string, by: ChangeCaller): Promise<void>;
};

/**
 * Used until the sync engine provides the real answers: no seeding, no columns, and
 * every table or doc surface is assumed to hold data, so the last one of its
 * kind is never deleted by accident.
 */
export const placeholderContent: WorkspaceContent = {
  seedWorkspace: async () => {},
  primaryColumns: async () => [],
  surfaceHoldsData: async () => true,
  setTimeZone: async () => {},
};
