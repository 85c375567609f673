import { api, workspacePath } from '../lib/api';
import type { Comment, CommentList } from '../../../src/model/schemas/comments';
import type { Workspace } from './types';

/**
 * Comments of a workspace matching `filters` (the API's list filters:
 * `surface`, `status`, `target_type`...), oldest first, every page up to
 * 2,000: what the comments panel and the doc's highlights read.
 */
export async function listComments(workspace: Workspace, filters: Record<string, string>): Promise<Comment[]> {
  const comments: Comment[] = [];
  for (let offset: number | null = 0; offset !== null && comments.length < 2000; ) {
    const query = new URLSearchParams({ ...filters, limit: '200', offset: String(offset) });
    const page: CommentList = await api('GET', workspacePath(workspace.org.slug, workspace.slug, `/comments?${query}`));
    comments.push(...page.comments);
    offset = page.nextOffset;
  }
  return comments;
}
