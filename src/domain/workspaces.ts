import { errors, OverLimitError } from '../errors';
import type { Actor, Principal } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { newId } from '../lib/ids';
import { capsFor } from '../limits/plans';
import { findOrgRefs, loadCallerFacts } from '../persistence/access';
import { countHumans } from '../persistence/members';
import { findOrgById } from '../persistence/accounts';
import type { Tx } from '../persistence/database';
import type { Org, Role, Surface, SurfaceKind, Visibility, Workspace } from '../persistence/schema';
import {
  countLiveWorkspaces,
  countMembers,
  findPins,
  findPrincipals,
  findWorkspaceById,
  insertSurface,
  insertWorkspace,
  listReachableWorkspaces,
  listSurfacesOf,
  liveSlugTaken,
  lockOrgForCapCheck,
  markWorkspaceArchived,
  markWorkspaceLive,
  setPin,
  updateWorkspaceSettings,
  upsertMembership,
  type WorkspaceSettings,
} from '../persistence/workspaces';
import { authorizeWorkspaceCreation, workspaceAccess } from '../policy/index';
import { loadOrgCaller } from './org-caller';
import type { Services } from './services';
import type { ColumnDef } from '../model/table/types';
import { canonicalTimeZone } from '../model/table/settings';
import { transactWithEvents, workspaceEvent } from './transact';
import type { CreatedWorkspace, WorkspaceContent } from './workspace-content';

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
  /** The surfaces to create instead of the default one (an imported folder's pages and tables); `parent` is the index of the one it nests under. */
  surfaces?: Array<{ slug: string; kind: SurfaceKind; name: string; parent?: number | null }>;
};

export type { CreatedWorkspace };

/** Default surfaces: a table workspace opens on a sheet, a doc workspace (or one seeded with Markdown) on a doc. */
function defaultSurfaces(input: CreateWorkspaceInput): Array<{ slug: string; kind: SurfaceKind; name: string }> {
  if (input.initialMarkdown !== undefined || input.mode === 'doc') return [{ slug: 'doc', kind: 'doc', name: 'Doc' }];
  return [{ slug: 'table', kind: 'table', name: 'Table' }];
}

export function upgradeUrl(services: Services): string {
  return `${services.config.publicUrl}/settings/billing`;
}

/**
 * Passes when the organisation's plan has room for one more live workspace
 * (archived ones do not count), else 402. Locks the org row first, so
 * concurrent creates and unarchives in one org cannot overshoot the cap; call
 * it inside the transaction that adds the workspace.
 */
export async function claimWorkspaceSlot(services: Services, tx: Tx, orgId: string) {
  await lockOrgForCapCheck(tx, orgId);
  const org = await findOrgById(tx, orgId);
  if (!org) throw errors.notFound('Organisation');
  const caps = capsFor(org.plan);
  const live = await countLiveWorkspaces(tx, org.id);
  if (live >= caps.workspaces) {
    throw new OverLimitError('workspaces', live, caps.workspaces, { plan: org.plan, upgradeUrl: upgradeUrl(services) });
  }
  return org;
}

/**
 * Unarchiving brings the workspace's members back into the humans count
 * (live workspaces only count): refused with 402 when that would pass the
 * cap. Members already counted elsewhere take no new seat, and an org
 * already over its cap (after a downgrade) may bring back a workspace that
 * adds nobody. Call under the org lock.
 */
async function claimHumanSeatsForUnarchive(services: Services, tx: Tx, org: Org, workspaceId: string) {
  const cap = capsFor(org.plan).humans;
  const [now, after] = await Promise.all([countHumans(tx, org.id), countHumans(tx, org.id, workspaceId)]);
  if (after > now && after > cap) throw new OverLimitError('humans', now, cap, { plan: org.plan, upgradeUrl: upgradeUrl(services) });
}

/**
 * Creates a workspace with its default surfaces and owner membership in one
 * transaction, after the plan's workspace cap (archived ones do not count).
 * Returns the ids; document scaffolding (columns, doc body) is done by the
 * sync layer from the same input.
 */
