/**
 * Commented text highlighted in the doc (docs/COMMENTS.md "In the web app"):
 * the open threads on text of the surface, at the positions the server
 * resolves their anchors to, drawn as decorations that follow edits until
 * the next listing replaces them. A click on one opens its thread.
 */
import { Plugin, PluginKey, type EditorState } from 'prosemirror-state';
import { Decoration, DecorationSet, type EditorView } from 'prosemirror-view';
import { absolutePositionToRelativePosition, relativePositionToAbsolutePosition, ySyncPluginKey } from 'y-prosemirror';
import type * as Y from 'yjs';
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

/** A highlighted range held as Yjs relative positions, so it stays on its words whatever anyone edits. */
type Anchored = { threadId: string; start: Y.RelativePosition; end: Y.RelativePosition };
type HighlightState = { anchored: Anchored[]; decorations: DecorationSet };

const key = new PluginKey<HighlightState>('commentHighlights');

type SyncState = { type: Y.XmlFragment; doc: Y.Doc; binding: { mapping: Map<unknown, unknown> } | null; isChangeOrigin?: boolean };

function decorationsOf(state: EditorState, anchored: Anchored[], sync: SyncState, mapping: Map<unknown, unknown>): DecorationSet {
  const size = state.doc.content.size;
  const decorations: Decoration[] = [];
  for (const range of anchored) {
    const from = relativePositionToAbsolutePosition(sync.doc, sync.type, range.start, mapping as never);
    const to = relativePositionToAbsolutePosition(sync.doc, sync.type, range.end, mapping as never);
    if (from === null || to === null || from >= to || to > size) continue;
    decorations.push(Decoration.inline(from, to, { class: 'comment-highlight', 'data-thread': range.threadId, title: 'Commented: click to open the thread' }));
  }
  return DecorationSet.create(state.doc, decorations);
}

/**
 * The plugin; `onOpen` gets the thread of a highlight clicked (not dragged
 * over: that selects text). A peer's change reaches the editor as a
 * replacement of the whole doc (y-prosemirror), which no mapping survives:
 * then the ranges are placed again from their relative positions, as
 * y-prosemirror's own cursors are.
 */
export function commentHighlightPlugin(onOpen: (threadId: string) => void): Plugin {
  return new Plugin<HighlightState>({
    key,
    state: {
      init: () => ({ anchored: [], decorations: DecorationSet.empty }),
      apply: (tr, previous, _old, state) => {
        const sync = ySyncPluginKey.getState(state) as SyncState | undefined;
        const ranges = tr.getMeta(key) as CommentedRange[] | undefined;
        const mapping = sync?.binding?.mapping;
        if (!sync || !mapping || mapping.size === 0) return previous;
        if (ranges) {
          const size = state.doc.content.size;
          const relative = (pos: number) => absolutePositionToRelativePosition(pos, sync.type, mapping as never);
          const anchored = ranges
            .filter((range) => range.from < range.to && range.to <= size)
            .map((range) => ({ threadId: range.threadId, start: relative(range.from), end: relative(range.to) }));
          return { anchored, decorations: decorationsOf(state, anchored, sync, mapping) };
        }
        if (sync.isChangeOrigin) return { anchored: previous.anchored, decorations: decorationsOf(state, previous.anchored, sync, mapping) };
        return { anchored: previous.anchored, decorations: previous.decorations.map(tr.mapping, tr.doc) };
      },
    },
    props: {
      decorations: (state) => key.getState(state)?.decorations,
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
