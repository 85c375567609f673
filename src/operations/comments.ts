import { z } from 'zod';
import {
  commentDetail,
  createComment,
  createRowComment,
  deleteComment,
  listRowComments,
  listWorkspaceComments,
  replyTargetOf,
  resolveComment,
  setCommentResolved,
  setReaction,
} from '../domain/comments';
import { requireCaller } from '../access/callers';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
import { Comment, CommentDetail, CommentList, CreateCommentBody, CreatedComment, Emoji, LegacyCreateBody, ListQuery } from '../model/schemas/comments';
import { Ok } from '../model/schemas/common';
import { SurfaceQuery } from '../model/schemas/tables';
import { defineOperation, type HttpExchange } from './operation';
import { COMMENT, ADDRESS, READ, WRITE } from './tool-text';
import { addressOf, workspacePaths, WorkspaceParams } from './workspace-routes';

const CommentId = z.string().min(1).max(100);
const BareParams = z.object({ id: CommentId });
const ScopedParams = WorkspaceParams.extend({ id: CommentId });
const RowParams = WorkspaceParams.extend({ id: z.string().min(1).max(100) });

/** Where a comment is addressed: `/api/comments/{id}`, or under the workspace that holds it; each form validates its own params. */
function commentUrls(suffix = '', extra: Record<string, z.ZodType> = {}) {
  return [
    { url: `/api/comments/:id${suffix}`, params: BareParams.extend(extra) },
    ...workspacePaths(`/comments/:id${suffix}`).map((url) => ({ url, params: ScopedParams.extend(extra) })),
  ];
}

/**
 * A comment's address in an operation: its id, and the workspace when the
 * path names one (the comment must then be in it). Each route validates
 * its own path form; the MCP tools take the id and an optional workspace.
 */
const CommentParams = BareParams.extend({
  slug: WorkspaceParams.shape.slug.optional().describe('Workspace slug (or id); when given, the comment must be in it'),
  orgSlug: WorkspaceParams.shape.orgSlug,
});
const ReactionParams = CommentParams.extend({ emoji: Emoji });
const ReactionBody = z.strictObject({ emoji: Emoji });

/** The workspace the path names, on the workspace-scoped forms. */
const addressIn = (params: { id: string; slug?: string; orgSlug?: string }) => (params.slug !== undefined ? addressOf({ slug: params.slug, orgSlug: params.orgSlug }) : undefined);

const ReplyBody = z.strictObject({
  commentId: CommentId.describe('The comment to answer; a reply to a reply joins the root\'s thread'),
  body: CreateCommentBody.shape.body,
  mentions: CreateCommentBody.shape.mentions,
  correlationId: CreateCommentBody.shape.correlationId,
});

const resolution = (resolve: boolean) => {
  const action = resolve ? 'resolve' : 'unresolve';
  return defineOperation(
    {
      params: CommentParams, response: Comment,
      rest: {
        method: 'POST',
        urls: commentUrls(`/${action}`),
        summary: resolve ? 'Resolve the thread' : 'Reopen the thread',
        description: `Acts on the comment's thread (a reply's root). Idempotent: ${resolve ? 'resolving a resolved' : 'reopening an open'} thread changes nothing. Emits \`comment.${action}d\` when the state changes.`,
        tags: ['comments'],
      },
      mcp: resolve
        ? {
            name: 'resolve_comment',
            title: 'Resolve a comment thread',
            description: `Marks the thread of comment \`id\` (a reply's root) resolved; resolving a resolved thread changes nothing. ${COMMENT}`,
            annotations: { ...WRITE, idempotentHint: true },
          }
        : {
            name: 'unresolve_comment',
            title: 'Reopen a comment thread',
            description: `Reopens the thread of comment \`id\`; reopening an open thread changes nothing. ${COMMENT}`,
            annotations: { ...WRITE, idempotentHint: true },
          },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      return setCommentResolved(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), resolve);
    },
  );
};

