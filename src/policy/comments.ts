import type { Role } from '../model/roles';
import { can, workspaceAccess, type KeyRole, type UserFacts, type WorkspaceFacts } from './index';

/**
 * Comment rules that are about who someone is rather than their role:
 * ownership of a comment, and who a mention may wake. Pure, like the rest
 * of the policy; callers load the facts.
 */

/** Comment deletion is author-only (SPEC "Authentication" 5): not even a workspace owner deletes someone else's comment. */
export function canDeleteComment(callerPrincipalId: string, comment: { authorId: string }): boolean {
  return callerPrincipalId === comment.authorId;
}

/**
 * Whether a mention in a comment is one that wakes the mentioned agent
 * (SPEC "Comments" 4): a root comment's, and not the author's own. Replies
 * never wake, and nobody is woken for being the author of a target
 * (a row's creator, a file's uploader): only explicit mentions wake.
 */
export function mentionWakes(comment: { parentId: string | null; authorId: string }, agentId: string): boolean {
  return comment.parentId === null && comment.authorId !== agentId;
}

/** What an agent's reach into one workspace depends on: its live keys, its own row there, its owner's standing. */
export type AgentReach = {
  keys: Array<{ role: KeyRole; scopeWorkspaceId: string | null }>;
  membershipRole: Role | null;
  owner: UserFacts;
};

/**
 * Whether an agent could read a workspace's comments through at least one
 * of its live keys. A wake carries the comment's body, so an agent that
 * could not read it is not woken (an agent without live keys cannot read).
 */
export function agentMayReadComments(reach: AgentReach, workspace: WorkspaceFacts): boolean {
  return reach.keys.some((key) => {
    const access = workspaceAccess(
      { kind: 'agent', keyRole: key.role, keyScopeWorkspaceId: key.scopeWorkspaceId, membershipRole: reach.membershipRole, owner: reach.owner },
      workspace,
    );
    return can(access, 'read_comments', workspace);
  });
}
