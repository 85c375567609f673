import { z } from 'zod';
import { requireElevation } from '../domain/elevation';
import { documentContent } from '../domain/workspace-documents';
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
import { resolveWorkspace, type ResolvedWorkspace } from '../access/workspace-access';
import { authorize, type WorkspaceAction } from '../policy/index';
import { IsoDateTime, OverLimitBody, Slug, toIso, Visibility } from '../model/schemas/common';
import { defineOperation } from './operation';
import { ADDRESS, READ } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { flagOn, presentWorkspace, presentWorkspaceDetail, QueryFlag, Workspace, WorkspaceDetail, WorkspaceMode } from './workspace-schemas';
import { WorkspaceList } from '../model/schemas/workspaces';

const WorkspaceName = z.string().trim().min(1).max(200);

export const ListWorkspacesQuery = z.object({
  archived: QueryFlag.optional().describe('`1` lists archived workspaces only; by default they are left out'),
});

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
  timeZone: z
    .string()
    .max(100)
    .optional()
    .describe('IANA time zone name (`Europe/Paris`, `America/New_York`, `UTC`) that TODAY() and NOW() in formula columns read in; stored under its canonical spelling. 422 `invalid_time_zone` for a name the server does not know.'),
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
  timeZone: 'update_settings',
};

function actionsFor(patch: z.infer<typeof SettingsPatch>): WorkspaceAction[] {
  const fields = (Object.keys(patch) as Array<keyof typeof SETTING_ACTIONS>).filter((field) => patch[field] !== undefined);
  // An empty PATCH still asks for the right to change settings, so it answers like any other.
  return fields.length === 0 ? ['update_settings'] : [...new Set(fields.map((field) => SETTING_ACTIONS[field]))];
}

const pinState = (resolved: ResolvedWorkspace, pinnedAt: Date | null) => ({
  workspaceId: resolved.workspace.id,
  slug: resolved.workspace.slug,
  pinnedAt: toIso(pinnedAt),
});

/**
 * Workspaces: list, create, detail, settings, archive and unarchive, pins
 * (REST routes; list and detail are MCP tools too, in this order in
 * tools/list). `documentContent` reaches what lives in the documents:
 * seeding a new workspace, the detail's columns.
 */
