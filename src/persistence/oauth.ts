import type { Executor } from './database';
import type { Selectable } from 'kysely';
import type { OAuthAuthorizationCodesTable, OAuthClientAuthMethod, OAuthGrantsTable } from './schema';

/**
 * OAuth clients, authorization codes, grants and tokens. Codes, tokens and
 * client secrets arrive here already hashed; no read returns a hash except
 * the client's, which only the token endpoint compares.
 */

export type OAuthClientRecord = {
  id: string;
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: OAuthClientAuthMethod;
  scope: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
};

export async function insertOAuthClient(db: Executor, client: OAuthClientRecord) {
  await db
    .insertInto('oauthClients')
    .values({ ...client, redirectUris: JSON.stringify(client.redirectUris), metadata: JSON.stringify(client.metadata) })
    .execute();
}

export async function findOAuthClient(db: Executor, clientId: string): Promise<OAuthClientRecord | null> {
  const row = await db.selectFrom('oauthClients').selectAll().where('id', '=', clientId).executeTakeFirst();
  return row ?? null;
}

// Authorization codes

export type AuthorizationCodeRecord = Selectable<OAuthAuthorizationCodesTable>;

export async function insertAuthorizationCode(db: Executor, code: Omit<AuthorizationCodeRecord, 'usedAt' | 'grantId'>) {
  await db.insertInto('oauthAuthorizationCodes').values(code).execute();
}

/** The code row, locked: its exchange and a concurrent replay are decided one after the other. */
export async function lockAuthorizationCode(db: Executor, codeHash: string): Promise<AuthorizationCodeRecord | null> {
  const row = await db.selectFrom('oauthAuthorizationCodes').selectAll().where('codeHash', '=', codeHash).forUpdate().executeTakeFirst();
  return row ?? null;
}

export async function markAuthorizationCodeUsed(db: Executor, codeHash: string, grantId: string, now: Date) {
  await db.updateTable('oauthAuthorizationCodes').set({ usedAt: now, grantId }).where('codeHash', '=', codeHash).execute();
}

/** Codes live minutes; expired ones are swept whenever a new one is issued. */
export async function deleteExpiredAuthorizationCodes(db: Executor, now: Date) {
  await db.deleteFrom('oauthAuthorizationCodes').where('expiresAt', '<', now).execute();
}

// Grants and tokens

export async function insertGrant(db: Executor, grant: Pick<OAuthGrantsTable, 'id' | 'clientId' | 'userId' | 'scopes' | 'resource'> & { createdAt: Date; expiresAt: Date }) {
  await db.insertInto('oauthGrants').values(grant).execute();
}

export async function insertTokens(
  db: Executor,
  tokens: Array<{ id: string; grantId: string; kind: 'access' | 'refresh'; tokenHash: string; createdAt: Date; expiresAt: Date }>,
) {
  await db.insertInto('oauthTokens').values(tokens).execute();
}

export async function extendGrant(db: Executor, grantId: string, expiresAt: Date) {
  await db.updateTable('oauthGrants').set({ expiresAt }).where('id', '=', grantId).execute();
}

/** Revokes a grant and every token issued under it; null when it was already revoked. */
export async function revokeGrant(db: Executor, grantId: string, reason: string, now: Date) {
  const revoked = await db
    .updateTable('oauthGrants')
    .set({ revokedAt: now, revokedReason: reason })
    .where('id', '=', grantId)
    .where('revokedAt', 'is', null)
    .returning(['userId', 'clientId', 'scopes'])
    .executeTakeFirst();
  await db.updateTable('oauthTokens').set({ revokedAt: now }).where('grantId', '=', grantId).where('revokedAt', 'is', null).execute();
  return revoked ?? null;
}

export async function revokeToken(db: Executor, tokenId: string, now: Date) {
  await db.updateTable('oauthTokens').set({ revokedAt: now }).where('id', '=', tokenId).where('revokedAt', 'is', null).execute();
}

export type TokenWithGrant = {
  tokenId: string;
  kind: 'access' | 'refresh';
  expiresAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  grantId: string;
  grantRevokedAt: Date | null;
  scopes: string;
  resource: string | null;
  clientId: string;
  userId: string;
};

