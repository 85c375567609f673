import { z } from 'zod';
import type { WorkspaceAddress } from '../access/workspace-access';

/**
 * Every workspace route is served twice: at `/api/workspaces/{slug}...` and
 * at the canonical `/api/orgs/{orgSlug}/workspaces/{slug}...`, which is never
 * ambiguous. Routes loop over `workspacePaths(suffix)` and read the address
 * with `addressOf(params)`.
 */
export function workspacePaths(suffix = ''): string[] {
  return [`/api/workspaces/:slug${suffix}`, `/api/orgs/:orgSlug/workspaces/:slug${suffix}`];
}

export const WorkspaceParams = z.object({
  slug: z.string().min(1).max(100).describe('Workspace slug (or id)'),
  orgSlug: z.string().min(1).max(100).optional().describe('Organisation slug, on the canonical path'),
});

export function addressOf(params: { slug: string; orgSlug?: string }): WorkspaceAddress {
  return { slug: params.slug, orgSlug: params.orgSlug };
}

/**
 * Routes declare one params schema for both of their paths. On the bare
 * path there is no `:orgSlug`, and OpenAPI requires every declared path
 * parameter to appear in the path, so the field is dropped there.
 */
export function dropOrgSlugOnBarePaths(app: { addHook(name: 'onRoute', hook: (route: { url: string; schema?: { params?: unknown } }) => void): unknown }) {
  app.addHook('onRoute', (route) => {
    const params = route.schema?.params;
    if (!params || route.url.includes(':orgSlug') || !(params instanceof z.ZodObject) || !('orgSlug' in params.shape)) return;
    route.schema!.params = params.omit({ orgSlug: true });
  });
}
