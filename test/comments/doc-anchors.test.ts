import { describe, expect, it } from 'vitest';
import { initProseMirrorDoc, relativePositionToAbsolutePosition } from 'y-prosemirror';
import * as Y from 'yjs';
import { markdownToDoc } from '../../src/model/doc/markdown.js';
import { docSchema } from '../../src/model/doc/schema.js';
import { anchorDocRange, anchorTextDrifted, DocAnchorError, resolveDocAnchor } from '../../src/sync/doc-anchors.js';
import { bodyFragment, readDocBody, replaceDocBody } from '../../src/model/doc/body.js';

/**
 * Doc-range anchors in isolation: ProseMirror positions of the body as the
 * server reads it, to Yjs relative positions and back, through concurrent
 * edits on another replica.
 */

const SAMPLES = [
  'Hello world',
  '# Title\n\nFirst paragraph with **bold** and *italic* text.\n\nSecond one.',
  '- one\n- two\n  - nested **deep**\n- three\n\n1. a\n2. b',
  '> quoted\n> lines\n\n```ts\nconst x = 1;\n```\n\n---\n\nafter rule',
  '| a | b |\n| - | - |\n| cell one | cell **two** |\n\n- [ ] task\n- [x] done',
  'Line one  \nline two with ![alt text](https://example.com/i.png) image and a [link](https://example.com).',
  'Emoji 👩‍💻 and 𝄞 before the target words.',
];

function docFrom(markdown: string): Y.Doc {
  const ydoc = new Y.Doc();
  replaceDocBody(ydoc, markdownToDoc(markdown), 'seed');
  return ydoc;
}

function replicaOf(ydoc: Y.Doc): Y.Doc {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(ydoc));
  return copy;
}

function sync(from: Y.Doc, to: Y.Doc) {
  Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)));
}

/** Inserts text at the start of the first text run of the body (what a sync client typing there does). */
function typeAtStartOfFirstText(ydoc: Y.Doc, text: string) {
  const walk = (node: Y.XmlElement | Y.XmlFragment): Y.XmlText | null => {
    for (const child of node.toArray()) {
      if (child instanceof Y.XmlText) return child;
      if (child instanceof Y.XmlElement) {
        const found = walk(child);
        if (found) return found;
      }
    }
    return null;
  };
  walk(bodyFragment(ydoc))!.insert(0, text);
}

