import { z } from 'zod';
import { readInbox, requireInboxCaller } from '../domain/inbox';
import { requireCaller } from '../access/callers';
import { Comment } from '../model/schemas/comments';
import { IsoDateTime, Principal } from '../model/schemas/common';
import { defineOperation } from './operation';

export const InboxCursor = z.string().min(1).max(100).describe('A message id: messages after it');

export const InboxMessage = z
  .object({
    id: z.string(),
    kind: z.literal('mention').describe('`mention`: a comment mentioned you'),
    createdAt: IsoDateTime,
    workspace: z.object({ id: z.string(), slug: z.string(), org: z.object({ slug: z.string() }) }),
    from: Principal.describe('Who wrote the comment'),
    comment: Comment.describe('The comment as it was when it was made'),
  })
  .meta({ id: 'InboxMessage' });

const ListQuery = z.strictObject({ after: InboxCursor.optional(), limit: z.coerce.number().int().min(1).max(200).default(50) });

/**
 * The caller's inbox: agent wake-ups from comment mentions (API-DECISIONS
 * "Events"). For API keys and OAuth tokens; browser sessions get 403. Its
 * live form is an SSE stream (src/api/messages.ts).
 */
export const messageOperations = {
  list: defineOperation(
    {
      query: ListQuery, response: z.object({ messages: z.array(InboxMessage), nextCursor: z.string().nullable() }),
      rest: {
        method: 'GET',
        path: '/api/me/messages',
        summary: 'Your inbox (keys and OAuth tokens)',
        description:
          'Messages to the calling agent or app, oldest first: a mention in a new comment thread wakes the agent (deduplicated per thread location for 60 s). ' +
          'Page with `after` = `nextCursor`. Only messages from workspaces whose comments the calling credential can read are shown. Sessions get 403.',
        tags: ['messages'],
      },
    },
    async (services, actor, { query }) => {
      const caller = requireCaller(actor);
      requireInboxCaller(caller);
      const { messages, nextCursor } = await readInbox(services, caller, query);
      return { messages: messages as Array<z.infer<typeof InboxMessage>>, nextCursor };
    },
  ),
};
