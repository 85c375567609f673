import type { FastifyReply } from 'fastify';
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
import { requireActor } from '../http/authenticate';
import { defineOperation } from '../operations/operation';
import type { App } from '../http/types';
import { resolveWorkspace, workspaceResolver } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { Services } from '../services';
import { Comment, CommentDetail, CommentList, CreateCommentBody, CreatedComment, Emoji, LegacyCreateBody, ListQuery } from '../model/schemas/comments';
import { errorResponses, Ok } from '../model/schemas/common';
import { SurfaceQuery } from '../model/schemas/tables';

const CommentId = z.string().min(1).max(100);
const BareParams = z.object({ id: CommentId });
const ScopedParams = WorkspaceParams.extend({ id: CommentId });
const RowParams = WorkspaceParams.extend({ id: z.string().min(1).max(100) });

/** Where a comment is addressed: `/api/comments/{id}`, or under the workspace that holds it. */
const COMMENT_PATHS: Array<[url: string, params: typeof BareParams | typeof ScopedParams]> = [
  ['/api/comments/:id', BareParams],
  ...workspacePaths('/comments/:id').map((url): [string, typeof ScopedParams] => [url, ScopedParams]),
];

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

const resolution = (resolve: boolean) =>
  defineOperation({ params: CommentParams, response: Comment }, async (services, actor, { params }) => {
    const caller = requireCaller(actor);
    return setCommentResolved(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), resolve);
  });

const create = defineOperation({ params: WorkspaceParams, body: CreateCommentBody, response: CreatedComment }, async (services, actor, { params, body }) => {
  const caller = requireCaller(actor);
  const resolved = await resolveWorkspace(services, caller, addressOf(params), 'comment');
  return createComment(services, caller, resolved, body);
});

/** Each route's policy check and domain call; the MCP tools (src/mcp/tools.ts) run the same ones. */
export const commentOperations = {
  list: defineOperation({ params: WorkspaceParams, query: ListQuery, response: CommentList }, async (services, actor, { params, query }) => {
    const resolved = await resolveWorkspace(services, actor, addressOf(params), 'read_comments');
    const { target_type, target_id, surface, surfaceId, ...rest } = query;
    return listWorkspaceComments(services, actor, resolved, { ...rest, targetType: target_type, targetId: target_id, surface: surface ?? surfaceId });
  }),
  create,
  /**
   * SPEC's `reply_to_comment` (MCP only): the caller names the comment, not
   * its workspace and target; both are looked up, then it is `create` with `parentId`.
   */
  reply: defineOperation({ body: ReplyBody, response: CreatedComment }, async (services, actor, { body: { commentId, ...reply } }) => {
    const caller = requireCaller(actor);
    const loaded = await resolveComment(services, workspaceResolver(services), caller, commentId, 'comment');
    const target = await replyTargetOf(services, loaded);
    return create.run(services, caller, { params: { slug: loaded.resolved.workspace.id }, query: undefined, body: { ...reply, target, parentId: commentId } });
  }),
  detail: defineOperation({ params: CommentParams, response: CommentDetail }, async (services, actor, { params }) =>
    commentDetail(services, await resolveComment(services, workspaceResolver(services), actor, params.id, 'read_comments', addressIn(params))),
  ),
  remove: defineOperation({ params: CommentParams, response: Ok }, async (services, actor, { params }) => {
    const caller = requireCaller(actor);
    await deleteComment(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)));
    return { ok: true as const };
  }),
  resolve: resolution(true),
  unresolve: resolution(false),
  react: defineOperation({ params: CommentParams, body: ReactionBody, response: Comment }, async (services, actor, { params, body }) => {
    const caller = requireCaller(actor);
    return setReaction(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), body.emoji, true);
  }),
  unreact: defineOperation({ params: ReactionParams, response: Comment }, async (services, actor, { params }) => {
    const caller = requireCaller(actor);
    return setReaction(services, caller, await resolveComment(services, workspaceResolver(services), caller, params.id, 'comment', addressIn(params)), params.emoji, false);
  }),
};

/** The legacy row endpoints point at the universal one's description. */
function markDeprecated(reply: FastifyReply, services: Services) {
  reply.header('deprecation', 'true');
  reply.header('link', `<${services.config.publicUrl}/openapi.json#/paths/~1api~1workspaces~1%7Bslug%7D~1comments>; rel="successor-version"`);
}

