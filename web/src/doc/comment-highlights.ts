/**
 * Commented text highlighted in the doc (docs/COMMENTS.md "In the web app"):
 * the open threads on text of the surface, at the positions the server
 * resolves their anchors to, drawn as decorations that follow edits until
 * the next listing replaces them. A click on one opens its thread.
 */
import { Plugin, PluginKey, type EditorState } from 'prosemirror-state';
import { Decoration, DecorationSet, type EditorView } from 'prosemirror-view';
import { listComments } from '../workspace-context/comment-list';
import type { Workspace } from '../workspace-context/types';

/** Where a thread on text sits in the doc now. */
export interface CommentedRange {
  threadId: string;
  from: number;
  to: number;
}

/** The open threads on text of a doc surface, as ranges of the doc. */
export async function loadCommentedRanges(workspace: Workspace, surfaceSlug: string): Promise<CommentedRange[]> {
  const comments = await listComments(workspace, { surface: surfaceSlug, status: 'open', target_type: 'doc_range' });
  return comments.flatMap((comment) =>
    !comment.parentId && comment.target.type === 'doc_range' ? [{ threadId: comment.id, from: comment.target.anchor.from, to: comment.target.anchor.to }] : [],
  );
}

const key = new PluginKey<DecorationSet>('commentHighlights');

function decorationsOf(state: EditorState, ranges: CommentedRange[]): DecorationSet {
  const size = state.doc.content.size;
  const shown = ranges.filter((range) => range.from < range.to && range.to <= size);
  return DecorationSet.create(
    state.doc,
    shown.map((range) => Decoration.inline(range.from, range.to, { class: 'comment-highlight', 'data-thread': range.threadId, title: 'Commented: click to open the thread' })),
  );
}

/** The plugin; `onOpen` gets the thread of a highlight clicked (not dragged over: that selects text). */
export function commentHighlightPlugin(onOpen: (threadId: string) => void): Plugin {
  return new Plugin<DecorationSet>({
    key,
    state: {
      init: () => DecorationSet.empty,
      apply: (tr, set, _old, state) => {
        const ranges = tr.getMeta(key) as CommentedRange[] | undefined;
        return ranges ? decorationsOf(state, ranges) : set.map(tr.mapping, tr.doc);
      },
    },
    props: {
      decorations: (state) => key.getState(state),
      handleClick(_view, _pos, event) {
        const highlight = (event.target as HTMLElement | null)?.closest?.('.comment-highlight') as HTMLElement | null;
        if (highlight?.dataset.thread) onOpen(highlight.dataset.thread);
        // The caret still goes where the person clicked.
        return false;
      },
    },
  });
}

/** Replaces the highlighted ranges (a new listing). */
export function showCommentHighlights(view: EditorView, ranges: CommentedRange[]) {
  view.dispatch(view.state.tr.setMeta(key, ranges));
}
