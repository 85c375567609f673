import { z } from 'zod';
import { IsoDateTime, Principal, WellFormedString } from './common';

/**
 * Comment requests and records (SPEC "Comments", API-DECISIONS "Comments").
 * One schema per shape drives validation, types and the OpenAPI description.
 */

export const TARGET_TYPES = ['row', 'cell', 'doc_range', 'html_element', 'surface', 'workspace', 'file'] as const;
export const MAX_BODY = 20_000;

const Id = z.string().min(1).max(100);
const SurfaceRef = z.string().min(1).max(100).describe('Surface slug (or id)');

const DocAnchorInput = z.strictObject({
  from: z.number().int().min(0).describe('ProseMirror position in the body as GET /doc returns it'),
  to: z.number().int().min(0).describe('ProseMirror position, at least `from`'),
  text: WellFormedString(10_000).describe('The text between from and to as the client saw it; drift is reported against it. Empty: the server takes the text there now.'),
});

const HtmlAnchor = z.strictObject({
  selector: WellFormedString(1_000).min(1).describe('CSS path of the element'),
  text: WellFormedString(500).optional().describe('About 60 characters of the element text, a fuzzy fallback when the selector stops matching'),
});

export const CommentTargetInput = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('row'), rowId: Id }),
    z.strictObject({ type: z.literal('cell'), rowId: Id, columnKey: z.string().min(1).max(64) }),
    z.strictObject({ type: z.literal('doc_range'), surfaceSlug: SurfaceRef, anchor: DocAnchorInput }),
    z.strictObject({ type: z.literal('html_element'), surfaceSlug: SurfaceRef, anchor: HtmlAnchor }),
    z.strictObject({ type: z.literal('surface'), surfaceSlug: SurfaceRef }),
    z.strictObject({ type: z.literal('workspace') }),
    z.strictObject({ type: z.literal('file'), fileId: Id }),
  ])
  .meta({ id: 'NewCommentTarget', description: 'What the comment is about; `type` selects the shape. A reply names its thread\'s target.' });

const Anchor = z.object({
  from: z.number().int().describe('Where the range starts now (it follows edits)'),
  to: z.number().int().describe('Where the range ends now'),
  text: z.string().describe('The text snapshot taken when the comment was made'),
});

export const CommentTarget = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('row'), rowId: z.string() }),
    z.object({ type: z.literal('cell'), rowId: z.string(), columnKey: z.string().describe("The column's current key (it follows renames)"), columnId: z.string().nullable() }),
    z.object({ type: z.literal('doc_range'), surfaceSlug: z.string(), anchor: Anchor }),
    z.object({ type: z.literal('html_element'), surfaceSlug: z.string().nullable(), anchor: z.object({ selector: z.string(), text: z.string().optional() }) }),
    z.object({ type: z.literal('surface'), surfaceSlug: z.string().nullable() }),
    z.object({ type: z.literal('workspace') }),
    z.object({ type: z.literal('file'), fileId: z.string() }),
  ])
  .meta({ id: 'CommentTarget' });

export const Mention = z
  .strictObject({
    kind: z.enum(['user', 'agent']),
    id: Id.describe('The principal id'),
    label: WellFormedString(200).min(1).describe('Kept only while `@label` occurs in the body'),
  })
  .meta({ id: 'Mention' });

export const Reaction = z.object({ emoji: z.string(), count: z.number().int(), principalIds: z.array(z.string()) }).meta({ id: 'Reaction' });

export const Comment = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    target: CommentTarget,
    targetType: z.enum(TARGET_TYPES),
    targetId: z.string().describe('The row (row and cell targets), the surface (doc_range, html_element, surface), the workspace or the file'),
    surfaceSlug: z.string().nullable().describe('The surface the comment sits on now (a row comment: its row\'s current sheet)'),
    surfaceName: z.string().nullable().describe('That surface\'s name, as people see it (its tab); null with `surfaceSlug`'),
    body: z.string(),
    parentId: z.string().nullable().describe('The thread root; null for a root'),
    mentions: z.array(Mention),
    author: Principal,
    authorId: z.string(),
    authorPrincipalType: z.enum(['user', 'agent']),
    reactions: z.array(Reaction),
    resolvedAt: IsoDateTime.nullable().describe("The thread's resolution, the same on every comment of the thread"),
    resolvedBy: Principal.nullable(),
    correlationId: z.string().nullable(),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
    anchor: Anchor.optional().describe('doc_range comments: the range as it reads now'),
    currentText: z.string().optional().describe('doc_range comments, once the words under the anchor changed: what is there now'),
    expectedText: z.string().optional().describe('With currentText: the snapshot the comment was made on'),
  })
  .meta({ id: 'Comment', description: 'A comment (v1 shape).' });

