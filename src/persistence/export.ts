import type { ExpressionBuilder } from 'kysely';
import type { Executor } from './database';
import type { Database } from './schema';

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

/** Memberships of the user and of the agents they own: both are the user's data. */
function heldByUserOrTheirAgents(userId: string) {
  return (eb: ExpressionBuilder<Database, 'memberships'>) =>
    eb.or([
      eb('memberships.principalId', '=', userId),
      eb('memberships.principalId', 'in', eb.selectFrom('agents').select('agents.id').where('agents.ownerUserId', '=', userId)),
    ]);
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
          .where(heldByUserOrTheirAgents(userId)),
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
    .where(heldByUserOrTheirAgents(userId))
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