const create = defineOperation(
  {
    params: WorkspaceParams, body: CreateCommentBody, response: CreatedComment,
    rest: {
      method: 'POST',
      workspacePath: '/comments',
      summary: 'Add a comment or a reply',
      description:
        'A new thread on `target` (404 when the row, column, surface or file does not exist; 422 when a surface is of the wrong kind or a doc range ' +
        'falls outside the body), or a reply with `parentId` naming the same target (400 otherwise); a reply to a reply joins the root\'s thread and a ' +
        'reply reopens a resolved thread (`comment.unresolved`). Mentions are kept only while `@label` occurs in `body`. Agent mentions of a new thread ' +
        'wake the agents (`wakes`); a wake never fails the comment. Emits `comment.added`.',
      tags: ['comments'],
    },
    mcp: {
      name: 'add_comment',
      title: 'Add a comment',
      description: `Starts a comment thread on \`target\`: a row, a cell (\`rowId\` + \`columnKey\`), a doc range (\`surfaceSlug\` + \`anchor\` positions as get_doc answers them, with the text between), an html element, a surface, the workspace or a file. \`mentions\` are kept while \`@label\` occurs in \`body\`; mentioned agents are woken (\`wakes\`). To answer a thread, use reply_to_comment. ${ADDRESS}`,
      annotations: WRITE,
      joinsRuns: true,
    },
  },
  async (services, actor, { params, body }) => {
    const caller = requireCaller(actor);
    const resolved = await resolveWorkspace(services, caller, addressOf(params), 'comment');
    return createComment(services, caller, resolved, body);
  },
);

/** The legacy row endpoints point at the universal one's description. */
function markDeprecated(http: HttpExchange | undefined, publicUrl: string) {
  http?.header('deprecation', 'true');
  http?.header('link', `<${publicUrl}/openapi.json#/paths/~1api~1workspaces~1%7Bslug%7D~1comments>; rel="successor-version"`);
}

