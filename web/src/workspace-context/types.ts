import type { Principal } from '../session';

export type Role = 'owner' | 'editor' | 'commenter' | 'viewer';
export type SurfaceKind = 'table' | 'doc' | 'html' | 'files';

export interface Surface {
  id: string;
  slug: string;
  kind: SurfaceKind;
  name: string;
  position: number;
  createdAt: string;
  /** The sync document to open; null for files surfaces. */
  syncDocument: string | null;
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  mode: 'table' | 'doc';
  visibility: 'private' | 'org' | 'unlisted' | 'public';
  createdAt: string;
  archivedAt: string | null;
  pinnedAt: string | null;
  role: Role;
  createdBy: Principal | null;
  org: { slug: string; name?: string };
  primarySurface?: Surface;
  commentsOnPublicShare: boolean;
}

export interface WorkspaceDetail extends Workspace {
  memberCount: number;
  surfaces: Surface[];
}

export interface Member {
  id: string;
  principalType: 'user' | 'agent';
  principal: Principal;
  role: Role;
  email?: string;
  joinedAt: string;
  inheritedAgents?: Principal[];
  viaUserId?: string;
}

/** What the caller's role lets the UI offer; the server decides again on every write. */
export function abilitiesOf(role: Role, archived: boolean) {
  const edit = !archived && (role === 'owner' || role === 'editor');
  return { edit, share: edit, manage: edit, comment: !archived && role !== 'viewer' };
}

/** The tab a workspace opens on: the first surface of its mode, else the first surface. */
export function firstSurface(workspace: WorkspaceDetail): Surface | undefined {
  const ordered = [...workspace.surfaces].sort((a, b) => a.position - b.position);
  return ordered.find((surface) => surface.kind === workspace.mode) ?? ordered[0];
}
