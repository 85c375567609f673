import type { OpenDocument } from '../sync/connection';
import type { CommentTargetInput } from '../../../src/model/schemas/comments';
import type { abilitiesOf, Member, Surface, WorkspaceDetail } from './types';

/**
 * What the workspace page hands to everything drawn inside it (surfaces, the
 * side panel and its panels). It lives below them so each imports it from
 * here, not from the page that imports them.
 */
export interface WorkspaceContext {
  workspace: WorkspaceDetail;
  members: Member[];
  abilities: ReturnType<typeof abilitiesOf>;
  /** The surface on view (the comments panel lists its threads). */
  surface?: Surface;
  /** Opens the side panel (comments, activity, ...) with what it should show. */
  openPanel: (panel: PanelRequest) => void;
  reload: () => Promise<void>;
}

/**
 * What the side panel shows: the activity log, or the comments of the open
 * surface, optionally focused on one target (a row, a cell, a doc range)
 * that a surface asked about through `openPanel`.
 */
export type PanelRequest = { kind: 'activity' } | { kind: 'comments'; focus?: CommentFocus | null; highlight?: string } | { kind: 'history'; surface: Surface };

/** A new thread's target as a surface starts one: the API's input shapes for a row, a cell, a doc range or a surface. */
export type NewTarget = Extract<CommentTargetInput, { type: 'row' | 'cell' | 'doc_range' | 'surface' }>;

/** What a surface asked the panel to show: the threads of one row, cell or doc range, and a box to start one. */
export interface CommentFocus {
  target: NewTarget;
  /** How the target reads to a person: a row's title, "Title · Status", the selected words. */
  label: string;
}

export interface SurfaceViewProps {
  context: WorkspaceContext;
  surface: Surface;
  /** Every surface of the workspace, in tab order (a table moves rows to its sibling sheets). */
  surfaces: Surface[];
  /** The surface's sync document, opened by the page (null for files surfaces, or while it opens). */
  document: OpenDocument | null;
  myId: string;
}