export const workspaceOperations = {
  list: defineOperation(
    {
      query: ListWorkspacesQuery, response: WorkspaceList,
      rest: {
        method: 'GET',
        path: '/api/workspaces',
        summary: 'Workspaces the caller can access',
        description:
          'Memberships, org-visibility workspaces of your organisations and, for an API key, what the key reaches (its one workspace when scoped; otherwise what its owner reaches, capped by the key role). Pinned ones first (latest pin first), then newest first.',
        tags: ['workspaces'],
      },
      mcp: {
        name: 'list_workspaces',
        title: 'List workspaces',
        description: 'Workspaces you can access (pinned first, then newest). `archived: "1"` lists archived ones instead. Same as GET /api/workspaces.',
        annotations: READ,
      },
    },
    async (services, actor, { query }) => {
      const views = await listWorkspacesFor(services, requireCaller(actor), { archived: flagOn(query.archived) });
      return { workspaces: views.map(presentWorkspace) };
    },
  ),
  detail: defineOperation(
    {
      params: WorkspaceParams, response: WorkspaceDetail,
      rest: {
        method: 'GET',
        workspacePath: '',
        summary: 'Workspace detail',
        description: 'Readable without credentials when the workspace is public or unlisted. Adds columns, member count, surfaces and the org name.',
        tags: ['workspaces'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'get_workspace',
        title: 'Get a workspace',
        description: `One workspace with its surfaces (tables, docs), the columns of its primary table and its member count. ${ADDRESS} Same as GET /api/workspaces/{slug}.`,
        annotations: READ,
      },
    },
    async (services, actor, { params }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return presentWorkspaceDetail(await describeWorkspaceDetail(services, actor, resolved, documentContent(services)));
    },
  ),
  create: defineOperation(
    {
      body: CreateRequest, response: Workspace,
      rest: {
        method: 'POST',
        path: '/api/workspaces',
        summary: 'Create a workspace',
        description:
          "Created in the caller's organisation; the creator becomes owner (for an unscoped editor key: the key's owner owns it and the agent is an editor). Answers 200 with the workspace. 409 when the slug is taken in the organisation, 402 at the plan's workspace cap (archived workspaces do not count).",
        tags: ['workspaces'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { body }) => {
      const caller = requireCaller(actor);
      const id = await createWorkspaceFor(services, caller, body, documentContent(services));
      const created = await resolveWorkspace(services, caller, { slug: id }, 'read');
      return presentWorkspace(await describeWorkspace(services, caller, created));
    },
  ),
  update: defineOperation(
    {
      params: WorkspaceParams, body: SettingsPatch, response: Workspace,
      rest: {
        method: 'PATCH',
        workspacePath: '',
        summary: 'Change workspace settings',
        description:
          '`name`, `mode` and `timeZone` need the right to edit settings (editor); `visibility` and `commentsOnPublicShare` the right to share (editor). A bad value is 400 or 422 with `details` and changes nothing.',
        tags: ['workspaces'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const [firstAction, ...otherActions] = actionsFor(body);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), firstAction!);
      for (const action of otherActions) authorize(resolved.caller, resolved.workspace, action);
      const updated = await changeWorkspaceSettings(services, caller, resolved, body, documentContent(services));
      return presentWorkspace(await describeWorkspace(services, caller, { ...resolved, workspace: updated }));
    },
  ),
  archive: defineOperation(
    {
      params: WorkspaceParams, response: Workspace,
      rest: {
        method: 'DELETE',
        workspacePath: '',
        summary: 'Archive a workspace',
        description:
          'Soft-archive (editor): stamps archivedAt and the archiving principal and frees the plan slot; rows, docs, members and events are kept. Needs a session elevated for `workspace_delete` (401 `elevation_required` otherwise; API keys get 403). Answers the archived workspace; repeating it changes nothing.',
        tags: ['workspaces'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'archive');
      await requireElevation(services, caller, 'workspace_delete');
      const archived = await archiveWorkspace(services, caller, resolved);
      return presentWorkspace(await describeWorkspace(services, caller, { ...resolved, workspace: archived }));
    },
  ),
  unarchive: defineOperation(
    {
      params: WorkspaceParams, response: Workspace,
      rest: {
        method: 'POST',
        workspacePath: '/unarchive',
        summary: 'Unarchive a workspace',
        description:
          'Editor. Addresses the archived workspace with this slug (or pass its id). Idempotent on a live workspace; 409 when a live workspace has since taken the slug; 402 when the plan has no free workspace slot. Records `workspace.unarchived` with `previousArchivedAt`.',
        tags: ['workspaces'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'archive', { preferArchived: true });
      const live = await unarchiveWorkspace(services, caller, resolved);
      return presentWorkspace(await describeWorkspace(services, caller, { ...resolved, workspace: live }));
    },
  ),
  pin: defineOperation(
    {
      params: WorkspaceParams, response: PinState,
      rest: {
        method: 'POST',
        workspacePath: '/pin',
        summary: 'Pin a workspace for the calling principal',
        description: 'Pins are per principal and live on the membership row: access through org visibility or an owning user cannot pin (403). Repeating keeps the first pin time.',
        tags: ['workspaces'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'pin');
      return pinState(resolved, await setPinned(services, caller, resolved, true));
    },
  ),
  unpin: defineOperation(
    {
      params: WorkspaceParams, response: PinState,
      rest: {
        method: 'DELETE',
        workspacePath: '/pin',
        summary: 'Unpin a workspace for the calling principal',
        description: 'Answers 200 with `pinnedAt: null` whether or not it was pinned.',
        tags: ['workspaces'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'pin');
      return pinState(resolved, await setPinned(services, caller, resolved, false));
    },
  ),
};
