import { ApiError, errors } from '../errors';
import type { Actor } from '../policy/actor';
import { loadCallerFacts } from '../persistence/access';
import { listInboxMessages, newestInboxMessageId, type InboxMessageRow } from '../persistence/inbox';
import { findWorkspacesByIds } from '../persistence/workspaces';
import { can, workspaceAccess } from '../policy/index';
import type { Services } from './services';

/**
 * A caller's inbox (API-DECISIONS "Events", agent wake-ups): messages
 * addressed to its principal, oldest first. Keys and OAuth tokens read it;
 * browser sessions have no inbox. A message is shown only while the calling
 * credential could read the comments of the workspace it came from, so a
 * key scoped to one workspace never sees what a mention elsewhere said.
 */

export type InboxMessage = {
  id: string;
  kind: string;
  createdAt: string;
} & Record<string, unknown>;

export function requireInboxCaller(actor: Actor) {
  if (actor.via === 'session') throw errors.forbidden('The inbox is for agents and apps: call it with an API key or an OAuth token.');
}

/** Where a new stream starts when the client names no cursor: after the newest message, so it hears only what comes next. */
export async function inboxTail(services: Services, actor: Actor): Promise<string | undefined> {
  return newestInboxMessageId(services.db, actor.principal.id);
}

function messageOf(row: InboxMessageRow): InboxMessage {
  const message: InboxMessage = { id: row.id, kind: row.kind, createdAt: row.createdAt.toISOString(), ...row.payload };
  // A comment kept before records named their surface (`surfaceName`) has no name to tell.
  const comment = message.comment;
  if (comment && typeof comment === 'object' && !('surfaceName' in comment)) message.comment = { ...comment, surfaceName: null };
  return message;
}

export type InboxPage = {
  messages: InboxMessage[];
  /** The cursor of the next page; null when this one was the last. */
  nextCursor: string | null;
  /** The last message read, shown or not: where a stream continues from. */
  lastId: string | null;
};

/** Messages after `after` (a message id), at most `limit` read. An unknown cursor is 404. */
export async function readInbox(services: Services, actor: Actor, query: { after?: string; limit: number }): Promise<InboxPage> {
  const rows = await listInboxMessages(services.db, {
    recipientId: actor.principal.id,
    afterId: query.after,
    workspaceId: actor.key?.scopeWorkspaceId ?? undefined,
    limit: query.limit,
  });
  if (rows === null) {
    throw new ApiError(404, 'not_found', 'No message with that id in your inbox.', [{ path: ['after'], code: 'message_not_found', message: 'Unknown cursor' }]);
  }
  const readable = await readableWorkspaces(services, actor, rows);
  return {
    messages: rows.filter((r) => r.workspaceId === null || readable.has(r.workspaceId)).map(messageOf),
    nextCursor: rows.length === query.limit ? rows.at(-1)!.id : null,
    lastId: rows.at(-1)?.id ?? null,
  };
}

async function readableWorkspaces(services: Services, actor: Actor, rows: InboxMessageRow[]): Promise<Set<string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.workspaceId ? [r.workspaceId] : [])))];
  const workspaces = await findWorkspacesByIds(services.db, ids);
  const facts = await loadCallerFacts(services.db, actor, workspaces);
  return new Set(workspaces.filter((w) => can(workspaceAccess(facts.get(w.id)!, w), 'read_comments', w)).map((w) => w.id));
}
