import type { Executor } from './database';
import type { KeyRole } from '../model/permissions';
import type { ApiKeysTable, Role } from './schema';

/** API keys. Secrets never reach this module: only their hash is stored, and no read returns it. */

export type { KeyRole };

/** A key as listings show it: no hash, with its agent, owner and scope resolved. */
export type KeyRecord = {
  id: string;
  orgId: string;
  name: string;
  prefix: string;
  role: KeyRole;
  scopeWorkspaceId: string | null;
  scopeSlug: string | null;
  suggestOnly: boolean;
  agentId: string;
  agentName: string;
  agentAvatarUrl: string | null;
  ownerUserId: string;
  ownerName: string;
  ownerAvatarUrl: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

export async function insertApiKey(
  db: Executor,
  key: Pick<ApiKeysTable, 'id' | 'orgId' | 'agentId' | 'ownerUserId' | 'name' | 'prefix' | 'secretHash' | 'scopeWorkspaceId' | 'role'> & {
    suggestOnly: boolean;
    createdAt: Date;
  },
) {
  await db.insertInto('apiKeys').values(key).execute();
}

/** Plan counting rule 1: an agent counts while it holds at least one non-revoked key. */
export async function countActiveAgents(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('apiKeys')
    .select((eb) => eb.fn.count<number>('agentId').distinct().as('n'))
    .where('orgId', '=', orgId)
    .where('revokedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function agentHasLiveKey(db: Executor, agentId: string): Promise<boolean> {
  const row = await db.selectFrom('apiKeys').select('id').where('agentId', '=', agentId).where('revokedAt', 'is', null).executeTakeFirst();
  return Boolean(row);
}

function keyQuery(db: Executor) {
  return db
    .selectFrom('apiKeys')
    .innerJoin('principals as agent', 'agent.id', 'apiKeys.agentId')
    .innerJoin('principals as owner', 'owner.id', 'apiKeys.ownerUserId')
    .leftJoin('workspaces as scope', 'scope.id', 'apiKeys.scopeWorkspaceId')
    .select([
      'apiKeys.id',
      'apiKeys.orgId',
      'apiKeys.name',
      'apiKeys.prefix',
      'apiKeys.role',
      'apiKeys.scopeWorkspaceId',
      'scope.slug as scopeSlug',
      'apiKeys.suggestOnly',
      'apiKeys.agentId',
      'agent.name as agentName',
      'agent.avatarUrl as agentAvatarUrl',
      'apiKeys.ownerUserId',
      'owner.name as ownerName',
      'owner.avatarUrl as ownerAvatarUrl',
      'apiKeys.createdAt',
      'apiKeys.lastUsedAt',
      'apiKeys.revokedAt',
    ]);
}

/** Keys of an organisation, newest first; narrowed to one owner and/or one agent when given. */
export async function listKeys(db: Executor, filter: { orgId: string; ownerUserId?: string; agentId?: string }): Promise<KeyRecord[]> {
  let query = keyQuery(db).where('apiKeys.orgId', '=', filter.orgId);
  if (filter.ownerUserId) query = query.where('apiKeys.ownerUserId', '=', filter.ownerUserId);
  if (filter.agentId) query = query.where('apiKeys.agentId', '=', filter.agentId);
  return query.orderBy('apiKeys.createdAt', 'desc').orderBy('apiKeys.id').execute();
}

export async function findKeyInOrg(db: Executor, orgId: string, keyId: string): Promise<KeyRecord | undefined> {
  return keyQuery(db).where('apiKeys.orgId', '=', orgId).where('apiKeys.id', '=', keyId).executeTakeFirst();
}

/** Revokes once: a second revocation keeps the first timestamp. Returns whether this call revoked it. */
export async function revokeApiKey(db: Executor, keyId: string, at: Date): Promise<boolean> {
  const result = await db.updateTable('apiKeys').set({ revokedAt: at }).where('id', '=', keyId).where('revokedAt', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Stamps `last_used_at` on a key and its agent, at most once a minute: the
 * `where` makes every other call a no-op update that touches no row, so it
 * is cheap enough to run on each authenticated request.
 */
export async function touchKeyLastUsed(db: Executor, use: { keyId: string; agentId: string; at: Date }) {
  const staleBefore = new Date(use.at.getTime() - LAST_USED_RESOLUTION_MS);
  const touched = await db
    .updateTable('apiKeys')
    .set({ lastUsedAt: use.at })
    .where('id', '=', use.keyId)
    .where((eb) => eb.or([eb('lastUsedAt', 'is', null), eb('lastUsedAt', '<', staleBefore)]))
    .executeTakeFirst();
  if (Number(touched.numUpdatedRows) === 0) return;
  await db.updateTable('agents').set({ lastUsedAt: use.at }).where('id', '=', use.agentId).execute();
}
