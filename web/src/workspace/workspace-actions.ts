import { api, workspacePath } from '../lib/api';
import { withElevation } from '../ui/elevation';
import type { Workspace } from '../workspace-context/types';
import { refreshWorkspaces } from '../workspace-context/workspaces-store';

/** Workspace writes shared by the home page and the workspace header; each refreshes the sidebar. */
export async function setPinned(workspace: Pick<Workspace, 'slug' | 'org'>, pinned: boolean) {
  await api(pinned ? 'POST' : 'DELETE', workspacePath(workspace.org.slug, workspace.slug, '/pin'));
  await refreshWorkspaces();
}

export async function renameWorkspace(workspace: Pick<Workspace, 'slug' | 'org'>, name: string) {
  const updated = await api<Workspace>('PATCH', workspacePath(workspace.org.slug, workspace.slug), { name });
  await refreshWorkspaces();
  return updated;
}

export async function updateWorkspace(workspace: Pick<Workspace, 'slug' | 'org'>, patch: Partial<Pick<Workspace, 'name' | 'mode' | 'visibility' | 'commentsOnPublicShare' | 'timeZone'>>) {
  const updated = await api<Workspace>('PATCH', workspacePath(workspace.org.slug, workspace.slug), patch);
  await refreshWorkspaces();
  return updated;
}

/** Archiving is a sensitive action: the session is elevated first when the server asks. */
export async function archiveWorkspace(workspace: Pick<Workspace, 'slug' | 'org'>) {
  await withElevation('workspace_delete', () => api('DELETE', workspacePath(workspace.org.slug, workspace.slug)));
  await refreshWorkspaces();
}

export async function unarchiveWorkspace(workspace: Pick<Workspace, 'slug' | 'org'>) {
  await api('POST', workspacePath(workspace.org.slug, workspace.slug, '/unarchive'));
  await refreshWorkspaces();
}
