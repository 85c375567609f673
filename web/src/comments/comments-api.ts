/**
 * The comments API as the panel uses it (docs/COMMENTS.md): one list per
 * surface, threads built from roots and replies, and the thread actions.
 */
import { api, workspacePath } from '../lib/api';
import type { Comment, CommentTarget, Mention, Reaction } from '../../../src/model/schemas/comments';
import type { NewTarget } from '../workspace-context/context';
import { listComments } from '../workspace-context/comment-list';
import type { Workspace } from '../workspace-context/types';

export type { CommentTarget, Reaction, Comment, NewTarget };

export interface Thread {
  root: Comment;
  replies: Comment[];
}

const commentsPath = (workspace: Workspace, suffix = '') => workspacePath(workspace.org.slug, workspace.slug, `/comments${suffix}`);

/** Every comment on a surface (open or resolved threads), grouped into threads, newest thread first. */
export async function loadThreads(workspace: Workspace, surfaceSlug: string, status: 'open' | 'resolved'): Promise<Thread[]> {
  const comments = await listComments(workspace, { surface: surfaceSlug, status });
  const threads = new Map<string, Thread>();
  for (const comment of comments) if (!comment.parentId) threads.set(comment.id, { root: comment, replies: [] });
  for (const comment of comments) if (comment.parentId) threads.get(comment.parentId)?.replies.push(comment);
  return [...threads.values()].reverse();
}

/** A mention as the API takes it: kept only while `@label` occurs in the body (docs/COMMENTS.md "Mentions"). */
export type CommentMention = Mention;

export function postComment(workspace: Workspace, body: { target: NewTarget | CommentTarget; body: string; parentId?: string; mentions?: CommentMention[] }) {
  return api<Comment>('POST', commentsPath(workspace), { ...body, target: inputTarget(body.target) });
}

/** A stored target back in the shape the API takes (a reply names its thread's target). */
function inputTarget(target: NewTarget | CommentTarget): NewTarget | CommentTarget {
  switch (target.type) {
    case 'cell':
      return { type: 'cell', rowId: target.rowId, columnKey: target.columnKey };
    case 'doc_range':
      return { type: 'doc_range', surfaceSlug: target.surfaceSlug, anchor: { from: target.anchor.from, to: target.anchor.to, text: target.anchor.text } };
    default:
      return target;
  }
}

export function setResolved(workspace: Workspace, comment: Comment, resolved: boolean) {
  return api<Comment>('POST', commentsPath(workspace, `/${encodeURIComponent(comment.id)}/${resolved ? 'resolve' : 'unresolve'}`));
}

export function setReaction(workspace: Workspace, comment: Comment, emoji: string, on: boolean) {
  return on
    ? api<Comment>('POST', commentsPath(workspace, `/${encodeURIComponent(comment.id)}/reactions`), { emoji })
    : api<Comment>('DELETE', commentsPath(workspace, `/${encodeURIComponent(comment.id)}/reactions/${encodeURIComponent(emoji)}`));
}

export function deleteComment(workspace: Workspace, comment: Comment) {
  return api('DELETE', commentsPath(workspace, `/${encodeURIComponent(comment.id)}`));
}

/** Whether a stored thread is about the target a person picked (a row, a cell, the same doc range). */
export function sameTarget(stored: CommentTarget, picked: NewTarget): boolean {
  if (stored.type !== picked.type) return false;
  if (stored.type === 'row' && picked.type === 'row') return stored.rowId === picked.rowId;
  if (stored.type === 'cell' && picked.type === 'cell') return stored.rowId === picked.rowId && stored.columnKey === picked.columnKey;
  if (stored.type === 'doc_range' && picked.type === 'doc_range') return stored.anchor.from === picked.anchor.from && stored.anchor.to === picked.anchor.to;
  return stored.type === 'surface';
}
