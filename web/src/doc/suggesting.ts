/**
 * Suggesting mode (docs/SUGGESTIONS.md): a person's edits become proposals
 * that an editor accepts or rejects, held in the body as the marks
 * `suggestInsert` / `suggestDelete` with the person's stamp.
 *
 * `suggestTransaction` rewrites one local transaction of the editor:
 * - inserted inline text (typed, pasted) stays, marked `suggestInsert`;
 *   typing against your own open insertion (or your own deletion, a
 *   replacement) keeps its suggestion id, so a run of typing is one suggestion;
 * - deleted text stays, marked `suggestDelete`, and the caret moves past it as
 *   Backspace / Delete would; your own suggested insertion is really removed;
 *   text already suggested out, or someone else's suggested insertion, is left
 *   alone (theirs to withdraw, an editor's to decide);
 * - replacing a selection = the deletion marks, then the insertion after them;
 * - inline atoms (mention, image, hard break) keep no marks in the Y document,
 *   so a suggestion can neither add nor remove them: a pasted mention becomes
 *   its `@label` text, a hard break a space, an image is left out, and a
 *   deletion leaves them in place;
 * - Enter: at the end (or start) of a top-level or quoted paragraph or heading
 *   it makes a plain new paragraph (an empty paragraph is not a change a
 *   suggestion needs to hold; the server's check allows it); anywhere else
 *   (mid-paragraph, in a list) the text after the caret is suggested out and
 *   suggested in again in the new block, so rejecting restores the one block;
 *   a bare Enter at the end of a list item or table cell does nothing;
 * - Backspace across a block boundary joins only a paragraph left empty (or
 *   holding only your own insertion); otherwise the caret just moves;
 * - formatting and block changes (marks on text not yours, headings, lists,
 *   task ticks, tables) cannot be suggested and are dropped.
 * Every result is a change `checkSuggestionOnlyChange` (src/model/doc/suggestions.ts)
 * accepts from a commenter's connection: the body with suggestions rejected
 * stays the same, empty paragraphs aside.
 *
 * Browser-safe and DOM-free (prosemirror-state/-transform and the schema), so
 * it runs in Node tests on a plain EditorState.
 */
import { Fragment, Slice, type Mark, type Node as PMNode, type ResolvedPos } from 'prosemirror-model';
import { TextSelection, type EditorState, type Selection, type Transaction } from 'prosemirror-state';
import { AddMarkStep, Mapping, RemoveMarkStep, ReplaceStep } from 'prosemirror-transform';
import { docSchema } from '../../../src/model/doc/schema';

export interface SuggestingAuthor {
  principalType: 'user' | 'agent';
  id: string;
  name: string;
}

/** Set on a transaction this module made, so it is not rewritten again. */
export const SUGGESTED_META = 'suggested';

const INSERT = docSchema.marks.suggestInsert!;
const DELETE = docSchema.marks.suggestDelete!;
const nodes = docSchema.nodes;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A suggestion id in the server's own shape (`sug_` + 16 characters, src/lib/ids.ts). */
export function newSuggestionId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `sug_${out}`;
}

export function isSuggestionMark(mark: Mark): boolean {
  return mark.type === INSERT || mark.type === DELETE;
}

function isMine(mark: Mark | null | undefined, author: SuggestingAuthor): boolean {
  return Boolean(mark) && mark!.attrs.authorId === author.id && mark!.attrs.authorType === author.principalType;
}

/** An inline node that is text the author suggested in (and so may take back for real). */
function isOwnInsertion(node: PMNode | null | undefined, author: SuggestingAuthor): boolean {
  return Boolean(node?.isText) && isMine(INSERT.isInSet(node!.marks), author);
}

interface Run {
  readonly author: SuggestingAuthor;
  readonly at: string;
  readonly newId: () => string;
  tr: Transaction;
  /** The stamp this transaction uses once it made or extended a suggestion (insertions and deletions share it). */
  stamp: { id: string; at: string } | null;
  /** Where the caret goes, in the rewritten document. */
  caret: number | null;
}

