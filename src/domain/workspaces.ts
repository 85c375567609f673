import { errors, OverLimitError } from '../errors';
import type { Principal } from '../http/actor';
import { newId } from '../lib/ids';
import { capsFor } from '../limits/plans';
import { findOrgById } from '../persistence/accounts';
import type { Tx } from '../persistence/database';
import type { SurfaceKind, Visibility } from '../persistence/schema';
import {
  countLiveWorkspaces,
  insertSurface,
  insertWorkspace,
  liveSlugTaken,
  lockOrgForCapCheck,
  upsertMembership,
} from '../persistence/workspaces';
import type { Services } from '../services';

export type CreateWorkspaceInput = {
  orgId: string;
  slug: string;
  name: string;
  mode: 'table' | 'doc';
  visibility?: Visibility;
  initialMarkdown?: string;
  /** Who created it: the user, or an agent acting for its owner. */
  createdBy: Principal;
  /** The human who becomes owner (the creator, or the agent's owner). */
  ownerUserId: string;
};

export type CreatedWorkspace = { id: string; surfaces: Array<{ id: string; slug: string; kind: SurfaceKind }> };

/** Default surfaces: a table workspace opens on a sheet, a doc workspace (or one seeded with Markdown) on a doc. */
function defaultSurfaces(input: CreateWorkspaceInput): Array<{ slug: string; kind: SurfaceKind; name: string }> {
  if (input.initialMarkdown !== undefined || input.mode === 'doc') return [{ slug: 'doc', kind: 'doc', name: 'Doc' }];
  return [{ slug: 'table', kind: 'table', name: 'Table' }];
}

export function upgradeUrl(services: Services): string {
  return `${services.config.publicUrl}/settings/billing`;
}

/**
 * Creates a workspace with its default surfaces and owner membership in one
 * transaction, after the plan's workspace cap (archived ones do not count).
 * Returns the ids; document scaffolding (columns, doc body) is done by the
 * sync layer from the same input.
 */
export async function createWorkspace(services: Services, tx: Tx, input: CreateWorkspaceInput): Promise<CreatedWorkspace> {
  await lockOrgForCapCheck(tx, input.orgId);
  const org = await findOrgById(tx, input.orgId);
  if (!org) throw errors.notFound('Organisation');
  const caps = capsFor(org.plan);
  const live = await countLiveWorkspaces(tx, org.id);
  if (live >= caps.workspaces) {
    throw new OverLimitError('workspaces', live, caps.workspaces, { plan: org.plan, upgradeUrl: upgradeUrl(services) });
  }
  if (await liveSlugTaken(tx, org.id, input.slug)) {
    throw errors.conflict(`A workspace with the slug "${input.slug}" already exists in this organisation.`);
  }
  const now = services.clock.now();
  const id = newId('ws');
  const mode = input.initialMarkdown !== undefined ? 'doc' : input.mode;
  await insertWorkspace(tx, {
    id,
    orgId: org.id,
    slug: input.slug,
    name: input.name,
    mode,
    visibility: input.visibility ?? org.defaultWorkspaceVisibility,
    createdById: input.createdBy.id,
    createdByType: input.createdBy.principalType,
    createdAt: now,
  });
  const surfaces = defaultSurfaces(input).map((s, position) => ({ ...s, id: newId('sf'), position }));
  for (const surface of surfaces) await insertSurface(tx, { ...surface, workspaceId: id, createdAt: now });
  await upsertMembership(tx, { workspaceId: id, principalId: input.ownerUserId, principalType: 'user', role: 'owner', joinedAt: now });
  if (input.createdBy.principalType === 'agent') {
    // Agents never own; the creating agent is enrolled as an editor through its owner.
    await upsertMembership(tx, {
      workspaceId: id,
      principalId: input.createdBy.id,
      principalType: 'agent',
      role: 'editor',
      viaUserId: input.ownerUserId,
      joinedAt: now,
    });
  }
  return { id, surfaces: surfaces.map(({ id: surfaceId, slug, kind }) => ({ id: surfaceId, slug, kind })) };
}
