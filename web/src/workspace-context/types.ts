import type { Role } from '../../../src/model/permissions';
import type { Member as MemberRecord } from '../../../src/model/schemas/members';
import type { SurfaceKind, SurfaceRecord, WorkspaceDetailRecord, WorkspaceRecord } from '../../../src/model/schemas/workspaces';

/** The API's own records (src/model/schemas), as `GET /api/workspaces`, the workspace detail and its members answer them. */
export type { Role, SurfaceKind };
export type Surface = SurfaceRecord;
export type Workspace = WorkspaceRecord;
export type WorkspaceDetail = WorkspaceDetailRecord;
export type Member = MemberRecord;

/** What the caller's role lets the UI offer; the server decides again on every write. */
export function abilitiesOf(role: Role, archived: boolean) {
  const edit = !archived && (role === 'owner' || role === 'editor');
  const comment = !archived && role !== 'viewer';
  // Suggesting is a commenter's too; deciding suggestions is editing (docs/SUGGESTIONS.md).
  return { edit, share: edit, manage: edit, comment, suggest: comment, decide: edit };
}

/** The tab a workspace opens on: the first surface of its mode, else the first surface. */
export function firstSurface(workspace: WorkspaceDetail): Surface | undefined {
  const ordered = [...workspace.surfaces].sort((a, b) => a.position - b.position);
  return ordered.find((surface) => surface.kind === workspace.mode) ?? ordered[0];
}
