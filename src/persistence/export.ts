import { sql } from 'kysely';
import type { Executor } from './database';

/**
 * Reads for the personal data export (GET /api/me/export). Each selects its
 * columns by name so a secret, a token hash or another user's field can
 * never slip in with a `selectAll`. Lists page with limit/offset over a
 * unique order, so the streamed export holds one page in memory at a time.
 */

export type Page = { limit: number; offset: number };

export async function exportProfile(db: Executor, userId: string) {
  return db
    .selectFrom('users')
    .innerJoin('principals', 'principals.id', 'users.id')
    .select(['users.id', 'users.email', 'principals.name', 'principals.avatarUrl', 'users.primaryOrgId', 'users.createdAt', 'users.lastSignInAt'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
}

export async function exportOrganisations(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('orgMembers')
    .innerJoin('orgs', 'orgs.id', 'orgMembers.orgId')
    .select(['orgs.id', 'orgs.slug', 'orgs.name', 'orgs.plan', 'orgs.defaultWorkspaceVisibility', 'orgMembers.role', 'orgMembers.joinedAt'])
    .where('orgMembers.userId', '=', userId)
    .orderBy('orgs.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** `column` holds the user or one of the agents they own: what either holds or wrote is the user's data. */
function isUserOrTheirAgent(column: string, userId: string) {
  return sql<boolean>`(${sql.ref(column)} = ${userId} or ${sql.ref(column)} in (select id from agents where owner_user_id = ${userId}))`;
}

export async function exportWorkspaces(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('workspaces')
    .innerJoin('orgs', 'orgs.id', 'workspaces.orgId')
    .select([
      'workspaces.id',
      'workspaces.slug',
      'workspaces.name',
      'workspaces.mode',
      'workspaces.visibility',
      'orgs.id as orgId',
      'orgs.slug as orgSlug',
      'workspaces.createdAt',
      'workspaces.archivedAt',
    ])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('memberships')
          .select('memberships.workspaceId')
          .whereRef('memberships.workspaceId', '=', 'workspaces.id')
          .where(isUserOrTheirAgent('memberships.principalId', userId)),
      ),
    )
    .orderBy('workspaces.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function exportMemberships(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('memberships')
    .select([
      'memberships.workspaceId',
      'memberships.principalType',
      'memberships.principalId',
      'memberships.role',
      'memberships.viaUserId',
      'memberships.pinnedAt',
      'memberships.joinedAt',
    ])
    .where(isUserOrTheirAgent('memberships.principalId', userId))
    .orderBy('memberships.workspaceId')
    .orderBy('memberships.principalId')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function exportAgents(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('agents')
    .innerJoin('principals', 'principals.id', 'agents.id')
    .select(['agents.id', 'agents.orgId', 'principals.name', 'principals.avatarUrl', 'agents.modelHint', 'agents.createdAt', 'agents.lastUsedAt'])
    .where('agents.ownerUserId', '=', userId)
    .orderBy('agents.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function exportKeys(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('apiKeys')
    .select([
      'apiKeys.id',
      'apiKeys.orgId',
      'apiKeys.agentId',
      'apiKeys.name',
      'apiKeys.prefix',
      'apiKeys.scopeWorkspaceId',
      'apiKeys.role',
      'apiKeys.createdAt',
      'apiKeys.lastUsedAt',
      'apiKeys.revokedAt',
    ])
    .where('apiKeys.ownerUserId', '=', userId)
    .orderBy('apiKeys.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Comments the user or their agents wrote, with where they were made (the body is theirs; the thread around it is not). */
export async function exportComments(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('comments')
    .innerJoin('workspaces', 'workspaces.id', 'comments.workspaceId')
    .select([
      'comments.id',
      'comments.workspaceId',
      'workspaces.slug as workspaceSlug',
      'comments.parentId',
      'comments.targetType',
      'comments.targetId',
      'comments.body',
      'comments.mentions',
      'comments.authorId',
      'comments.authorType as authorPrincipalType',
      'comments.correlationId',
      'comments.resolvedAt',
      'comments.createdAt',
      'comments.updatedAt',
    ])
    .where(isUserOrTheirAgent('comments.authorId', userId))
    .orderBy('comments.createdAt')
    .orderBy('comments.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Reactions the user or their agents added. */
export async function exportCommentReactions(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('commentReactions')
    .select(['commentReactions.commentId', 'commentReactions.principalId', 'commentReactions.emoji', 'commentReactions.createdAt'])
    .where(isUserOrTheirAgent('commentReactions.principalId', userId))
    .orderBy('commentReactions.createdAt')
    .orderBy('commentReactions.commentId')
    .orderBy('commentReactions.emoji')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Webhooks the user created; never their signing secrets. */
export async function exportWebhooks(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('webhooks')
    .select(['webhooks.id', 'webhooks.orgId', 'webhooks.workspaceId', 'webhooks.url', 'webhooks.events', 'webhooks.active', 'webhooks.createdAt', 'webhooks.updatedAt'])
    .where('webhooks.createdById', '=', userId)
    .orderBy('webhooks.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function exportSessions(db: Executor, userId: string, page: Page) {
  return db
    .selectFrom('sessions')
    .select(['sessions.id', 'sessions.createdAt', 'sessions.lastSeenAt', 'sessions.expiresAt', 'sessions.revokedAt', 'sessions.userAgent'])
    .where('sessions.userId', '=', userId)
    .orderBy('sessions.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}
