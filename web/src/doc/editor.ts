/**
 * The doc editor: ProseMirror in the service's own schema (`src/model/doc/schema.ts`,
 * shared with the server) bound to the document's `default` fragment with
 * y-prosemirror, the same binding the server uses to write REST edits, so a
 * browser and the server always read and write the same encoding.
 */
import { baseKeymap, chainCommands, exitCode, setBlockType, toggleMark, wrapIn } from 'prosemirror-commands';
import { dropCursor } from 'prosemirror-dropcursor';
import { gapCursor } from 'prosemirror-gapcursor';
import { ellipsis, emDash, InputRule, inputRules, textblockTypeInputRule, wrappingInputRule } from 'prosemirror-inputrules';
import { keymap } from 'prosemirror-keymap';
import type { MarkType, Node as PMNode, NodeType } from 'prosemirror-model';
import { liftListItem, sinkListItem, splitListItem, wrapInList } from 'prosemirror-schema-list';
import { EditorState, Plugin, Selection, TextSelection, type Command, type Transaction } from 'prosemirror-state';
import { goToNextCell, tableEditing } from 'prosemirror-tables';
import { Decoration, DecorationSet, EditorView } from 'prosemirror-view';
import { redo, undo, yCursorPlugin, ySyncPlugin, ySyncPluginKey, yUndoPlugin } from 'y-prosemirror';
import type * as Y from 'yjs';
import { docSchema } from '../../../src/model/doc/schema';
import { docSections } from '../../../src/model/doc/text';
import { DOC_BODY_FIELD } from '../../../src/model/doc/body';
import { mentionPlugin } from './mentions';
import type { MentionCandidate } from '../workspace-context/mention-candidates';
import { promptDialog } from '../ui/dialogs';
import { docMarkViews, TaskItemView } from './doc-view';
import { commentHighlightPlugin } from './comment-highlights';
import { SUGGESTED_META, suggestTransaction, withoutSuggestionMarksOnNewText, type SuggestingAuthor } from './suggesting';

export { docSchema };
const nodes = docSchema.nodes;
const marks = docSchema.marks;

/** The body fragment: the one place the web app names it (Tiptap's field name, `default`). */
export function bodyFragment(doc: Y.Doc): Y.XmlFragment {
  return doc.getXmlFragment(DOC_BODY_FIELD);
}

export interface EditorOptions {
  doc: Y.Doc;
  awareness: import('y-protocols/awareness').Awareness | null;
  editable: boolean;
  mentionCandidates: () => MentionCandidate[];
  uploadImage: (file: File) => Promise<string | null>;
  onStateChange: (state: EditorState) => void;
  /** Suggesting mode (suggesting.ts): read on every transaction, so the toolbar's toggle takes effect at once. */
  suggesting?: () => boolean;
  /** Whose suggestions the person's edits become (null: not signed in, nothing is rewritten). */
  author?: () => SuggestingAuthor | null;
  /** A click in a suggestion (null: a click anywhere else), for its Accept / Reject popover. */
  onSuggestionClick?: (target: SuggestionTarget | null) => void;
  /** Text a run inserted, in document order, to mark (the Activity panel's chosen run); read again on a `RUN_MARKS_CHANGED` transaction. */
  runInserted?: () => readonly string[];
  /** A click on commented text (comment-highlights.ts): the thread to open. */
  onCommentClick?: (threadId: string) => void;
}

/** Meta of a transaction that only says the marked run changed, so the run's marks are drawn again. */
export const RUN_MARKS_CHANGED = 'runMarksChanged';

/** The suggestion a click landed in, and the element to place a popover by. */
export interface SuggestionTarget {
  id: string;
  element: HTMLElement;
}

