import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { docFromJSON, DocValidationError, docToMarkdown, docToText, markdownToDoc } from '../../src/model/doc/markdown.js';
import { docFromJSONLenient } from '../../src/model/doc/json.js';
import { bodyFragment, readDocBody, replaceDocBody } from '../../src/model/doc/body.js';
import {
  checkSuggestionOnlyChange,
  checkSuggestionOnlyUpdate,
  decideDocSuggestion,
  docSuggestions,
  suggestDocAppend,
  suggestDocReplace,
  suggestionMarkAttrs,
  suggestionStampsIn,
  withSuggestionDecided,
  withSuggestionsAccepted,
  withSuggestionsRejected,
  type SuggestionStamp,
} from '../../src/model/doc/suggestions.js';

const AGENT: SuggestionStamp = { id: 'sg_agent', author: { principalType: 'agent', id: 'ag_1', name: 'Scribe' }, at: '2026-11-26T19:00:00.000Z' };
const PERSON: SuggestionStamp = { id: 'sg_person', author: { principalType: 'user', id: 'u_2', name: 'Ada' }, at: '2026-11-26T19:05:00.000Z' };
const ORIGIN = { principal: 'agent:ag_1' };

function docOf(markdown: string): Y.Doc {
  const ydoc = new Y.Doc();
  replaceDocBody(ydoc, markdownToDoc(markdown), 'seed');
  return ydoc;
}

function clone(ydoc: Y.Doc): Y.Doc {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(ydoc));
  return copy;
}

function exchange(a: Y.Doc, b: Y.Doc): void {
  const toB = Y.encodeStateAsUpdate(a, Y.encodeStateVector(b));
  const toA = Y.encodeStateAsUpdate(b, Y.encodeStateVector(a));
  Y.applyUpdate(b, toB);
  Y.applyUpdate(a, toA);
}

/** GET /doc?format=markdown&suggestions=include */
const included = (ydoc: Y.Doc) => docToMarkdown(readDocBody(ydoc));
/** GET /doc?format=markdown (the default: suggestions left out) */
const shown = (ydoc: Y.Doc) => docToMarkdown(withSuggestionsRejected(readDocBody(ydoc)));

function updatesOf(ydoc: Y.Doc): Uint8Array[] {
  const updates: Uint8Array[] = [];
  ydoc.on('update', (u: Uint8Array) => updates.push(u));
  return updates;
}

/** What y-prosemirror does when a person types: edits the paragraph's Y.XmlText. */
function typeAt(ydoc: Y.Doc, blockIndex: number, at: number, value: string, attributes?: Record<string, unknown>): void {
  const paragraph = bodyFragment(ydoc).get(blockIndex) as Y.XmlElement;
  (paragraph.get(0) as Y.XmlText).insert(at, value, attributes);
}

