import { describe, expect, it } from 'vitest';
import type { Node as PMNode } from 'prosemirror-model';
import { docFromJSON, docToMarkdown, docToText, markdownToDoc } from '../../src/model/doc/markdown.js';
import { docSchema } from '../../src/model/doc/schema.js';

const text = (t: string, marks?: unknown[]) => ({ type: 'text', text: t, ...(marks ? { marks } : {}) });
const para = (...content: unknown[]) => ({ type: 'paragraph', content });
const doc = (...content: unknown[]) => docFromJSON({ type: 'doc', content });

function reparsed(node: PMNode): PMNode {
  return markdownToDoc(docToMarkdown(node));
}

describe('mentions', () => {
  it('parse from [@label](mention:kind/id) and serialize back to it', () => {
    const md = 'Ping [@Ada Lovelace](mention:user/u_1) and [@Build Bot](mention:agent/ag_7).\n';
    const parsed = markdownToDoc(md);
    const mentions = parsed.firstChild!.content.content.filter((n) => n.type.name === 'mention').map((n) => n.attrs);
    expect(mentions).toEqual([
      { kind: 'user', id: 'u_1', label: 'Ada Lovelace' },
      { kind: 'agent', id: 'ag_7', label: 'Build Bot' },
    ]);
    expect(docToMarkdown(parsed)).toBe(md);
  });

  it('escape labels and ids so any value survives', () => {
    const node = doc(para(text('wow!'), { type: 'mention', attrs: { kind: 'user', id: 'a b/c)d', label: 'x [y] *z*' } }));
    const md = docToMarkdown(node);
    expect(md).toBe('wow\\![@x \\[y\\] \\*z\\*](mention:user/a%20b%2Fc%29d)\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('leave links with an unknown kind or an autolink as links', () => {
    const parsed = markdownToDoc('[@x](mention:robot/1) <mention:user/1>\n');
    expect(parsed.firstChild!.content.content.some((n) => n.type.name === 'mention')).toBe(false);
  });

  it('read as @label in plain text', () => {
    expect(docToText(markdownToDoc('hi [@Ada](mention:user/u1)!\n'))).toBe('hi @Ada!');
  });
});

describe('lists', () => {
  it('write bullets as `-`', () => {
    expect(docToMarkdown(markdownToDoc('* a\n* b\n+ c\n'))).toBe('- a\n- b\n\n\n* c\n');
  });

  it('alternate markers so adjacent lists stay separate', () => {
    const node = markdownToDoc('- a\n\n* b\n\n- c\n\n1. x\n\n1) y\n');
    expect(node.content.content.map((n) => n.type.name)).toEqual(['bulletList', 'bulletList', 'bulletList', 'orderedList', 'orderedList']);
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('keep the start number of an ordered list', () => {
    const node = markdownToDoc('7. seven\n8. eight\n');
    expect(node.firstChild!.attrs.start).toBe(7);
    expect(docToMarkdown(node)).toBe('7. seven\n8. eight\n');
  });

  it('write a list tight unless an item needs blank lines', () => {
    expect(docToMarkdown(markdownToDoc('- a\n  - b\n- c\n'))).toBe('- a\n  - b\n- c\n');
    expect(docToMarkdown(markdownToDoc('- a\n\n  second\n- c\n'))).toBe('- a\n\n  second\n\n- c\n');
  });

  it('put a block that starts an item on the marker line', () => {
    const node = markdownToDoc('- # Title\n- ```\n  code\n  ```\n- ***\n');
    expect(node.firstChild!.firstChild!.toJSON().content[0]).toEqual({ type: 'paragraph' });
    expect(reparsed(node).eq(node)).toBe(true);
  });
});

describe('escaping text from the editor', () => {
  const tricky = [
    '# not a heading',
    '1. not a list',
    '2) not a list',
    '- not a list',
    '+ not a list',
    '> not a quote',
    '***',
    '===',
    '    four spaces',
    '<div>not html</div>',
    '<https://not.autolink>',
    '&amp; stays an ampersand, &copy; too',
    '*stars* and _underscores_ and snake_case_name and __dunder__',
    '`ticks` and ``double``',
    '[not a link](url) and ![not an image](src)',
    'back\\slash at end\\',
    'pipes | and ~tildes~ and ~~double~~',
    'heading closer #',
    '\u00a0leading nbsp',
    'line\nfeed',
  ];

  for (const value of tricky) {
    it(`keeps ${JSON.stringify(value)} as text`, () => {
      const node = doc(para(text(value)));
      expect(reparsed(node).eq(node)).toBe(true);
    });
  }

  it('keeps text after a hard break from starting a block', () => {
    const node = doc(para(text('first'), { type: 'hardBreak' }, text('# second')), para(text('x'), { type: 'hardBreak' }, text('---')));
    expect(docToMarkdown(node)).toBe('first\\\n\\# second\n\nx\\\n\\---\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('keeps a trailing # in a heading', () => {
    const node = docFromJSON({ type: 'doc', content: [{ type: 'heading', attrs: { level: 2 }, content: [text('C #')] }] });
    expect(docToMarkdown(node)).toBe('## C \\#\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('writes a heading with a line break as setext when it can', () => {
    const node = docFromJSON({ type: 'doc', content: [{ type: 'heading', attrs: { level: 1 }, content: [text('a'), { type: 'hardBreak' }, text('b')] }] });
    expect(docToMarkdown(node)).toBe('a\\\nb\n===\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });
});

describe('emphasis next to punctuation', () => {
  const bold = [{ type: 'bold' }];
  const italic = [{ type: 'italic' }];

  it('writes a letter before an opener followed by punctuation as a reference', () => {
    const node = doc(para(text('foo'), text('(bar)', bold), text(' baz')));
    expect(docToMarkdown(node)).toBe('fo&#111;**(bar)** baz\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('writes a letter after a closer that follows punctuation as a reference', () => {
    const node = doc(para(text('Note:', bold), text('This')));
    expect(docToMarkdown(node)).toBe('**Note:**&#84;his\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('leaves ordinary emphasis alone', () => {
    expect(docToMarkdown(markdownToDoc('**bold**, *it*. a**b**c (**x**)\n'))).toBe('**bold**, *it*. a**b**c (**x**)\n');
  });

  it('nests the longer mark outside', () => {
    const node = doc(para(text('foo', [...bold, ...italic]), text(' bar', italic)));
    expect(docToMarkdown(node)).toBe('***foo** bar*\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('drops emphasis that covers only whitespace', () => {
    const node = doc(para(text('a'), text(' ', bold), text('b')));
    expect(docToMarkdown(node)).toBe('a b\n');
  });

  it('escapes a ! after an escaped backslash before a link', () => {
    const node = doc(para(text('x\\!'), text('l', [{ type: 'link', attrs: { href: '/u', title: null } }])));
    expect(reparsed(node).eq(node)).toBe(true);
  });
});

describe('marks and code', () => {
  it('round-trip links with titles and awkward destinations', () => {
    const link = (href: string, title: string | null = null) => ({ type: 'link', attrs: { href, title } });
    const node = doc(
      para(
        text('a', [link('https://x.test/a_(b)')]),
        text(' '),
        text('b', [link('/with space', 'say "hi"')]),
        text(' '),
        text('https://auto.test/x', [link('https://auto.test/x')]),
      ),
    );
    expect(docToMarkdown(node)).toBe('[a](https://x.test/a_\\(b\\)) [b](</with space> "say \\"hi\\"") <https://auto.test/x>\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('round-trip code spans with backticks and edge spaces', () => {
    for (const value of ['a`b', '`start', ' padded ', '``', ' ']) {
      const node = doc(para(text('x '), text(value, [{ type: 'code' }]), text(' y')));
      expect(reparsed(node).eq(node), value).toBe(true);
    }
  });

  it('keeps code inside a link', () => {
    const node = markdownToDoc('[`npm i`](https://npmjs.com)\n');
    expect(node.firstChild!.firstChild!.marks.map((m) => m.type.name)).toEqual(['link', 'code']);
    expect(docToMarkdown(node)).toBe('[`npm i`](https://npmjs.com)\n');
  });

  it('picks a fence longer than any backtick run and keeps the info string', () => {
    const node = doc({ type: 'codeBlock', attrs: { language: 'md title="x"' }, content: [text('```js\nx\n```')] });
    expect(docToMarkdown(node)).toBe('````md title="x"\n```js\nx\n```\n````\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('keeps an empty code block empty', () => {
    const node = doc({ type: 'codeBlock', attrs: { language: null } });
    expect(docToMarkdown(node)).toBe('```\n```\n');
    expect(reparsed(node).eq(node)).toBe(true);
  });

  it('round-trips images with alt and title', () => {
    const node = doc(para({ type: 'image', attrs: { src: 'https://x.test/a b.png', alt: 'an *alt*', title: 'T' } }));
    expect(reparsed(node).eq(node)).toBe(true);
  });
});

describe('markdownToDoc', () => {
  it('returns an empty doc for empty input', () => {
    const node = markdownToDoc('');
    expect(node.toJSON()).toEqual({ type: 'doc', content: [{ type: 'paragraph' }] });
    expect(docToMarkdown(node)).toBe('');
  });

  it('keeps raw HTML as text', () => {
    const node = markdownToDoc('<div>hi</div>\n\na <b>b</b>\n');
    expect(docToText(node)).toBe('<div>hi</div>\n\na <b>b</b>');
  });

  it('produces documents that satisfy the schema', () => {
    const node = markdownToDoc('# T\n\n- [ ] a\n\n| x |\n|---|\n| y |\n\n> q\n\n1. z\n');
    expect(() => node.check()).not.toThrow();
    expect(node.type.schema).toBe(docSchema);
  });
});

describe('docToText', () => {
  it('separates blocks with blank lines and keeps line breaks', () => {
    const node = markdownToDoc('# Title\n\nOne **two**\\\nthree\n\n- a\n- b\n\n| h |\n|---|\n| c |\n\n```\ncode\n```\n\n---\n\n![alt](x.png)\n');
    expect(docToText(node)).toBe('Title\n\nOne two\nthree\n\na\n\nb\n\nh\n\nc\n\ncode\n\nalt');
  });
});
