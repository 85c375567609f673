import type { EditorState } from 'prosemirror-state';
import { addColumnAfter, addRowAfter, deleteColumn, deleteRow, deleteTable } from 'prosemirror-tables';
import type { EditorView } from 'prosemirror-view';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { useLocation } from '../lib/router';
import { NEVER_TRUE, useStore } from '../lib/store';
import { Icon } from '../ui/icons';
import { IconButton, Menu, Spinner, useMenu } from '../ui/primitives';
import { dismissToast, showError, showToast } from '../ui/toast';
import type { SurfaceViewProps } from '../workspace-context/context';
import { askLinkAddress, commands, createEditor, focusNearest, revealSection, RUN_MARKS_CHANGED, selectionInfo, type SuggestionTarget } from './editor';
import { canFormatWhileSuggesting } from './suggesting';
import { loadCommentedRanges, showCommentHighlights, type CommentedRange } from './comment-highlights';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import { runHighlight } from '../workspace-context/run-highlight';
import { currentAuthor, ModeSwitch, SuggestionPopover, SuggestionsPanel, useDocMode, useDocSuggestions } from './SuggestionsPanel';
import { refreshMentionCandidates } from './mentions';
import { mentionCandidatesOf, type MentionCandidate } from '../workspace-context/mention-candidates';
import { AuthorshipView } from './Authorship';
import { DocFileMenu } from './DocFiles';
import type { UploadedImage } from '../../../src/model/schemas/files';