export function createEditor(mount: HTMLElement, options: EditorOptions): EditorView {
  const suggesting = () => Boolean(options.suggesting?.() && options.author?.());
  const plugins: Plugin[] = [
    ySyncPlugin(bodyFragment(options.doc)),
    ...(options.awareness ? [yCursorPlugin(options.awareness)] : []),
    yUndoPlugin(),
    mentionPlugin(options.mentionCandidates),
    inputRules({ rules: buildInputRules(suggesting) }),
    keymap(suggestingKeymap(suggesting)),
    keymap(buildKeymap()),
    keymap(baseKeymap),
    tableEditing(),
    dropCursor({ color: '#3b5bdb', width: 2 }),
    gapCursor(),
    placeholderPlugin('Start writing… Type # for a heading, - for a list, [ ] for a task, @ to mention someone.'),
    imageDropPlugin(options.uploadImage),
    suggestionClickPlugin((target) => options.onSuggestionClick?.(target)),
    runMarksPlugin(options.runInserted ?? (() => [])),
    commentHighlightPlugin((threadId) => options.onCommentClick?.(threadId)),
  ];
  const view: EditorView = new EditorView(mount, {
    state: EditorState.create({ schema: docSchema, plugins }),
    editable: () => options.editable,
    // Ticking a task is not something a suggestion can hold.
    nodeViews: { taskItem: (node, view, getPos) => new TaskItemView(node, view, getPos as () => number | undefined, () => !suggesting()) },
    markViews: docMarkViews,
    attributes: { class: 'prose', spellcheck: 'true', 'aria-label': 'Document', role: 'textbox', 'aria-multiline': 'true' },
    // `this` is the view: plugins may dispatch while the constructor is still running.
    dispatchTransaction(this: EditorView, transaction: Transaction) {
      // y-prosemirror queues cursor updates for the next tick (its `setMeta`) and only checks a flag its binding no longer sets
      // (yjs/y-prosemirror#199): one that lands after the editor was destroyed (the doc closed, another workspace opened) must do nothing.
      if (this.isDestroyed) return;
      // Only this person's own edits are rewritten: never what the sync binding applies (remote changes, undo).
      const local = transaction.docChanged && !transaction.getMeta(ySyncPluginKey) && !transaction.getMeta(SUGGESTED_META);
      if (local) {
        const author = options.author?.();
        transaction = suggesting() && author ? suggestTransaction(this.state, transaction, author) : withoutSuggestionMarksOnNewText(transaction);
      }
      const next = this.state.apply(transaction);
      this.updateState(next);
      options.onStateChange(next);
    },
  });
  if (!options.editable) view.dom.setAttribute('aria-readonly', 'true');
  return view;
}

// ---------------------------------------------------------------------------
// Commands for the toolbar and the keymap

export const commands = {
  bold: toggleMark(marks.bold!),
  italic: toggleMark(marks.italic!),
  strike: toggleMark(marks.strike!),
  code: toggleMark(marks.code!),
  paragraph: setBlockType(nodes.paragraph!),
  heading: (level: number) => setBlockType(nodes.heading!, { level }),
  codeBlock: setBlockType(nodes.codeBlock!),
  bulletList: wrapInList(nodes.bulletList!),
  orderedList: wrapInList(nodes.orderedList!),
  taskList: wrapInTaskList(false),
  blockquote: wrapIn(nodes.blockquote!),
  undo,
  redo,
  horizontalRule: ((state, dispatch) => {
    if (dispatch) dispatch(state.tr.replaceSelectionWith(nodes.horizontalRule!.create()).scrollIntoView());
    return true;
  }) as Command,
  insertTable: ((state, dispatch) => {
    const cell = (type: NodeType) => type.createAndFill()!;
    const row = (type: NodeType) => nodes.tableRow!.create(null, [cell(type), cell(type), cell(type)]);
    const table = nodes.table!.create(null, [row(nodes.tableHeader!), row(nodes.tableCell!), row(nodes.tableCell!)]);
    if (!dispatch) return true;
    const tr = state.tr.replaceSelectionWith(table);
    // Put the cursor in the first header cell, ready to type.
    let firstCell = -1;
    tr.doc.nodesBetween(tr.mapping.map(state.selection.from, -1), tr.doc.content.size, (node, pos) => {
      if (firstCell >= 0) return false;
      if (node.type === nodes.tableHeader) firstCell = pos;
      return firstCell < 0;
    });
    if (firstCell >= 0) tr.setSelection(TextSelection.create(tr.doc, firstCell + 2));
    dispatch(tr.scrollIntoView());
    return true;
  }) as Command,
  link: (href: string | null): Command => (state, dispatch) => {
    const { from, to, empty } = state.selection;
    if (!dispatch) return true;
    if (!href) return toggleMark(marks.link!)(state, dispatch) || true;
    if (empty) {
      const text = docSchema.text(href, [marks.link!.create({ href })]);
      dispatch(state.tr.replaceSelectionWith(text, false).scrollIntoView());
    } else dispatch(state.tr.removeMark(from, to, marks.link!).addMark(from, to, marks.link!.create({ href })).scrollIntoView());
    return true;
  },
  insertImage: (src: string, alt: string | null): Command => (state, dispatch) => {
    if (dispatch) dispatch(state.tr.replaceSelectionWith(nodes.image!.create({ src, alt })).scrollIntoView());
    return true;
  },
};