/** The comment operations: REST routes and MCP tools (in this order in tools/list). */
export const commentOperations = {
  create,
  list: defineOperation(
    {
      params: WorkspaceParams, query: ListQuery, response: CommentList,
      rest: {
        method: 'GET',
        workspacePath: '/comments',
        summary: 'List comments',
        description:
          'Roots and replies, oldest first unless `order=newest`, filtered by `target_type`, `target_id`, `surface` (row and cell comments count under ' +
          'their row\'s current sheet), `status` (the thread\'s; `open` by default), `mentioning=me` and `author` (an id or `me`). Page with `offset`; ' +
          '`nextOffset` is null on the last page. Anonymous readers of public or unlisted workspaces need `commentsOnPublicShare` (403 otherwise).',
        tags: ['comments'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'list_comments',
        title: 'List comments',
        description: `Comments of a workspace, roots and replies, oldest first (\`order: "newest"\` to flip). Filters: \`target_type\` and \`target_id\`, \`surface\`, \`status\` (\`open\` by default, \`resolved\` or \`all\`), \`mentioning: "me"\`, \`author\` (an id or \`me\`). Page with \`offset\` until \`nextOffset\` is null. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read_comments');
      const { target_type, target_id, surface, surfaceId, ...rest } = query;
      return listWorkspaceComments(services, actor, resolved, { ...rest, targetType: target_type, targetId: target_id, surface: surface ?? surfaceId });
    },
  ),
  detail: defineOperation(
    {
      params: CommentParams, response: CommentDetail,
      rest: {
        method: 'GET',
        urls: commentUrls(),
        summary: 'One comment',
        description: 'A thread\'s root also lists its `replies`, oldest first. 404 when missing or in a workspace the caller cannot see.',
        tags: ['comments'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'get_comment_thread',
        title: 'Get a comment thread',
        description: `One comment; a thread's root comes with its \`replies\`, oldest first (a reply's \`parentId\` names its root). ${COMMENT}`,
        annotations: READ,
      },
    },
    async (services, actor, { params }) => commentDetail(services, await resolveComment(services, workspaceResolver(services), actor, params.id, 'read_comments', addressIn(params))),
  ),
  /**
   * SPEC's `reply_to_comment` (MCP only): the caller names the comment, not
   * its workspace and target; both are looked up, then it is `create` with `parentId`.
   */
  reply: defineOperation(
    {
      body: ReplyBody, response: CreatedComment,
      mcp: {
        name: 'reply_to_comment',
        title: 'Reply to a comment',
        description: 'Answers the thread of comment `commentId` with `body` (a reply to a reply joins the root\'s thread); the reply takes the thread\'s target. Replying reopens a resolved thread.',
        annotations: WRITE,
        joinsRuns: true,
      },
    },
    async (services, actor, { body: { commentId, ...reply } }) => {
      const caller = requireCaller(actor);
      const loaded = await resolveComment(services, workspaceResolver(services), caller, commentId, 'comment');
      const target = await replyTargetOf(services, loaded);
      return create.run(services, caller, { params: { slug: loaded.resolved.workspace.id }, query: undefined, body: { ...reply, target, parentId: commentId } });
    },
  ),
  resolve: resolution(true),
  unresolve: resolution(false),
  react: defineOperation(
    {
      params: CommentParams, body: ReactionBody, response: Comment,
      rest: {
        method: 'POST',
        urls: commentUrls('/reactions'),
        summary: 'React to a comment',
        description: 'One reaction per (comment, caller, emoji); adding it again changes nothing. Emits `comment.reaction_added`.',
        tags: ['comments'],
      },
      mcp: {
        name: 'react_to_comment',
        title: 'React to a comment',
        description: `Adds your \`emoji\` reaction to comment \`id\` (one per emoji; adding it again changes nothing). ${COMMENT}`,
        annotations: { ...WRITE, idempotentHint: true },
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      return setReaction(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), body.emoji, true);
    },
  ),
  remove: defineOperation(
    {
      params: CommentParams, response: Ok,
      rest: {
        method: 'DELETE',
        urls: commentUrls(),
        summary: 'Delete a comment (author only)',
        description: 'Deleting a thread\'s root deletes its replies too. 403 for anyone but the author. Emits one `comment.deleted` per comment removed.',
        tags: ['comments'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      await deleteComment(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)));
      return { ok: true as const };
    },
  ),
  unreact: defineOperation(
    {
      params: ReactionParams, response: Comment,
      rest: {
        method: 'DELETE',
        urls: commentUrls('/reactions/:emoji', { emoji: Emoji }),
        summary: "Remove the caller's reaction",
        description: 'Removes the caller\'s reaction with this (URL-encoded) emoji; 200 whether or not it was there. Emits `comment.reaction_removed` when it was.',
        tags: ['comments'],
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      return setReaction(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), params.emoji, false);
    },
  ),
  legacyRowList: defineOperation(
    {
      params: RowParams, query: z.strictObject(SurfaceQuery), response: z.object({ comments: z.array(Comment) }),
      rest: {
        method: 'GET',
        workspacePath: '/rows/:id/comments',
        summary: 'Comments on a row (deprecated)',
        description:
          'Every comment whose target is the row, replies included, oldest first. Deprecated: answers with `Deprecation: true` and a `Link` of rel ' +
          '`successor-version`; use `GET /comments?target_type=row&target_id={id}&status=all`.',
        tags: ['comments'],
        deprecated: true,
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params, query }, http) => {
      markDeprecated(http, services.config.publicUrl);
      const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read_comments');
      return { comments: await listRowComments(services, resolved, params.id, query) };
    },
  ),
  legacyRowCreate: defineOperation(
    {
      params: RowParams, query: z.strictObject(SurfaceQuery), body: LegacyCreateBody, response: CreatedComment,
      rest: {
        method: 'POST',
        workspacePath: '/rows/:id/comments',
        summary: 'Comment on a row (deprecated)',
        description:
          'The target is always the row; `mentions` are principal ids. A reply to a thread that is not on this row (a cell thread, say) is 400. ' +
          'Deprecated: answers with `Deprecation: true` and a `Link` of rel `successor-version`; use `POST /comments`.',
        tags: ['comments'],
        deprecated: true,
      },
    },
    async (services, actor, { params, query, body }, http) => {
      markDeprecated(http, services.config.publicUrl);
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'comment');
      return createRowComment(services, caller, resolved, { rowId: params.id, ...query }, body);
    },
  ),
};
