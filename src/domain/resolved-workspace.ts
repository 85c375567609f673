import type { PlanName, Workspace } from '../persistence/schema';
import type { CallerFacts, WorkspaceAccess, WorkspaceAction } from '../policy/index';
import type { Actor } from '../policy/actor';

/**
 * What the domain is handed about a workspace a caller reached: access
 * (src/access/workspace-access.ts) finds it and asks the policy; domain
 * functions take the result, so they need nothing above them.
 */

export type WorkspaceAddress = {
  /** The `{slug}` path segment; a workspace id is accepted too. */
  slug: string;
  /** Present on the canonical `/api/orgs/{orgSlug}/workspaces/{slug}` paths. */
  orgSlug?: string;
};

export type ResolvedWorkspace = {
  workspace: Workspace;
  orgSlug: string;
  /** The organisation's plan, read with the workspace: caps check against it. */
  orgPlan: PlanName;
  access: WorkspaceAccess;
  caller: CallerFacts;
};

/**
 * `resolveWorkspace` of src/access/workspace-access.ts, bound to the app's
 * services: handed to domain functions that learn which workspace to
 * authorize only from what they read (a comment's, a delivery's).
 */
export type WorkspaceResolver = (actor: Actor | null, address: WorkspaceAddress, action: WorkspaceAction) => Promise<ResolvedWorkspace>;
