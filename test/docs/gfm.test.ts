import { describe, expect, it } from 'vitest';
import MarkdownIt from 'markdown-it';
import type { Node as PMNode } from 'prosemirror-model';
import { docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';

// GitHub-flavoured rendering (tables, strikethrough) to compare before and after.
const gfm = new MarkdownIt('default');

function roundTrip(markdown: string): { doc: PMNode; out: string } {
  const doc = markdownToDoc(markdown);
  return { doc, out: docToMarkdown(doc) };
}

function expectStableRoundTrip(markdown: string): PMNode {
  const { doc, out } = roundTrip(markdown);
  expect(gfm.render(out)).toBe(gfm.render(markdown));
  expect(markdownToDoc(out).eq(doc)).toBe(true);
  expect(docToMarkdown(markdownToDoc(out))).toBe(out);
  return doc;
}

function cellAttrs(doc: PMNode, row: number): Array<{ type: string; align: unknown }> {
  const cells: Array<{ type: string; align: unknown }> = [];
  doc.firstChild!.child(row).forEach((cell) => cells.push({ type: cell.type.name, align: cell.attrs.align }));
  return cells;
}

describe('GFM tables', () => {
  const table = [
    '| Name | Qty | Note | Plain |',
    '| :-- | --: | :-: | --- |',
    '| *widget* | 1 | `a\\|b` | [link](https://example.com) |',
    '| gadget |  | x \\| y | **bold** |',
    '',
  ].join('\n');

  it('parses header, body cells and column alignment', () => {
    const doc = markdownToDoc(table);
    expect(doc.firstChild!.type.name).toBe('table');
    expect(cellAttrs(doc, 0)).toEqual([
      { type: 'tableHeader', align: 'left' },
      { type: 'tableHeader', align: 'right' },
      { type: 'tableHeader', align: 'center' },
      { type: 'tableHeader', align: null },
    ]);
    expect(cellAttrs(doc, 1).map((c) => c.type)).toEqual(['tableCell', 'tableCell', 'tableCell', 'tableCell']);
    // Tiptap cells hold blocks, so the inline content sits in a paragraph.
    const codeCell = doc.firstChild!.child(1).child(2);
    expect(codeCell.firstChild!.type.name).toBe('paragraph');
    expect(codeCell.textContent).toBe('a|b');
    expect(doc.firstChild!.child(2).child(2).textContent).toBe('x | y');
  });

  it('serializes to the canonical pipe table and round-trips', () => {
    expect(docToMarkdown(markdownToDoc(table))).toBe(table);
    expectStableRoundTrip(table);
  });

  it('pads short rows and ignores cells beyond the header', () => {
    const { out } = roundTrip('| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |\n');
    expect(out).toBe('| a | b |\n| --- | --- |\n| 1 |  |\n| 1 | 2 |\n');
  });

  it('keeps a table inside a list item', () => {
    expectStableRoundTrip('- item\n\n  | a | b |\n  | --- | --- |\n  | 1 | 2 |\n');
  });

  it('flattens cell content GFM cannot hold (spans, breaks, several blocks)', () => {
    const doc = markdownToDoc('| a | b |\n|---|---|\n| 1 | 2 |\n');
    const json = doc.toJSON();
    const header = json.content[0].content[0].content;
    header[0].attrs.colspan = 2;
    header.pop();
    const body = json.content[0].content[1].content[0];
    body.content = [
      { type: 'paragraph', content: [{ type: 'text', text: 'one' }, { type: 'hardBreak' }, { type: 'text', text: 'two' }] },
      { type: 'paragraph', content: [{ type: 'text', text: 'three' }] },
    ];
    const out = docToMarkdown(doc.type.schema.nodeFromJSON(json));
    expect(out).toBe('| a |  |\n| --- | --- |\n| one two three | 2 |\n');
  });
});

describe('GFM task lists', () => {
  it('parses checked and unchecked items, nested task lists', () => {
    const doc = expectStableRoundTrip('- [ ] todo\n- [x] done\n  - [ ] nested\n');
    expect(doc.toJSON()).toEqual({
      type: 'doc',
      content: [
        {
          type: 'taskList',
          content: [
            { type: 'taskItem', attrs: { checked: false }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'todo' }] }] },
            {
              type: 'taskItem',
              attrs: { checked: true },
              content: [
                { type: 'paragraph', content: [{ type: 'text', text: 'done' }] },
                {
                  type: 'taskList',
                  content: [{ type: 'taskItem', attrs: { checked: false }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'nested' }] }] }],
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it('writes `[x]` for an upper-case `[X]` and keeps an empty task', () => {
    expect(roundTrip('- [X] Done\n- [ ]\n').out).toBe('- [x] Done\n- [ ] \n');
    expect(markdownToDoc('- [ ]\n').firstChild!.type.name).toBe('taskList');
  });

  it('splits a list mixing tasks and plain items into runs that stay separate', () => {
    const { doc, out } = roundTrip('- plain\n- [ ] task\n- [x] task 2\n- plain again\n');
    expect(doc.content.content.map((n) => n.type.name)).toEqual(['bulletList', 'taskList', 'bulletList']);
    expect(out).toBe('- plain\n\n* [ ] task\n* [x] task 2\n\n- plain again\n');
    expect(markdownToDoc(out).eq(doc)).toBe(true);
  });

  it('leaves checkbox text in ordered lists and mid-paragraph alone', () => {
    const doc = markdownToDoc('1. [ ] not a task\n\nsee [x] here\n');
    expect(doc.firstChild!.type.name).toBe('orderedList');
    expect(doc.firstChild!.textContent).toBe('[ ] not a task');
    expect(markdownToDoc(docToMarkdown(doc)).eq(doc)).toBe(true);
  });

  it('keeps blocks under a task item', () => {
    expectStableRoundTrip('- [ ] first\n\n  more detail\n\n- [x] second\n');
  });
});

describe('GFM strikethrough', () => {
  it('parses ~~text~~ as the strike mark and round-trips it', () => {
    const doc = expectStableRoundTrip('keep ~~drop~~ keep\n');
    const struck = doc.firstChild!.child(1);
    expect(struck.text).toBe('drop');
    expect(struck.marks.map((m) => m.type.name)).toEqual(['strike']);
  });

  it('combines with other marks', () => {
    const doc = expectStableRoundTrip('**~~both~~** and *~~it~~* and [~~l~~](/u)\n');
    expect(doc.firstChild!.firstChild!.marks.map((m) => m.type.name)).toEqual(['bold', 'strike']);
  });

  it('escapes literal tildes so they stay text', () => {
    const doc = markdownToDoc('about \\~5 and ~~~ x\n');
    expect(doc.textContent).toBe('about ~5 and ~~~ x');
    expect(markdownToDoc(docToMarkdown(doc)).eq(doc)).toBe(true);
  });
});