describe('suggestDocReplace', () => {
  it('marks removed words and inserts new ones, compared with the body as GET /doc shows it', () => {
    const ydoc = docOf('The quick brown fox jumps.\n\nSecond paragraph.\n');
    const target = markdownToDoc('The slow brown fox jumps over.\n\nA new paragraph.\n\nSecond paragraph.\n');
    expect(suggestDocReplace(ydoc, target, AGENT, ORIGIN)).toBe(true);
    expect(included(ydoc)).toBe('The {--quick--}{++slow++} brown fox jumps{++ over++}.\n\n{++A new paragraph.++}\n\nSecond paragraph.\n');
    expect(shown(ydoc)).toBe('The quick brown fox jumps.\n\nSecond paragraph.\n');
    expect(withSuggestionsAccepted(readDocBody(ydoc)).eq(target)).toBe(true);
  });

  it('carries the author, the time and the id on every mark', () => {
    const ydoc = docOf('one two\n');
    suggestDocReplace(ydoc, markdownToDoc('one three\n'), AGENT, ORIGIN);
    const json = JSON.stringify(readDocBody(ydoc).toJSON());
    const attrs = suggestionMarkAttrs(AGENT);
    expect(attrs).toEqual({ id: 'sg_agent', authorType: 'agent', authorId: 'ag_1', authorName: 'Scribe', at: '2026-11-26T19:00:00.000Z' });
    expect(json).toContain(JSON.stringify({ type: 'suggestDelete', attrs }));
    expect(json).toContain(JSON.stringify({ type: 'suggestInsert', attrs }));
  });

  it('writes one transaction with the origin, and nothing when the target reads as the body already does', () => {
    const ydoc = docOf('Same text.\n');
    const origins: unknown[] = [];
    ydoc.on('afterTransaction', (tr: Y.Transaction) => {
      if (tr.changed.size > 0) origins.push(tr.origin);
    });
    const updates = updatesOf(ydoc);
    expect(suggestDocReplace(ydoc, markdownToDoc('Same text.\n'), AGENT, ORIGIN)).toBe(false);
    expect(updates).toHaveLength(0);
    expect(suggestDocReplace(ydoc, markdownToDoc('Other text.\n'), AGENT, ORIGIN)).toBe(true);
    expect(origins).toEqual([ORIGIN]);
    expect(updates).toHaveLength(1);
    // Compared with the rejected view: suggesting the same change again is a new suggestion, the
    // old one's text is not taken for the body's.
    expect(suggestDocReplace(ydoc, markdownToDoc('Same text.\n'), PERSON, ORIGIN)).toBe(false);
  });

  it('suggests whole blocks in and out inside lists, and table cells by their text (cells keep the table\'s shape)', () => {
    const ydoc = docOf('# Title\n\n- one\n- two\n\nEnd.\n');
    suggestDocReplace(ydoc, markdownToDoc('# Title!\n\n- one\n- two and a half\n- three\n'), AGENT, ORIGIN);
    expect(included(ydoc)).toBe('# Title{++!++}\n\n- one\n- two{++ and a half++}\n- {++three++}\n\n{--End.--}\n');

    const table = docOf('| a | b |\n| --- | --- |\n| 1 | 2 |\n');
    suggestDocReplace(table, markdownToDoc('| a | b | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n'), AGENT, ORIGIN);
    expect(included(table)).toBe('| a | b | {++c++} |\n| --- | --- | --- |\n| 1 | 2 | {++3++} |\n');
    // A cell never goes with its text (an empty cell someone fills existed before): a suggested
    // column reads as empty cells until it is decided, and rejecting it leaves them. A new row goes whole.
    expect(shown(table)).toBe('| a | b |  |\n| --- | --- | --- |\n| 1 | 2 |  |\n');
    const rejected = clone(table);
    decideDocSuggestion(rejected, AGENT.id, 'reject', ORIGIN);
    expect(included(rejected)).toBe('| a | b |  |\n| --- | --- | --- |\n| 1 | 2 |  |\n');
    suggestDocReplace(table, markdownToDoc('| a | b | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n'), PERSON, ORIGIN);
    decideDocSuggestion(table, PERSON.id, 'reject', ORIGIN);
    decideDocSuggestion(table, AGENT.id, 'accept', ORIGIN);
    expect(included(table)).toBe('| a | b | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n');

    // Filling an empty cell keeps the cell in the rejected view and after a rejection.
    const empty = docOf('| a | b |\n| --- | --- |\n| 1 |  |\n');
    suggestDocReplace(empty, markdownToDoc('| a | b |\n| --- | --- |\n| 1 | 2 |\n'), AGENT, ORIGIN);
    expect(included(empty)).toBe('| a | b |\n| --- | --- |\n| 1 | {++2++} |\n');
    expect(shown(empty)).toBe('| a | b |\n| --- | --- |\n| 1 |  |\n');
    decideDocSuggestion(empty, AGENT.id, 'reject', ORIGIN);
    expect(included(empty)).toBe('| a | b |\n| --- | --- |\n| 1 |  |\n');
  });

  it('fills an empty paragraph only where the rejected view stays the same; elsewhere the new text goes after it', () => {
    // A fresh doc as an editor leaves it: one empty paragraph.
    const fresh = new Y.Doc();
    bodyFragment(fresh).insert(0, [new Y.XmlElement('paragraph')]);
    suggestDocReplace(fresh, markdownToDoc('Draft\n'), AGENT, ORIGIN);
    expect(bodyFragment(fresh).length).toBe(1);
    decideDocSuggestion(fresh, AGENT.id, 'accept', ORIGIN);
    expect(included(fresh)).toBe('Draft\n');

    const spaced = docOf('');
    replaceDocBody(spaced, docFromJSON({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'One' }] }, { type: 'paragraph' }] }), 'seed');
    const before = withSuggestionsRejected(readDocBody(spaced));
    suggestDocReplace(spaced, markdownToDoc('One\n\nTwo\n'), AGENT, ORIGIN);
    expect(withSuggestionsRejected(readDocBody(spaced)).eq(before)).toBe(true);
    expect(bodyFragment(spaced).length).toBe(3);
  });

  it('a change of formatting alone is a removal and an insertion; a changed heading level replaces the block', () => {
    const ydoc = docOf('# Plan\n\nHello world\n');
    suggestDocReplace(ydoc, markdownToDoc('## Plan\n\nHello **world**\n'), AGENT, ORIGIN);
    expect(included(ydoc)).toBe('# {--Plan--}\n\n## {++Plan++}\n\nHello {--world--}{++**world**++}\n');
    decideDocSuggestion(ydoc, AGENT.id, 'accept', ORIGIN);
    expect(included(ydoc)).toBe('## Plan\n\nHello **world**\n');
  });

  it('leaves inline atoms in place and inserts a mention as its text (they keep no marks in the Y encoding)', () => {
    const ydoc = docOf('Hi [@Ada](mention:user/u1) there\n');
    suggestDocReplace(ydoc, markdownToDoc('Hi [@Ada](mention:user/u1) there and [@Bob](mention:user/u2)\n'), AGENT, ORIGIN);
    expect(included(ydoc)).toBe('Hi [@Ada](mention:user/u1) there{++ and @Bob++}\n');
  });

  it('leaves text that another suggestion already removes to that suggestion', () => {
    const ydoc = docOf('alpha beta gamma\n');
    suggestDocReplace(ydoc, markdownToDoc('alpha gamma\n'), PERSON, ORIGIN);
    suggestDocReplace(ydoc, markdownToDoc('alpha delta\n'), AGENT, ORIGIN);
    expect(docSuggestions(readDocBody(ydoc)).map((s) => [s.id, s.inserted, s.removed])).toEqual([
      ['sg_person', '', 'beta '],
      ['sg_agent', 'delta', 'gamma'],
    ]);
    decideDocSuggestion(ydoc, AGENT.id, 'accept', ORIGIN);
    expect(shown(ydoc)).toBe('alpha beta delta\n');
    decideDocSuggestion(ydoc, PERSON.id, 'accept', ORIGIN);
    expect(shown(ydoc)).toBe('alpha delta\n');
  });

  it('in an empty doc, a suggested paragraph is the only content and rejecting it leaves the doc empty', () => {
    const ydoc = new Y.Doc();
    expect(suggestDocReplace(ydoc, markdownToDoc('Fresh text\n'), AGENT, ORIGIN)).toBe(true);
    expect(included(ydoc)).toBe('{++Fresh text++}\n');
    expect(shown(ydoc)).toBe('');
    decideDocSuggestion(ydoc, AGENT.id, 'reject', ORIGIN);
    expect(bodyFragment(ydoc).length).toBe(0);
  });

  it('refuses a node that is not a doc', () => {
    const ydoc = new Y.Doc();
    expect(() => suggestDocReplace(ydoc, markdownToDoc('x').firstChild!, AGENT, ORIGIN)).toThrow(TypeError);
  });
});

