import { api } from '../lib/api';
import { createStore } from '../lib/store';
import type { Workspace } from './types';
import type { WorkspaceList } from '../../../src/model/schemas/workspaces';

/** The caller's live workspaces, as the sidebar and the home page show them. */
export const workspaceList = createStore<{ loaded: boolean; items: Workspace[]; error: string | null }>({ loaded: false, items: [], error: null });

export async function refreshWorkspaces(): Promise<void> {
  try {
    const { workspaces } = await api<WorkspaceList>('GET', '/api/workspaces');
    workspaceList.set({ loaded: true, items: workspaces, error: null });
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
