import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { newId } from '../lib/ids';
import { randomToken } from '../lib/secrets';
import { findShareToken, findSharedFile, insertShareToken, listActiveShareTokens, lockFile, revokeShareToken } from '../persistence/files';
import type { FileRow } from '../persistence/schema';
import type { Services } from './services';
import { byOf, fileEvent, findFileIn, type WorkspaceRef } from './files';
import { transactWithEvents } from './transact';

/**
 * Share links: anyone holding `/share/files/{token}` reads that one file,
 * without an account. The token is 32 random bytes (URL-safe base64). A
 * link stops working when it is revoked, and while the file is archived
 * (or its workspace or surface is); links survive renames, moves and new
 * versions. Revoking is idempotent.
 */

export type ShareTokenView = { id: string; url: string; createdAt: Date; revokedAt: Date | null };

export function shareUrl(services: Services, token: string): string {
  return `${services.config.publicUrl}/share/files/${token}`;
}

function present(services: Services, row: { id: string; token: string; createdAt: Date; revokedAt: Date | null }): ShareTokenView {
  return { id: row.id, url: shareUrl(services, row.token), createdAt: row.createdAt, revokedAt: row.revokedAt };
}

/** Records `file.shared` with `shareTokenId` and `url`. */
export async function shareFile(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string): Promise<ShareTokenView> {
  const { scope } = await findFileIn(services, resolved, fileId, { live: true });
  return transactWithEvents(services, async (tx, events) => {
    const file = await lockFile(tx, resolved.workspace.id, fileId);
    if (!file || file.archivedAt) throw errors.notFound('File');
    const row = await insertShareToken(tx, { id: newId('shr'), fileId, token: randomToken(32), createdAt: services.clock.now(), createdBy: byOf(actor.principal) });
    const view = present(services, row);
    events.push(fileEvent('file.shared', scope, actor.principal, file, { shareTokenId: row.id, url: view.url }));
    return view;
  });
}

/** Active (not revoked) links of a file, newest first. */
export async function listShares(services: Services, resolved: WorkspaceRef, fileId: string): Promise<ShareTokenView[]> {
  await findFileIn(services, resolved, fileId, { live: false });
  return (await listActiveShareTokens(services.db, fileId)).map((row) => present(services, row));
}

/** Revokes one link of the file (404 when the file or the token id is unknown); `file.share_revoked` only when it was active. */
export async function revokeShare(services: Services, actor: Actor, resolved: WorkspaceRef, fileId: string, tokenId: string): Promise<void> {
  const { scope, file } = await findFileIn(services, resolved, fileId, { live: true });
  if (!(await findShareToken(services.db, fileId, tokenId))) throw errors.notFound('Share token');
  await transactWithEvents(services, async (tx, events) => {
    const revoked = await revokeShareToken(tx, tokenId, services.clock.now());
    if (revoked) events.push(fileEvent('file.share_revoked', scope, actor.principal, file, { shareTokenId: tokenId }));
  });
}

/** The file behind an active link, or 404 (unknown, revoked, archived file, archived workspace or deleted surface alike). */
export async function sharedFile(services: Services, token: string): Promise<FileRow> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw errors.notFound('Shared file');
  const file = await findSharedFile(services.db, token);
  if (!file) throw errors.notFound('Shared file');
  return file;
}