function stampOf(run: Run): { id: string; at: string } {
  run.stamp ??= { id: run.newId(), at: run.at };
  return run.stamp;
}

function markAttrs(run: Run, stamp: { id: string; at: string }) {
  return { id: stamp.id, authorType: run.author.principalType, authorId: run.author.id, authorName: run.author.name, at: stamp.at };
}

/** Adopts an adjacent mark's stamp for this transaction, when it has none yet. */
function adopt(run: Run, mark: Mark): Mark {
  run.stamp ??= { id: String(mark.attrs.id), at: String(mark.attrs.at) };
  return mark;
}

export interface SuggestOptions {
  now?: Date;
  newId?: () => string;
}

/**
 * The transaction `original` (made on `state` by a command, typing, paste)
 * rewritten as suggestions by `author`. Returns a new transaction on
 * `state`; the caller dispatches it instead of the original.
 */
export function suggestTransaction(state: EditorState, original: Transaction, author: SuggestingAuthor, options: SuggestOptions = {}): Transaction {
  const run: Run = {
    author,
    at: (options.now ?? new Date()).toISOString(),
    newId: options.newId ?? newSuggestionId,
    tr: state.tr,
    stamp: null,
    caret: null,
  };
  const { tr } = run;
  original.steps.forEach((step, index) => {
    // The step was made for the original's document after `index` steps; ours kept what those deleted.
    const rebase = new Mapping();
    rebase.appendMappingInverted(new Mapping(original.mapping.maps.slice(0, index)));
    rebase.appendMapping(tr.mapping);
    const mapped = step.map(rebase);
    if (!mapped) return;
    if (mapped instanceof ReplaceStep) {
      replace(run, mapped.from, mapped.to, mapped.slice, index === 0 ? state.selection : null);
    } else if (mapped instanceof AddMarkStep || mapped instanceof RemoveMarkStep) {
      // Formatting your own suggested text is part of writing it (`**bold**` as you type); anyone else's text is not yours to restyle.
      if (!isSuggestionMark(mapped.mark) && onlyOwnInsertions(tr.doc, mapped.from, mapped.to, author)) tr.step(mapped);
    }
    // Anything else (wrapping, lifting, block types, attributes) is structure a suggestion cannot hold.
  });
  if (run.caret !== null) {
    const caret = Math.max(0, Math.min(run.caret, tr.doc.content.size));
    tr.setSelection(TextSelection.near(tr.doc.resolve(caret), -1));
  } else if (tr.docChanged) {
    tr.setSelection(state.selection.map(tr.doc, tr.mapping));
  }
  if (original.scrolledIntoView) tr.scrollIntoView();
  tr.setMeta(SUGGESTED_META, true);
  for (const key of ['paste', 'uiEvent', 'composition'] as const) if (original.getMeta(key) !== undefined) tr.setMeta(key, original.getMeta(key));
  return tr;
}

/**
 * Outside suggesting mode: text typed or pasted inside a suggestion would
 * take its mark in ProseMirror (and so its author's name); it is the
 * writer's own plain text instead.
 */
export function withoutSuggestionMarksOnNewText(tr: Transaction): Transaction {
  const ranges: Array<[number, number]> = [];
  tr.steps.forEach((step, index) => {
    if (!(step instanceof ReplaceStep) || step.slice.size === 0) return;
    let marked = false;
    step.slice.content.descendants((node) => {
      if (node.isInline && node.marks.some(isSuggestionMark)) marked = true;
      return !marked;
    });
    if (!marked) return;
    const rest = new Mapping(tr.mapping.maps.slice(index + 1));
    step.getMap().forEach((_oldStart, _oldEnd, newStart, newEnd) => {
      const from = rest.map(newStart, 1);
      const to = rest.map(newEnd, -1);
      if (to > from) ranges.push([from, to]);
    });
  });
  for (const [from, to] of ranges) tr.removeMark(from, to, INSERT).removeMark(from, to, DELETE);
  return tr;
}

