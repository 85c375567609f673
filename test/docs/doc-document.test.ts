import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { docFromJSON, DocValidationError, docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';
import { docSchema } from '../../src/model/doc/schema.js';
import {
  appendBlocks,
  diffMentions,
  docSections,
  extractMentions,
  readDocBody,
  replaceDocBody,
} from '../../src/model/doc/body.js';

const ORIGIN = { principal: 'user:u_1' };

/** Origins of the transactions that changed the document (first access to a root type opens an empty one). */
function recordOrigins(ydoc: Y.Doc): unknown[] {
  const origins: unknown[] = [];
  ydoc.on('afterTransaction', (tr: Y.Transaction) => {
    if (tr.changed.size > 0) origins.push(tr.origin);
  });
  return origins;
}

/** Two replicas that start from the same state, as two connected clients would. */
function replicas(markdown: string): { a: Y.Doc; b: Y.Doc } {
  const a = new Y.Doc();
  replaceDocBody(a, markdownToDoc(markdown), 'seed');
  const b = new Y.Doc();
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
  return { a, b };
}

function exchange(a: Y.Doc, b: Y.Doc): void {
  const toB = Y.encodeStateAsUpdate(a, Y.encodeStateVector(b));
  const toA = Y.encodeStateAsUpdate(b, Y.encodeStateVector(a));
  Y.applyUpdate(b, toB);
  Y.applyUpdate(a, toA);
}

/** What a browser editor does: edit the fragment directly, as y-prosemirror would. */
function typeInParagraph(ydoc: Y.Doc, blockIndex: number, at: number, value: string): void {
  const paragraph = ydoc.getXmlFragment('default').get(blockIndex) as Y.XmlElement;
  const ytext = paragraph.get(0) as Y.XmlText;
  ytext.insert(at, value);
}

const sample = [
  '# Plan',
  '',
  'Intro with **bold**, a [link](https://x.test "t") and [@Ada](mention:user/u1).',
  '',
  '- [ ] task',
  '- [x] done',
  '',
  '1. one',
  '2. two',
  '',
  '> quote',
  '',
  '```ts',
  'const x = 1;',
  '```',
  '',
  '| a | b |',
  '| :-- | --: |',
  '| 1 | `2` |',
  '',
  '---',
  '',
  '![img](https://x.test/i.png "title")\\',
  'after break',
  '',
].join('\n');

describe('doc body in a Y document', () => {
  it('JSON -> Y -> JSON is the identity', () => {
    const node = markdownToDoc(sample);
    const ydoc = new Y.Doc();
    replaceDocBody(ydoc, node, ORIGIN);
    expect(readDocBody(ydoc).toJSON()).toEqual(node.toJSON());
    expect(docToMarkdown(readDocBody(ydoc))).toBe(sample);
  });

  it('survives encoding the Y document as an update', () => {
    const node = markdownToDoc(sample);
    const source = new Y.Doc();
    replaceDocBody(source, node, ORIGIN);
    const copy = new Y.Doc();
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(source));
    expect(readDocBody(copy).eq(node)).toBe(true);
  });

  it('reads an empty body as an empty doc', () => {
    expect(readDocBody(new Y.Doc()).toJSON()).toEqual({ type: 'doc', content: [{ type: 'paragraph' }] });
  });

  it('reads content from unknown editor extensions without editing the document', () => {
    const ydoc = new Y.Doc();
    const fragment = ydoc.getXmlFragment('default');
    const paragraph = new Y.XmlElement('paragraph');
    const ytext = new Y.XmlText();
    ytext.insert(0, 'kept', { underline: {}, bold: {} });
    paragraph.insert(0, [ytext]);
    const unknown = new Y.XmlElement('details');
    const inner = new Y.XmlElement('paragraph');
    inner.insert(0, [new Y.XmlText('inside')]);
    unknown.insert(0, [inner]);
    fragment.insert(0, [paragraph, unknown]);
    const before = Y.encodeStateAsUpdate(ydoc);

    const body = readDocBody(ydoc);
    expect(body.toJSON()).toEqual({
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'kept', marks: [{ type: 'bold' }] }] },
        { type: 'paragraph', content: [{ type: 'text', text: 'inside' }] },
      ],
    });
    expect(Y.encodeStateAsUpdate(ydoc)).toEqual(before);
  });
});