export async function commentRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/comments')) {
    app.get(
      url,
      {
        schema: {
          summary: 'List comments',
          description:
            'Roots and replies, oldest first unless `order=newest`, filtered by `target_type`, `target_id`, `surface` (row and cell comments count under ' +
            'their row\'s current sheet), `status` (the thread\'s; `open` by default), `mentioning=me` and `author` (an id or `me`). Page with `offset`; ' +
            '`nextOffset` is null on the last page. Anonymous readers of public or unlisted workspaces need `commentsOnPublicShare` (403 otherwise).',
          tags: ['comments'],
          params: WorkspaceParams,
          querystring: ListQuery,
          response: { 200: CommentList, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => commentOperations.list.run(services, request.actor, request),
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Add a comment or a reply',
          description:
            'A new thread on `target` (404 when the row, column, surface or file does not exist; 422 when a surface is of the wrong kind or a doc range ' +
            'falls outside the body), or a reply with `parentId` naming the same target (400 otherwise); a reply to a reply joins the root\'s thread and a ' +
            'reply reopens a resolved thread (`comment.unresolved`). Mentions are kept only while `@label` occurs in `body`. Agent mentions of a new thread ' +
            'wake the agents (`wakes`); a wake never fails the comment. Emits `comment.added`.',
          tags: ['comments'],
          params: WorkspaceParams,
          body: CreateCommentBody,
          response: { 200: CreatedComment, ...errorResponses },
        },
      },
      async (request) => commentOperations.create.run(services, request.actor, request),
    );
  }

  for (const [url, params] of COMMENT_PATHS) {
    app.get(
      url,
      {
        schema: {
          summary: 'One comment',
          description: 'A thread\'s root also lists its `replies`, oldest first. 404 when missing or in a workspace the caller cannot see.',
          tags: ['comments'],
          params,
          response: { 200: CommentDetail, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => commentOperations.detail.run(services, request.actor, request),
    );

    app.delete(
      url,
      {
        schema: {
          summary: 'Delete a comment (author only)',
          description: 'Deleting a thread\'s root deletes its replies too. 403 for anyone but the author. Emits one `comment.deleted` per comment removed.',
          tags: ['comments'],
          params,
          response: { 200: Ok, ...errorResponses },
        },
      },
      async (request) => commentOperations.remove.run(services, request.actor, request),
    );

    for (const [action, resolve] of [['resolve', true], ['unresolve', false]] as const) {
      app.post(
        `${url}/${action}`,
        {
          schema: {
            summary: resolve ? 'Resolve the thread' : 'Reopen the thread',
            description: `Acts on the comment's thread (a reply's root). Idempotent: ${resolve ? 'resolving a resolved' : 'reopening an open'} thread changes nothing. Emits \`comment.${action}d\` when the state changes.`,
            tags: ['comments'],
            params,
            response: { 200: Comment, ...errorResponses },
          },
        },
        async (request) => commentOperations[action].run(services, request.actor, request),
      );
    }

    app.post(
      `${url}/reactions`,
      {
        schema: {
          summary: 'React to a comment',
          description: 'One reaction per (comment, caller, emoji); adding it again changes nothing. Emits `comment.reaction_added`.',
          tags: ['comments'],
          params,
          body: ReactionBody,
          response: { 200: Comment, ...errorResponses },
        },
      },
      async (request) => commentOperations.react.run(services, request.actor, request),
    );

    app.delete(
      `${url}/reactions/:emoji`,
      {
        schema: {
          summary: "Remove the caller's reaction",
          description: 'Removes the caller\'s reaction with this (URL-encoded) emoji; 200 whether or not it was there. Emits `comment.reaction_removed` when it was.',
          tags: ['comments'],
          params: params.extend({ emoji: Emoji }),
          response: { 200: Comment, ...errorResponses },
        },
      },
      async (request) => commentOperations.unreact.run(services, request.actor, request),
    );
  }

  for (const url of workspacePaths('/rows/:id/comments')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Comments on a row (deprecated)',
          description:
            'Every comment whose target is the row, replies included, oldest first. Deprecated: answers with `Deprecation: true` and a `Link` of rel ' +
            '`successor-version`; use `GET /comments?target_type=row&target_id={id}&status=all`.',
          tags: ['comments'],
          deprecated: true,
          params: RowParams,
          querystring: z.strictObject(SurfaceQuery),
          response: { 200: z.object({ comments: z.array(Comment) }), ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        markDeprecated(reply, services);
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_comments');
        return { comments: await listRowComments(services, resolved, request.params.id, request.query) };
      },
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Comment on a row (deprecated)',
          description:
            'The target is always the row; `mentions` are principal ids. A reply to a thread that is not on this row (a cell thread, say) is 400. ' +
            'Deprecated: answers with `Deprecation: true` and a `Link` of rel `successor-version`; use `POST /comments`.',
          tags: ['comments'],
          deprecated: true,
          params: RowParams,
          querystring: z.strictObject(SurfaceQuery),
          body: LegacyCreateBody,
          response: { 200: CreatedComment, ...errorResponses },
        },
      },
      async (request, reply) => {
        markDeprecated(reply, services);
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'comment');
        return createRowComment(services, actor, resolved, { rowId: request.params.id, ...request.query }, request.body);
      },
    );
  }
}
