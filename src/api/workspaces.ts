import { z } from 'zod';
import { requireElevation } from '../domain/elevation';
import { placeholderContent, type WorkspaceContent } from '../domain/workspace-content';
import {
  archiveWorkspace,
  changeWorkspaceSettings,
  createWorkspaceFor,
  describeWorkspace,
  describeWorkspaceDetail,
  listWorkspacesFor,
  setPinned,
  unarchiveWorkspace,
} from '../domain/workspaces';
import { requireCaller } from '../access/callers';
import { requireActor } from '../http/authenticate';
import { defineOperation } from '../operations/operation';
import type { App } from '../http/types';
import { resolveWorkspace, type ResolvedWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import { authorize, type WorkspaceAction } from '../policy/index';
import type { Services } from '../services';
import { errorResponses, IsoDateTime, OverLimitBody, Slug, toIso, Visibility } from '../model/schemas/common';
import { flagOn, presentWorkspace, presentWorkspaceDetail, QueryFlag, Workspace, WorkspaceDetail, WorkspaceMode } from './workspace-schemas';

const WorkspaceName = z.string().trim().min(1).max(200);

export const ListWorkspacesQuery = z.object({
  archived: QueryFlag.optional().describe('`1` lists archived workspaces only; by default they are left out'),
});
const WorkspaceList = z.object({ workspaces: z.array(Workspace) }).meta({ id: 'WorkspaceList' });

const CreateRequest = z.strictObject({
  name: WorkspaceName,
  slug: Slug.describe('Unique among the live workspaces of the organisation'),
  mode: WorkspaceMode,
  visibility: Visibility.optional().describe("Defaults to the organisation's defaultWorkspaceVisibility"),
  initialMarkdown: z
    .string()
    .max(1_000_000)
    .optional()
    .describe('Seeds the doc body (CommonMark + GFM); forces mode `doc` and creates only the doc surface'),
});

const SettingsPatch = z.strictObject({
  name: WorkspaceName.optional(),
  mode: WorkspaceMode.optional(),
  visibility: Visibility.optional(),
  commentsOnPublicShare: z.boolean().optional(),
});

const PinState = z
  .object({ workspaceId: z.string(), slug: z.string(), pinnedAt: IsoDateTime.nullable() })
  .meta({ id: 'WorkspacePin' });

/** Which policy action each setting needs: renaming is editing, visibility is sharing. */
const SETTING_ACTIONS: Record<keyof z.infer<typeof SettingsPatch>, WorkspaceAction> = {
  name: 'update_settings',
  mode: 'update_settings',
  visibility: 'share',
  commentsOnPublicShare: 'share',
};

function actionsFor(patch: z.infer<typeof SettingsPatch>): WorkspaceAction[] {
  const fields = (Object.keys(patch) as Array<keyof typeof SETTING_ACTIONS>).filter((field) => patch[field] !== undefined);
  // An empty PATCH still asks for the right to change settings, so it answers like any other.
  return fields.length === 0 ? ['update_settings'] : [...new Set(fields.map((field) => SETTING_ACTIONS[field]))];
}

/** The list and detail routes' policy check and domain call; the MCP tools (src/mcp/tools.ts) run the same ones. */
export function workspaceOperations(content: WorkspaceContent) {
  return {
    list: defineOperation({ query: ListWorkspacesQuery, response: WorkspaceList }, async (services, actor, { query }) => {
      const views = await listWorkspacesFor(services, requireCaller(actor), { archived: flagOn(query.archived) });
      return { workspaces: views.map(presentWorkspace) };
    }),
    detail: defineOperation({ params: WorkspaceParams, response: WorkspaceDetail }, async (services, actor, { params }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return presentWorkspaceDetail(await describeWorkspaceDetail(services, actor, resolved, content));
    }),
  };
}

/**
 * Workspaces: list, create, detail, settings, archive and unarchive, pins.
 * `content` reaches what lives in the documents: seeding a new workspace,
 * the detail's columns.
 */
export async function workspaceRoutes(app: App, services: Services, content: WorkspaceContent = placeholderContent) {
  const { list, detail } = workspaceOperations(content);
  app.get(
    '/api/workspaces',
    {
      schema: {
        summary: 'Workspaces the caller can access',
        description:
          'Memberships, org-visibility workspaces of your organisations and, for an API key, what the key reaches (its one workspace when scoped; otherwise what its owner reaches, capped by the key role). Pinned ones first (latest pin first), then newest first.',
        tags: ['workspaces'],
        querystring: list.query,
        response: { 200: list.response, ...errorResponses },
      },
    },
    async (request) => list.run(services, request.actor, request),
  );

  app.post(
    '/api/workspaces',
    {
      schema: {
        summary: 'Create a workspace',
        description:
          "Created in the caller's organisation; the creator becomes owner (for an unscoped editor key: the key's owner owns it and the agent is an editor). Answers 200 with the workspace. 409 when the slug is taken in the organisation, 402 at the plan's workspace cap (archived workspaces do not count).",
        tags: ['workspaces'],
        body: CreateRequest,
        response: { 200: Workspace, 402: OverLimitBody, ...errorResponses },
      },
    },
    async (request) => {
      const actor = requireActor(request);
      const id = await createWorkspaceFor(services, actor, request.body, content);
      const created = await resolveWorkspace(services, actor, { slug: id }, 'read');
      return presentWorkspace(await describeWorkspace(services, actor, created));
    },
  );

  for (const path of workspacePaths()) {
    app.get(
      path,
      {
        schema: {
          summary: 'Workspace detail',
          description: 'Readable without credentials when the workspace is public or unlisted. Adds columns, member count, surfaces and the org name.',
          tags: ['workspaces'],
          params: detail.params,
          response: { 200: detail.response, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => detail.run(services, request.actor, request),
    );

    app.patch(
      path,
      {
        schema: {
          summary: 'Change workspace settings',
          description: '`name` and `mode` need the right to edit settings (editor); `visibility` and `commentsOnPublicShare` the right to share (editor).',
          tags: ['workspaces'],
          params: WorkspaceParams,
          body: SettingsPatch,
          response: { 200: Workspace, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const [firstAction, ...otherActions] = actionsFor(request.body);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), firstAction!);
        for (const action of otherActions) authorize(resolved.caller, resolved.workspace, action);
        const updated = await changeWorkspaceSettings(services, actor, resolved, request.body);
        return presentWorkspace(await describeWorkspace(services, actor, { ...resolved, workspace: updated }));
      },
    );

    app.delete(
      path,
      {
        schema: {
          summary: 'Archive a workspace',
          description:
            'Soft-archive (editor): stamps archivedAt and the archiving principal and frees the plan slot; rows, docs, members and events are kept. Needs a session elevated for `workspace_delete` (401 `elevation_required` otherwise; API keys get 403). Answers the archived workspace; repeating it changes nothing.',
          tags: ['workspaces'],
          params: WorkspaceParams,
          response: { 200: Workspace, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'archive');
        await requireElevation(services, actor, 'workspace_delete');
        const archived = await archiveWorkspace(services, actor, resolved);
        return presentWorkspace(await describeWorkspace(services, actor, { ...resolved, workspace: archived }));
      },
    );
  }

  for (const path of workspacePaths('/unarchive')) {
    app.post(
      path,
      {
        schema: {
          summary: 'Unarchive a workspace',
          description:
            'Editor. Addresses the archived workspace with this slug (or pass its id). Idempotent on a live workspace; 409 when a live workspace has since taken the slug; 402 when the plan has no free workspace slot. Records `workspace.unarchived` with `previousArchivedAt`.',
          tags: ['workspaces'],
          params: WorkspaceParams,
          response: { 200: Workspace, 402: OverLimitBody, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'archive', { preferArchived: true });
        const live = await unarchiveWorkspace(services, actor, resolved);
        return presentWorkspace(await describeWorkspace(services, actor, { ...resolved, workspace: live }));
      },
    );
  }

  for (const path of workspacePaths('/pin')) {
    const pinState = (resolved: ResolvedWorkspace, pinnedAt: Date | null) => ({
      workspaceId: resolved.workspace.id,
      slug: resolved.workspace.slug,
      pinnedAt: toIso(pinnedAt),
    });

    app.post(
      path,
      {
        schema: {
          summary: 'Pin a workspace for the calling principal',
          description: 'Pins are per principal and live on the membership row: access through org visibility or an owning user cannot pin (403). Repeating keeps the first pin time.',
          tags: ['workspaces'],
          params: WorkspaceParams,
          response: { 200: PinState, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'pin');
        return pinState(resolved, await setPinned(services, actor, resolved, true));
      },
    );

    app.delete(
      path,
      {
        schema: {
          summary: 'Unpin a workspace for the calling principal',
          description: 'Answers 200 with `pinnedAt: null` whether or not it was pinned.',
          tags: ['workspaces'],
          params: WorkspaceParams,
          response: { 200: PinState, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'pin');
        return pinState(resolved, await setPinned(services, actor, resolved, false));
      },
    );
  }
}
