import { ApiError, errors } from '../errors';
import type { EventDraft } from '../model/event-record';
import type { EventName } from '../model/event-names';
import type { Actor, Principal } from '../policy/actor';
import type { ResolvedWorkspace, WorkspaceAddress, WorkspaceResolver } from './resolved-workspace';
import { newId } from '../lib/ids';
import {
  deleteCommentAndReplies,
  deleteReaction,
  findComment,
  insertComment,
  insertReaction,
  listComments,
  listReactions,
  listReplies,
  lockThread,
  setThreadResolution,
  type CommentRow,
  type ReactionRow,
} from '../persistence/comments';
import type { CommentTargetType } from '../persistence/schema';
import { findPrincipals, findSurface } from '../persistence/workspaces';
import { canDeleteComment } from '../policy/comments';
import type { WorkspaceAction } from '../policy/index';
import type { Services } from './services';
import { wakeMentionedAgents, type Wake } from './agent-wakes';
import { assertMentionedPrincipals, keptMentions, mentionsFromIds, type CommentMention } from './comment-mentions';
import {
  assertReplyTarget,
  resolveTargetForWrite,
  storedTargetOf,
  surfaceOfRow,
  threadKeyOf,
  viewTargets,
  type CommentTargetInput,
  type TargetView,
} from './comment-targets';
import { assertRowOnSheet, type SurfaceSelector } from './tables';
import { transactWithEvents, workspaceEvent } from './transact';

/**
 * Comments on every target (SPEC "Comments", API-DECISIONS "Comments"):
 * threads one level deep whose resolution belongs to the thread, reactions,
 * mentions that wake agents, and the legacy row endpoints. Every change
 * records its `comment.*` event in the same transaction. See docs/COMMENTS.md.
 */

export type CommentRecord = {
  id: string;
  workspaceId: string;
  target: TargetView['target'];
  targetType: CommentTargetType;
  targetId: string;
  surfaceSlug: string | null;
  surfaceName: string | null;
  body: string;
  parentId: string | null;
  mentions: CommentMention[];
  author: Principal;
  authorId: string;
  authorPrincipalType: 'user' | 'agent';
  reactions: Array<{ emoji: string; count: number; principalIds: string[] }>;
  resolvedAt: string | null;
  resolvedBy: Principal | null;
  correlationId: string | null;
  createdAt: string;
  updatedAt: string;
  anchor?: { from: number; to: number; text: string };
  currentText?: string;
  expectedText?: string;
};

export type CommentInput = {
  target: CommentTargetInput;
  body: string;
  parentId?: string;
  mentions?: CommentMention[];
  correlationId?: string;
};

export type CommentQuery = {
  targetType?: CommentTargetType;
  targetId?: string;
  surface?: string;
  status: 'open' | 'resolved' | 'all';
  mentioning?: 'me';
  author?: string;
  limit: number;
  offset: number;
  order: 'oldest' | 'newest';
};

/** A comment found by id, with its workspace resolved and authorized for the action. */
export type LoadedComment = { comment: CommentRow; resolved: ResolvedWorkspace };

const UNKNOWN_PRINCIPAL = (id: string, type: 'user' | 'agent'): Principal => ({ principalType: type, id, name: 'Unknown', avatarUrl: null });

// ------------------------------------------------------------------ presenting

function reactionsOf(rows: ReactionRow[]): CommentRecord['reactions'] {
  const byEmoji = new Map<string, string[]>();
  for (const r of rows) byEmoji.set(r.emoji, [...(byEmoji.get(r.emoji) ?? []), r.principalId]);
  return [...byEmoji].map(([emoji, principalIds]) => ({ emoji, count: principalIds.length, principalIds }));
}

function recordOf(row: CommentRow, view: TargetView, principals: Map<string, Principal>, reactions: ReactionRow[]): CommentRecord {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    target: view.target,
    targetType: row.targetType,
    targetId: row.targetId,
    surfaceSlug: view.surface?.slug ?? null,
    surfaceName: view.surface?.name ?? null,
    body: row.body,
    parentId: row.parentId,
    mentions: row.mentions,
    author: principals.get(row.authorId) ?? UNKNOWN_PRINCIPAL(row.authorId, row.authorType),
    authorId: row.authorId,
    authorPrincipalType: row.authorType,
    reactions: reactionsOf(reactions),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    resolvedBy: row.resolvedById ? (principals.get(row.resolvedById) ?? UNKNOWN_PRINCIPAL(row.resolvedById, row.resolvedByType ?? 'user')) : null,
    correlationId: row.correlationId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(view.anchor ? { anchor: view.anchor } : {}),
    ...(view.currentText !== undefined ? { currentText: view.currentText, expectedText: view.expectedText } : {}),
  };
}