describe('replaceDocBody', () => {
  it('applies the change in one transaction carrying the origin', () => {
    const ydoc = new Y.Doc();
    const origins = recordOrigins(ydoc);
    replaceDocBody(ydoc, markdownToDoc(sample), ORIGIN);
    expect(origins).toEqual([ORIGIN]);
  });

  it('changes nothing when the body is unchanged', () => {
    const { a } = replicas(sample);
    const updates: Uint8Array[] = [];
    a.on('update', (u: Uint8Array) => updates.push(u));
    replaceDocBody(a, markdownToDoc(sample), ORIGIN);
    expect(updates).toEqual([]);
  });

  it('touches only the blocks that changed', () => {
    const { a } = replicas('first\n\nsecond\n\nthird\n');
    const fragment = a.getXmlFragment('default');
    const [first, second, third] = fragment.toArray();
    replaceDocBody(a, markdownToDoc('first\n\nsecond, edited\n\nthird\n'), ORIGIN);
    const after = fragment.toArray();
    expect(after[0]).toBe(first);
    expect(after[2]).toBe(third);
    // Even the edited paragraph is updated in place, not replaced.
    expect(after[1]).toBe(second);
  });

  it("keeps a concurrent editor's change to another paragraph", () => {
    const { a, b } = replicas('Alpha paragraph.\n\nBeta paragraph.\n\nGamma paragraph.\n');
    typeInParagraph(b, 2, 0, 'Edited in the browser: ');
    replaceDocBody(a, markdownToDoc('Alpha paragraph, replaced over REST.\n\nBeta paragraph.\n\nGamma paragraph.\n'), ORIGIN);
    exchange(a, b);
    const expected = 'Alpha paragraph, replaced over REST.\n\nBeta paragraph.\n\nEdited in the browser: Gamma paragraph.\n';
    expect(docToMarkdown(readDocBody(a))).toBe(expected);
    expect(docToMarkdown(readDocBody(b))).toBe(expected);
  });

  it("merges a concurrent edit to the same paragraph at character level", () => {
    const { a, b } = replicas('Hello world\n');
    typeInParagraph(b, 0, 11, '!');
    replaceDocBody(a, markdownToDoc('Hello brave world\n'), ORIGIN);
    exchange(a, b);
    expect(docToMarkdown(readDocBody(a))).toBe('Hello brave world!\n');
    expect(docToMarkdown(readDocBody(b))).toBe('Hello brave world!\n');
  });

  it('keeps a concurrent edit when the replace inserts and removes blocks elsewhere', () => {
    const { a, b } = replicas('# Title\n\nkeep me\n\nremove me\n\ntail\n');
    typeInParagraph(b, 1, 4, ' (typed)');
    replaceDocBody(a, markdownToDoc('# Title\n\nnew block\n\nkeep me\n\ntail\n\n- appended\n'), ORIGIN);
    exchange(a, b);
    const expected = '# Title\n\nnew block\n\nkeep (typed) me\n\ntail\n\n- appended\n';
    expect(docToMarkdown(readDocBody(a))).toBe(expected);
    expect(docToMarkdown(readDocBody(b))).toBe(expected);
  });

  it('rejects a node that is not a doc', () => {
    expect(() => replaceDocBody(new Y.Doc(), docSchema.nodes.paragraph.create(), ORIGIN)).toThrow(TypeError);
  });
});

