import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { joinBackward, splitBlock } from 'prosemirror-commands';
import { Fragment, Slice } from 'prosemirror-model';
import { splitListItem } from 'prosemirror-schema-list';
import { EditorState, TextSelection, type Command, type Transaction } from 'prosemirror-state';
import { docSchema } from '../../src/model/doc/schema.js';
import { docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';
import { readDocBody, replaceDocBody } from '../../src/model/doc/body.js';
import { checkSuggestionOnlyChange, withSuggestionsAccepted, withSuggestionsRejected } from '../../src/model/doc/suggestions.js';
import { suggestTransaction, withoutSuggestionMarksOnNewText, type SuggestingAuthor } from '../../web/src/doc/suggesting.js';

/**
 * The editor's suggesting mode as a pure transaction rewrite (web/src/doc/suggesting.ts),
 * run on a plain EditorState: what a person's keystrokes become, and that every
 * result is a change the server accepts from a connection that may only suggest.
 */
const MIA: SuggestingAuthor = { principalType: 'user', id: 'u_mia', name: 'Mia' };
const AGENT: SuggestingAuthor = { principalType: 'agent', id: 'ag_1', name: 'Scribe' };

let counter = 0;
const options = () => ({ now: new Date('2026-11-26T19:30:00.000Z'), newId: () => `sug_${++counter}` });

/** A state on `markdown` with the caret where `|` is (or the selection between two `|`). */
function stateOf(markdown: string): EditorState {
  const marker = '\u0001';
  const doc = markdownToDoc(markdown.replaceAll('|', marker));
  const found: number[] = [];
  doc.descendants((node, pos) => {
    if (node.isText) for (let i = node.text!.indexOf(marker); i >= 0; i = node.text!.indexOf(marker, i + 1)) found.push(pos + i);
  });
  let tr = EditorState.create({ schema: docSchema, doc }).tr;
  // Remove the markers from the end, so earlier positions hold.
  for (const pos of [...found].reverse()) tr = tr.delete(pos, pos + 1);
  const positions = found.map((pos, i) => pos - i);
  const state = EditorState.create({ schema: docSchema, doc: tr.doc });
  if (positions.length === 0) return state;
  const selection = TextSelection.create(state.doc, positions[0]!, positions[1] ?? positions[0]!);
  return state.apply(state.tr.setSelection(selection));
}

/** Runs the transaction `make` builds as `author` in suggesting mode. */
function act(state: EditorState, make: (state: EditorState) => Transaction | null, author = MIA): EditorState {
  const tr = make(state);
  if (!tr) return state;
  return state.apply(suggestTransaction(state, tr, author, options()));
}

const type = (text: string, author = MIA) => (state: EditorState) => {
  for (const char of text) state = act(state, (s) => s.tr.insertText(char), author);
  return state;
};
/** Backspace as the keymap and the browser do it: a character, the selection, or a join at the start of a block. */
const backspace = (state: EditorState): EditorState => {
  const { selection } = state;
  if (selection.empty && selection.$from.parentOffset === 0) return command(joinBackward)(state);
  return act(state, (s) => (s.selection.empty ? s.tr.delete(s.selection.from - 1, s.selection.from) : s.tr.deleteSelection()));
};
const forwardDelete = (state: EditorState) => act(state, (s) => s.tr.delete(s.selection.from, s.selection.from + 1));
const command = (cmd: Command) => (state: EditorState) =>
  act(state, (s) => {
    let made: Transaction | null = null;
    cmd(s, (tr) => (made = tr));
    return made;
  });

const markdown = (state: EditorState) => docToMarkdown(state.doc).trim();
const rejected = (state: EditorState) => docToMarkdown(withSuggestionsRejected(state.doc)).trim();
const accepted = (state: EditorState) => docToMarkdown(withSuggestionsAccepted(state.doc)).trim();
const ids = (state: EditorState) => {
  const out = new Set<string>();
  state.doc.descendants((node) => {
    for (const mark of node.marks) if (mark.type.name.startsWith('suggest')) out.add(String(mark.attrs.id));
  });
  return [...out];
};
const caretText = (state: EditorState) => {
  const { $head } = state.selection;
  return { before: $head.parent.textBetween(0, $head.parentOffset), after: $head.parent.textBetween($head.parentOffset, $head.parent.content.size) };
};

function ydocOf(state: EditorState): Y.Doc {
  const ydoc = new Y.Doc();
  replaceDocBody(ydoc, state.doc, 'test');
  return ydoc;
}

/** What the sync engine answers a suggest-only connection's update with (null: accepted). */
function serverCheck(before: EditorState, after: EditorState, author = MIA): string | null {
  const y = ydocOf(after);
  // The stored body must read back as the editor's (atoms keep no marks in Y).
  expect(readDocBody(y).eq(after.doc)).toBe(true);
  return checkSuggestionOnlyChange(ydocOf(before), y, author);
}

describe('suggesting mode: the transaction rewrite', () => {
  it('keeps typed text as one suggested insertion by its author, extended while typing on', () => {
    const start = stateOf('Hello|');
    const after = type(' world')(start);
    expect(markdown(after)).toBe('Hello{++ world++}');
    expect(rejected(after)).toBe('Hello');
    expect(ids(after)).toHaveLength(1);
    let mark = null as null | Record<string, unknown>;
    after.doc.descendants((node) => {
      if (node.isText && node.marks.length) mark = node.marks[0]!.attrs;
    });
    expect(mark).toMatchObject({ authorType: 'user', authorId: 'u_mia', authorName: 'Mia', at: '2026-11-26T19:30:00.000Z' });
    expect(caretText(after)).toEqual({ before: 'Hello world', after: '' });
    expect(serverCheck(start, after)).toBeNull();
  });

  it('strikes out deleted text instead of removing it, moving the caret past it like Backspace and Delete', () => {
    const start = stateOf('One two| three');
    let state = backspace(backspace(backspace(start)));
    expect(markdown(state)).toBe('One {--two--} three');
    expect(caretText(state)).toEqual({ before: 'One ', after: 'two three' });
    expect(ids(state)).toHaveLength(1);
    expect(serverCheck(start, state)).toBeNull();

    // Delete goes forward over what is already struck, then strikes on in the same suggestion.
    const struck = state.doc;
    state = forwardDelete(forwardDelete(forwardDelete(state)));
    expect(state.doc.eq(struck)).toBe(true);
    expect(caretText(state)).toEqual({ before: 'One two', after: ' three' });
    state = forwardDelete(forwardDelete(state));
    expect(markdown(state)).toBe('One {--two t--}hree');
    expect(ids(state)).toHaveLength(1);
    expect(rejected(state)).toBe('One two three');
    expect(accepted(state)).toBe('One hree');
  });

  it('really removes your own suggested text when you delete it', () => {
    const start = stateOf('Keep|');
    const typed = type('ing it')(start);
    const state = backspace(backspace(backspace(typed)));
    expect(markdown(state)).toBe('Keep{++ing++}');
    expect(backspace(backspace(backspace(state))).doc.eq(start.doc)).toBe(true);
  });

  it('turns typing over a selection into a replacement: the old words struck, the new after them, one suggestion', () => {
    const start = stateOf('The |quick| fox');
    const state = type('slow')(start);
    expect(markdown(state)).toBe('The {--quick--}{++slow++} fox');
    expect(ids(state)).toHaveLength(1);
    expect(serverCheck(start, state)).toBeNull();
  });

  it("leaves someone else's suggestion alone and never types into it under their name", () => {
    const agentWrote = type(' kindly', AGENT)(stateOf('Please|'));
    const state0 = agentWrote.apply(agentWrote.tr); // same doc, as Mia sees it
    // Mia's Backspace over the agent's insertion only moves the caret.
    const moved = backspace(state0);
    expect(moved.doc.eq(state0.doc)).toBe(true);
    // Typing inside the agent's insertion (which ProseMirror would give its mark) goes after it, as Mia's.
    const inside = state0.apply(state0.tr.setSelection(TextSelection.create(state0.doc, 1 + 'Please ki'.length)));
    const typed = type('X')(inside);
    expect(markdown(typed)).toBe('Please{++ kindly++}{++X++}');
    const agentIds = ids(agentWrote);
    expect(ids(typed).filter((id) => !agentIds.includes(id))).toHaveLength(1);
    expect(serverCheck(inside, typed)).toBeNull();
  }, 10_000);

  it('makes Enter at the end of a paragraph a plain new paragraph that the typed text fills as a suggestion', () => {
    const start = stateOf('First paragraph.|\n\nSecond.');
    const split = command(splitBlock)(start);
    expect(split.doc.childCount).toBe(3);
    expect(serverCheck(start, split)).toBeNull();
    const typed = type('Inserted line')(split);
    expect(markdown(typed)).toBe('First paragraph.\n\n{++Inserted line++}\n\nSecond.');
    expect(rejected(typed)).toBe('First paragraph.\n\nSecond.');
    expect(serverCheck(start, typed)).toBeNull();
    // Backspace takes it all back, the empty paragraph too.
    let back = typed;
    for (let i = 0; i < 'Inserted line'.length + 1; i++) back = backspace(back);
    expect(back.doc.eq(start.doc)).toBe(true);
  });

  it('moves the text after the caret into the new block as a suggestion when Enter splits a paragraph or a list item', () => {
    const start = stateOf('Split here|, and there');
    const split = command(splitBlock)(start);
    expect(markdown(split)).toBe('Split here{--, and there--}\n\n{++, and there++}');
    expect(caretText(split)).toEqual({ before: '', after: ', and there' });
    expect(rejected(split)).toBe('Split here, and there');
    expect(accepted(split)).toBe('Split here\n\n, and there');
    expect(serverCheck(start, split)).toBeNull();
    expect(ids(type('X')(split))).toHaveLength(1);

    const list = stateOf('- one| two\n- three');
    const item = command(splitListItem(docSchema.nodes.listItem!))(list);
    expect(markdown(item)).toMatch(/^[-*] one\{-- two--\}\n[-*] \{\+\+ two\+\+\}\n[-*] three$/);
    expect(serverCheck(list, item)).toBeNull();
    // A bare new item at the end of a list would be an empty block no suggestion can hold: nothing happens.
    const atEnd = stateOf('- one|\n- three');
    expect(command(splitListItem(docSchema.nodes.listItem!))(atEnd).doc.eq(atEnd.doc)).toBe(true);
  });

  it('does not join two paragraphs on Backspace at the start of one: the caret moves to the end of the other', () => {
    const start = stateOf('Above\n\n|Below');
    const state = act(start, (s) => s.tr.delete(s.selection.from - 2, s.selection.from));
    expect(state.doc.eq(start.doc)).toBe(true);
    expect(caretText(state)).toEqual({ before: 'Above', after: '' });
  });

  it('inserts pasted paragraphs as suggested blocks, the tail of a split paragraph moved after them', () => {
    const start = stateOf('Begin| end');
    const paste = new Slice(Fragment.from([docSchema.nodes.paragraph!.create(null, docSchema.text('A')), docSchema.nodes.paragraph!.create(null, docSchema.text('B'))]), 1, 1);
    const state = act(start, (s) => s.tr.replaceSelection(paste));
    expect(rejected(state)).toBe('Begin end');
    expect(accepted(state)).toBe('BeginA\n\nB end');
    expect(serverCheck(start, state)).toBeNull();
  });

  it('writes a pasted mention as its @label text and drops structure and formatting changes of text not yours', () => {
    const start = stateOf('Ask |');
    const mention = docSchema.nodes.mention!.create({ id: 'u_ben', label: 'ben', kind: 'user' });
    const state = act(start, (s) => s.tr.replaceSelectionWith(mention));
    expect(markdown(state)).toBe('Ask {++@ben++}');
    expect(serverCheck(start, state)).toBeNull();

    const heading = act(stateOf('Title|'), (s) => s.tr.setBlockType(1, 2, docSchema.nodes.heading!, { level: 1 }));
    expect(markdown(heading)).toBe('Title');
    const bold = act(stateOf('|Plain|'), (s) => s.tr.addMark(s.selection.from, s.selection.to, docSchema.marks.bold!.create()));
    expect(markdown(bold)).toBe('Plain');
  });

  it('lets an agent author suggestions the same way (its stamp says agent)', () => {
    const state = type('!', AGENT)(stateOf('Done|'));
    let authorType: unknown;
    state.doc.descendants((node) => {
      if (node.isText && node.marks.length) authorType = node.marks[0]!.attrs.authorType;
    });
    expect(authorType).toBe('agent');
  });

  it('outside suggesting mode, text typed inside a suggestion is the writer\'s plain text, not the suggester\'s', () => {
    const agentWrote = type(' kindly', AGENT)(stateOf('Please|'));
    const inside = agentWrote.apply(agentWrote.tr.setSelection(TextSelection.create(agentWrote.doc, 1 + 'Please ki'.length)));
    // ProseMirror gives typed text the marks around the caret: here the agent's insertion.
    const typed = inside.tr.insertText('X');
    expect(markdown(inside.apply(typed))).toBe('Please{++ kiXndly++}');
    const plain = inside.apply(withoutSuggestionMarksOnNewText(inside.tr.insertText('X')));
    expect(markdown(plain)).toBe('Please{++ ki++}X{++ndly++}');
    // Edits that bring no suggestion marks are left as they are.
    const untouched = stateOf('Plain|');
    const tr = untouched.tr.insertText('!');
    expect(withoutSuggestionMarksOnNewText(tr).steps).toHaveLength(1);
  });
});