describe('suggestDocAppend', () => {
  it('appends blocks whose text is all suggested, leaving out blocks with no text', () => {
    const ydoc = docOf('Intro.\n');
    const blocks = markdownToDoc('## Next\n\n---\n\n- a\n- b\n').content.content;
    expect(suggestDocAppend(ydoc, blocks, AGENT, ORIGIN)).toBe(2);
    expect(included(ydoc)).toBe('Intro.\n\n## {++Next++}\n\n- {++a++}\n- {++b++}\n');
    expect(shown(ydoc)).toBe('Intro.\n');
    expect(suggestDocAppend(ydoc, markdownToDoc('---\n\n![pic](a.png)\n').content.content, AGENT, ORIGIN)).toBe(0);
    expect(suggestDocAppend(clone(ydoc), markdownToDoc('[@Ada](mention:user/u1)\n').content.content, AGENT, ORIGIN)).toBe(1);

    const accepted = clone(ydoc);
    decideDocSuggestion(accepted, AGENT.id, 'accept', ORIGIN);
    expect(included(accepted)).toBe('Intro.\n\n## Next\n\n- a\n- b\n');
    decideDocSuggestion(ydoc, AGENT.id, 'reject', ORIGIN);
    expect(included(ydoc)).toBe('Intro.\n');
    expect(bodyFragment(ydoc).length).toBe(1);
  });
});

describe('decideDocSuggestion', () => {
  it('accept removes whole blocks whose text the suggestion deletes, reject restores them', () => {
    const base = docOf('Keep.\n\nDrop this.\n\n> Drop quote\n\nKeep too.\n');
    suggestDocReplace(base, markdownToDoc('Keep.\n\nKeep too.\n'), AGENT, ORIGIN);
    expect(included(base)).toBe('Keep.\n\n{--Drop this.--}\n\n> {--Drop quote--}\n\nKeep too.\n');
    const accepted = clone(base);
    expect(decideDocSuggestion(accepted, AGENT.id, 'accept', ORIGIN)).toBe(true);
    expect(included(accepted)).toBe('Keep.\n\nKeep too.\n');
    expect(bodyFragment(accepted).length).toBe(2);
    expect(decideDocSuggestion(base, AGENT.id, 'reject', ORIGIN)).toBe(true);
    expect(included(base)).toBe('Keep.\n\nDrop this.\n\n> Drop quote\n\nKeep too.\n');
  });

  it('is idempotent: false and no write for an id with no mark left, or one never there', () => {
    const ydoc = docOf('a b\n');
    suggestDocReplace(ydoc, markdownToDoc('a c\n'), AGENT, ORIGIN);
    expect(decideDocSuggestion(ydoc, AGENT.id, 'accept', ORIGIN)).toBe(true);
    const updates = updatesOf(ydoc);
    expect(decideDocSuggestion(ydoc, AGENT.id, 'accept', ORIGIN)).toBe(false);
    expect(decideDocSuggestion(ydoc, AGENT.id, 'reject', ORIGIN)).toBe(false);
    expect(decideDocSuggestion(ydoc, 'sg_unknown', 'reject', ORIGIN)).toBe(false);
    expect(updates).toHaveLength(0);
    expect(included(ydoc)).toBe('a c\n');
  });

  it('decides one suggestion and leaves the others open, as withSuggestionDecided reads it', () => {
    const ydoc = docOf('# Notes\n\nThe first line.\n\n- item one\n- item two\n');
    suggestDocReplace(ydoc, markdownToDoc('# Notes\n\nThe very first line.\n\n- item one\n'), PERSON, ORIGIN);
    suggestDocReplace(ydoc, markdownToDoc('# All notes\n\nThe first line.\n\n- item one\n- item two\n- item three\n'), AGENT, ORIGIN);
    for (const [id, decision] of [
      [AGENT.id, 'accept'],
      [AGENT.id, 'reject'],
      [PERSON.id, 'accept'],
      [PERSON.id, 'reject'],
    ] as const) {
      const copy = clone(ydoc);
      const expected = withSuggestionDecided(readDocBody(copy), id, decision);
      decideDocSuggestion(copy, id, decision, ORIGIN);
      expect(readDocBody(copy).toJSON(), `${decision} ${id}`).toEqual(expected.toJSON());
    }
    const both = clone(ydoc);
    decideDocSuggestion(both, AGENT.id, 'accept', ORIGIN);
    decideDocSuggestion(both, PERSON.id, 'accept', ORIGIN);
    expect(included(both)).toBe('# All notes\n\nThe very first line.\n\n- item one\n- item three\n');
  });
});