describe('appendBlocks', () => {
  it('appends at the end in one transaction and returns the count', () => {
    const { a, b } = replicas('# Log\n\nfirst entry\n');
    const existing = a.getXmlFragment('default').toArray();
    const origins = recordOrigins(a);

    typeInParagraph(b, 1, 0, 'Old ');
    const added = markdownToDoc('## Today\n\n- [x] shipped [@Ada](mention:user/u1)\n\n| k | v |\n|---|---|\n| a | 1 |\n');
    expect(appendBlocks(a, added.content.content, ORIGIN)).toBe(3);
    expect(origins).toEqual([ORIGIN]);
    expect(a.getXmlFragment('default').toArray().slice(0, 2)).toEqual(existing);

    exchange(a, b);
    const expected = '# Log\n\nOld first entry\n\n## Today\n\n- [x] shipped [@Ada](mention:user/u1)\n\n| k | v |\n| --- | --- |\n| a | 1 |\n';
    expect(docToMarkdown(readDocBody(a))).toBe(expected);
    expect(docToMarkdown(readDocBody(b))).toBe(expected);
  });

  it('appends to an empty body', () => {
    const ydoc = new Y.Doc();
    expect(appendBlocks(ydoc, markdownToDoc('hello\n').content.content, ORIGIN)).toBe(1);
    expect(docToMarkdown(readDocBody(ydoc))).toBe('hello\n');
  });

  it('does nothing for no blocks and refuses inline nodes', () => {
    const ydoc = new Y.Doc();
    expect(appendBlocks(ydoc, [], ORIGIN)).toBe(0);
    expect(ydoc.getXmlFragment('default').length).toBe(0);
    expect(() => appendBlocks(ydoc, [docSchema.text('x')], ORIGIN)).toThrow(TypeError);
  });
});

describe('mentions', () => {
  const before = markdownToDoc('[@Ada](mention:user/u1) and [@Bot](mention:agent/a1)\n');
  const after = markdownToDoc('[@Ada L.](mention:user/u1), [@Bot](mention:agent/a1), [@Grace](mention:user/u2) [@Grace](mention:user/u2) [@Bot](mention:user/a1)\n');

  it('extracts distinct mentions in document order', () => {
    expect(extractMentions(after)).toEqual([
      { kind: 'user', id: 'u1', label: 'Ada L.' },
      { kind: 'agent', id: 'a1', label: 'Bot' },
      { kind: 'user', id: 'u2', label: 'Grace' },
      { kind: 'user', id: 'a1', label: 'Bot' },
    ]);
  });

  it('diffs by kind and id: relabelled mentions are not new, the same id of another kind is', () => {
    expect(diffMentions(before, after)).toEqual([
      { kind: 'user', id: 'u2', label: 'Grace' },
      { kind: 'user', id: 'a1', label: 'Bot' },
    ]);
    expect(diffMentions(after, before)).toEqual([]);
    expect(diffMentions(null, before)).toEqual(extractMentions(before));
    expect(diffMentions(extractMentions(before), extractMentions(after))).toHaveLength(2);
  });

  it('finds mentions in nested blocks', () => {
    const nested = markdownToDoc('> - [ ] ask [@Ada](mention:user/u1)\n\n| who |\n|---|\n| [@Bot](mention:agent/a1) |\n');
    expect(extractMentions(nested).map((m) => m.id)).toEqual(['u1', 'a1']);
  });
});