/** A token by hash with its grant, whatever its state (the caller decides what a stale one means). */
export async function findTokenWithGrant(db: Executor, tokenHash: string, options: { lock?: boolean } = {}): Promise<TokenWithGrant | null> {
  let query = db
    .selectFrom('oauthTokens')
    .innerJoin('oauthGrants', 'oauthGrants.id', 'oauthTokens.grantId')
    .select([
      'oauthTokens.id as tokenId',
      'oauthTokens.kind',
      'oauthTokens.expiresAt',
      'oauthTokens.rotatedAt',
      'oauthTokens.revokedAt',
      'oauthGrants.id as grantId',
      'oauthGrants.revokedAt as grantRevokedAt',
      'oauthGrants.scopes',
      'oauthGrants.resource',
      'oauthGrants.clientId',
      'oauthGrants.userId',
    ])
    .where('oauthTokens.tokenHash', '=', tokenHash);
  if (options.lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ?? null;
}

/** Marks a refresh token exchanged; false when another exchange got there first. */
export async function markRefreshTokenRotated(db: Executor, tokenId: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('oauthTokens')
    .set({ rotatedAt: now })
    .where('id', '=', tokenId)
    .where('rotatedAt', 'is', null)
    .where('revokedAt', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return Boolean(row);
}

/** What a live access token resolves to: its user, its grant and its client. */
export type AccessTokenCredential = {
  tokenId: string;
  grantId: string;
  scopes: string;
  clientId: string;
  clientName: string;
  userId: string;
  orgId: string | null;
  name: string;
  avatarUrl: string | null;
};

export async function findLiveAccessToken(db: Executor, tokenHash: string, now: Date): Promise<AccessTokenCredential | null> {
  const row = await db
    .selectFrom('oauthTokens')
    .innerJoin('oauthGrants', 'oauthGrants.id', 'oauthTokens.grantId')
    .innerJoin('oauthClients', 'oauthClients.id', 'oauthGrants.clientId')
    .innerJoin('users', 'users.id', 'oauthGrants.userId')
    .innerJoin('principals', 'principals.id', 'users.id')
    .select([
      'oauthTokens.id as tokenId',
      'oauthGrants.id as grantId',
      'oauthGrants.scopes',
      'oauthClients.id as clientId',
      'oauthClients.name as clientName',
      'users.id as userId',
      'users.primaryOrgId as orgId',
      'principals.name',
      'principals.avatarUrl',
    ])
    .where('oauthTokens.tokenHash', '=', tokenHash)
    .where('oauthTokens.kind', '=', 'access')
    .where('oauthTokens.revokedAt', 'is', null)
    .where('oauthTokens.expiresAt', '>', now)
    .where('oauthGrants.revokedAt', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** `lastUsedAt` to the minute: a guarded update that touches nothing the rest of the time. */
export async function touchGrantLastUsed(db: Executor, grantId: string, now: Date) {
  await db
    .updateTable('oauthGrants')
    .set({ lastUsedAt: now })
    .where('id', '=', grantId)
    .where((eb) => eb.or([eb('lastUsedAt', 'is', null), eb('lastUsedAt', '<', new Date(now.getTime() - 60_000))]))
    .execute();
}

export type GrantListing = {
  id: string;
  scopes: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date;
  revokedAt: Date | null;
  clientId: string;
  clientName: string;
  clientMetadata: Record<string, unknown>;
};

function grantQuery(db: Executor, userId: string) {
  return db
    .selectFrom('oauthGrants')
    .innerJoin('oauthClients', 'oauthClients.id', 'oauthGrants.clientId')
    .select([
      'oauthGrants.id',
      'oauthGrants.scopes',
      'oauthGrants.createdAt',
      'oauthGrants.lastUsedAt',
      'oauthGrants.expiresAt',
      'oauthGrants.revokedAt',
      'oauthClients.id as clientId',
      'oauthClients.name as clientName',
      'oauthClients.metadata as clientMetadata',
    ])
    .where('oauthGrants.userId', '=', userId);
}

/** The user's live grants (not revoked, not lapsed), newest first. */
export async function listLiveGrants(db: Executor, userId: string, now: Date): Promise<GrantListing[]> {
  return grantQuery(db, userId)
    .where('oauthGrants.revokedAt', 'is', null)
    .where('oauthGrants.expiresAt', '>', now)
    .orderBy('oauthGrants.createdAt', 'desc')
    .orderBy('oauthGrants.id', 'desc')
    .execute();
}

export async function findUserGrant(db: Executor, userId: string, grantId: string): Promise<GrantListing | null> {
  return (await grantQuery(db, userId).where('oauthGrants.id', '=', grantId).executeTakeFirst()) ?? null;
}
