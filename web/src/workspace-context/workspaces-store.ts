import { api } from '../lib/api';
import { createStore } from '../lib/store';
import type { Workspace } from './types';
import type { WorkspaceList } from '../../../src/model/schemas/workspaces';
import type { CallerOrg, CallerOrgList } from '../../../src/model/schemas/account';

export type { CallerOrg };

/**
 * The caller's live workspaces, as the sidebar and the home page show them,
 * and the organisations they come from (`GET /api/me/orgs`: those the
 * person belongs to, then, with `role: null`, those of workspaces shared
 * with them), so each workspace can be labelled truthfully.
 */
export const workspaceList = createStore<{ loaded: boolean; items: Workspace[]; orgs: CallerOrg[]; error: string | null }>({ loaded: false, items: [], orgs: [], error: null });

export async function refreshWorkspaces(): Promise<void> {
  try {
    const [{ workspaces }, orgList] = await Promise.all([
      api<WorkspaceList>('GET', '/api/workspaces'),
      // Without it (offline, never read on this device) the workspaces still show, labelled as before.
      api<CallerOrgList>('GET', '/api/me/orgs').catch(() => null),
    ]);
    workspaceList.update((state) => ({ loaded: true, items: workspaces, orgs: orgList?.orgs ?? state.orgs, error: null }));
  } catch (error) {
    workspaceList.update((state) => ({ ...state, loaded: true, error: error instanceof Error ? error.message : String(error) }));
  }
}

/** Pinned first (most recently pinned on top), then by name. */
export function sortWorkspaces(items: Workspace[]): Workspace[] {
  return [...items].sort((a, b) => {
    if (Boolean(a.pinnedAt) !== Boolean(b.pinnedAt)) return a.pinnedAt ? -1 : 1;
    if (a.pinnedAt && b.pinnedAt) return b.pinnedAt.localeCompare(a.pinnedAt);
    return a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });
  });
}

/**
 * The organisation the sidebar and "All workspaces" are about: the one in
 * the address when the person belongs to it, else the last of theirs they
 * were in, else their own. A workspace shared from an organisation they do
 * not belong to never makes that organisation theirs.
 */
export function currentOrgOf(orgs: CallerOrg[], addressed: string | undefined, last: string | null): CallerOrg | null {
  const mine = orgs.filter((org) => org.role !== null);
  return mine.find((org) => org.slug === addressed) ?? mine.find((org) => org.slug === last) ?? mine.find((org) => org.primary) ?? mine[0] ?? null;
}