export const CommentDetail = Comment.extend({ replies: z.array(Comment).optional().describe('A root\'s replies, oldest first') }).meta({ id: 'CommentDetail' });

export const Wake = z
  .object({
    agentId: z.string(),
    status: z
      .enum(['delivered', 'deduplicated', 'limit_reached', 'no_access', 'failed'])
      .describe(
        '`delivered`: in the agent\'s inbox and counted on the messages meter. `deduplicated`: woken for this thread location in the last 60 s. ' +
          '`limit_reached`: the organisation is at its plan\'s hard ceiling of messages this month (what a send gets as 429). ' +
          '`no_access`: the agent cannot read this workspace\'s comments. `failed`: the inbox failed; the comment stands.',
      ),
  })
  .meta({ id: 'Wake' });

export const CreatedComment = Comment.extend({
  wakes: z.array(Wake).describe('One entry per agent a new thread mentions (replies wake nobody)'),
}).meta({ id: 'CreatedComment' });

export const CommentList = z.object({
  comments: z.array(Comment),
  nextOffset: z.number().int().nullable().describe('The offset of the next page; null on the last'),
});

/** What the caller has read of the comments that mention it (its inbox), kept by the server so it follows a person to every device. */
export const ReadMarks = z
  .object({
    readThrough: IsoDateTime.nullable().describe('Every mention created up to this time counts as read ("Mark all read"); null until first set'),
    commentIds: z.array(z.string()).describe('Mentions created after `readThrough` that were read one by one, most recently read first'),
  })
  .meta({ id: 'ReadMarks' });

export const MarkReadBody = z.strictObject({
  commentIds: z.array(Id).max(100).optional().describe('Comments that mention you, read one by one; others are ignored'),
  through: IsoDateTime.optional().describe('Everything created up to this time is read (it never moves back, and not past now)'),
});

export const CreateCommentBody = z.strictObject({
  target: CommentTargetInput,
  body: WellFormedString(MAX_BODY).refine((s) => s.trim() !== '', 'must not be blank'),
  parentId: Id.optional().describe('Reply to this comment; a reply to a reply joins the root\'s thread'),
  mentions: z.array(Mention).max(50).optional(),
  correlationId: WellFormedString(200).min(1).optional().describe('Echoed on the record and the comment.added event, for clients matching their optimistic copies'),
});

export const LegacyCreateBody = z.strictObject({
  body: WellFormedString(MAX_BODY).refine((s) => s.trim() !== '', 'must not be blank'),
  parentId: Id.optional(),
  mentions: z.array(Id).max(50).optional().describe('Principal ids; each is kept when `@<name>` occurs in the body'),
  correlationId: WellFormedString(200).min(1).optional(),
});

export const ListQuery = z.strictObject({
  target_type: z.enum(TARGET_TYPES).optional(),
  target_id: Id.optional().describe('The row (row and cell comments), surface, workspace or file id'),
  surface: z.string().min(1).max(100).optional().describe('Surface slug; row and cell comments count under their row\'s current sheet'),
  surfaceId: Id.optional(),
  status: z.enum(['open', 'resolved', 'all']).default('open'),
  mentioning: z.literal('me').optional().describe('Only comments that mention the caller'),
  author: Id.optional().describe('A principal id, or `me`'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  order: z.enum(['oldest', 'newest']).default('oldest').describe('By creation time'),
});

/** At most 16 characters (code points); no whitespace or control characters. */
export const Emoji = z
  .string()
  .min(1)
  .max(64)
  .refine((s) => [...s].length <= 16, 'at most 16 characters')
  .refine((s) => !/[\s\p{Cc}]/u.test(s), 'must not contain whitespace or control characters')
  // Text with an unpaired surrogate arrives repaired to U+FFFD (docs/SYNC.md "Text"): not a reaction anyone chose.
  .refine((s) => !/[\p{Cs}\uFFFD]/u.test(s), 'must not contain unpaired surrogates or U+FFFD');

export type CommentTarget = z.infer<typeof CommentTarget>;
/** A target as the API takes it (a cell by key, a range by positions and the text seen). */
export type CommentTargetInput = z.infer<typeof CommentTargetInput>;
export type Mention = z.infer<typeof Mention>;
export type Reaction = z.infer<typeof Reaction>;
export type Comment = z.infer<typeof Comment>;
export type CommentList = z.infer<typeof CommentList>;
export type ReadMarks = z.infer<typeof ReadMarks>;
