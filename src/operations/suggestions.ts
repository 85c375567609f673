import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
import { decideAllSuggestions, decideSuggestion, listWorkspaceSuggestions, loadSuggestion } from '../domain/suggestions';
import { Suggestion, SUGGESTION_STATUSES } from '../model/schemas/suggestions';
import { defineOperation } from './operation';
import { ADDRESS, READ, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const SurfaceSelector = {
  surface: z.string().min(1).max(100).optional().describe('Surface slug (a doc or table surface); all surfaces when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
};

const ListQuery = z.strictObject({
  ...SurfaceSelector,
  status: z.enum([...SUGGESTION_STATUSES, 'all']).default('open').describe('`open` (default), `accepted`, `rejected` or `all`'),
});

const SuggestionParams = z.object({ id: z.string().min(1).max(100).describe('Suggestion id') });
const SuggestionReply = z.object({ suggestion: Suggestion });
const SuggestionsReply = z.object({ suggestions: z.array(Suggestion) });

const DECIDE =
  'Needs the editor role. Accepting applies the change as one attributed to you (inserted text stays and removed text goes; a row change is written ' +
  'with its usual events); rejecting removes the proposal. 409 when it was decided already.';

function decision(accept: boolean) {
  const verb = accept ? 'accept' : 'reject';
  return defineOperation(
    {
      params: SuggestionParams, response: SuggestionReply,
      rest: {
        method: 'POST',
        path: `/api/suggestions/:id/${verb}`,
        summary: accept ? 'Accept a suggestion' : 'Reject a suggestion',
        description: `${DECIDE} Emits \`suggestion.${verb}ed\`.`,
        tags: ['suggestions'],
      },
      mcp: {
        name: `${verb}_suggestion`,
        title: accept ? 'Accept a suggestion' : 'Reject a suggestion',
        description: `${accept ? 'Accepts' : 'Rejects'} suggestion \`id\` (from list_suggestions). ${DECIDE}`,
        annotations: { ...WRITE, destructiveHint: !accept },
        joinsRuns: true,
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const loaded = await loadSuggestion(services, workspaceResolver(services), caller, params.id, 'decide_suggestions');
      return { suggestion: await decideSuggestion(services, caller, loaded, verb) };
    },
  );
}

function decisionOfAll(accept: boolean) {
  const verb = accept ? 'accept' : 'reject';
  return defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(SurfaceSelector), response: SuggestionsReply,
      rest: {
        method: 'POST',
        workspacePath: `/suggestions/${verb}-all`,
        summary: accept ? 'Accept every open suggestion' : 'Reject every open suggestion',
        description: `Of one surface (\`surface\` or \`surfaceId\`), or of the whole workspace; oldest first. Answers those decided. ${DECIDE}`,
        tags: ['suggestions'],
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'decide_suggestions');
      return { suggestions: await decideAllSuggestions(services, caller, resolved, query, verb) };
    },
  );
}

/** Suggestions (docs/SUGGESTIONS.md): REST routes and MCP tools, in this order in tools/list. */
export const suggestionOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: ListQuery, response: SuggestionsReply,
      rest: {
        method: 'GET',
        workspacePath: '/suggestions',
        summary: 'List suggestions',
        description:
          'Proposed changes to docs and rows, oldest first, open ones by default. An open doc suggestion carries its `inserted` and `removed` text and ' +
          'the text around it (`context`); a row suggestion its `change`, with `conflicts` for cells someone changed since the suggester read them.',
        tags: ['suggestions'],
      },
      mcp: {
        name: 'list_suggestions',
        title: 'List suggestions',
        description: `Open suggestions of a workspace (or one \`surface\`), with what each would change; \`status: "all"\` includes decided ones. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'read');
      return { suggestions: await listWorkspaceSuggestions(services, resolved, query) };
    },
  ),
  accept: decision(true),
  reject: decision(false),
  acceptAll: decisionOfAll(true),
  rejectAll: decisionOfAll(false),
};