/** Which marks and blocks the selection is in, for the toolbar's pressed states. */
export function selectionInfo(state: EditorState) {
  const { from, $from, to, empty } = state.selection;
  const markActive = (type: MarkType) => (empty ? Boolean(type.isInSet(state.storedMarks ?? $from.marks())) : state.doc.rangeHasMark(from, to, type));
  const parent = $from.parent;
  let list: string | null = null;
  for (let depth = $from.depth; depth > 0; depth--) {
    const name = $from.node(depth).type.name;
    if (name === 'bulletList' || name === 'orderedList' || name === 'taskList') {
      list = name;
      break;
    }
  }
  let inTable = false;
  for (let depth = $from.depth; depth > 0; depth--) if ($from.node(depth).type === nodes.table) inTable = true;
  return {
    bold: markActive(marks.bold!),
    italic: markActive(marks.italic!),
    strike: markActive(marks.strike!),
    code: markActive(marks.code!),
    link: markActive(marks.link!),
    block: parent.type === nodes.heading ? `h${parent.attrs.level}` : parent.type.name,
    list,
    inTable,
  };
}

function wrapInTaskList(checked: boolean): Command {
  return (state, dispatch) => {
    const range = state.selection.$from.blockRange(state.selection.$to);
    if (!range) return false;
    if (dispatch) dispatch(state.tr.wrap(range, [{ type: nodes.taskList! }, { type: nodes.taskItem!, attrs: { checked } }]).scrollIntoView());
    return true;
  };
}

function buildKeymap(): Record<string, Command> {
  const hardBreak: Command = (state, dispatch) => {
    if (dispatch) dispatch(state.tr.replaceSelectionWith(nodes.hardBreak!.create()).scrollIntoView());
    return true;
  };
  const promptLink: Command = (state, dispatch, view) => {
    if (!dispatch) return true;
    if (selectionInfo(state).link) return commands.link(null)(state, dispatch);
    if (!view) return false;
    // The dialog takes focus; the link goes on the selection as it is when the address comes back.
    void askLinkAddress().then((href) => {
      view.focus();
      if (href) commands.link(href)(view.state, view.dispatch);
    });
    return true;
  };
  return {
    'Mod-z': undo,
    'Mod-y': redo,
    'Mod-Shift-z': redo,
    'Mod-b': commands.bold,
    'Mod-i': commands.italic,
    'Mod-e': commands.code,
    'Mod-Shift-s': commands.strike,
    'Mod-Shift-x': commands.strike,
    'Mod-k': promptLink,
    'Mod-Alt-0': commands.paragraph,
    'Mod-Alt-1': commands.heading(1),
    'Mod-Alt-2': commands.heading(2),
    'Mod-Alt-3': commands.heading(3),
    'Mod-Shift-7': commands.orderedList,
    'Mod-Shift-8': commands.bulletList,
    'Mod-Shift-9': commands.taskList,
    'Shift-Enter': chainCommands(exitCode, hardBreak),
    'Mod-Enter': chainCommands(exitCode, hardBreak),
    Enter: chainCommands(splitListItem(nodes.listItem!), splitListItem(nodes.taskItem!)),
    Tab: chainCommands(goToNextCell(1), sinkListItem(nodes.listItem!), sinkListItem(nodes.taskItem!)),
    'Shift-Tab': chainCommands(goToNextCell(-1), liftListItem(nodes.listItem!), liftListItem(nodes.taskItem!)),
    'Mod-[': chainCommands(liftListItem(nodes.listItem!), liftListItem(nodes.taskItem!)),
    'Mod-]': chainCommands(sinkListItem(nodes.listItem!), sinkListItem(nodes.taskItem!)),
  };
}