/**
 * Whether formatting the selection can be part of a suggestion, for the
 * toolbar: marks go on what the author types next (an empty selection) or on
 * their own suggested text; anyone else's text is not theirs to restyle, and
 * block changes (headings, lists, tables) cannot be suggested at all.
 */
export function canFormatWhileSuggesting(state: EditorState, author: SuggestingAuthor | null): boolean {
  if (!author) return false;
  const { from, to, empty } = state.selection;
  return empty || onlyOwnInsertions(state.doc, from, to, author);
}

function onlyOwnInsertions(doc: PMNode, from: number, to: number, author: SuggestingAuthor): boolean {
  let own = true;
  doc.nodesBetween(from, to, (node) => {
    if (node.isInline && !isOwnInsertion(node, author)) own = false;
    return own;
  });
  return own;
}

/** One replacement of [from, to) by `slice` (positions in the rewritten document). */
function replace(run: Run, from: number, to: number, slice: Slice, selection: Selection | null) {
  const { tr } = run;
  const start = tr.steps.length;
  const mapFromStart = (pos: number, assoc = 1) => tr.mapping.slice(start).map(pos, assoc);
  const $from = tr.doc.resolve(from);
  const $to = tr.doc.resolve(to);

  if (from < to) {
    if (!$from.sameParent($to) && mayJoin($from, $to, run.author)) {
      markDeleted(run, from, to, true);
    } else {
      markDeleted(run, from, to, false);
    }
    if (selection?.empty && slice.size === 0) {
      // Backspace leaves the caret before what it struck out, Delete after it.
      if (selection.head === to) run.caret = mapFromStart(from, -1);
      else if (selection.head === from) run.caret = mapFromStart(to, 1);
    } else if (slice.size === 0) {
      run.caret = mapFromStart(to, 1);
    }
  }
  if (slice.size === 0) return;

  const content = suggestable(slice.content);
  const at = outsideForeignSuggestion(tr.doc.resolve(mapFromStart(to, 1)), run.author);
  const inline = inlineOf(new Slice(content, slice.openStart, slice.openEnd));
  const $at = tr.doc.resolve(at);
  if (inline) {
    if (!$at.parent.inlineContent || inline.size === 0) return;
    const mark = insertionMark(run, $at);
    const marked: PMNode[] = [];
    inline.forEach((node) => {
      const marks = node.marks.filter((m) => $at.parent.type.allowsMarkType(m.type));
      marked.push(node.mark(mark.addToSet(marks)));
    });
    tr.insert(at, Fragment.from(marked));
    run.caret = at + Fragment.from(marked).size;
    return;
  }
  insertBlocks(run, $at, new Slice(content, slice.openStart, slice.openEnd));
}

/**
 * Whether a deletion across a block boundary may join the blocks for real: it
 * removes only your own suggested text and a paragraph left empty (the one
 * Enter made, say), so the body with suggestions rejected stays the same.
 */
function mayJoin($from: ResolvedPos, $to: ResolvedPos, author: SuggestingAuthor): boolean {
  if (!$from.parent.isTextblock || !$to.parent.isTextblock || $from.depth !== $to.depth) return false;
  if (!onlyOwnInsertions($from.doc, $from.pos, $to.pos, author)) return false;
  let blocks = 0;
  $from.doc.nodesBetween($from.pos, $to.pos, (node) => {
    if (node.isTextblock) blocks++;
    return !node.isInline;
  });
  if (blocks !== 2) return false;
  const emptyish = (block: PMNode) => block.type === nodes.paragraph && block.content.content.every((child) => isOwnInsertion(child, author));
  // The block that survives a join is the first: an emptied first block must not pass its type to the second.
  return emptyish($to.parent) || (emptyish($from.parent) && $to.parent.type === nodes.paragraph);
}

