import type { Principal } from '../policy/actor';
import type { Executor } from '../persistence/database';
import type { Workspace } from '../persistence/schema';
import { findPrincipals, findWorkspaceById } from '../persistence/workspaces';
import type { Services } from './services';
import { tablesDocumentName } from '../model/document-names';
import { callerOrigin, serverOrigin, SYSTEM_PRINCIPAL } from '../sync/origins';
import { countRows, ensureSheet, readColumns, scaffoldDefaultColumns } from '../model/table/document';
import { setTableTimeZone } from '../model/table/settings';
import { docHoldsData, seedDocBody } from './docs';
import type { WorkspaceContent } from './workspace-content';
import type { CreatedWorkspace } from './workspaces';

/** The real `WorkspaceContent`: answers from the workspace's Y documents through the sync engine. */
export function documentContent(services: Services): WorkspaceContent {
  return {
    seedWorkspace: (workspace, surfaces, seed) => seedWorkspaceDocuments(services, workspace, surfaces, seed),
    primaryColumns: async (workspace, surface) => {
      if (!surface || surface.kind !== 'table') return [];
      return services.sync.read(tablesDocumentName(workspace.id), (doc) => readColumns(doc, surface.id));
    },
    surfaceHoldsData: async (workspace, surface) => {
      if (surface.kind === 'table') return services.sync.read(tablesDocumentName(workspace.id), (doc) => countRows(doc, surface.id) > 0);
      if (surface.kind === 'doc') return docHoldsData(services, surface);
      return true;
    },
    setTimeZone: async (workspace, timeZone, by) => {
      await services.sync.transact(tablesDocumentName(workspace.id), callerOrigin(by), (doc) => setTableTimeZone(doc, timeZone));
    },
  };
}

async function creatorOf(db: Executor, workspace: Workspace): Promise<Principal> {
  const creator = workspace.createdById ? (await findPrincipals(db, [workspace.createdById])).get(workspace.createdById) : undefined;
  return creator ?? SYSTEM_PRINCIPAL;
}

/**
 * Fills a new workspace's documents after its SQL rows are committed: the
 * table surface gets its sheet and default columns (title, status, notes);
 * `initialMarkdown` becomes the body of the doc surface.
 * Must run outside any database transaction (the engine commits its own).
 */
export async function seedWorkspaceDocuments(
  services: Services,
  workspace: Workspace,
  surfaces: CreatedWorkspace['surfaces'],
  seed: { initialMarkdown?: string },
): Promise<void> {
  if (seed.initialMarkdown !== undefined) {
    const doc = surfaces.find((s) => s.kind === 'doc');
    if (doc) await seedDocBody(services, { id: doc.id, workspaceId: workspace.id }, seed.initialMarkdown, serverOrigin(await creatorOf(services.db, workspace), 'system'));
    return;
  }
  const tables = surfaces.filter((s) => s.kind === 'table');
  if (tables.length === 0) return;
  const origin = serverOrigin(await creatorOf(services.db, workspace), 'system');
  await services.sync.transact(tablesDocumentName(workspace.id), origin, (doc) => {
    for (const surface of tables) {
      ensureSheet(doc, surface.id, null);
      if (readColumns(doc, surface.id).length === 0) scaffoldDefaultColumns(doc, surface.id, null);
    }
  });
}

/** Seeds by id, for callers that created the workspace inside a transaction they have now committed. */
export async function seedCreatedWorkspace(services: Services, created: CreatedWorkspace, seed: { initialMarkdown?: string } = {}) {
  const workspace = await findWorkspaceById(services.db, created.id);
  if (workspace) await seedWorkspaceDocuments(services, workspace, created.surfaces, seed);
}