// ---------------------------------------------------------------------------
// Input rules: Markdown habits become formatting as you type.

/**
 * `**bold**`-style rules. The handler runs before the last typed character is
 * inserted, so the closing delimiter is in the document minus that character.
 */
function markInputRule(pattern: RegExp, type: MarkType): InputRule {
  return new InputRule(pattern, (state, match, start, end) => {
    const [whole, prefix = '', text] = match;
    if (!text) return null;
    const delimiter = (whole!.length - prefix.length - text.length) / 2;
    const openStart = start + prefix.length;
    const textStart = openStart + delimiter;
    const textEnd = textStart + text.length;
    const tr = state.tr.delete(textEnd, end).delete(openStart, textStart);
    tr.addMark(openStart, openStart + text.length, type.create());
    tr.removeStoredMark(type);
    return tr;
  });
}

/**
 * In suggesting mode only the typographic rules run: the others restyle or
 * restructure text, which a suggestion cannot hold (suggesting.ts).
 */
function buildInputRules(suggesting: () => boolean): InputRule[] {
  const unlessSuggesting = (rule: InputRule): InputRule => {
    const { handler } = rule as unknown as { handler: (state: EditorState, match: RegExpMatchArray, start: number, end: number) => Transaction | null };
    return new InputRule((rule as unknown as { match: RegExp }).match, (state, match, start, end) => (suggesting() ? null : handler(state, match, start, end)));
  };
  return [ellipsis, emDash, ...formattingInputRules().map(unlessSuggesting)];
}

