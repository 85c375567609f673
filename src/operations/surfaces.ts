import { z } from 'zod';
import { addSurface, deleteSurface, findLiveSurface, liveSurfacesOf, renameSurfaceOf } from '../domain/surfaces';
import { documentContent } from '../domain/workspace-documents';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { Ok, Slug } from '../model/schemas/common';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { flagOn, presentSurface, QueryFlag, Surface, SurfaceKind } from './workspace-schemas';

const SurfaceName = z.string().trim().min(1).max(200);
const SurfaceParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Surface slug (or id)') });

const SurfaceList = z.object({ surfaces: z.array(Surface) }).meta({ id: 'SurfaceList' });
const NewSurfaceRequest = z.strictObject({
  kind: SurfaceKind,
  slug: Slug.optional().describe('Its address; made from `name` when left out. No other live surface may hold it, as its address or as one it had before a rename'),
  name: SurfaceName,
});
const SurfacePatch = z
  .strictObject({
    name: SurfaceName.optional(),
    slug: Slug.optional().describe('A new address of your choosing; left out, a new name makes one from the name'),
  })
  .refine((patch) => patch.name !== undefined || patch.slug !== undefined, { message: 'Give a name, a slug or both.' });
const DeleteQuery = z.object({
  force: QueryFlag.optional().describe('`1` deletes even the last table or doc surface that holds data'),
});

/**
 * Surfaces of a workspace: the tabs (table, doc, html, files) it holds.
 * `documentContent` tells whether a surface holds data, which guards deleting the last one.
 */
export const surfaceOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, response: SurfaceList,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces',
        summary: 'List surfaces',
        description: 'Live surfaces in position order, each with the `syncDocument` to open at /api/sync.',
        tags: ['surfaces'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const surfaces = await liveSurfacesOf(services, workspace.id);
      return { surfaces: surfaces.map(presentSurface) };
    },
  ),
  get: defineOperation(
    {
      params: SurfaceParams, response: Surface,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces/:surfaceSlug',
        summary: 'Get a surface',
        description: 'By slug, id or a slug it had before a rename: the answer carries its current `slug` (and its `formerSlugs`).',
        tags: ['surfaces'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return presentSurface(await findLiveSurface(services, workspace.id, params.surfaceSlug));
    },
  ),
  create: defineOperation(
    {
      params: WorkspaceParams, body: NewSurfaceRequest, response: Surface,
      rest: {
        method: 'POST',
        workspacePath: '/surfaces',
        summary: 'Add a surface',
        description:
          'Editor. The new surface goes after the last one. Without `slug`, its address is made from `name` (`Bug triage` → `bug-triage`, then `bug-triage-2`…). 409 when a live surface holds the slug given, as its address or a former one. Answers 200 with the surface.',
        tags: ['surfaces'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'manage_surfaces');
      return presentSurface(await addSurface(services, caller, resolved, body));
    },
  ),
  rename: defineOperation(
    {
      params: SurfaceParams, body: SurfacePatch, response: Surface,
      rest: {
        method: 'PATCH',
        workspacePath: '/surfaces/:surfaceSlug',
        summary: 'Rename a surface',
        description:
          'Editor. The address follows the name: a new `name` makes a new `slug` from it (or give `slug`), and the old slug joins `formerSlugs`, which still address the surface everywhere a slug is taken. 409 when another live surface holds the `slug` given.',
        tags: ['surfaces'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'manage_surfaces');
      const surface = await findLiveSurface(services, resolved.workspace.id, params.surfaceSlug);
      return presentSurface(await renameSurfaceOf(services, caller, resolved, surface, body));
    },
  ),
  delete: defineOperation(
    {
      params: SurfaceParams, query: DeleteQuery, response: Ok,
      rest: {
        method: 'DELETE',
        workspacePath: '/surfaces/:surfaceSlug',
        summary: 'Delete a surface',
        description: 'Editor. Soft delete. The last table or doc surface that holds data is refused with 409 unless `?force=1`.',
        tags: ['surfaces'],
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'manage_surfaces');
      const surface = await findLiveSurface(services, resolved.workspace.id, params.surfaceSlug);
      await deleteSurface(services, caller, resolved, surface, { force: flagOn(query.force), content: documentContent(services) });
      return { ok: true as const };
    },
  ),
};
