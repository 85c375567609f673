import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from './database';
import type { CommentReactionsTable, CommentsTable, CommentTargetType, PrincipalKind } from './schema';

/** Comments, their threads and reactions. Resolution state is kept on every comment of a thread. */

export type CommentRow = Selectable<CommentsTable> & {
  /** The surface the comment sits on now: its own, or for row and cell targets the row's current sheet. */
  currentSurfaceId: string | null;
  surfaceSlug: string | null;
  surfaceName: string | null;
};

export type NewComment = Insertable<CommentsTable>;

export type CommentFilter = {
  workspaceId: string;
  targetType?: CommentTargetType;
  targetId?: string;
  /** Comments on this surface (row and cell comments by their row's current sheet). */
  surfaceId?: string;
  status: 'open' | 'resolved' | 'all';
  mentioningId?: string;
  authorId?: string;
  limit: number;
  offset: number;
  order: 'oldest' | 'newest';
};

const EFFECTIVE_SURFACE = sql<string | null>`coalesce(comments.surface_id, table_rows.surface_id)`;

function commentQuery(db: Executor) {
  return db
    .selectFrom('comments')
    .leftJoin('tableRows', (join) =>
      join
        .onRef('tableRows.id', '=', 'comments.targetId')
        .onRef('tableRows.workspaceId', '=', 'comments.workspaceId')
        .on('comments.targetType', 'in', ['row', 'cell']),
    )
    // A row's sheet id is written by sync clients: only a sheet of the comment's own workspace names it.
    .leftJoin('surfaces', (join) => join.on('surfaces.id', '=', EFFECTIVE_SURFACE).onRef('surfaces.workspaceId', '=', 'comments.workspaceId'))
    .selectAll('comments')
    .select([EFFECTIVE_SURFACE.as('currentSurfaceId'), 'surfaces.slug as surfaceSlug', 'surfaces.name as surfaceName']);
}

export async function insertComment(db: Executor, comment: NewComment): Promise<void> {
  await db.insertInto('comments').values(comment).execute();
}

export async function findComment(db: Executor, id: string): Promise<CommentRow | undefined> {
  return commentQuery(db).where('comments.id', '=', id).executeTakeFirst();
}

/** Takes the thread's row lock, so replies and resolve calls on one thread apply one at a time. */
export async function lockThread(db: Executor, rootId: string): Promise<void> {
  await sql`select id from comments where id = ${rootId} for update`.execute(db);
}

/** One page of a workspace's comments (roots and replies) and whether more follow. */
export async function listComments(db: Executor, filter: CommentFilter): Promise<{ rows: CommentRow[]; more: boolean }> {
  let query = commentQuery(db).where('comments.workspaceId', '=', filter.workspaceId);
  if (filter.targetType) query = query.where('comments.targetType', '=', filter.targetType);
  if (filter.targetId) query = query.where('comments.targetId', '=', filter.targetId);
  if (filter.surfaceId) query = query.where(EFFECTIVE_SURFACE, '=', filter.surfaceId);
  if (filter.status === 'open') query = query.where('comments.resolvedAt', 'is', null);
  if (filter.status === 'resolved') query = query.where('comments.resolvedAt', 'is not', null);
  if (filter.mentioningId) query = query.where(sql<boolean>`comments.mentions @> ${JSON.stringify([{ id: filter.mentioningId }])}::jsonb`);
  if (filter.authorId) query = query.where('comments.authorId', '=', filter.authorId);
  const direction = filter.order === 'oldest' ? 'asc' : 'desc';
  const rows = await query
    .orderBy('comments.createdAt', direction)
    .orderBy('comments.id', direction)
    .limit(filter.limit + 1)
    .offset(filter.offset)
    .execute();
  return { rows: rows.slice(0, filter.limit), more: rows.length > filter.limit };
}

/** Replies of a thread, oldest first. */
export async function listReplies(db: Executor, rootId: string): Promise<CommentRow[]> {
  return commentQuery(db).where('comments.parentId', '=', rootId).orderBy('comments.createdAt').orderBy('comments.id').execute();
}

/** Deletes a comment and, for a root, its replies; returns them (replies first) as they were. */
export async function deleteCommentAndReplies(db: Executor, id: string): Promise<CommentRow[]> {
  const doomed = await commentQuery(db)
    .where((eb) => eb.or([eb('comments.id', '=', id), eb('comments.parentId', '=', id)]))
    .orderBy(sql`comments.parent_id is null`)
    .orderBy('comments.createdAt')
    .orderBy('comments.id')
    .execute();
  await db.deleteFrom('comments').where('id', '=', id).execute();
  return doomed;
}

/** Sets (or clears, with null) the resolution of a whole thread: the root and every reply. */
export async function setThreadResolution(
  db: Executor,
  rootId: string,
  resolution: { at: Date; byId: string; byType: PrincipalKind } | null,
  now: Date,
): Promise<void> {
  await db
    .updateTable('comments')
    .set({
      resolvedAt: resolution?.at ?? null,
      resolvedById: resolution?.byId ?? null,
      resolvedByType: resolution?.byType ?? null,
      updatedAt: now,
    })
    .where((eb) => eb.or([eb('id', '=', rootId), eb('parentId', '=', rootId)]))
    .execute();
}

export type ReactionRow = Selectable<CommentReactionsTable>;

/** Adds a reaction; false when the principal had already reacted with that emoji. */
export async function insertReaction(db: Executor, reaction: Insertable<CommentReactionsTable>): Promise<boolean> {
  const rows = await db
    .insertInto('commentReactions')
    .values(reaction)
    .onConflict((oc) => oc.columns(['commentId', 'principalId', 'emoji']).doNothing())
    .returning('commentId')
    .execute();
  return rows.length > 0;
}

/** Removes a reaction; false when there was none. */
export async function deleteReaction(db: Executor, key: { commentId: string; principalId: string; emoji: string }): Promise<boolean> {
  const rows = await db
    .deleteFrom('commentReactions')
    .where('commentId', '=', key.commentId)
    .where('principalId', '=', key.principalId)
    .where('emoji', '=', key.emoji)
    .returning('commentId')
    .execute();
  return rows.length > 0;
}

/** Reactions of the given comments, oldest first. */
export async function listReactions(db: Executor, commentIds: string[]): Promise<ReactionRow[]> {
  if (commentIds.length === 0) return [];
  return db
    .selectFrom('commentReactions')
    .selectAll()
    .where('commentId', 'in', commentIds)
    .orderBy('createdAt')
    .orderBy('principalId')
    .orderBy('emoji')
    .execute();
}
