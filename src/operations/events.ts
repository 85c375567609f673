import { z } from 'zod';
import type { EventRecord } from '../model/event-record';
import { resolveWorkspace, type ResolvedWorkspace } from '../access/workspace-access';
import { listWorkspaceEvents } from '../persistence/events';
import { can } from '../policy/index';
import { Event, EventPage } from '../model/schemas/events';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';

const AuditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  action: z.string().min(1).max(100).optional().describe('An event name, e.g. row.created'),
  before: z.string().regex(/^\d+$/).optional().describe('The nextCursor of the previous page'),
});

/** Comment events reach public readers only when the workspace shares comments publicly. */
export function visibleTo(resolved: ResolvedWorkspace, record: EventRecord): boolean {
  if (record.event.startsWith('comment.')) return can(resolved.access, 'read_comments', resolved.workspace);
  // File events carry names and share URLs: members only, like the files themselves.
  if (record.event.startsWith('file.') || record.event.startsWith('folder.')) return can(resolved.access, 'read_files', resolved.workspace);
  return true;
}

/** A workspace's audit log; its live form is the SSE stream in src/api/events.ts. */
export const eventOperations = {
  audit: defineOperation(
    {
      params: WorkspaceParams, query: AuditQuery, response: EventPage,
      rest: { method: 'GET', workspacePath: '/events', summary: 'Audit log, newest first', tags: ['events'] },
    },
    async (services, actor, { params, query }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { limit, action, before } = query;
      const events = (
        await listWorkspaceEvents(services.db, resolved.workspace.id, { limit, action, before: before === undefined ? undefined : Number(before) })
      ).filter((e) => visibleTo(resolved, e));
      return { events, nextCursor: events.length === limit ? events.at(-1)!.eventId : null };
    },
  ),
};