describe('concurrent editing', () => {
  it("an agent's suggestion and a person's typing in the same paragraph both survive, and deciding gives the same text on both clients", () => {
    const agent = docOf('The quick brown fox jumps over the lazy dog.\n');
    const person = clone(agent);
    suggestDocReplace(agent, markdownToDoc('The slow brown fox jumps over the lazy cat.\n'), AGENT, ORIGIN);
    // Concurrently, before the suggestion arrives: "very " before "lazy", and a sentence at the end.
    typeAt(person, 0, 'The quick brown fox jumps over the '.length, 'very ');
    typeAt(person, 0, 'The quick brown fox jumps over the very lazy dog.'.length, ' Woof!');
    exchange(agent, person);

    const merged = 'The {--quick--}{++slow++} brown fox jumps over the very lazy {--dog--}{++cat++}. Woof!\n';
    expect(included(agent)).toBe(merged);
    expect(included(person)).toBe(merged);
    expect(shown(person)).toBe('The quick brown fox jumps over the very lazy dog. Woof!\n');

    for (const [decision, text] of [
      ['accept', 'The slow brown fox jumps over the very lazy cat. Woof!\n'],
      ['reject', 'The quick brown fox jumps over the very lazy dog. Woof!\n'],
    ] as const) {
      const a = clone(agent);
      const b = clone(person);
      decideDocSuggestion(b, AGENT.id, decision, { principal: 'user:u_2' });
      typeAt(a, 0, 0, '> '); // someone keeps typing meanwhile
      exchange(a, b);
      expect(included(a)).toBe(`\\> ${text}`);
      expect(included(b)).toBe(`\\> ${text}`);
    }
  });

  it('a suggestion made against a stale copy still decides cleanly after merging', () => {
    const a = docOf('Alpha.\n\nBeta.\n');
    const b = clone(a);
    suggestDocAppend(a, markdownToDoc('Gamma.\n').content.content, AGENT, ORIGIN);
    replaceDocBody(b, markdownToDoc('Alpha!\n\nBeta.\n'), 'person');
    exchange(a, b);
    expect(included(b)).toBe('Alpha!\n\nBeta.\n\n{++Gamma.++}\n');
    decideDocSuggestion(b, AGENT.id, 'accept', 'person');
    exchange(a, b);
    expect(included(a)).toBe('Alpha!\n\nBeta.\n\nGamma.\n');
  });
});

describe('docSuggestions', () => {
  it('lists open suggestions in document order with author, text and 80 characters of context from the rejected view', () => {
    const long = 'x'.repeat(100);
    const ydoc = docOf(`${long} start here.\n\nMiddle part.\n\nEnd here ${long}\n`);
    suggestDocReplace(ydoc, markdownToDoc(`${long} start here.\n\nMiddle part, changed.\n\nEnd here ${long}\n`), AGENT, ORIGIN);
    suggestDocReplace(ydoc, markdownToDoc(`${long} begin here.\n\nMiddle part.\n\nEnd here ${long}\n`), PERSON, ORIGIN);
    const views = docSuggestions(readDocBody(ydoc));
    expect(views).toEqual([
      {
        id: 'sg_person',
        author: PERSON.author,
        at: PERSON.at,
        inserted: 'begin',
        removed: 'start',
        before: `${'x'.repeat(79)} `,
        after: ` here.\nMiddle part.\nEnd here ${'x'.repeat(100)}`.slice(0, 80),
      },
      {
        id: 'sg_agent',
        author: AGENT.author,
        at: AGENT.at,
        inserted: ', changed',
        removed: '',
        before: `${'x'.repeat(100)} start here.\nMiddle part`.slice(-80),
        after: `.\nEnd here ${'x'.repeat(100)}`.slice(0, 80),
      },
    ]);
    expect(docSuggestions(withSuggestionsRejected(readDocBody(ydoc)))).toEqual([]);
  });
});

describe('suggestionStampsIn', () => {
  function stampsOfNextTransaction(ydoc: Y.Doc, change: () => void): string[] {
    let ids: string[] | null = null;
    const listener = (tr: Y.Transaction) => {
      if (ids === null && tr.changed.size > 0) ids = suggestionStampsIn(tr).map((s) => `${s.id}/${s.author.principalType}:${s.author.id}`);
    };
    ydoc.on('afterTransaction', listener);
    change();
    ydoc.off('afterTransaction', listener);
    return ids ?? [];
  }

  it('names the suggestions a transaction creates or extends, once each, and nothing for plain edits', () => {
    const ydoc = docOf('one two three\n');
    expect(stampsOfNextTransaction(ydoc, () => suggestDocReplace(ydoc, markdownToDoc('one 2 three four\n'), AGENT, ORIGIN))).toEqual(['sg_agent/agent:ag_1']);
    expect(stampsOfNextTransaction(ydoc, () => typeAt(ydoc, 0, 0, 'Plain '))).toEqual([]);
    // A person in suggesting mode typing right after their own suggested text: no new format item.
    const attrs = suggestionMarkAttrs(PERSON);
    expect(stampsOfNextTransaction(ydoc, () => typeAt(ydoc, 0, 0, 'a', { suggestInsert: attrs }))).toEqual(['sg_person/user:u_2']);
    expect(stampsOfNextTransaction(ydoc, () => typeAt(ydoc, 0, 1, 'b', { suggestInsert: attrs }))).toEqual(['sg_person/user:u_2']);
    expect(included(ydoc)).toBe('{++ab++}Plain one {--two--}{++2++} three{++ four++}\n');
    // Deciding writes no suggestion marks.
    expect(stampsOfNextTransaction(ydoc, () => decideDocSuggestion(ydoc, AGENT.id, 'accept', ORIGIN))).toEqual([]);
  });

  it('finds typing that extends a suggestion the document held before any of its transactions was read, and nothing in one that never held one', () => {
    const plain = docOf('one two three\n');
    expect(stampsOfNextTransaction(plain, () => typeAt(plain, 0, 3, ' and'))).toEqual([]);
    const attrs = suggestionMarkAttrs(PERSON);
    const suggested = docOf('one two three\n');
    typeAt(suggested, 0, 0, 'a', { suggestInsert: attrs });
    // A loaded copy: its suggestion arrived with the load, which no reader of transactions saw.
    const loaded = clone(suggested);
    expect(stampsOfNextTransaction(loaded, () => typeAt(loaded, 0, 1, 'b', { suggestInsert: attrs }))).toEqual(['sg_person/user:u_2']);
    expect(stampsOfNextTransaction(plain, () => exchange(plain, loaded))).toEqual(['sg_person/user:u_2']);
    expect(stampsOfNextTransaction(plain, () => typeAt(plain, 0, 2, 'c', { suggestInsert: attrs }))).toEqual(['sg_person/user:u_2']);
  });

  it('finds suggestions arriving in a remote update', () => {
    const a = docOf('text\n');
    const b = clone(a);
    suggestDocReplace(a, markdownToDoc('more text\n'), AGENT, ORIGIN);
    expect(stampsOfNextTransaction(b, () => exchange(a, b))).toEqual(['sg_agent/agent:ag_1']);
  });
});

