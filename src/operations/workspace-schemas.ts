import { primarySurfaceOf, type WorkspaceDetailView, type WorkspaceView } from '../domain/workspaces';
import type { Surface as SurfaceRow } from '../persistence/schema';
import { surfaceDocumentName } from '../model/document-names';
import type { SurfaceRecord, WorkspaceDetailRecord, WorkspaceRecord } from '../model/schemas/workspaces';

/**
 * The presenters that build workspace and surface records (SPEC, "Workspace"
 * and "Surface") from domain views. The schemas themselves are browser-safe
 * in src/model/schemas/workspaces.ts (re-exported here); other modules
 * (export bundle, search) reuse them rather than shaping their own.
 */

export * from '../model/schemas/workspaces';

export function presentSurface(surface: SurfaceRow): SurfaceRecord {
  return {
    id: surface.id,
    slug: surface.slug,
    formerSlugs: surface.formerSlugs,
    kind: surface.kind,
    name: surface.name,
    position: surface.position,
    parentId: surface.parentId,
    createdAt: surface.createdAt.toISOString(),
    syncDocument: surfaceDocumentName(surface.workspaceId, surface),
  };
}

export function presentWorkspace(view: WorkspaceView): WorkspaceRecord {
  const { workspace } = view;
  const primary = primarySurfaceOf(workspace.mode, view.surfaces);
  return {
    id: workspace.id,
    slug: workspace.slug,
    name: workspace.name,
    mode: workspace.mode,
    visibility: workspace.visibility,
    createdAt: workspace.createdAt.toISOString(),
    archivedAt: workspace.archivedAt?.toISOString() ?? null,
    pinnedAt: view.pinnedAt?.toISOString() ?? null,
    role: view.role,
    createdBy: view.createdBy,
    org: { slug: view.orgSlug },
    ...(primary ? { primarySurface: presentSurface(primary) } : {}),
    commentsOnPublicShare: workspace.commentsOnPublicShare,
    timeZone: workspace.timeZone,
    ...(workspace.archivedAt && workspace.archivedById && workspace.archivedByType
      ? { archivedByPrincipalId: workspace.archivedById, archivedByPrincipalType: workspace.archivedByType }
      : {}),
  };
}

export function presentWorkspaceDetail(view: WorkspaceDetailView): WorkspaceDetailRecord {
  return {
    ...presentWorkspace(view),
    org: { slug: view.orgSlug, name: view.orgName },
    columns: view.columns,
    memberCount: view.memberCount,
    surfaces: view.surfaces.map(presentSurface),
  };
}