/** Records for comments of one workspace: targets as they read now, authors, reactions. */
export async function presentComments(services: Services, resolved: ResolvedWorkspace, rows: CommentRow[]): Promise<CommentRecord[]> {
  if (rows.length === 0) return [];
  const [views, principals, reactions] = await Promise.all([
    viewTargets(services, resolved.workspace, rows),
    findPrincipals(services.db, rows.flatMap((r) => (r.resolvedById ? [r.authorId, r.resolvedById] : [r.authorId]))),
    listReactions(services.db, rows.map((r) => r.id)),
  ]);
  return rows.map((row) => recordOf(row, views.get(row.id)!, principals, reactions.filter((r) => r.commentId === row.id)));
}

function commentEvent(event: EventName, resolved: ResolvedWorkspace, actor: Actor, comment: { id: string; surface: TargetView['surface'] }, data: Record<string, unknown>): EventDraft {
  const surface = comment.surface ? { surface: { id: comment.surface.id, slug: comment.surface.slug } } : {};
  return { ...workspaceEvent(event, resolved, actor, data), ...surface, subjectId: comment.id };
}


// ------------------------------------------------------------------ finding

/**
 * Finds a comment and authorizes `action` on its workspace. A comment in a
 * workspace the caller cannot see is 404 like a missing one; on the
 * workspace-scoped paths it must also belong to the workspace named.
 */
export async function resolveComment(
  services: Services,
  resolveWorkspace: WorkspaceResolver,
  actor: Actor | null,
  commentId: string,
  action: WorkspaceAction,
  address?: WorkspaceAddress,
): Promise<LoadedComment> {
  const comment = await findComment(services.db, commentId);
  if (!comment) throw errors.notFound('Comment');
  if (address) {
    const resolved = await resolveWorkspace(actor, address, action);
    if (resolved.workspace.id !== comment.workspaceId) throw errors.notFound('Comment');
    return { comment, resolved };
  }
  const resolved = await resolveWorkspace(actor, { slug: comment.workspaceId }, action).catch((error: unknown) => {
    throw error instanceof ApiError && error.statusCode === 404 ? errors.notFound('Comment') : error;
  });
  return { comment, resolved };
}

/** One comment; a thread's root also lists its replies, oldest first. */
export async function commentDetail(services: Services, { comment, resolved }: LoadedComment): Promise<CommentRecord & { replies?: CommentRecord[] }> {
  const replies = comment.parentId ? [] : await listReplies(services.db, comment.id);
  const [record, ...replyRecords] = await presentComments(services, resolved, [comment, ...replies]);
  return comment.parentId ? record! : { ...record!, replies: replyRecords };
}

export async function listWorkspaceComments(
  services: Services,
  actor: Actor | null,
  resolved: ResolvedWorkspace,
  query: CommentQuery,
): Promise<{ comments: CommentRecord[]; nextOffset: number | null }> {
  const me = () => {
    if (!actor) throw errors.unauthorized('`me` needs a signed-in caller.');
    return actor.principal.id;
  };
  let surfaceId: string | undefined;
  if (query.surface !== undefined) {
    const surface = await findSurface(services.db, resolved.workspace.id, query.surface);
    if (!surface) throw errors.notFound('Surface');
    surfaceId = surface.id;
  }
  const { rows, more } = await listComments(services.db, {
    workspaceId: resolved.workspace.id,
    targetType: query.targetType,
    targetId: query.targetId,
    surfaceId,
    status: query.status,
    mentioningId: query.mentioning ? me() : undefined,
    authorId: query.author === 'me' ? me() : query.author,
    limit: query.limit,
    offset: query.offset,
    order: query.order,
  });
  return { comments: await presentComments(services, resolved, rows), nextOffset: more ? query.offset + query.limit : null };
}

/**
 * The target a reply to this comment must name: its thread's, as it reads
 * now (a cell by its column's current key, surfaces by id). Replies store
 * their root's target, so a reply's own target serves too.
 */