describe('checkSuggestionOnlyChange', () => {
  const agent = { principalType: 'agent' as const, id: 'ag_1' };

  it('lets a suggester add, extend and withdraw their own suggestions', () => {
    const before = docOf('Some text here.\n');
    const after = clone(before);
    suggestDocReplace(after, markdownToDoc('Some new text.\n\nAnd more.\n'), AGENT, ORIGIN);
    expect(checkSuggestionOnlyChange(before, after, agent)).toBeNull();
    const withdrawn = clone(after);
    decideDocSuggestion(withdrawn, AGENT.id, 'reject', ORIGIN);
    expect(checkSuggestionOnlyChange(after, withdrawn, agent)).toBeNull();
    // Enter at the end, then typing in suggesting mode: an empty paragraph is not a change of text.
    const entered = clone(after);
    bodyFragment(entered).insert(bodyFragment(entered).length, [new Y.XmlElement('paragraph')]);
    expect(checkSuggestionOnlyChange(after, entered, agent)).toBeNull();
    // Nor is an empty list item (Enter in a list), filled with suggested text afterwards.
    const list = docOf('- one\n');
    const item = clone(list);
    const bullet = bodyFragment(item).get(0) as Y.XmlElement;
    const newItem = new Y.XmlElement('listItem');
    bullet.insert(1, [newItem]);
    const paragraph = new Y.XmlElement('paragraph');
    newItem.insert(0, [paragraph]);
    expect(checkSuggestionOnlyChange(list, item, agent)).toBeNull();
    const typed = clone(item);
    const typedParagraph = ((bodyFragment(typed).get(0) as Y.XmlElement).get(1) as Y.XmlElement).get(0) as Y.XmlElement;
    typedParagraph.insert(0, [new Y.XmlText()]);
    (typedParagraph.get(0) as Y.XmlText).insert(0, 'two', { suggestInsert: suggestionMarkAttrs(AGENT) });
    expect(included(typed)).toBe('- one\n- {++two++}\n');
    expect(checkSuggestionOnlyChange(item, typed, agent)).toBeNull();
    expect(checkSuggestionOnlyChange(list, typed, agent)).toBeNull();
  });

  it('accepts what an editor in suggesting mode writes through y-prosemirror: marked typing, a new marked paragraph, marked deletions', () => {
    const before = docOf('Hello world.\n');
    const after = clone(before);
    const mark = (kind: 'suggestInsert' | 'suggestDelete') => ({ type: kind, attrs: suggestionMarkAttrs({ ...AGENT, id: 'sg_typed' }) });
    const edited = docFromJSONLenient({
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Hello ' },
            { type: 'text', text: 'big ', marks: [mark('suggestInsert')] },
            { type: 'text', text: 'world', marks: [mark('suggestDelete')] },
            { type: 'text', text: '.' },
          ],
        },
        { type: 'paragraph', content: [{ type: 'text', text: 'New line', marks: [mark('suggestInsert')] }] },
      ],
    });
    replaceDocBody(after, edited, 'editor');
    expect(included(after)).toBe('Hello {++big ++}{--world--}.\n\n{++New line++}\n');
    expect(checkSuggestionOnlyChange(before, after, agent)).toBeNull();
    expect(checkSuggestionOnlyChange(before, after, { principalType: 'user', id: 'u_2' })).toMatch(/own principal/);
  });

  it('refuses a plain edit, a change to someone else\'s suggestion, and a mark naming someone else', () => {
    const before = docOf('Some text here.\n');
    suggestDocReplace(before, markdownToDoc('Some text here, said Ada.\n'), PERSON, ORIGIN);

    const plain = clone(before);
    typeAt(plain, 0, 0, 'Not ');
    expect(checkSuggestionOnlyChange(before, plain, agent)).toMatch(/edits the document/);

    const othersTouched = clone(before);
    decideDocSuggestion(othersTouched, PERSON.id, 'reject', ORIGIN);
    expect(checkSuggestionOnlyChange(before, othersTouched, agent)).toMatch(/someone else/);

    const forged = clone(before);
    suggestDocReplace(forged, markdownToDoc('Other text here.\n'), { ...AGENT, id: 'sg_forged', author: { principalType: 'user', id: 'u_9', name: 'Eve' } }, ORIGIN);
    expect(checkSuggestionOnlyChange(before, forged, agent)).toMatch(/own principal/);

    const accepted = clone(before);
    decideDocSuggestion(accepted, PERSON.id, 'accept', ORIGIN);
    expect(checkSuggestionOnlyChange(before, accepted, agent)).toMatch(/edits the document/);
  });
});

