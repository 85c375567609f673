import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from './database';
import type { InboxMessagesTable } from './schema';

/** Principals' inboxes (agent wake-ups) and the per-thread wake dedup. */

export type InboxMessageRow = Selectable<InboxMessagesTable>;

/**
 * Claims the wake of `recipientId` for `threadKey` at `now`, unless it was
 * woken for that thread after `cutoff`. One statement, so of two concurrent
 * wakes exactly one wins. Old claims are swept on the way.
 */
export async function claimWake(db: Executor, claim: { recipientId: string; threadKey: string; now: Date; cutoff: Date }): Promise<boolean> {
  await db.deleteFrom('inboxWakeDedup').where('wokenAt', '<', claim.cutoff).execute();
  const { rows } = await sql<{ recipientId: string }>`
    insert into inbox_wake_dedup (recipient_id, thread_key, woken_at) values (${claim.recipientId}, ${claim.threadKey}, ${claim.now})
    on conflict (recipient_id, thread_key) do update set woken_at = excluded.woken_at
      where inbox_wake_dedup.woken_at <= ${claim.cutoff}
    returning recipient_id
  `.execute(db);
  return rows.length > 0;
}

export async function insertInboxMessage(db: Executor, message: Omit<Insertable<InboxMessagesTable>, 'seq'>): Promise<void> {
  await db.insertInto('inboxMessages').values(message).execute();
}

/**
 * A recipient's messages after the one with id `afterId` (from the start
 * without it), oldest first. `workspaceId` narrows to one workspace (a
 * key scoped to it). Null when `afterId` names no message of the recipient.
 */
export async function listInboxMessages(
  db: Executor,
  query: { recipientId: string; afterId?: string; workspaceId?: string; limit: number },
): Promise<InboxMessageRow[] | null> {
  let afterSeq = 0;
  if (query.afterId !== undefined) {
    const after = await db
      .selectFrom('inboxMessages')
      .select('seq')
      .where('recipientId', '=', query.recipientId)
      .where('id', '=', query.afterId)
      .executeTakeFirst();
    if (!after) return null;
    afterSeq = after.seq;
  }
  let select = db.selectFrom('inboxMessages').selectAll().where('recipientId', '=', query.recipientId).where('seq', '>', afterSeq);
  if (query.workspaceId) select = select.where('workspaceId', '=', query.workspaceId);
  return select.orderBy('seq').limit(query.limit).execute();
}

export async function newestInboxMessageId(db: Executor, recipientId: string): Promise<string | undefined> {
  const row = await db.selectFrom('inboxMessages').select('id').where('recipientId', '=', recipientId).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row?.id;
}