/** Suggests [from, to) out: plain text is marked, your own insertions go; with `join`, the range is deleted outright (checked by `mayJoin`). */
function markDeleted(run: Run, from: number, to: number, join: boolean) {
  const { tr, author } = run;
  if (join) {
    tr.delete(from, to);
    return;
  }
  const plain: Array<[number, number]> = [];
  const own: Array<[number, number]> = [];
  tr.doc.nodesBetween(from, to, (node, pos) => {
    if (!node.isInline) return true;
    // Atoms keep no marks in the Y document: a suggestion cannot remove them.
    if (!node.isText) return false;
    const range: [number, number] = [Math.max(from, pos), Math.min(to, pos + node.nodeSize)];
    if (DELETE.isInSet(node.marks)) return false;
    const inserted = INSERT.isInSet(node.marks);
    if (inserted) {
      if (isMine(inserted, author)) own.push(range);
      return false;
    }
    plain.push(range);
    return false;
  });
  if (plain.length > 0) {
    const mark = deletionMark(run, tr.doc.resolve(from), tr.doc.resolve(to));
    for (const [start, end] of plain) tr.addMark(start, end, mark);
  }
  // From the end, so the earlier ranges stay where they are.
  for (const [start, end] of own.reverse()) tr.delete(start, end);
}

function deletionMark(run: Run, $from: ResolvedPos, $to: ResolvedPos): Mark {
  // Backspacing on extends the deletion just made; so does Delete.
  for (const neighbour of [$from.nodeBefore, $to.nodeAfter]) {
    const mark = neighbour?.isText ? DELETE.isInSet(neighbour.marks) : undefined;
    if (mark && isMine(mark, run.author) && (!run.stamp || run.stamp.id === mark.attrs.id)) return adopt(run, mark);
  }
  return DELETE.create(markAttrs(run, stampOf(run)));
}

function insertionMark(run: Run, $at: ResolvedPos): Mark {
  if (run.stamp) return INSERT.create(markAttrs(run, run.stamp));
  // Typing on at either end of your own insertion extends it; right after your own deletion, it completes a replacement.
  for (const neighbour of [$at.nodeBefore, $at.nodeAfter]) {
    const mark = neighbour?.isText ? INSERT.isInSet(neighbour.marks) : undefined;
    if (mark && isMine(mark, run.author)) return adopt(run, mark);
  }
  const before = $at.nodeBefore?.isText ? DELETE.isInSet($at.nodeBefore.marks) : undefined;
  if (before && isMine(before, run.author)) return INSERT.create(markAttrs(run, { id: String(before.attrs.id), at: String(before.attrs.at) }));
  return INSERT.create(markAttrs(run, stampOf(run)));
}

/**
 * Where text typed inside someone else's suggestion goes: after it. Their
 * suggestion stays theirs, whole (the server refuses a suggester's change to
 * it), and yours follows it.
 */
function outsideForeignSuggestion($at: ResolvedPos, author: SuggestingAuthor): number {
  const foreign = (node: PMNode | null | undefined) => (node?.isText ? node.marks.find((mark) => isSuggestionMark(mark) && !isMine(mark, author)) : undefined);
  const before = foreign($at.nodeBefore);
  const after = foreign($at.nodeAfter);
  if (!before || !after || before.attrs.id !== after.attrs.id) return $at.pos;
  const parent = $at.parent;
  let index = $at.index();
  let pos = $at.pos - $at.textOffset;
  while (index < parent.childCount && foreign(parent.child(index))?.attrs.id === before.attrs.id) {
    pos += parent.child(index).nodeSize;
    index++;
  }
  return pos;
}

/** Inline content that can be suggested: no suggestion marks of its own, atoms as text (see the module comment). */
function suggestable(fragment: Fragment): Fragment {
  const out: PMNode[] = [];
  fragment.forEach((node) => {
    if (node.isText) {
      out.push(node.mark(node.marks.filter((mark) => !isSuggestionMark(mark))));
    } else if (node.isInline) {
      const marks = node.marks.filter((mark) => !isSuggestionMark(mark));
      if (node.type === nodes.mention) out.push(docSchema.text(`@${String(node.attrs.label ?? node.attrs.id ?? '')}`, marks));
      else if (node.type === nodes.hardBreak) out.push(docSchema.text(' ', marks));
      // An image cannot be suggested: left out.
    } else {
      out.push(node.copy(suggestable(node.content)));
    }
  });
  return Fragment.fromArray(mergeText(out));
}