describe('checkSuggestionOnlyUpdate', () => {
  const agent = { principalType: 'agent' as const, id: 'ag_1' };

  /** The update a client sends after `change`, from the state it shares with `live`. */
  function updateFrom(live: Y.Doc, change: (client: Y.Doc) => void): Uint8Array {
    const client = clone(live);
    const vector = Y.encodeStateVector(client);
    change(client);
    return Y.encodeStateAsUpdate(client, vector);
  }

  it('passes a suggestion, refuses a plain edit, and leaves the live document untouched', () => {
    const live = docOf('First paragraph.\n\nSecond paragraph.\n');
    const state = Y.encodeStateAsUpdate(live);
    expect(checkSuggestionOnlyUpdate(live, updateFrom(live, (c) => suggestDocReplace(c, markdownToDoc('First paragraph.\n\nSecond, changed.\n\nThird.\n'), AGENT, ORIGIN)), agent)).toBeNull();
    expect(checkSuggestionOnlyUpdate(live, updateFrom(live, (c) => typeAt(c, 1, 0, 'Plain ')), agent)).toMatch(/edits the document/);
    expect(checkSuggestionOnlyUpdate(live, updateFrom(live, (c) => suggestDocReplace(c, markdownToDoc('First.\n'), PERSON, ORIGIN)), agent)).toMatch(/own principal/);
    expect(Y.encodeStateAsUpdate(live)).toEqual(state);
  });

  it('refuses an update that is not one, builds on content the server lacks, touches another root, or moves a block', () => {
    const live = docOf('One.\n\nTwo.\n');
    expect(checkSuggestionOnlyUpdate(live, new Uint8Array([1, 2, 3]), agent)).toMatch(/not a Yjs update/);

    const ahead = clone(live);
    typeAt(ahead, 0, 0, 'unseen ');
    const missing = updateFrom(ahead, (c) => suggestDocReplace(c, markdownToDoc('unseen, One.\n\nTwo.\n'), AGENT, ORIGIN));
    expect(checkSuggestionOnlyUpdate(live, missing, agent)).toMatch(/not received/);

    expect(checkSuggestionOnlyUpdate(live, updateFrom(live, (c) => c.getMap('other').set('x', 1)), agent)).toMatch(/outside the doc body/);

    // Yjs has no move: the block is deleted and written again, and the order of the text changes.
    const moved = updateFrom(live, (c) => replaceDocBody(c, markdownToDoc('Two.\n\nOne.\n'), 'person'));
    expect(checkSuggestionOnlyUpdate(live, moved, agent)).toMatch(/edits the document/);
  });

  it('judges each update on what the server has taken so far: two suggesters in one paragraph, a refusal in between', () => {
    const live = docOf('Shared paragraph here.\n');
    const a = clone(live);
    const b = clone(live);
    const aVector = Y.encodeStateVector(a);
    suggestDocReplace(a, markdownToDoc('Shared paragraph here, says A.\n'), AGENT, ORIGIN);
    const fromA = Y.encodeStateAsUpdate(a, aVector);
    const bVector = Y.encodeStateVector(b);
    suggestDocReplace(b, markdownToDoc('Shared text here.\n'), PERSON, ORIGIN);
    const fromB = Y.encodeStateAsUpdate(b, bVector);

    // A's update passes and is still on its way to the live document when B's arrives.
    expect(checkSuggestionOnlyUpdate(live, fromA, agent)).toBeNull();
    expect(checkSuggestionOnlyUpdate(live, fromB, { principalType: 'user', id: 'u_2' })).toBeNull();
    Y.applyUpdate(live, fromA);
    Y.applyUpdate(live, fromB);
    expect(included(live)).toBe('Shared {--paragraph--}{++text++} here{++, says A++}.\n');

    const plain = updateFrom(live, (c) => typeAt(c, 0, 0, 'Plain '));
    expect(checkSuggestionOnlyUpdate(live, plain, agent)).toMatch(/edits the document/);
    const more = updateFrom(live, (c) => suggestDocReplace(c, markdownToDoc('Shared paragraph here at last.\n'), AGENT, ORIGIN));
    expect(checkSuggestionOnlyUpdate(live, more, agent)).toBeNull();
    expect(checkSuggestionOnlyUpdate(live, plain, agent)).toMatch(/edits the document/);
  });

  it('agrees with the whole-body check on random suggestions, plain edits and decisions', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const live = docOf(`Alpha ${seed} beta.\n\n- one\n- two ${seed}\n\n> quote\n\nEnd.\n`);
      suggestDocReplace(live, markdownToDoc(`Alpha ${seed} gamma.\n\n- one\n- two ${seed}\n\n> quote\n\nEnd.\n`), PERSON, ORIGIN);
      const targets = [`Alpha ${seed} beta!\n\n- one\n- two\n- three\n\nEnd.\n`, `New start.\n\nAlpha ${seed} beta.\n\n> quote, longer\n\nEnd.\n`];
      const changes: Array<(c: Y.Doc) => void> = [
        (c) => suggestDocReplace(c, markdownToDoc(targets[seed % 2]), AGENT, ORIGIN),
        (c) => replaceDocBody(c, markdownToDoc(targets[seed % 2]), 'person'),
        (c) => decideDocSuggestion(c, PERSON.id, seed % 3 === 0 ? 'accept' : 'reject', ORIGIN),
        (c) => typeAt(c, 0, 0, 'x', { suggestInsert: suggestionMarkAttrs(seed % 4 === 0 ? PERSON : AGENT) }),
      ];
      for (const change of changes) {
        const client = clone(live);
        const vector = Y.encodeStateVector(client);
        change(client);
        const whole = checkSuggestionOnlyChange(live, client, agent);
        expect(checkSuggestionOnlyUpdate(live, Y.encodeStateAsUpdate(client, vector), agent), `seed ${seed}`).toBe(whole);
      }
    }
  });
});