function formattingInputRules(): InputRule[] {
  return [
    textblockTypeInputRule(/^(#{1,6})\s$/, nodes.heading!, (match) => ({ level: match[1]!.length })),
    wrappingInputRule(/^\s*>\s$/, nodes.blockquote!),
    wrappingInputRule(/^\s*([-+*])\s$/, nodes.bulletList!),
    wrappingInputRule(/^(\d+)\.\s$/, nodes.orderedList!, (match) => ({ start: Number(match[1]) }), (match, node) => node.childCount + node.attrs.start === Number(match[1])),
    new InputRule(/^\s*\[([ xX]?)\]\s$/, (state, match, start, end) => {
      const tr = state.tr.delete(start, end);
      const $start = tr.doc.resolve(start);
      const range = $start.blockRange();
      if (!range) return null;
      return tr.wrap(range, [{ type: nodes.taskList! }, { type: nodes.taskItem!, attrs: { checked: match[1]!.toLowerCase() === 'x' } }]);
    }),
    textblockTypeInputRule(/^```([a-zA-Z0-9+#-]*)\s$/, nodes.codeBlock!, (match) => ({ language: match[1] || null })),
    new InputRule(/^(?:---|\*\*\*|___)$/, (state, _match, start, end) => {
      const $start = state.doc.resolve(start);
      if ($start.parent.type !== nodes.paragraph) return null;
      const tr = state.tr.delete(start, end);
      const paragraphStart = tr.mapping.map($start.before());
      tr.replaceWith(paragraphStart, paragraphStart + tr.doc.resolve(paragraphStart).nodeAfter!.nodeSize, [nodes.horizontalRule!.create(), nodes.paragraph!.create()]);
      return tr.setSelection(TextSelection.near(tr.doc.resolve(paragraphStart + 2)));
    }),
    markInputRule(/(^|[^*])\*\*([^*\s](?:[^*]*[^*\s])?)\*\*$/, marks.bold!),
    markInputRule(/(^|[^*\w])\*([^*\s](?:[^*]*[^*\s])?)\*$/, marks.italic!),
    markInputRule(/(^|[^_\w])_([^_\s](?:[^_]*[^_\s])?)_$/, marks.italic!),
    markInputRule(/(^|[^~])~~([^~\s](?:[^~]*[^~\s])?)~~$/, marks.strike!),
    markInputRule(/(^|[^`])`([^`]+)`$/, marks.code!),
  ];
}

// ---------------------------------------------------------------------------

function placeholderPlugin(text: string): Plugin {
  return new Plugin({
    props: {
      decorations(state) {
        const doc = state.doc;
        if (doc.childCount !== 1 || !doc.firstChild!.isTextblock || doc.firstChild!.content.size > 0) return null;
        return DecorationSet.create(doc, [Decoration.node(0, doc.firstChild!.nodeSize, { class: 'is-empty', 'data-placeholder': text })]);
      },
    },
  });
}

/**
 * Marks the text a run inserted (docs/RUNS.md, "In the web app"). The run's
 * record holds the text, not positions that later edits would have moved:
 * each piece is looked for after the previous one's place, in document
 * order, so a run's paragraphs are found where it wrote them; a piece
 * someone has since deleted is simply not marked.
 */
function runMarksPlugin(inserted: () => readonly string[]): Plugin {
  const build = (doc: PMNode) => {
    const pieces = inserted().flatMap((text) => text.split('\n')).filter((piece) => piece.trim() !== '');
    if (pieces.length === 0) return DecorationSet.empty;
    const blocks: Array<{ text: string; at: number[] }> = [];
    doc.descendants((node, pos) => {
      if (!node.isTextblock) return true;
      const block = { text: '', at: [] as number[] };
      node.forEach((child, offset) => {
        if (!child.isText) return;
        for (let i = 0; i < child.text!.length; i++) block.at.push(pos + 1 + offset + i);
        block.text += child.text;
      });
      blocks.push(block);
      return false;
    });
    const marks: Decoration[] = [];
    let block = 0;
    let from = 0;
    for (const piece of pieces) {
      for (let b = block; b < blocks.length; b++) {
        const found = blocks[b]!.text.indexOf(piece, b === block ? from : 0);
        if (found < 0) continue;
        const at = blocks[b]!.at;
        marks.push(Decoration.inline(at[found]!, at[found + piece.length - 1]! + 1, { class: 'run-inserted' }));
        block = b;
        from = found + piece.length;
        break;
      }
    }
    return DecorationSet.create(doc, marks);
  };
  return new Plugin<DecorationSet>({
    state: {
      init: (_, state) => build(state.doc),
      // One's own edits move the marks with the text; the sync binding replaces the whole doc (no mapping survives it), so its changes and a newly chosen run find them again.
      apply: (transaction, marks, _, state) =>
        transaction.getMeta(RUN_MARKS_CHANGED) || (transaction.docChanged && transaction.getMeta(ySyncPluginKey)) ? build(state.doc) : marks.map(transaction.mapping, state.doc),
    },
    props: {
      decorations(state) {
        return this.getState(state);
      },
    },
  });
}

/** Images pasted or dropped into the doc are uploaded, then inserted where they landed. */
function imageDropPlugin(upload: (file: File) => Promise<string | null>): Plugin {
  const insertFiles = (view: EditorView, files: File[], at: number | null) => {
    for (const file of files) {
      void upload(file).then((src) => {
        if (!src) return;
        const position = at === null ? view.state.selection.from : Math.min(at, view.state.doc.content.size);
        const node = nodes.image!.create({ src, alt: file.name.replace(/\.[^.]+$/, '') });
        view.dispatch(view.state.tr.insert(position, node).scrollIntoView());
      });
    }
  };
  const imagesOf = (list: FileList | null | undefined) => [...(list ?? [])].filter((file) => file.type.startsWith('image/'));
  return new Plugin({
    props: {
      handlePaste(view, event) {
        const files = imagesOf(event.clipboardData?.files);
        if (files.length === 0 || !view.editable) return false;
        insertFiles(view, files, null);
        return true;
      },
      handleDrop(view, event) {
        const files = imagesOf((event as DragEvent).dataTransfer?.files);
        if (files.length === 0 || !view.editable) return false;
        const at = view.posAtCoords({ left: (event as DragEvent).clientX, top: (event as DragEvent).clientY })?.pos ?? null;
        insertFiles(view, files, at);
        return true;
      },
    },
  });
}

// ---------------------------------------------------------------------------
// Suggesting mode (suggesting.ts rewrites the transactions; this is the view side).

/**
 * Backspace and Delete of one character as transactions, in suggesting mode:
 * left to the browser, the character would leave the DOM even when the
 * rewrite keeps the document as it was (text already struck out), and the
 * view would not redraw it.
 */
function suggestingKeymap(suggesting: () => boolean): Record<string, Command> {
  const deleteCharacter = (direction: -1 | 1): Command => (state, dispatch) => {
    const { selection } = state;
    if (!suggesting() || !selection.empty || !selection.$from.parent.isTextblock) return false;
    const { $from } = selection;
    const atEdge = direction < 0 ? $from.parentOffset === 0 : $from.parentOffset === $from.parent.content.size;
    if (atEdge) return false; // joining blocks: the commands of the base keymap, rewritten like any transaction
    // A surrogate pair (most emoji) is one character.
    const near = direction < 0 ? state.doc.textBetween(Math.max($from.start(), $from.pos - 2), $from.pos) : state.doc.textBetween($from.pos, Math.min($from.end(), $from.pos + 2));
    const width = near.length === 2 && /[\uD800-\uDBFF][\uDC00-\uDFFF]/.test(near) ? 2 : 1;
    const from = direction < 0 ? $from.pos - width : $from.pos;
    if (dispatch) dispatch(state.tr.delete(from, from + width).scrollIntoView());
    return true;
  };
  return { Backspace: deleteCharacter(-1), Delete: deleteCharacter(1) };
}

/** Tells the surface which suggestion a click landed in (or that it landed elsewhere); the caret moves as usual. */
function suggestionClickPlugin(onClick: (target: SuggestionTarget | null) => void): Plugin {
  return new Plugin({
    props: {
      handleClick(_view, _pos, event) {
        const element = (event.target as HTMLElement | null)?.closest?.('[data-suggestion-id]') as HTMLElement | null;
        onClick(element?.dataset.suggestionId ? { id: element.dataset.suggestionId, element } : null);
        return false;
      },
    },
  });
}

/**
 * Puts the caret where a click in the page's blank area points (beside a
 * line: that line's nearest end; below the text: the end of the doc) and
 * focuses the editor, so typing goes somewhere.
 */
export function focusNearest(view: EditorView, clientX: number, clientY: number) {
  const box = view.dom.getBoundingClientRect();
  const last = view.dom.lastElementChild?.getBoundingClientRect();
  const { doc } = view.state;
  let selection: Selection;
  if (!last || clientY > last.bottom) {
    selection = Selection.atEnd(doc);
  } else {
    const found = view.posAtCoords({ left: Math.min(Math.max(clientX, box.left + 1), box.right - 1), top: Math.min(Math.max(clientY, box.top + 1), box.bottom - 1) });
    selection = found ? Selection.near(doc.resolve(found.pos)) : Selection.atEnd(doc);
  }
  view.dispatch(view.state.tr.setSelection(selection).scrollIntoView());
  view.focus();
}

/** Asks for a link's address in the app's own dialog. */
export function askLinkAddress(): Promise<string | null> {
  return promptDialog({ title: 'Add a link', label: 'Link address', placeholder: 'https://', submitLabel: 'Add link', inputMode: 'url' });
}

/**
 * Puts the caret at the start of a section (as search numbers them: the
 * server's own `docSections`) and scrolls it into view. False when the doc
 * has no such section (yet).
 */
export function revealSection(view: EditorView, index: number): boolean {
  const section = docSections(view.state.doc).find((candidate) => candidate.index === index);
  if (!section || section.blockIndex >= view.state.doc.childCount) return false;
  let pos = 0;
  for (let i = 0; i < section.blockIndex; i++) pos += view.state.doc.child(i).nodeSize;
  view.dispatch(view.state.tr.setSelection(TextSelection.near(view.state.doc.resolve(pos + 1))));
  view.focus();
  (view.nodeDOM(pos) as HTMLElement | null)?.scrollIntoView({ block: 'start' });
  return true;
}
