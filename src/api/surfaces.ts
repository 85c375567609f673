import { z } from 'zod';
import { addSurface, deleteSurface, findLiveSurface, liveSurfacesOf, renameSurfaceOf } from '../domain/surfaces';
import { placeholderContent, type WorkspaceContent } from '../domain/workspace-content';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../services';
import { errorResponses, Ok, Slug } from '../model/schemas/common';
import { flagOn, presentSurface, QueryFlag, Surface, SurfaceKind } from './workspace-schemas';

const SurfaceName = z.string().trim().min(1).max(200);
const SurfaceParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Surface slug (or id)') });

const SurfaceList = z.object({ surfaces: z.array(Surface) }).meta({ id: 'SurfaceList' });
const NewSurfaceRequest = z.strictObject({
  kind: SurfaceKind,
  slug: Slug.describe('Unique among the live surfaces of the workspace'),
  name: SurfaceName,
});
const SurfacePatch = z.strictObject({ name: SurfaceName });
const DeleteQuery = z.object({
  force: QueryFlag.optional().describe('`1` deletes even the last table or doc surface that holds data'),
});

/**
 * Surfaces of a workspace: the tabs (table, doc, html, files) it holds.
 * `content` tells whether a surface holds data, which guards deleting the last one.
 */
export async function surfaceRoutes(app: App, services: Services, content: WorkspaceContent = placeholderContent) {
  for (const path of workspacePaths('/surfaces')) {
    app.get(
      path,
      {
        schema: {
          summary: 'List surfaces',
          description: 'Live surfaces in position order, each with the `syncDocument` to open at /api/sync.',
          tags: ['surfaces'],
          params: WorkspaceParams,
          response: { 200: SurfaceList, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const surfaces = await liveSurfacesOf(services, workspace.id);
        return { surfaces: surfaces.map(presentSurface) };
      },
    );

    app.post(
      path,
      {
        schema: {
          summary: 'Add a surface',
          description: 'Editor. The new surface goes after the last one. 409 when a live surface already has the slug. Answers 200 with the surface.',
          tags: ['surfaces'],
          params: WorkspaceParams,
          body: NewSurfaceRequest,
          response: { 200: Surface, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'manage_surfaces');
        return presentSurface(await addSurface(services, actor, resolved, request.body));
      },
    );
  }

  for (const path of workspacePaths('/surfaces/:surfaceSlug')) {
    app.patch(
      path,
      {
        schema: {
          summary: 'Rename a surface',
          tags: ['surfaces'],
          params: SurfaceParams,
          body: SurfacePatch,
          response: { 200: Surface, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'manage_surfaces');
        const surface = await findLiveSurface(services, resolved.workspace.id, request.params.surfaceSlug);
        return presentSurface(await renameSurfaceOf(services, actor, resolved, surface, request.body.name));
      },
    );

    app.delete(
      path,
      {
        schema: {
          summary: 'Delete a surface',
          description:
            'Editor. Soft delete. The last table or doc surface that holds data is refused with 409 unless `?force=1`.',
          tags: ['surfaces'],
          params: SurfaceParams,
          querystring: DeleteQuery,
          response: { 200: Ok, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'manage_surfaces');
        const surface = await findLiveSurface(services, resolved.workspace.id, request.params.surfaceSlug);
        await deleteSurface(services, actor, resolved, surface, { force: flagOn(request.query.force), content });
        return { ok: true as const };
      },
    );
  }
}