describe('reading and writing suggestion marks', () => {
  const attrs = suggestionMarkAttrs(AGENT);
  const json = {
    type: 'doc',
    content: [
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'keep ' },
          { type: 'text', text: 'old', marks: [{ type: 'suggestDelete', attrs }] },
          { type: 'text', text: 'new', marks: [{ type: 'suggestInsert', attrs }, { type: 'bold' }] },
        ],
      },
      { type: 'codeBlock', content: [{ type: 'text', text: 'a = 1\n' }, { type: 'text', text: 'b = 2', marks: [{ type: 'suggestInsert', attrs }] }] },
    ],
  };

  it('strict docFromJSON refuses suggestion marks and says to send mode "suggest"; the lenient reader keeps them', () => {
    let error: unknown;
    try {
      docFromJSON(json);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DocValidationError);
    expect((error as DocValidationError).path).toEqual(['content', 0, 'content', 1, 'marks', 0, 'type']);
    expect((error as DocValidationError).detail).toContain('mode: "suggest"');
    expect(JSON.stringify(docFromJSONLenient(json).toJSON())).toContain('suggestInsert');
  });

  it('Markdown writes suggestions as CriticMarkup (in code blocks too) and reads them back as plain text; plain text keeps both', () => {
    const doc = docFromJSONLenient(json);
    const markdown = docToMarkdown(doc);
    expect(markdown).toBe('keep {--old--}{++**new**++}\n\n```\na = 1\n{++b = 2++}\n```\n');
    expect(docToMarkdown(withSuggestionsRejected(doc))).toBe('keep old\n\n```\na = 1\n```\n');
    expect(docToText(doc)).toBe('keep oldnew\n\na = 1\nb = 2');
    expect(markdownToDoc(markdown).firstChild!.textContent).toBe('keep {--old--}{++new++}');
  });
});

