import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { cachedLiveSurfaces } from '../domain/live-surfaces';
import { revertRun } from '../domain/run-revert';
import { findWorkspaceRun, listWorkspaceRuns, presentRun, runChanges } from '../domain/runs';
import { errors } from '../errors';
import { flagOn, OverLimitBody, QueryFlag } from '../model/schemas/common';
import { ChangesResponse, ListResponse, RevertResponse, RunResponse } from '../model/schemas/runs';
import { can } from '../policy/index';
import { canEndRun } from '../policy/runs';
import { defineOperation } from './operation';
import { ADDRESS, DESTRUCTIVE, READ, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const RunParams = WorkspaceParams.extend({ runId: z.string().min(1).max(100).describe('Run id (start_run, list_runs, or the Trellis-Run header of a write)') });

const StartBody = z.strictObject({ name: z.string().trim().min(1).max(200).describe('What the run is for, as people will see it') });

const ListQuery = z.strictObject({
  principal: z.string().min(1).max(100).optional().describe('Only the runs of this principal (user or agent id)'),
  status: z.enum(['open', 'ended']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(500).optional().describe('The nextCursor of the previous page'),
});

const EndBody = z.strictObject({ status: z.literal('ended').default('ended').describe('`ended`: the run takes no more writes') });

const RevertQuery = z.strictObject({
  dryRun: z.union([z.boolean(), QueryFlag]).optional().describe('`true`: answer what the revert would do (counts and conflicts) and change nothing'),
});

const RUNS = 'A run is a unit of one principal’s work in a workspace (docs/RUNS.md).';

/**
 * Runs (docs/RUNS.md): REST routes and MCP tools (start_run, end_run,
 * list_runs, get_run_changes, revert_run, in this order in tools/list).
 * Reading runs is `read`; starting and ending one's own is `start_runs`;
 * reverting is the run's own principal's, or `revert_runs` with write
 * access to every surface the run touched (src/policy/runs.ts, asked by
 * the domain, which knows the surfaces).
 */
export const runOperations = {
  start: defineOperation(
    {
      params: WorkspaceParams, body: StartBody, response: RunResponse,
      rest: {
        method: 'POST',
        workspacePath: '/runs',
        created: true,
        summary: 'Start a run',
        description:
          `${RUNS} Writes that name it (header \`Trellis-Run\`, MCP \`run\`, sync \`?run=\`) join it until it is ended. ` +
          'Emits `run.started`. Whoever may write anything in the workspace (commenter and up).',
        tags: ['runs'],
      },
      mcp: {
        name: 'start_run',
        title: 'Start a run',
        description:
          `Starts a run named \`name\` and answers its id: pass it as \`run\` to your write tools (or the Trellis-Run header) so people can review and revert that work as one unit, then end_run. ` +
          `Without one, your writes join an automatic run that ends after 15 minutes without writes. ${ADDRESS}`,
        annotations: WRITE,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'start_runs');
      return presentRun(services, await services.runs.start(caller, resolved.workspace.id, body.name));
    },
  ),
  end: defineOperation(
    {
      params: RunParams, body: EndBody, response: RunResponse,
      rest: {
        method: 'PATCH',
        workspacePath: '/runs/:runId',
        summary: 'End a run',
        description: 'Ends the run: a write naming it afterwards is 409 `run_ended`. Ending an ended run changes nothing. Emits `run.ended`. The run’s own principal.',
        tags: ['runs'],
      },
      mcp: {
        name: 'end_run',
        title: 'End a run',
        description: `Ends run \`runId\` (yours), when its work is done: it takes no more writes. ${ADDRESS}`,
        annotations: { ...WRITE, idempotentHint: true },
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'start_runs');
      const run = await findWorkspaceRun(services, resolved.workspace.id, params.runId);
      if (!canEndRun(caller.principal.id, run)) throw errors.forbidden('Only the principal who started a run ends it.');
      return presentRun(services, await services.runs.end(run, services.clock.now(), caller.principal));
    },
  ),
  list: defineOperation(
    {
      params: WorkspaceParams, query: ListQuery, response: ListResponse,
      rest: {
        method: 'GET',
        workspacePath: '/runs',
        summary: 'List runs',
        description: `${RUNS} Newest first, each with a summary of what it changed. Page with \`after\` = \`nextCursor\`. Whoever can read the workspace.`,
        tags: ['runs'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'list_runs',
        title: 'List runs',
        description: `The runs of a workspace, newest first: whose, when, open or ended, and how many rows, cells, columns and docs each changed. Filter with \`principal\` and \`status\`; page with \`after\` = \`nextCursor\`. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return listWorkspaceRuns(services, resolved.workspace.id, query, await cachedLiveSurfaces(services, resolved.workspace.id));
    },
  ),
  get: defineOperation(
    {
      params: RunParams, response: RunResponse,
      rest: {
        method: 'GET',
        workspacePath: '/runs/:runId',
        summary: 'Show a run',
        description: 'The run with a summary of what it changed: rows created, updated and deleted, cells and columns changed, docs changed, the surfaces. Whoever can read the workspace.',
        tags: ['runs'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      return presentRun(services, await findWorkspaceRun(services, resolved.workspace.id, params.runId));
    },
  ),
  changes: defineOperation(
    {
      params: RunParams, response: ChangesResponse,
      rest: {
        method: 'GET',
        workspacePath: '/runs/:runId/changes',
        summary: 'What a run changed',
        description:
          'Per surface, in the order the run first changed each: rows created (their cells), deleted (their cells before), updated (each cell before the run’s first change and after its last) and moved; ' +
          'columns added, changed and removed; doc and html text inserted and deleted (in document order); files added and deleted; comments made. Read from the run’s own record, ' +
          'so it holds after compaction, restarts and version restores. Whoever can read the workspace (files and comments: who can read those).',
        tags: ['runs'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'get_run_changes',
        title: 'What a run changed',
        description:
          'What run `runId` changed, per surface: rows created, deleted, moved and updated (each cell with `before` and `after`), columns, doc and html text inserted and deleted, files, comments. ' +
          `Use it to review an agent's work before keeping or reverting it. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const run = await findWorkspaceRun(services, resolved.workspace.id, params.runId);
      const surfaces = await cachedLiveSurfaces(services, resolved.workspace.id);
      const reads = { files: can(resolved.access, 'read_files', resolved.workspace), comments: can(resolved.access, 'read_comments', resolved.workspace) };
      return runChanges(services, run, surfaces, reads);
    },
  ),
  revert: defineOperation(
    {
      params: RunParams, query: RevertQuery, response: RevertResponse,
      rest: {
        method: 'POST',
        workspacePath: '/runs/:runId/revert',
        summary: 'Revert a run',
        description:
          'Undoes what the run changed and keeps everyone’s later work: rows it created go, rows it deleted come back with their cells, cells go back to their value before it, moved rows go back, ' +
          'columns it added go and removed ones come back, text it inserted goes and text it deleted comes back where it was. Where someone changed a place after the run, their value stays ' +
          'and the place is a conflict (before, run, now). The revert is a run of yours (`revertRun`, also the `Trellis-Run` header), so reverting it applies the run again. ' +
          '`dryRun=true` answers the same and changes nothing. Emits `run.reverted` and the usual row and doc events. The run’s own principal, or an editor who may write every surface it touched; ' +
          'never a suggest-only key. 402 when rows it deleted would pass the row cap.',
        tags: ['runs'],
        responses: { 402: OverLimitBody },
      },
      mcp: {
        name: 'revert_run',
        title: 'Revert a run',
        description:
          'Undoes what run `runId` changed while keeping everyone else’s later edits; places someone changed since come back as `conflicts` (before, run, now) and keep their value. ' +
          `Call with \`dryRun: true\` first to see counts and conflicts. The answer's \`revertRun\` can be reverted to apply the run again. ${ADDRESS}`,
        annotations: DESTRUCTIVE,
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'read');
      const dryRun = query.dryRun === true || (typeof query.dryRun === 'string' && flagOn(query.dryRun));
      return revertRun(services, caller, resolved, params.runId, { dryRun });
    },
  ),
};
