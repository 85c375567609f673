import { errors } from '../errors';
import type { ResolvedWorkspace, WorkspaceAddress, WorkspaceResolver } from '../domain/resolved-workspace';
import { authorize, workspaceAccess, type WorkspaceAction } from '../policy/index';
import type { Services } from '../domain/services';
import type { Actor } from '../policy/actor';
import { cachedCallerFacts, cachedWorkspaces } from './context-cache';
import { joinRunOfRequest } from '../domain/runs';

export type { ResolvedWorkspace, WorkspaceAddress } from '../domain/resolved-workspace';

/** `resolveWorkspace` bound to `services`, for the domain functions that take one (src/domain/resolved-workspace.ts). */
export function workspaceResolver(services: Services): WorkspaceResolver {
  return (actor, address, action) => resolveWorkspace(services, actor, address, action);
}

/**
 * Finds the workspace a request names and asks the policy whether the caller
 * may take `action` on it. Every workspace route starts here.
 *
 * - Only workspaces the caller can see count: a slug that exists but is
 *   invisible is 404, like one that does not exist.
 * - Same-slug workspaces visible in several organisations are ambiguous
 *   (400) unless the path names the org; key-scoped callers see only their
 *   workspace, so they are never ambiguous.
 * - Live workspaces win over archived ones with the same slug, except for
 *   `preferArchived` (unarchive), which addresses the archived one.
 */
export async function resolveWorkspace(
  services: Services,
  actor: Actor | null,
  address: WorkspaceAddress,
  action: WorkspaceAction,
  options: { preferArchived?: boolean } = {},
): Promise<ResolvedWorkspace> {
  const candidates = await cachedWorkspaces(services, address.slug, {
    orgSlug: address.orgSlug,
    onlyWorkspaceId: actor?.key?.scopeWorkspaceId ?? null,
  });
  const facts = await cachedCallerFacts(services, actor, candidates);
  const visible = candidates.filter((w) => workspaceAccess(facts.get(w.id)!, w).basis !== 'none');
  if (visible.length === 0) throw errors.notFound('Workspace');

  const live = visible.filter((w) => !w.archivedAt);
  const archived = visible.filter((w) => w.archivedAt);
  const pool = options.preferArchived ? (archived.length ? archived : live) : live.length ? live : archived;
  const orgSlugs = [...new Set(pool.map((w) => w.orgSlug))];
  if (orgSlugs.length > 1) {
    throw errors.ambiguousSlug(
      address.slug,
      orgSlugs.map((orgSlug) => `/api/orgs/${orgSlug}/workspaces/${address.slug}`),
    );
  }
  const { orgSlug, orgPlan, ...workspace } = pool[0]!;
  const caller = facts.get(workspace.id)!;
  const access = authorize(caller, workspace, action);
  const resolved = { workspace, orgSlug, orgPlan, access, caller };
  // A write decides the run it joins here, once the workspace is known (404 run_not_found / 409 run_ended before anything is written).
  await joinRunOfRequest(services, actor, resolved, action);
  return resolved;
}
