import type { Executor } from './database';
import type { PrincipalKind, Role } from './schema';

/** What a presented credential resolves to. */
export type SessionCredential = {
  sessionId: string;
  sessionCreatedAt: Date;
  userId: string;
  orgId: string | null;
  name: string;
  avatarUrl: string | null;
  email: string;
};

export type KeyCredential = {
  keyId: string;
  role: Exclude<Role, 'owner'>;
  scopeWorkspaceId: string | null;
  suggestOnly: boolean;
  agentId: string;
  agentName: string;
  agentAvatarUrl: string | null;
  orgId: string;
  ownerUserId: string;
};

export async function findLiveSession(db: Executor, tokenHash: string, now: Date): Promise<SessionCredential | null> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.userId')
    .innerJoin('principals', 'principals.id', 'users.id')
    .select([
      'sessions.id as sessionId',
      'sessions.createdAt as sessionCreatedAt',
      'users.id as userId',
      'users.primaryOrgId as orgId',
      'users.email',
      'principals.name',
      'principals.avatarUrl',
    ])
    .where('sessions.tokenHash', '=', tokenHash)
    .where('sessions.revokedAt', 'is', null)
    .where('sessions.expiresAt', '>', now)
    .executeTakeFirst();
  return row ?? null;
}

export async function findLiveKey(db: Executor, secretHash: string): Promise<KeyCredential | null> {
  const row = await db
    .selectFrom('apiKeys')
    .innerJoin('principals', 'principals.id', 'apiKeys.agentId')
    .select([
      'apiKeys.id as keyId',
      'apiKeys.role',
      'apiKeys.scopeWorkspaceId',
      'apiKeys.suggestOnly',
      'apiKeys.agentId',
      'apiKeys.orgId',
      'apiKeys.ownerUserId',
      'principals.name as agentName',
      'principals.avatarUrl as agentAvatarUrl',
    ])
    .where('apiKeys.secretHash', '=', secretHash)
    .where('apiKeys.revokedAt', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

export type PrincipalRef = { principalType: PrincipalKind; id: string };
