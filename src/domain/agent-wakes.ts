import type { Principal } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { newId } from '../lib/ids';
import { loadAgentReach } from '../persistence/access';
import { claimWake, insertInboxMessage } from '../persistence/inbox';
import { agentMayReadComments, mentionWakes } from '../policy/comments';
import type { Services } from './services';
import type { CommentMention } from './comment-mentions';

/**
 * Mention wake-ups (SPEC "Comments" 4, API-DECISIONS "Events"): a root
 * comment that mentions an agent puts a message in that agent's inbox.
 * Each wake is decided and delivered on its own, after the comment has
 * committed, and nothing here ever fails the comment: a failure is
 * reported in the wake's status and logged.
 */

/** Within this window a recipient is woken once per thread location. */
export const WAKE_DEDUP_MS = 60_000;

export type WakeStatus =
  /** In the inbox, counted on the organisation's messages meter. */
  | 'delivered'
  /** Already woken for this thread location within the last 60 s. */
  | 'deduplicated'
  /** The organisation reached its plan's hard ceiling of messages this month. */
  | 'limit_reached'
  /** The agent could not read this workspace's comments through any live key. */
  | 'no_access'
  /** Something failed on the way; the comment stands. */
  | 'failed';

export type Wake = { agentId: string; status: WakeStatus };

export type WakeContext = {
  resolved: ResolvedWorkspace;
  comment: { id: string; parentId: string | null; authorId: string; mentions: CommentMention[] } & Record<string, unknown>;
  author: Principal;
  threadKey: string;
};

class CeilingReached extends Error {}

/** Wakes every agent the comment mentions that a mention may wake; one status per agent considered. */
export async function wakeMentionedAgents(services: Services, context: WakeContext): Promise<Wake[]> {
  const agents = context.comment.mentions.filter((m) => m.kind === 'agent' && mentionWakes(context.comment, m.id));
  const wakes: Wake[] = [];
  for (const agent of agents) {
    const status = await wakeOne(services, context, agent.id).catch((error: unknown) => {
      services.log.warn({ err: error, agentId: agent.id, commentId: context.comment.id }, 'mention wake failed; the comment is kept');
      return 'failed' as const;
    });
    if (status === 'limit_reached') {
      services.log.warn({ orgId: context.resolved.workspace.orgId, agentId: agent.id, commentId: context.comment.id }, 'messages hard ceiling reached; wake not delivered');
    }
    wakes.push({ agentId: agent.id, status });
  }
  return wakes;
}

async function wakeOne(services: Services, context: WakeContext, agentId: string): Promise<WakeStatus> {
  const { workspace, orgSlug } = context.resolved;
  const reach = await loadAgentReach(services.db, agentId, workspace);
  if (!reach || !agentMayReadComments(reach, workspace)) return 'no_access';

  const now = services.clock.now();
  const status = await services.db
    .transaction()
    .execute(async (tx) => {
      const fresh = await claimWake(tx, { recipientId: agentId, threadKey: context.threadKey, now, cutoff: new Date(now.getTime() - WAKE_DEDUP_MS) });
      if (!fresh) return 'deduplicated' as const;
      // The workspace's organisation pays for the messages its comments send.
      const counted = await services.limits.messages.countDelivery(tx, workspace.orgId);
      if (!counted.counted) throw new CeilingReached();
      await insertInboxMessage(tx, {
        id: newId('msg'),
        recipientId: agentId,
        orgId: workspace.orgId,
        workspaceId: workspace.id,
        kind: 'mention',
        payload: JSON.stringify({
          workspace: { id: workspace.id, slug: workspace.slug, org: { slug: orgSlug } },
          from: context.author,
          comment: context.comment,
        }),
        createdAt: now,
      });
      return 'delivered' as const;
    })
    .catch((error: unknown) => {
      // Rolled back with the dedup claim, so a wake after the month turns is not mistaken for a duplicate.
      if (error instanceof CeilingReached) return 'limit_reached' as const;
      throw error;
    });
  if (status === 'delivered') services.inbox.notify(agentId);
  return status;
}