describe('docFromJSON', () => {
  function errorOf(json: unknown): DocValidationError {
    try {
      docFromJSON(json);
    } catch (error) {
      expect(error).toBeInstanceOf(DocValidationError);
      return error as DocValidationError;
    }
    throw new Error('expected docFromJSON to throw');
  }

  it('accepts what the schema allows and returns an equal node', () => {
    const node = markdownToDoc(sample);
    expect(docFromJSON(node.toJSON()).eq(node)).toBe(true);
  });

  it('accepts an empty doc as one empty paragraph', () => {
    expect(docFromJSON({ type: 'doc', content: [] }).toJSON()).toEqual({ type: 'doc', content: [{ type: 'paragraph' }] });
  });

  it.each([
    ['a non-doc root', { type: 'paragraph' }, ['type']],
    ['a non-object', 'nope', []],
    ['an unknown node type', { type: 'doc', content: [{ type: 'paragraph' }, { type: 'callout', content: [] }] }, ['content', 1, 'type']],
    [
      'an unknown mark',
      { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'underline' }] }] }] },
      ['content', 0, 'content', 0, 'marks', 0, 'type'],
    ],
    ['a bad attribute value', { type: 'doc', content: [{ type: 'heading', attrs: { level: 9 } }] }, ['content', 0, 'attrs', 'level']],
    ['an unknown attribute', { type: 'doc', content: [{ type: 'paragraph', attrs: { align: 'left' } }] }, ['content', 0, 'attrs', 'align']],
    ['a missing required attribute', { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'image', attrs: {} }] }] }, ['content', 0, 'content', 0, 'attrs', 'src']],
    [
      'a mention of an unknown kind',
      { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { kind: 'team', id: 't', label: 'T' } }] }] },
      ['content', 0, 'content', 0, 'attrs', 'kind'],
    ],
    [
      'a block where inline content belongs',
      { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'a' }, { type: 'paragraph' }] }] },
      ['content', 0, 'content', 1],
    ],
    ['text at the top level', { type: 'doc', content: [{ type: 'text', text: 'loose' }] }, ['content', 0]],
    [
      'a list item that does not start with a paragraph',
      { type: 'doc', content: [{ type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'heading', content: [] }] }] }] },
      ['content', 0, 'content', 0, 'content', 0],
    ],
    ['an empty list', { type: 'doc', content: [{ type: 'bulletList', content: [] }] }, ['content', 0, 'content']],
    ['a task item in a bullet list', { type: 'doc', content: [{ type: 'bulletList', content: [{ type: 'taskItem', content: [{ type: 'paragraph' }] }] }] }, ['content', 0, 'content', 0]],
    [
      'a mark inside a code block',
      { type: 'doc', content: [{ type: 'codeBlock', content: [{ type: 'text', text: 'x', marks: [{ type: 'bold' }] }] }] },
      ['content', 0, 'content', 0, 'marks', 0],
    ],
    ['an empty text node', { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: '' }] }] }, ['content', 0, 'content', 0, 'text']],
    [
      'a duplicated mark',
      { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'bold' }, { type: 'bold' }] }] }] },
      ['content', 0, 'content', 0, 'marks', 1],
    ],
    ['a misspelt field', { type: 'doc', contents: [] }, ['contents']],
    ['content that is not an array', { type: 'doc', content: [{ type: 'paragraph', content: 'text' }] }, ['content', 0, 'content']],
  ])('rejects %s with a path to it', (_name, json, path) => {
    expect(errorOf(json).path).toEqual(path);
  });

  it('names the problem in the message', () => {
    const error = errorOf({ type: 'doc', content: [{ type: 'heading', attrs: { level: 0 } }] });
    expect(error.message).toContain('/content/0/attrs/level');
    expect(error.detail).toMatch(/integer from 1 to 6/);
  });

  it('refuses absurdly deep nesting', () => {
    let node: Record<string, unknown> = { type: 'paragraph' };
    for (let i = 0; i < 200; i++) node = { type: 'blockquote', content: [node] };
    expect(errorOf({ type: 'doc', content: [node] }).detail).toMatch(/nesting/);
  });
});

describe('docSections', () => {
  it('splits at top-level headings with the text under each', () => {
    const node = markdownToDoc(
      'Preface text.\n\n# One\n\nBody one.\n\n- item [@Ada](mention:user/u1)\n\n## One point one\n\n> quoted\n\n# Two\n\n# Three\n\n```\ncode\n```\n',
    );
    expect(docSections(node)).toEqual([
      { heading: null, level: 0, text: 'Preface text.', index: 0, blockIndex: 0 },
      { heading: 'One', level: 1, text: 'Body one.\n\nitem @Ada', index: 1, blockIndex: 1 },
      { heading: 'One point one', level: 2, text: 'quoted', index: 2, blockIndex: 4 },
      { heading: 'Two', level: 1, text: '', index: 3, blockIndex: 6 },
      { heading: 'Three', level: 1, text: 'code', index: 4, blockIndex: 7 },
    ]);
  });

  it('has no untitled section when the doc starts with a heading, and none for an empty doc', () => {
    expect(docSections(markdownToDoc('# Only\n')).map((s) => s.heading)).toEqual(['Only']);
    expect(docSections(markdownToDoc(''))).toEqual([]);
  });

  it('ignores headings nested in other blocks', () => {
    expect(docSections(markdownToDoc('> # quoted heading\n\nbody\n'))).toEqual([
      { heading: null, level: 0, text: 'quoted heading\n\nbody', index: 0, blockIndex: 0 },
    ]);
  });
});
