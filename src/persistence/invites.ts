import type { Executor } from './database';
import type { PrincipalKind, Role } from './schema';

/** Workspace share invites and organisation invites. Tokens are stored only as hashes. */

export type InviteKind = 'workspace' | 'org';

export type InviteRow = {
  id: string;
  kind: InviteKind;
  orgId: string;
  orgSlug: string;
  orgName: string;
  workspaceId: string | null;
  workspaceSlug: string | null;
  workspaceName: string | null;
  workspaceArchivedAt: Date | null;
  email: string;
  role: Role;
  createdAt: Date;
  lastSentAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
  inviterId: string;
  inviterType: PrincipalKind;
  inviterName: string;
  inviterAvatarUrl: string | null;
};

function invitesQuery(db: Executor) {
  return db
    .selectFrom('invites')
    .innerJoin('orgs', 'orgs.id', 'invites.orgId')
    .innerJoin('principals as inviter', 'inviter.id', 'invites.invitedById')
    .leftJoin('workspaces', 'workspaces.id', 'invites.workspaceId')
    .select([
      'invites.id',
      'invites.kind',
      'invites.orgId',
      'orgs.slug as orgSlug',
      'orgs.name as orgName',
      'invites.workspaceId',
      'workspaces.slug as workspaceSlug',
      'workspaces.name as workspaceName',
      'workspaces.archivedAt as workspaceArchivedAt',
      'invites.email',
      'invites.role',
      'invites.createdAt',
      'invites.lastSentAt',
      'invites.expiresAt',
      'invites.acceptedAt',
      'invites.revokedAt',
      'inviter.id as inviterId',
      'inviter.kind as inviterType',
      'inviter.name as inviterName',
      'inviter.avatarUrl as inviterAvatarUrl',
    ]);
}

export async function findInviteById(db: Executor, id: string): Promise<InviteRow | null> {
  return (await invitesQuery(db).where('invites.id', '=', id).executeTakeFirst()) ?? null;
}

/** An invite that can still be accepted: not accepted, not revoked, not expired. */
export async function findOpenInviteByToken(db: Executor, kind: InviteKind, tokenHash: string, now: Date): Promise<InviteRow | null> {
  const row = await invitesQuery(db)
    .where('invites.kind', '=', kind)
    .where('invites.tokenHash', '=', tokenHash)
    .where('invites.acceptedAt', 'is', null)
    .where('invites.revokedAt', 'is', null)
    .where('invites.expiresAt', '>', now)
    .executeTakeFirst();
  return row ?? null;
}

/** Open org invites (expired ones included, so they can be re-sent), newest first. */
export async function listOpenOrgInvites(db: Executor, orgId: string): Promise<InviteRow[]> {
  return invitesQuery(db)
    .where('invites.kind', '=', 'org')
    .where('invites.orgId', '=', orgId)
    .where('invites.acceptedAt', 'is', null)
    .where('invites.revokedAt', 'is', null)
    .orderBy('invites.createdAt', 'desc')
    .orderBy('invites.id')
    .execute();
}

export type InviteDraft = {
  id: string;
  kind: InviteKind;
  orgId: string;
  workspaceId: string | null;
  email: string;
  role: Role;
  tokenHash: string;
  invitedById: string;
  now: Date;
  expiresAt: Date;
};

/**
 * Creates the invite, or refreshes the open one for the same address and
 * target (role, inviter, token, expiry), in one statement against the
 * partial unique indexes of migration 0003. Returns the invite's id.
 */
export async function upsertOpenInvite(db: Executor, draft: InviteDraft): Promise<string> {
  const target = draft.kind === 'workspace' ? (['workspaceId', 'email'] as const) : (['orgId', 'email'] as const);
  const row = await db
    .insertInto('invites')
    .values({
      id: draft.id,
      kind: draft.kind,
      orgId: draft.orgId,
      workspaceId: draft.workspaceId,
      email: draft.email,
      role: draft.role,
      tokenHash: draft.tokenHash,
      invitedById: draft.invitedById,
      createdAt: draft.now,
      lastSentAt: draft.now,
      expiresAt: draft.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns([...target])
        .where('kind', '=', draft.kind)
        .where('acceptedAt', 'is', null)
        .where('revokedAt', 'is', null)
        .doUpdateSet({
          role: draft.role,
          tokenHash: draft.tokenHash,
          invitedById: draft.invitedById,
          lastSentAt: draft.now,
          expiresAt: draft.expiresAt,
        }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Marks an open invite accepted, in one statement, so a token is used at most once even under races. */
export async function consumeInvite(db: Executor, id: string, userId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('invites')
    .set({ acceptedAt: now, acceptedByUserId: userId })
    .where('id', '=', id)
    .where('acceptedAt', 'is', null)
    .where('revokedAt', 'is', null)
    .where('expiresAt', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function revokeInvite(db: Executor, id: string, now: Date) {
  await db.updateTable('invites').set({ revokedAt: now }).where('id', '=', id).where('revokedAt', 'is', null).execute();
}

/** Replaces the token of an open invite (the old link stops working) and restarts its expiry. */
export async function replaceInviteToken(db: Executor, id: string, tokenHash: string, now: Date, expiresAt: Date): Promise<boolean> {
  const result = await db
    .updateTable('invites')
    .set({ tokenHash, lastSentAt: now, expiresAt })
    .where('id', '=', id)
    .where('acceptedAt', 'is', null)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
