import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { ClockRanges, principalKey } from '../../src/model/attribution';
import { docAuthorship } from '../../src/model/doc/attribution';
import { appendBlocks, readDocBody, replaceDocBody } from '../../src/model/doc/body';
import { docToText, markdownToDoc } from '../../src/model/doc/markdown';
import { docTextPositions } from '../../src/model/doc/text';

/**
 * The pure walk: spans from a body's Y items and a map of clock ranges built
 * from the updates that made them, always covering `docToText` exactly.
 */

function recordingDoc() {
  const doc = new Y.Doc();
  const ranges = new ClockRanges();
  let author: string | null = null;
  doc.on('update', (update: Uint8Array) => ranges.claimUpdate(update, author));
  return {
    doc,
    ranges,
    as(who: string | null, change: () => void) {
      author = who;
      change();
      author = null;
    },
  };
}

const RICH = [
  '# Title with *emphasis*\n\nA paragraph with a [link](https://example.com), `code` and a hard  \nbreak.\n',
  '- one\n- two\n  - nested\n\n> quoted text\n\n```js\nconst x = 1;\n```\n',
  '| a | b |\n| - | - |\n| cell one | cell two |\n\n![alt text](https://example.com/i.png)\n\n   \n\nlast',
];

describe('docAuthorship', () => {
  it('covers the text read exactly, for every kind of block', () => {
    for (const markdown of RICH) {
      const r = recordingDoc();
      r.as('user:ada', () => replaceDocBody(r.doc, markdownToDoc(markdown), 'x'));
      const spans = docAuthorship(r.doc, r.ranges.lookup);
      expect(spans.map((s) => s.text).join('')).toBe(docToText(readDocBody(r.doc)));
      expect(spans).toEqual([{ text: docToText(readDocBody(r.doc)), key: 'user:ada', known: true }]);
    }
  });

  it('lays the text read back onto the doc: each character at the position it comes from (the web view by author)', () => {
    for (const markdown of [...RICH, 'Ask @ben to review **today**.']) {
      const doc = markdownToDoc(markdown);
      const { text, positions } = docTextPositions(doc);
      expect(text).toBe(docToText(doc));
      expect(positions).toHaveLength(text.length);
      [...text].forEach((char, i) => {
        const pos = positions[i]!;
        if (pos < 0) return expect(char).toBe('\n');
        const node = doc.nodeAt(pos)!;
        if (node.isText) expect(doc.textBetween(pos, pos + 1)).toBe(char);
        else expect(node.isInline && node.isLeaf).toBe(true);
      });
    }
  });

  it('splits merged items by the update that made each character, and gives the blank line to the next block', () => {
    const r = recordingDoc();
    r.as('user:ada', () => replaceDocBody(r.doc, markdownToDoc('Hello'), 'x'));
    const text = (r.doc.getXmlFragment('default').get(0) as Y.XmlElement).get(0) as Y.XmlText;
    r.as('agent:bot', () => text.insert(5, ' world'));
    r.as('user:ada', () => text.insert(11, '!'));
    r.as(null, () => appendBlocks(r.doc, markdownToDoc('System note').content.content, 'x'));
    r.as('agent:bot', () => appendBlocks(r.doc, markdownToDoc('By the bot').content.content, 'x'));
    const spans = docAuthorship(r.doc, r.ranges.lookup);
    expect(spans).toEqual([
      { text: 'Hello', key: 'user:ada', known: true },
      { text: ' world', key: 'agent:bot', known: true },
      { text: '!', key: 'user:ada', known: true },
      { text: '\n\nSystem note', key: null, known: true },
      { text: '\n\nBy the bot', key: 'agent:bot', known: true },
    ]);
    expect(spans.map((s) => s.text).join('')).toBe(docToText(readDocBody(r.doc)));
  });

  it('lets the first update to bring an item keep it, and marks items no update names as unknown', () => {
    const ranges = new ClockRanges();
    ranges.claim(7, 0, 10, 'user:a');
    ranges.claim(7, 5, 20, 'user:b');
    ranges.claim(7, 30, 40, 'user:a');
    ranges.claim(7, 0, 50, principalKey('agent', 'c'));
    expect(ranges.ranges()).toEqual([
      { client: 7, from: 0, to: 10, key: 'user:a' },
      { client: 7, from: 10, to: 20, key: 'user:b' },
      { client: 7, from: 20, to: 30, key: 'agent:c' },
      { client: 7, from: 30, to: 40, key: 'user:a' },
      { client: 7, from: 40, to: 50, key: 'agent:c' },
    ]);
    expect(ranges.lookup(8, 3)).toEqual({ key: null, known: false, end: Number.POSITIVE_INFINITY });
    const doc = new Y.Doc();
    replaceDocBody(doc, markdownToDoc('Nobody logged this'), 'x');
    expect(docAuthorship(doc, ranges.lookup)).toEqual([{ text: 'Nobody logged this', key: null, known: false }]);
  });

  it('leaves open suggested insertions out unless asked, as the text read does, and keeps suggested deletions', () => {
    const r = recordingDoc();
    r.as('user:ada', () => replaceDocBody(r.doc, markdownToDoc('Plain text here.'), 'x'));
    const text = (r.doc.getXmlFragment('default').get(0) as Y.XmlElement).get(0) as Y.XmlText;
    const author = { id: 'sug_1', authorType: 'agent', authorId: 'bot', authorName: 'bot', at: '2026-11-26T00:00:00.000Z' };
    r.as('agent:bot', () => {
      text.insert(5, ' suggested', { suggestInsert: author });
      text.format(16, 4, { suggestDelete: author });
    });
    expect(docAuthorship(r.doc, r.ranges.lookup)).toEqual([{ text: 'Plain text here.', key: 'user:ada', known: true }]);
    expect(docAuthorship(r.doc, r.ranges.lookup, { suggestions: 'include' })).toEqual([
      { text: 'Plain', key: 'user:ada', known: true },
      { text: ' suggested', key: 'agent:bot', known: true },
      { text: ' text here.', key: 'user:ada', known: true },
    ]);
  });
});