function mergeText(list: PMNode[]): PMNode[] {
  const out: PMNode[] = [];
  for (const node of list) {
    const last = out[out.length - 1];
    if (last?.isText && node.isText && last.sameMarkup(node)) out[out.length - 1] = docSchema.text(last.text! + node.text!, last.marks);
    else out.push(node);
  }
  return out;
}

/** The inline content of a slice that fits inside one textblock (typing, pasting words), or null when it carries blocks. */
function inlineOf(slice: Slice): Fragment | null {
  if (slice.openStart !== slice.openEnd) return null;
  let fragment = slice.content;
  for (let depth = 0; depth < slice.openStart; depth++) {
    if (fragment.childCount !== 1) return null;
    fragment = fragment.firstChild!.content;
  }
  let inline = true;
  fragment.forEach((node) => {
    if (!node.isInline) inline = false;
  });
  return inline ? fragment : null;
}

function hasText(fragment: Fragment): boolean {
  let found = false;
  fragment.descendants((node) => {
    if (node.isText && node.text) found = true;
    return !found;
  });
  return found;
}

/** A paragraph or heading directly in the doc or a quote, where an empty paragraph is harmless. */
function plainContext($at: ResolvedPos): boolean {
  if ($at.parent.type !== nodes.paragraph && $at.parent.type !== nodes.heading) return false;
  return $at.depth === 1 || $at.node($at.depth - 1).type === nodes.blockquote;
}

/**
 * Inserts a slice that carries blocks (Enter, a pasted paragraph or list) at
 * `$at`. A new block must hold suggested text (so rejecting removes it) unless
 * it is an empty paragraph where one is harmless; text after the caret moves
 * into the last new block as a suggested move (out here, in there).
 */
function insertBlocks(run: Run, $at: ResolvedPos, slice: Slice) {
  const { tr } = run;
  if (!$at.parent.isTextblock) return;
  const withText = hasText(slice.content);
  const atEnd = $at.pos === $at.end();
  const atStart = $at.pos === $at.start();
  if (!withText && plainContext($at) && (atEnd || atStart)) {
    tr.replace($at.pos, $at.pos, slice);
    run.caret = tr.mapping.slice(tr.steps.length - 1).map($at.pos, 1);
    return;
  }
  // What moves: the text after the caret, as suggested text of its own.
  const tail: PMNode[] = [];
  let movable = true;
  $at.parent.nodesBetween($at.parentOffset, $at.parent.content.size, (node) => {
    if (!node.isText) movable = false;
    else if (node.marks.some(isSuggestionMark) && !isOwnInsertion(node, run.author)) movable = false;
    return false;
  });
  if (!movable) return;
  if (!withText && atEnd) return; // a bare new list item or cell line: nothing a suggestion could hold
  const end = $at.end();
  const moved = tr.doc.slice($at.pos, end).content;
  const beforeMarking = tr.steps.length;
  markDeleted(run, $at.pos, end, false);
  const blockEnd = tr.mapping.slice(beforeMarking).map(end, -1);
  const firstStep = tr.steps.length;
  const mark = INSERT.create(markAttrs(run, stampOf(run)));
  tr.replace(blockEnd, blockEnd, slice);
  const after = tr.mapping.slice(firstStep).map(blockEnd, 1);
  tr.addMark(blockEnd, after, mark);
  moved.forEach((node) => tail.push(node.mark(mark.addToSet(node.marks.filter((m) => !isSuggestionMark(m))))));
  if (tail.length > 0) tr.insert(after, Fragment.fromArray(tail));
  run.caret = after;
}
