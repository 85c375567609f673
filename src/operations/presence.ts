import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { listPresence } from '../domain/presence';
import { PresenceList } from '../model/schemas/presence';
import { defineOperation } from './operation';
import { ADDRESS, READ } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const PresenceQuery = z.strictObject({
  surface: z.string().min(1).max(100).optional().describe('Surface slug (a table, doc or html surface); the primary surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
});

/**
 * Who has a surface open right now, on any instance (docs/SYNC.md,
 * "Presence"): an agent asks before it edits whether a person is looking.
 */
export const presenceOperations = {
  list: defineOperation(
    {
      params: WorkspaceParams, query: PresenceQuery, response: PresenceList,
      rest: {
        method: 'GET',
        workspacePath: '/presence',
        summary: 'Who has a surface open',
        description:
          'Every principal with the surface’s sync document open right now, on any instance: since when, how many connections, ' +
          'an agent’s `owner`, and `cursor` where its client shares one (the active cell of this table surface, or the selection in a doc as body positions). ' +
          'All table surfaces of a workspace share one document, so a table surface lists everyone on any sheet. ' +
          'Anyone who may read the workspace may ask; a files surface has no document and lists no one.',
        tags: ['presence'],
      },
      mcp: {
        name: 'get_presence',
        title: 'Who has a surface open',
        description:
          `Who has a surface (\`surface\` slug or \`surfaceId\`; the primary one when omitted) open right now: each principal with \`since\`, \`connections\`, an agent's \`owner\`, ` +
          `and \`cursor\` where the client shares it (\`{ type: "cell", rowId, column }\` in a table, \`{ type: "doc", anchor, head }\` in a doc, positions as get_doc's JSON). ` +
          `Call it before editing to see whether a person is looking at what you are about to change. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const caller = requireCaller(actor);
      const { workspace } = await resolveWorkspace(services, caller, addressOf(params), 'read');
      return listPresence(services, workspace, query);
    },
  ),
};