/** A doc surface: a collaborative rich-text editor over the surface's document. */
export function DocSurface(props: SurfaceViewProps) {
  const { document, context } = props;
  const mount = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const [state, setState] = useState<EditorState | null>(null);
  const [ready, setReady] = useState(false);
  const synced = useStore(document?.synced ?? NEVER_TRUE);
  // Suggesting mode (SuggestionsPanel.tsx): a commenter's editor is writable for suggestions only.
  const docMode = useDocMode(props.surface.id, context.abilities);
  const suggesting = useRef(docMode.mode === 'suggesting');
  suggesting.current = docMode.mode === 'suggesting';
  const editable = docMode.writable;
  const canDecide = context.abilities.edit;
  const [suggestionTarget, setSuggestionTarget] = useState<SuggestionTarget | null>(null);
  const [showSuggestions, setShowSuggestions] = useState(false);
  // The open panel follows the text as it is typed; otherwise the live events (made, decided) keep the count right.
  const docSuggestions = useDocSuggestions(context, props.surface, showSuggestions ? state?.doc : null);
  const candidates = useRef<MentionCandidate[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  const [authorship, setAuthorship] = useState(false);

  candidates.current = mentionCandidatesOf(context.members);
  useEffect(() => {
    if (view.current) refreshMentionCandidates(view.current);
  }, [context.members]);

  useEffect(() => {
    if (!document) return;
    void document.localReady.then(() => setReady(true));
  }, [document]);

  const upload = async (file: File): Promise<string | null> => {
    const { workspace } = context;
    const form = new FormData();
    form.append('file', file);
    const notice = showToast(`Uploading ${file.name}…`, 'info', 60_000);
    try {
      const stored = await api<UploadedImage>('POST', workspacePath(workspace.org.slug, workspace.slug, '/upload'), form);
      return stored.url;
    } catch (error) {
      showError(error);
      return null;
    } finally {
      dismissToast(notice);
    }
  };

  // The editor mounts once, as soon as there is content to show (the local copy or the server's).
  const canMount = ready || synced;
  useEffect(() => {
    if (!document || !mount.current || !canMount) return;
    const editor = createEditor(mount.current, {
      doc: document.doc,
      awareness: document.provider.awareness,
      editable,
      mentionCandidates: () => candidates.current,
      uploadImage: upload,
      onStateChange: setState,
      suggesting: () => suggesting.current,
      author: currentAuthor,
      onSuggestionClick: setSuggestionTarget,
      runInserted: () => runHighlight.get()?.inserted.get(props.surface.id) ?? [],
      onCommentClick: (threadId) => context.openPanel({ kind: 'comments', highlight: threadId }),
    });
    view.current = editor;
    setState(editor.state);
    return () => {
      editor.destroy();
      editor.dom.remove();
      view.current = null;
    };
  }, [document, canMount]);

  useEffect(() => {
    view.current?.setProps({ editable: () => editable });
  }, [editable]);

  // The run chosen in the Activity panel: its inserted text is marked (editor.ts, runMarksPlugin).
  const highlight = useStore(runHighlight);
  useEffect(() => {
    const editor = view.current;
    if (editor) editor.dispatch(editor.state.tr.setMeta(RUN_MARKS_CHANGED, true));
  }, [highlight, state === null]);

  // A search hit links to `#section-{index}`: once the server's content is in, the caret goes there.
  const { hash } = useLocation();
  const revealed = useRef<string | null>(null);
  useEffect(() => {
    const section = /^#section-(\d+)$/.exec(hash);
    if (!section || !view.current || !synced || revealed.current === hash) return;
    if (revealSection(view.current, Number(section[1]))) revealed.current = hash;
  }, [hash, synced, state !== null]);

  const run = (command: (state: EditorState, dispatch?: EditorView['dispatch'], view?: EditorView) => boolean) => {
    const editor = view.current;
    if (!editor) return;
    command(editor.state, editor.dispatch, editor);
    editor.focus();
  };

  // A range comment starts from a selection: a bubble by the selected text opens the comments panel on it.
  // Read from the DOM selection, so it works in a read-only editor (commenters) too.
  const scroller = useRef<HTMLDivElement>(null);
  const [bubble, setBubble] = useState<{ from: number; to: number; text: string; top: number; left: number } | null>(null);
  useEffect(() => {
    if (!context.abilities.comment) return;
    const onSelection = () => setBubble(selectedRange(view.current, scroller.current));
    window.document.addEventListener('selectionchange', onSelection);
    return () => window.document.removeEventListener('selectionchange', onSelection);
  }, [context.abilities.comment]);
  const commentOnSelection = () => {
    if (!bubble) return;
    const label = bubble.text.length > 140 ? `${bubble.text.slice(0, 140)}…` : bubble.text;
    context.openPanel({ kind: 'comments', focus: { target: { type: 'doc_range', surfaceSlug: props.surface.slug, anchor: { from: bubble.from, to: bubble.to, text: bubble.text } }, label } });
    setBubble(null);
  };

  // Commented text is highlighted: the open threads on text, read again when a comment changes.
  const [commented, setCommented] = useState<CommentedRange[]>([]);
  const loadCommented = useCallback(() => loadCommentedRanges(context.workspace, props.surface.slug).then(setCommented, () => {}), [context.workspace.id, props.surface.slug]);
  useEffect(() => void loadCommented(), [loadCommented]);
  useReloadOnEvents(context.workspace, (name) => name.startsWith('comment.'), loadCommented, { quietMs: 80 });
  // The server's positions are those of the doc it holds: placed once this copy has caught up with it.
  useEffect(() => {
    if (view.current && synced) showCommentHighlights(view.current, commented);
  }, [commented, synced, state !== null]);

  // A click in the blank area beside or below the text puts the caret at the nearest place in it.
  const focusFromBlank = (event: MouseEvent) => {
    const editor = view.current;
    const target = event.target as HTMLElement;
    if (!editor || !editable || authorship || event.button !== 0 || editor.dom.contains(target)) return;
    if (target.closest('button, a, input, .suggestion-popover, .comment-bubble')) return;
    event.preventDefault();
    focusNearest(editor, event.clientX, event.clientY);
  };

  const info = state ? selectionInfo(state) : null;
  // Suggesting keeps the toolbar: formatting what one types (or one's own suggested text) works; what a suggestion cannot hold is shown disabled.
  const isSuggesting = docMode.mode === 'suggesting';
  const canFormat = !isSuggesting || (state !== null && canFormatWhileSuggesting(state, currentAuthor()));
  const structureNote = isSuggesting ? 'Headings, lists, tables, images and dividers cannot be suggested: switch to Editing to change them.' : undefined;
  const suggestionCount = docSuggestions.suggestions?.length ?? 0;
  const blockMenu = useMenu();
  const tableMenu = useMenu();

  return (
    <div class="doc-surface">
      <div class="doc-viewbar">
        {editable && (
          <button
            type="button"
            class={`doc-view-toggle doc-suggestions-button ${showSuggestions ? 'is-active' : ''}`}
            aria-pressed={showSuggestions}
            aria-label={`Suggestions${suggestionCount ? `, ${suggestionCount} open` : ''}`}
            onClick={() => setShowSuggestions((shown) => !shown)}
          >
            <Icon name="edit" size={14} />
            <span>Suggestions</span>
            {suggestionCount > 0 && <span class="count-badge">{suggestionCount}</span>}
          </button>
        )}
        <button type="button" class={`doc-view-toggle ${authorship ? 'is-active' : ''}`} aria-pressed={authorship} onClick={() => setAuthorship(!authorship)}>
          <Icon name="users" size={14} />
          <span>Authorship</span>
        </button>
        <DocFileMenu context={context} surface={props.surface} editable={context.abilities.edit && !context.workspace.archivedAt} />
      </div>
      {editable && info && !authorship && (
        <div class="doc-toolbar" role="toolbar" aria-label="Formatting">
          <ModeSwitch mode={docMode.mode} forced={docMode.forced} onChange={docMode.setMode} />
          <span class="toolbar-divider" />
          <span class="toolbar-group" title={structureNote}>
            <button class="block-select" onClick={blockMenu.open} aria-haspopup="menu" aria-label="Text style" disabled={isSuggesting}>
              {BLOCK_LABELS[info.block] ?? 'Text'}
            </button>
          </span>
          <span class="toolbar-divider" />
          <span class="toolbar-group" title={canFormat ? undefined : 'Only text you are suggesting can be formatted: select your own suggested text, or format as you type.'}>
            <IconButton icon="bold" label="Bold (Ctrl+B)" active={info.bold} disabled={!canFormat} onClick={() => run(commands.bold)} />
            <IconButton icon="italic" label="Italic (Ctrl+I)" active={info.italic} disabled={!canFormat} onClick={() => run(commands.italic)} />
            <IconButton icon="strike" label="Strikethrough" active={info.strike} disabled={!canFormat} onClick={() => run(commands.strike)} />
            <IconButton icon="code" label="Code (Ctrl+E)" active={info.code} disabled={!canFormat} onClick={() => run(commands.code)} />
            <IconButton
              icon="link"
              label="Link (Ctrl+K)"
              active={info.link}
              disabled={!canFormat}
              onClick={() => {
                if (info.link) return run(commands.link(null));
                void askLinkAddress().then((href) => href && run(commands.link(href)));
              }}
            />
          </span>
          <span class="toolbar-divider" />
          <span class="toolbar-group" title={structureNote}>
            <IconButton icon="listBullet" label="Bulleted list" active={info.list === 'bulletList'} disabled={isSuggesting} onClick={() => run(commands.bulletList)} />
            <IconButton icon="listOrdered" label="Numbered list" active={info.list === 'orderedList'} disabled={isSuggesting} onClick={() => run(commands.orderedList)} />
            <IconButton icon="listTask" label="Task list" active={info.list === 'taskList'} disabled={isSuggesting} onClick={() => run(commands.taskList)} />
            <IconButton icon="quote" label="Quote" disabled={isSuggesting} onClick={() => run(commands.blockquote)} />
          </span>
          <span class="toolbar-divider" />
          <span class="toolbar-group" title={structureNote}>
            <IconButton icon="table2" label={info.inTable ? 'Table options' : 'Insert table'} active={info.inTable} disabled={isSuggesting} onClick={(event) => (info.inTable ? tableMenu.open(event) : run(commands.insertTable))} />
            <IconButton icon="image" label="Insert image" disabled={isSuggesting} onClick={() => fileInput.current?.click()} />
            <IconButton icon="hr" label="Divider" disabled={isSuggesting} onClick={() => run(commands.horizontalRule)} />
          </span>
          <span class="toolbar-spacer" />
          <IconButton icon="undo" label="Undo (Ctrl+Z)" onClick={() => run(commands.undo)} />
          <IconButton icon="redo" label="Redo (Ctrl+Shift+Z)" onClick={() => run(commands.redo)} />
          <input
            ref={fileInput}
            type="file"
            accept="image/*"
            hidden
            onChange={async (event) => {
              const input = event.target as HTMLInputElement;
              const file = input.files?.[0];
              input.value = '';
              if (!file) return;
              const src = await upload(file);
              if (src) run(commands.insertImage(src, file.name.replace(/\.[^.]+$/, '')));
            }}
          />
        </div>
      )}
      {!editable && (
        <div class="doc-readonly" role="note">
          {context.workspace.archivedAt ? 'This workspace is archived.' : `You can read this doc${context.abilities.comment ? ' and comment' : ''}, not edit it.`}
        </div>
      )}
      <div class="doc-main">
      <div class={`doc-scroll ${editable && !authorship ? 'is-writable' : ''}`} ref={scroller} onMouseDown={focusFromBlank}>
        {!(ready || synced) && <Spinner label="Opening the doc…" />}
        <div class="doc-page" ref={mount} hidden={authorship} />
        {authorship && <AuthorshipView context={context} surfaceId={props.surface.id} doc={document?.doc ?? null} />}
        {bubble && (
          <button class="comment-bubble" style={{ top: `${bubble.top}px`, left: `${bubble.left}px` }} onMouseDown={(event) => event.preventDefault()} onClick={commentOnSelection}>
            <Icon name="comment" size={14} />
            <span>Comment</span>
          </button>
        )}
        {suggestionTarget && scroller.current && suggestionTarget.element.isConnected && (
          <SuggestionPopover
            key={suggestionTarget.id}
            target={suggestionTarget}
            scroller={scroller.current}
            suggestion={docSuggestions.suggestions?.find((s) => s.id === suggestionTarget.id)}
            canDecide={canDecide}
            onDone={() => {
              setSuggestionTarget(null);
              docSuggestions.refresh();
            }}
          />
        )}
      </div>
      {showSuggestions && (
        <SuggestionsPanel
          context={context}
          surface={props.surface}
          suggestions={docSuggestions.suggestions}
          error={docSuggestions.error}
          canDecide={canDecide}
          onDecided={docSuggestions.refresh}
          onShow={(id) => {
            const element = view.current?.dom.querySelector<HTMLElement>(`[data-suggestion-id="${CSS.escape(id)}"]`);
            if (!element) return;
            element.scrollIntoView({ block: 'center' });
            setSuggestionTarget({ id, element });
          }}
          onClose={() => setShowSuggestions(false)}
        />
      )}
      </div>
      {blockMenu.anchor && (
        <Menu
          anchor={blockMenu.anchor}
          onClose={blockMenu.close}
          items={[
            { label: 'Text', onSelect: () => run(commands.paragraph), checked: info?.block === 'paragraph' },
            { label: 'Heading 1', onSelect: () => run(commands.heading(1)), checked: info?.block === 'h1' },
            { label: 'Heading 2', onSelect: () => run(commands.heading(2)), checked: info?.block === 'h2' },
            { label: 'Heading 3', onSelect: () => run(commands.heading(3)), checked: info?.block === 'h3' },
            { label: 'Code block', onSelect: () => run(commands.codeBlock), checked: info?.block === 'codeBlock' },
          ]}
        />
      )}
      {tableMenu.anchor && (
        <Menu
          anchor={tableMenu.anchor}
          onClose={tableMenu.close}
          items={[
            { label: 'Add row below', icon: 'plus', onSelect: () => run(addRowAfter) },
            { label: 'Add column right', icon: 'plus', onSelect: () => run(addColumnAfter) },
            { separator: true, label: '' },
            { label: 'Delete row', icon: 'trash', onSelect: () => run(deleteRow) },
            { label: 'Delete column', icon: 'trash', onSelect: () => run(deleteColumn) },
            { label: 'Delete table', icon: 'trash', danger: true, onSelect: () => run(deleteTable) },
          ]}
        />
      )}
    </div>
  );
}

const BLOCK_LABELS: Record<string, string> = { paragraph: 'Text', h1: 'Heading 1', h2: 'Heading 2', h3: 'Heading 3', h4: 'Heading 4', h5: 'Heading 5', h6: 'Heading 6', codeBlock: 'Code block' };

/** The editor's selected range (positions in the doc, as the API takes them), and where to show the bubble. */
function selectedRange(view: EditorView | null, scroller: HTMLElement | null) {
  const selection = window.getSelection();
  if (!view || !scroller || !selection || selection.isCollapsed || !selection.anchorNode || !selection.focusNode) return null;
  if (!view.dom.contains(selection.anchorNode) || !view.dom.contains(selection.focusNode)) return null;
  let from: number;
  let to: number;
  try {
    const anchor = view.posAtDOM(selection.anchorNode, selection.anchorOffset);
    const head = view.posAtDOM(selection.focusNode, selection.focusOffset);
    from = Math.min(anchor, head);
    to = Math.max(anchor, head);
  } catch {
    return null;
  }
  const text = view.state.doc.textBetween(from, to, '\n', ' ');
  if (!text.trim()) return null;
  const end = view.coordsAtPos(to);
  const box = scroller.getBoundingClientRect();
  return { from, to, text, top: end.bottom - box.top + scroller.scrollTop + 6, left: Math.max(8, end.left - box.left - 40) };
}