describe('doc-range anchors', () => {
  it('every position of every sample round-trips, agreeing with y-prosemirror positions', () => {
    for (const markdown of SAMPLES) {
      const ydoc = docFrom(markdown);
      const body = readDocBody(ydoc);
      const { mapping } = initProseMirrorDoc(bodyFragment(ydoc), docSchema);
      expect(initProseMirrorDoc(bodyFragment(ydoc), docSchema).doc.eq(body), markdown).toBe(true);
      for (let pos = 0; pos <= body.content.size; pos++) {
        const { stored } = anchorDocRange(ydoc, pos, pos);
        const resolved = resolveDocAnchor(ydoc, stored)!;
        expect(resolved.from, `${markdown} @${pos}`).toBe(pos);
        expect(resolved.to, `${markdown} @${pos}`).toBe(pos);
        // y-prosemirror reads our stored positions to the same place with an editor's mapping.
        const start = Y.decodeRelativePosition(new Uint8Array(Buffer.from(stored.start, 'base64')));
        expect(relativePositionToAbsolutePosition(ydoc, bodyFragment(ydoc), start, mapping), `${markdown} @${pos}`).toBe(pos);
      }
    }
  });

  it('spans the same text as the body between the positions', () => {
    const ydoc = docFrom('# Title\n\nThe quick brown fox.\n\n- item *one*\n- item two');
    const body = readDocBody(ydoc);
    // Positions are not text offsets: they count node boundaries too.
    let start = -1;
    body.descendants((node, pos) => {
      if (node.isText && node.text!.includes('quick brown')) start = pos + node.text!.indexOf('quick brown');
    });
    const { text } = anchorDocRange(ydoc, start, start + 'quick brown'.length);
    expect(text).toBe('quick brown');
    const all = anchorDocRange(ydoc, 0, body.content.size).text;
    expect(all).toBe('Title\nThe quick brown fox.\nitem one\nitem two');
  });

  it('follows text typed before it on another replica, and keeps the same words', () => {
    const server = docFrom('Intro line.\n\nThe target words are here.');
    const body = readDocBody(server);
    let start = -1;
    body.descendants((node, pos) => {
      if (node.isText && node.text!.includes('target words')) start = pos + node.text!.indexOf('target words');
    });
    const { stored, text } = anchorDocRange(server, start, start + 'target words'.length);
    expect(text).toBe('target words');

    const client = replicaOf(server);
    typeAtStartOfFirstText(client, 'Prepended text. ');
    sync(client, server);
    const moved = resolveDocAnchor(server, stored)!;
    expect(moved.from).toBe(start + 'Prepended text. '.length);
    expect(moved.text).toBe('target words');
    expect(anchorTextDrifted(text, moved.text)).toBe(false);
  });

  it('text typed before it stays outside; text typed inside it or at its end is part of it and counts as drift', () => {
    const ydoc = docFrom('aaa bbb ccc');
    const { stored } = anchorDocRange(ydoc, 5, 8); // "bbb"
    expect(resolveDocAnchor(ydoc, stored)!.text).toBe('bbb');
    const run = bodyFragment(ydoc).get(0) as Y.XmlElement;
    const text = run.get(0) as Y.XmlText;
    text.insert(4, 'Y'); // just before "bbb"
    expect(resolveDocAnchor(ydoc, stored)!.text).toBe('bbb');
    text.insert(6, 'Z'); // inside: "bZbb"
    text.insert(9, 's'); // at its end: "bZbbs"
    const drifted = resolveDocAnchor(ydoc, stored)!;
    expect(drifted.text).toBe('bZbbs');
    expect(anchorTextDrifted('bbb', drifted.text)).toBe(true);
  });

  it('words typed over it (on another replica) read as their replacement', () => {
    const server = docFrom('The date is Friday the 13th.');
    let start = -1;
    readDocBody(server).descendants((node, pos) => {
      if (node.isText) start = pos + node.text!.indexOf('Friday');
    });
    const { stored } = anchorDocRange(server, start, start + 6);
    const client = replicaOf(server);
    const text = (bodyFragment(client).get(0) as Y.XmlElement).get(0) as Y.XmlText;
    const at = text.toString().indexOf('Friday');
    // What an editor does when "Friday" is selected and "Monday" typed over it.
    client.transact(() => {
      text.delete(at, 6);
      text.insert(at, 'M');
    });
    text.insert(at + 1, 'onday');
    sync(client, server);
    const resolved = resolveDocAnchor(server, stored)!;
    expect(resolved).toEqual({ from: start, to: start + 6, text: 'Monday' });
    expect(anchorTextDrifted('Friday', resolved.text)).toBe(true);
  });

  it('collapses to where its block was when the whole block is deleted, even after a reload', () => {
    const ydoc = docFrom('First.\n\nSecond block here.\n\nThird.');
    const body = readDocBody(ydoc);
    let start = -1;
    body.descendants((node, pos) => {
      if (node.isText && node.text === 'Second block here.') start = pos;
    });
    const { stored } = anchorDocRange(ydoc, start, start + 6);
    bodyFragment(ydoc).delete(1, 1);
    const reloaded = new Y.Doc();
    Y.applyUpdateV2(reloaded, Y.encodeStateAsUpdateV2(ydoc));
    for (const doc of [ydoc, reloaded]) {
      const resolved = resolveDocAnchor(doc, stored)!;
      expect(resolved.from).toBe(resolved.to);
      expect(resolved.from).toBe('First.'.length + 2);
      expect(resolved.text).toBe('');
    }
  });

  it('whitespace alone is not drift', () => {
    expect(anchorTextDrifted('one\ntwo', 'one two')).toBe(false);
    expect(anchorTextDrifted('one two', 'one  two ')).toBe(false);
    expect(anchorTextDrifted('one two', 'one too')).toBe(true);
  });

  it('refuses positions outside the body and inverted ranges', () => {
    const ydoc = docFrom('Short.');
    const size = readDocBody(ydoc).content.size;
    expect(() => anchorDocRange(ydoc, 0, size + 1)).toThrow(DocAnchorError);
    expect(() => anchorDocRange(ydoc, -1, 2)).toThrow(DocAnchorError);
    expect(() => anchorDocRange(ydoc, 3, 2)).toThrow(/after/);
  });

  it('anchors in an empty body', () => {
    const ydoc = new Y.Doc();
    const { stored, text } = anchorDocRange(ydoc, 0, 2);
    expect(text).toBe('');
    replaceDocBody(ydoc, markdownToDoc('Now there is text.'), 'later');
    const resolved = resolveDocAnchor(ydoc, stored)!;
    expect(resolved.from).toBeGreaterThanOrEqual(0);
    expect(resolved.to).toBeLessThanOrEqual(readDocBody(ydoc).content.size);
  });
});