export async function replyTargetOf(services: Services, { comment, resolved }: LoadedComment): Promise<CommentTargetInput> {
  const { target } = (await viewTargets(services, resolved.workspace, [comment])).get(comment.id)!;
  const surfaceSlug = comment.surfaceId ?? '';
  switch (target.type) {
    case 'cell':
      return { type: 'cell', rowId: target.rowId, columnKey: target.columnKey };
    case 'doc_range':
      // The anchor is not compared on a reply: the reply takes the thread's.
      return { type: 'doc_range', surfaceSlug, anchor: { from: target.anchor.from, to: target.anchor.to, text: target.anchor.text } };
    case 'html_element':
      return { type: 'html_element', surfaceSlug, anchor: target.anchor };
    case 'surface':
      return { type: 'surface', surfaceSlug };
    default:
      return target;
  }
}

// ------------------------------------------------------------------ writing

export type CreatedComment = CommentRecord & { wakes: Wake[] };

/**
 * Adds a comment: a new thread on a validated target, or a reply (with
 * `parentId`) attached to the thread's root and taking its target. A reply
 * to a resolved thread reopens it (`comment.unresolved`). Agent mentions of
 * a new thread wake the agents after the comment has committed; how each
 * wake went is in `wakes`.
 */
export async function createComment(services: Services, actor: Actor, resolved: ResolvedWorkspace, input: CommentInput): Promise<CreatedComment> {
  const { workspace } = resolved;
  const mentions = keptMentions(input.body, input.mentions ?? []);
  await assertMentionedPrincipals(services, mentions, ['mentions']);

  let root: CommentRow | null = null;
  let place: { stored: ReturnType<typeof storedTargetOf>; view: TargetView };
  if (input.parentId !== undefined) {
    const parent = await findComment(services.db, input.parentId);
    if (!parent || parent.workspaceId !== workspace.id) {
      throw new ApiError(404, 'not_found', 'Parent comment not found.', [{ path: ['parentId'], code: 'comment_not_found', message: 'No such comment in this workspace.' }]);
    }
    // Threads are one level deep: a reply to a reply joins the root's thread.
    root = parent.parentId ? ((await findComment(services.db, parent.parentId)) ?? null) : parent;
    if (!root) throw errors.notFound('Parent comment');
    const view = (await viewTargets(services, workspace, [root])).get(root.id)!;
    await assertReplyTarget(services, workspace, root, view, input.target);
    place = { stored: storedTargetOf(root), view: { ...view, surface: surfaceOfRow(root) ?? view.surface } };
  } else {
    place = await resolveTargetForWrite(services, workspace, input.target);
  }

  const now = services.clock.now();
  const id = newId('cmt');
  const row: CommentRow = {
    id,
    workspaceId: workspace.id,
    parentId: root?.id ?? null,
    ...place.stored,
    body: input.body,
    mentions: mentions.map(({ kind, id: principalId, label }) => ({ kind, id: principalId, label })),
    authorId: actor.principal.id,
    authorType: actor.principal.principalType,
    correlationId: input.correlationId ?? null,
    resolvedAt: null,
    resolvedById: null,
    resolvedByType: null,
    createdAt: now,
    updatedAt: now,
    currentSurfaceId: place.view.surface?.id ?? null,
    surfaceSlug: place.view.surface?.slug ?? null,
    surfaceName: place.view.surface?.name ?? null,
  };
  const record = recordOf(row, place.view, new Map([[actor.principal.id, actor.principal]]), []);

  await transactWithEvents(services, async (tx, events) => {
    let reopened = false;
    if (root) {
      await lockThread(tx, root.id);
      const current = await findComment(tx, root.id);
      if (!current) throw errors.notFound('Parent comment');
      reopened = current.resolvedAt !== null;
    }
    const { currentSurfaceId: _surfaceId, surfaceSlug: _slug, surfaceName: _name, ...values } = row;
    await insertComment(tx, { ...values, mentions: JSON.stringify(values.mentions), anchor: values.anchor === null ? null : JSON.stringify(values.anchor) });
    events.push(commentEvent('comment.added', resolved, actor, { id, surface: place.view.surface }, record));
    if (root && reopened) {
      await setThreadResolution(tx, root.id, null, now);
      events.push(commentEvent('comment.unresolved', resolved, actor, { id: root.id, surface: place.view.surface }, { id: root.id, reason: 'reply', replyId: id }));
    }
  });

  const wakes = root
    ? []
    : await wakeMentionedAgents(services, { resolved, comment: record, author: actor.principal, threadKey: threadKeyOf(resolved.workspace.id, place.stored) });
  return { ...record, wakes };
}