export async function createWorkspace(services: Services, tx: Tx, input: CreateWorkspaceInput): Promise<CreatedWorkspace> {
  const org = await claimWorkspaceSlot(services, tx, input.orgId);
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
  const wanted = input.surfaces ?? defaultSurfaces(input);
  const ids = wanted.map(() => newId('sf'));
  const surfaces = wanted.map(({ slug, kind, name }, position) => ({ slug, kind, name, id: ids[position]!, position }));
  for (const [position, surface] of surfaces.entries()) {
    const parent = input.surfaces?.[position]?.parent;
    await insertSurface(tx, { ...surface, workspaceId: id, createdAt: now, parentId: parent !== undefined && parent !== null ? (ids[parent] ?? null) : null });
  }
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

// Workspaces as a caller sees them

/** Everything a workspace record shows, loaded for one caller. */
export type WorkspaceView = {
  workspace: Workspace;
  orgSlug: string;
  /** The caller's effective role (`viewer` for public readers). */
  role: Role;
  /** When the calling principal pinned it; null when not pinned or anonymous. */
  pinnedAt: Date | null;
  createdBy: Principal | null;
  /** Live surfaces in position order. */
  surfaces: Surface[];
};

export type WorkspaceDetailView = WorkspaceView & { orgName: string; memberCount: number; columns: ColumnDef[] };

/**
 * The surface a client opens first: the first one of the workspace's mode
 * (mode is only that hint), else the first one at all.
 */
export function primarySurfaceOf(mode: Workspace['mode'], surfaces: Surface[]): Surface | null {
  return surfaces.find((s) => s.kind === mode) ?? surfaces[0] ?? null;
}

/** Loads pins, creators and surfaces for several resolved workspaces in a few queries. */
export async function describeWorkspaces(services: Services, actor: Actor | null, reached: ResolvedWorkspace[]): Promise<WorkspaceView[]> {
  const ids = reached.map((r) => r.workspace.id);
  const creatorIds = reached.flatMap((r) => (r.workspace.createdById ? [r.workspace.createdById] : []));
  const [pins, creators, surfaces] = await Promise.all([
    actor ? findPins(services.db, actor.principal.id, ids) : new Map<string, Date>(),
    findPrincipals(services.db, creatorIds),
    listSurfacesOf(services.db, ids),
  ]);
  return reached.map(({ workspace, orgSlug, access, caller }) => ({
    workspace,
    orgSlug,
    // Asked again of the row as it is now: a settings change may have changed the caller's standing.
    role: workspaceAccess(caller, workspace).role ?? access.role!,
    pinnedAt: pins.get(workspace.id) ?? null,
    createdBy: workspace.createdById ? (creators.get(workspace.createdById) ?? null) : null,
    surfaces: surfaces.get(workspace.id) ?? [],
  }));
}

export async function describeWorkspace(services: Services, actor: Actor | null, resolved: ResolvedWorkspace): Promise<WorkspaceView> {
  const [view] = await describeWorkspaces(services, actor, [resolved]);
  return view!;
}

/** The detail adds the org's name, the member count and the primary table's columns (from `content`). */
export async function describeWorkspaceDetail(
  services: Services,
  actor: Actor | null,
  resolved: ResolvedWorkspace,
  content: WorkspaceContent,
): Promise<WorkspaceDetailView> {
  const view = await describeWorkspace(services, actor, resolved);
  const primaryTable = view.surfaces.find((s) => s.kind === 'table') ?? null;
  const [org, memberCount, columns] = await Promise.all([
    findOrgById(services.db, view.workspace.orgId),
    countMembers(services.db, view.workspace.id),
    content.primaryColumns(view.workspace, primaryTable),
  ]);
  return { ...view, orgName: org?.name ?? '', memberCount, columns };
}

/**
 * Every workspace the caller reaches, live or archived: memberships (its own
 * and, for an unscoped key, its owner's), org-visibility workspaces of the
 * human's organisations, and for a scoped key its one workspace. The policy
 * decides each one and the caller's role there. Newest first. Listing and
 * search both start here, so they never disagree about what a caller sees.
 */
export async function reachableWorkspaces(services: Services, actor: Actor, options: { archived: boolean }): Promise<ResolvedWorkspace[]> {
  const candidates = await listReachableWorkspaces(services.db, {
    principalIds: [...new Set([actor.principal.id, actor.userId])],
    userId: actor.userId,
    onlyWorkspaceId: actor.key?.scopeWorkspaceId ?? null,
    archived: options.archived,
  });
  const [facts, orgs] = await Promise.all([
    loadCallerFacts(services.db, actor, candidates),
    findOrgRefs(services.db, [...new Set(candidates.map((w) => w.orgId))]),
  ]);
  return candidates.flatMap((workspace) => {
    const caller = facts.get(workspace.id)!;
    const access = workspaceAccess(caller, workspace);
    const org = orgs.get(workspace.orgId)!;
    return access.basis === 'none' ? [] : [{ workspace, orgSlug: org.slug, orgPlan: org.plan, access, caller }];
  });
}

/** The workspaces the caller reaches, described; pinned ones first (latest pin first), then newest first. */
export async function listWorkspacesFor(services: Services, actor: Actor, options: { archived: boolean }): Promise<WorkspaceView[]> {
  const views = await describeWorkspaces(services, actor, await reachableWorkspaces(services, actor, options));
  const pinTime = (v: WorkspaceView) => v.pinnedAt?.getTime() ?? -Infinity;
  return views.sort((a, b) => pinTime(b) - pinTime(a));
}

// Changing workspaces on behalf of a caller

export type NewWorkspaceRequest = Pick<CreateWorkspaceInput, 'name' | 'slug' | 'mode' | 'visibility' | 'initialMarkdown' | 'surfaces'>;

/**
 * Who may create a workspace in the caller's organisation: the policy's
 * `create_workspaces` (an org member whose role allows it; of keys, an
 * unscoped editor key that may act directly). A key's agent is enrolled as
 * editor and its owner owns the workspace.
 */
export async function authorizeCreation(services: Services, actor: Actor): Promise<string> {
  if (!actor.orgId) throw errors.notFound('Organisation');
  authorizeWorkspaceCreation(await loadOrgCaller(services, actor, actor.orgId));
  return actor.orgId;
}

/**
 * Creates a workspace in the caller's organisation and records
 * `workspace.created`; then, after commit, has `content` seed its documents.
 * Returns its id.
 */
export async function createWorkspaceFor(services: Services, actor: Actor, request: NewWorkspaceRequest, content: WorkspaceContent): Promise<string> {
  const orgId = await authorizeCreation(services, actor);
  const orgSlug = (await findOrgRefs(services.db, [orgId])).get(orgId)!.slug;
  const { workspace, surfaces } = await transactWithEvents(services, async (tx, events) => {
    const created = await createWorkspace(services, tx, { ...request, orgId, createdBy: actor.principal, ownerUserId: actor.userId });
    const workspace = (await findWorkspaceById(tx, created.id))!;
    events.push(
      workspaceEvent('workspace.created', { workspace, orgSlug }, actor, {
        name: workspace.name,
        mode: workspace.mode,
        visibility: workspace.visibility,
        surfaces: created.surfaces,
      }),
    );
    return { workspace, surfaces: created.surfaces };
  });
  await content.seedWorkspace(workspace, surfaces, { initialMarkdown: request.initialMarkdown });
  return workspace.id;
}

/** Applies the settings that differ and records `workspace.updated` with `{ changes: { field: { from, to } } }`. */
export async function changeWorkspaceSettings(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  given: WorkspaceSettings,
  content: WorkspaceContent,
): Promise<Workspace> {
  const { workspace, orgSlug } = resolved;
  const settings = given.timeZone === undefined ? given : { ...given, timeZone: workspaceTimeZone(given.timeZone) };
  const changed = (Object.keys(settings) as Array<keyof WorkspaceSettings>).filter(
    (field) => settings[field] !== undefined && settings[field] !== workspace[field],
  );
  const patch = Object.fromEntries(changed.map((field) => [field, settings[field]])) as WorkspaceSettings;
  const changes = Object.fromEntries(changed.map((field) => [field, { from: workspace[field], to: settings[field] }]));
  const updated =
    changed.length === 0
      ? workspace
      : await transactWithEvents(services, async (tx, events) => {
          const row = await updateWorkspaceSettings(tx, workspace.id, patch, services.clock.now());
          events.push(workspaceEvent('workspace.updated', { workspace: row, orgSlug }, actor, { changes }));
          return row;
        });
  // Written even when the record already held it: a table document restored or rewritten by a peer gets it back.
  if (settings.timeZone !== undefined) await content.setTimeZone(updated, settings.timeZone, actor);
  return updated;
}

/** The zone's canonical name; 422 at `timeZone` when it is not an IANA zone this server knows. */
function workspaceTimeZone(name: string): string {
  const canonical = canonicalTimeZone(name);
  if (canonical !== null) return canonical;
  const message = `"${name}" is not an IANA time zone name (such as Europe/Paris, America/New_York or UTC).`;
  throw errors.validation(message, [{ path: ['timeZone'], code: 'invalid_time_zone', message }]);
}

/**
 * Soft-archives: stamps archivedAt and the archiving principal, keeps rows,
 * docs, members and events, and frees the plan slot. Archiving an archived
 * workspace changes nothing.
 */
export async function archiveWorkspace(services: Services, actor: Actor, resolved: ResolvedWorkspace): Promise<Workspace> {
  const { workspace, orgSlug } = resolved;
  if (workspace.archivedAt) return workspace;
  return transactWithEvents(services, async (tx, events) => {
    const by = { id: actor.principal.id, type: actor.principal.principalType };
    const archived = await markWorkspaceArchived(tx, workspace.id, by, services.clock.now());
    if (!archived) return (await findWorkspaceById(tx, workspace.id))!;
    events.push(workspaceEvent('workspace.archived', { workspace: archived, orgSlug }, actor, { archivedAt: archived.archivedAt!.toISOString() }));
    return archived;
  });
}

/**
 * Brings an archived workspace back under its slug. Idempotent on a live
 * one; 409 when a live workspace has since taken the slug in that org; 402
 * when the plan has no free workspace slot. Records `workspace.unarchived`
 * with `{ previousArchivedAt }`.
 */
export async function unarchiveWorkspace(services: Services, actor: Actor, resolved: ResolvedWorkspace): Promise<Workspace> {
  const { orgSlug } = resolved;
  if (!resolved.workspace.archivedAt) return resolved.workspace;
  return transactWithEvents(services, async (tx, events) => {
    const org = await claimWorkspaceSlot(services, tx, resolved.workspace.orgId);
    // Read again under the org lock: a concurrent unarchive may have won.
    const workspace = (await findWorkspaceById(tx, resolved.workspace.id))!;
    if (!workspace.archivedAt) return workspace;
    await claimHumanSeatsForUnarchive(services, tx, org, workspace.id);
    if (await liveSlugTaken(tx, workspace.orgId, workspace.slug)) {
      throw errors.conflict(`The slug "${workspace.slug}" now belongs to another workspace in this organisation; it cannot be unarchived under it.`);
    }
    const live = await markWorkspaceLive(tx, workspace.id, services.clock.now());
    events.push(workspaceEvent('workspace.unarchived', { workspace: live, orgSlug }, actor, { previousArchivedAt: workspace.archivedAt.toISOString() }));
    return live;
  });
}

/**
 * Pins or unpins for the calling principal only (pins live on its
 * membership row). Repeating either is harmless. No event: a pin is one
 * principal's bookmark, not a change to the shared workspace.
 */
export async function setPinned(services: Services, actor: Actor, resolved: ResolvedWorkspace, pinned: boolean): Promise<Date | null> {
  const stored = await setPin(services.db, resolved.workspace.id, actor.principal.id, pinned ? services.clock.now() : null);
  // The policy let only membership-row holders through; a row removed since then ends the same way.
  if (!stored) throw errors.forbidden('Only members with a membership row can pin.');
  return stored.pinnedAt;
}