describe('random documents', () => {
  // mulberry32, as in roundtrip-property.test.ts.
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  type Json = { type: string; attrs?: Record<string, unknown>; content?: Json[]; text?: string; marks?: Json[] };

  /**
   * Text in paragraphs, headings, code, quotes and nested lists; `rich` adds
   * what a suggestion cannot express (mentions, images, hard breaks, rules,
   * empty blocks) and tables.
   */
  function generator(seed: number, rich = false) {
    const rnd = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)];
    const words = ['the', 'fox', 'dog', 'jumps', 'over', 'lazy', 'quick', 'brown', 'a', 'b', 'é', '中文', '!', ',', 'x_y', '42', '😀', 'a😀b'];
    const markSets: Json[][] = [[], [], [], [{ type: 'bold' }], [{ type: 'italic' }]];
    const inline = (): Json[] =>
      Array.from({ length: (rich ? 0 : 1) + Math.floor(rnd() * 6) }, (_, i): Json => {
        const r = rich ? rnd() : 1;
        if (r < 0.1) return { type: 'mention', attrs: { kind: 'user', id: pick(words), label: pick(words) } };
        if (r < 0.15 && i > 0) return { type: 'hardBreak' };
        if (r < 0.2) return { type: 'image', attrs: { src: 'a.png', alt: pick(words), title: null } };
        return { type: 'text', text: (i ? ' ' : '') + pick(words), marks: pick(markSets) };
      });
    const paragraph = (): Json => ({ type: 'paragraph', content: inline() });
    const item = (depth: number): Json => ({
      type: 'listItem',
      content: rnd() < 0.25 && depth < 2 ? [paragraph(), { type: 'bulletList', content: [item(depth + 1)] }] : [paragraph()],
    });
    const block = (depth: number): Json => {
      const r = rnd();
      if (depth > 1 || r < 0.45) return paragraph();
      if (r < 0.6) return { type: 'heading', attrs: { level: 1 + Math.floor(rnd() * 3) }, content: inline() };
      if (r < 0.7) return { type: 'codeBlock', content: [{ type: 'text', text: `${pick(words)} ${pick(words)}\n${pick(words)}` }] };
      if (r < 0.75 || (!rich && r < 0.8)) return { type: 'blockquote', content: [block(depth + 1)] };
      if (rich && r < 0.8) return { type: 'horizontalRule' };
      if (rich && r < 0.88) {
        const row = (cell: string): Json => ({ type: 'tableRow', content: [0, 1].map(() => ({ type: cell, content: [{ type: 'paragraph', content: inline().filter((n) => n.type !== 'hardBreak') }] })) });
        return { type: 'table', content: [row('tableHeader'), row('tableCell')] };
      }
      return { type: 'bulletList', content: [item(depth), item(depth)] };
    };
    const textblocks = (node: Json, out: Json[] = []): Json[] => {
      if (['paragraph', 'heading', 'codeBlock'].includes(node.type)) out.push(node);
      else for (const child of node.content ?? []) textblocks(child, out);
      return out;
    };
    /** A few random edits: words replaced, inserted, removed or reformatted; blocks added or removed; a heading level changed. */
    const edit = (doc: Json): Json => {
      const copy = structuredClone(doc);
      const content = copy.content!;
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
        const r = rnd();
        if (r < 0.5) {
          const blocks = textblocks(copy);
          if (blocks.length === 0) continue;
          const tb = pick(blocks);
          const nodes = tb.content!;
          if (nodes.length === 0) {
            nodes.push(...inline());
            continue;
          }
          if (tb.type === 'codeBlock') {
            nodes[0] = { type: 'text', text: `${nodes[0].text!.replace(/\w+/, pick(words))} ${pick(words)}` };
            continue;
          }
          const j = Math.floor(rnd() * nodes.length);
          const op = rnd();
          if (op < 0.4) nodes[j] = { type: 'text', text: (j ? ' ' : '') + pick(words), marks: nodes[j].marks ?? [] };
          else if (op < 0.7) nodes.splice(j, 0, { type: 'text', text: `${pick(words)} `, marks: pick(markSets) });
          else if (nodes.length > 1) nodes.splice(j, 1);
          else if (nodes[j].type === 'text') nodes[j] = { ...nodes[j], marks: pick(markSets) };
        } else if (r < 0.7) {
          content.splice(Math.floor(rnd() * (content.length + 1)), 0, block(0));
        } else if (r < 0.85 && content.length > 1) {
          content.splice(Math.floor(rnd() * content.length), 1);
        } else {
          const heading = content.find((b) => b.type === 'heading');
          if (heading) heading.attrs = { level: ((heading.attrs!.level as number) % 3) + 1 };
        }
      }
      return copy;
    };
    const doc = (): Json => ({ type: 'doc', content: Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => block(0)) });
    return { doc, edit };
  }

  it('two suggestions and a concurrent plain edit: the rejected view is the original, accepting gives the target, and deciding in the Y document reads as deciding the body', () => {
    let written = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const { doc, edit } = generator(seed);
      const json = doc();
      const original = docFromJSON(json);
      const first = docFromJSON(edit(json));
      const second = docFromJSON(edit(json));
      const ydoc = new Y.Doc();
      replaceDocBody(ydoc, original, 'seed');
      const person = clone(ydoc);
      if (suggestDocReplace(ydoc, first, AGENT, ORIGIN)) written++;
      const once = readDocBody(ydoc);
      expect(withSuggestionsRejected(once).eq(original), `seed ${seed}: rejected`).toBe(true);
      expect(withSuggestionsAccepted(once).eq(first), `seed ${seed}: accepted`).toBe(true);

      suggestDocReplace(ydoc, second, PERSON, ORIGIN);
      expect(withSuggestionsRejected(readDocBody(ydoc)).eq(original), `seed ${seed}: rejected after two`).toBe(true);
      for (const order of [
        [[AGENT.id, 'accept'], [PERSON.id, 'reject']],
        [[PERSON.id, 'accept'], [AGENT.id, 'accept']],
        [[AGENT.id, 'reject'], [PERSON.id, 'accept']],
      ] as const) {
        const copy = clone(ydoc);
        let expected = readDocBody(copy);
        for (const [id, decision] of order) {
          expected = withSuggestionDecided(expected, id, decision);
          decideDocSuggestion(copy, id, decision, ORIGIN);
          expect(readDocBody(copy).eq(expected), `seed ${seed}: ${decision} ${id}`).toBe(true);
        }
      }

      replaceDocBody(person, docFromJSON(edit(json)), 'person');
      exchange(ydoc, person);
      const expected = withSuggestionDecided(readDocBody(ydoc), AGENT.id, 'accept');
      decideDocSuggestion(person, AGENT.id, 'accept', 'person');
      exchange(ydoc, person);
      expect(readDocBody(person).eq(expected), `seed ${seed}: after a concurrent edit`).toBe(true);
      expect(readDocBody(ydoc).eq(readDocBody(person)), `seed ${seed}: converged`).toBe(true);
    }
    expect(written).toBeGreaterThan(120);
  });

  it('with atoms, rules, empty blocks and tables: each suggestion passes the suggest-only check, and deciding in the Y document reads as deciding the body', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const { doc, edit } = generator(seed, true);
      const json = doc();
      const ydoc = new Y.Doc();
      replaceDocBody(ydoc, docFromJSON(json), 'seed');
      const start = clone(ydoc);
      suggestDocReplace(ydoc, docFromJSON(edit(json)), AGENT, ORIGIN);
      expect(checkSuggestionOnlyChange(start, ydoc, { principalType: 'agent', id: 'ag_1' }), `seed ${seed}: first`).toBeNull();
      const once = clone(ydoc);
      suggestDocReplace(ydoc, docFromJSON(edit(json)), PERSON, ORIGIN);
      expect(checkSuggestionOnlyChange(once, ydoc, { principalType: 'user', id: 'u_2' }), `seed ${seed}: second`).toBeNull();
      for (const order of [
        [[AGENT.id, 'accept'], [PERSON.id, 'reject']],
        [[PERSON.id, 'accept'], [AGENT.id, 'reject']],
      ] as const) {
        const copy = clone(ydoc);
        let expected = readDocBody(copy);
        for (const [id, decision] of order) {
          expected = withSuggestionDecided(expected, id, decision);
          decideDocSuggestion(copy, id, decision, ORIGIN);
          expect(readDocBody(copy).eq(expected), `seed ${seed}: ${decision} ${id}`).toBe(true);
        }
      }
    }
  });
});