/** Deletes a comment (author only) and, for a thread's root, its replies; one `comment.deleted` each. */
export async function deleteComment(services: Services, actor: Actor, { comment, resolved }: LoadedComment): Promise<void> {
  if (!canDeleteComment(actor.principal.id, comment)) throw errors.forbidden('Only the author of a comment can delete it.');
  await transactWithEvents(services, async (tx, events) => {
    const deleted = await deleteCommentAndReplies(tx, comment.id);
    for (const gone of deleted) {
      events.push(
        commentEvent('comment.deleted', resolved, actor, { id: gone.id, surface: surfaceOfRow(gone) }, {
          id: gone.id,
          parentId: gone.parentId,
          targetType: gone.targetType,
          targetId: gone.targetId,
          ...(gone.id === comment.id ? {} : { reason: 'thread_deleted' }),
        }),
      );
    }
  });
}

/**
 * Resolves or reopens the comment's thread (addressing a reply acts on its
 * thread). Already in that state: nothing changes and no event is recorded.
 * Answers the addressed comment as it reads now.
 */
export async function setCommentResolved(services: Services, actor: Actor, loaded: LoadedComment, resolve: boolean): Promise<CommentRecord> {
  const rootId = loaded.comment.parentId ?? loaded.comment.id;
  const now = services.clock.now();
  await transactWithEvents(services, async (tx, events) => {
    await lockThread(tx, rootId);
    const root = await findComment(tx, rootId);
    if (!root) throw errors.notFound('Comment');
    if ((root.resolvedAt !== null) === resolve) return;
    const resolution = resolve ? { at: now, byId: actor.principal.id, byType: actor.principal.principalType } : null;
    await setThreadResolution(tx, rootId, resolution, now);
    events.push(
      commentEvent(resolve ? 'comment.resolved' : 'comment.unresolved', loaded.resolved, actor, { id: rootId, surface: surfaceOfRow(root) }, {
        id: rootId,
        resolvedAt: resolve ? now.toISOString() : null,
        resolvedBy: resolve ? actor.principal : null,
      }),
    );
  });
  return reloaded(services, loaded);
}

/** Adds or removes the caller's reaction. Idempotent both ways: a repeat changes nothing and records nothing. */
export async function setReaction(services: Services, actor: Actor, loaded: LoadedComment, emoji: string, present: boolean): Promise<CommentRecord> {
  const key = { commentId: loaded.comment.id, principalId: actor.principal.id, emoji };
  await transactWithEvents(services, async (tx, events) => {
    const changed = present
      ? await insertReaction(tx, { ...key, principalType: actor.principal.principalType, createdAt: services.clock.now() })
      : await deleteReaction(tx, key);
    if (!changed) return;
    const event = present ? 'comment.reaction_added' : 'comment.reaction_removed';
    events.push(commentEvent(event, loaded.resolved, actor, { id: loaded.comment.id, surface: surfaceOfRow(loaded.comment) }, { commentId: loaded.comment.id, emoji }));
  });
  return reloaded(services, loaded);
}

async function reloaded(services: Services, { comment, resolved }: LoadedComment): Promise<CommentRecord> {
  const current = await findComment(services.db, comment.id);
  if (!current) throw errors.notFound('Comment');
  return (await presentComments(services, resolved, [current]))[0]!;
}

// ------------------------------------------------------------------ legacy row endpoints

/** Every comment whose target is the row (threads and replies), oldest first. */
export async function listRowComments(services: Services, resolved: ResolvedWorkspace, rowId: string, selector: SurfaceSelector): Promise<CommentRecord[]> {
  await assertRowOnSheet(services, resolved.workspace, rowId, selector);
  const rows: CommentRow[] = [];
  const page = 500;
  for (let offset = 0; ; offset += page) {
    const found = await listComments(services.db, {
      workspaceId: resolved.workspace.id,
      targetType: 'row',
      targetId: rowId,
      status: 'all',
      limit: page,
      offset,
      order: 'oldest',
    });
    rows.push(...found.rows);
    if (!found.more) break;
  }
  return presentComments(services, resolved, rows);
}

/**
 * The legacy form: the target is always the row, and `mentions` are
 * principal ids. A reply whose thread is not on this row (a cell thread,
 * say) is 400.
 */
export async function createRowComment(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  { rowId, ...selector }: SurfaceSelector & { rowId: string },
  input: { body: string; parentId?: string; mentions?: string[]; correlationId?: string },
): Promise<CreatedComment> {
  await assertRowOnSheet(services, resolved.workspace, rowId, selector);
  const mentions = await mentionsFromIds(services, input.mentions ?? []);
  return createComment(services, actor, resolved, { ...input, target: { type: 'row', rowId }, mentions });
}
