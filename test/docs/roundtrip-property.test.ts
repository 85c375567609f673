import { describe, expect, it } from 'vitest';
import type { Node as PMNode } from 'prosemirror-model';
import { docFromJSON, docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';

/**
 * Editor-made documents must survive Markdown: random documents full of
 * Markdown punctuation, marks, mentions, images, lists, quotes, tables and
 * code go to Markdown and back unchanged. Generated inside the limits
 * docs/MARKDOWN.md states: no trailing hard breaks or breaks in headings, no
 * whitespace at the edges of a marked run, and bold/italic/strike ranges that
 * nest rather than cross.
 */

// mulberry32: small, seedable, good enough to spread cases.
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown>;

function generator(seed: number) {
  const rnd = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)];
  const chars = [...'abcxyz 0123*_`[]()<>&#!\\|~-+=.:"\'@é中'];
  const word = () => Array.from({ length: 1 + Math.floor(rnd() * 7) }, () => pick(chars)).join('');
  const link = () => ({ type: 'link', attrs: { href: pick(['https://x.test/a', 'https://x.test/b_(c)', '/d e', 'mailto:a@b.c']), title: pick([null, 'T "q"']) } });
  const markSets = [[], [], [], [{ type: 'bold' }], [{ type: 'italic' }], [{ type: 'strike' }], [{ type: 'code' }], [link()], [link(), { type: 'bold' }], [{ type: 'italic' }, { type: 'code' }]];

  function inline(): Json[] {
    const out: Json[] = [];
    const count = 1 + Math.floor(rnd() * 5);
    for (let i = 0; i < count; i++) {
      const r = rnd();
      if (r < 0.08 && out.length > 0) out.push({ type: 'hardBreak' });
      else if (r < 0.15) out.push({ type: 'mention', attrs: { kind: pick(['user', 'agent']), id: word(), label: word() } });
      else if (r < 0.2) out.push({ type: 'image', attrs: { src: `img/${word()}`, alt: pick([null, word()]), title: pick([null, word()]) } });
      else {
        const marks = pick(markSets);
        const text = marks.length > 0 || out.length === 0 ? word().trim() || 'w' : word();
        out.push({ type: 'text', text, marks });
      }
    }
    while (out.length > 0 && out[out.length - 1].type === 'hardBreak') out.pop();
    return out;
  }

  const paragraph = (): Json => ({ type: 'paragraph', content: inline() });
  const item = (depth: number, type = 'listItem'): Json => ({
    type,
    ...(type === 'taskItem' ? { attrs: { checked: rnd() < 0.5 } } : {}),
    content: rnd() < 0.3 ? [paragraph(), block(depth + 1)] : [paragraph()],
  });
  const cells = (type: string, aligns: Array<string | null>): Json => ({
    type: 'tableRow',
    content: aligns.map((align) => ({ type, attrs: { align }, content: [{ type: 'paragraph', content: inline().filter((n) => n.type !== 'hardBreak') }] })),
  });

  function block(depth: number): Json {
    const r = rnd();
    if (depth > 2 || r < 0.35) return paragraph();
    if (r < 0.45) return { type: 'heading', attrs: { level: 1 + Math.floor(rnd() * 6) }, content: inline().filter((n) => n.type !== 'hardBreak') };
    if (r < 0.52) return { type: 'codeBlock', attrs: { language: pick([null, 'ts', 'a`b']) }, content: [{ type: 'text', text: `${word()}\n\`\`\`\n${word()}` }] };
    if (r < 0.6) return { type: 'blockquote', content: [block(depth + 1), block(depth + 1)] };
    if (r < 0.68) return { type: 'bulletList', content: [item(depth), item(depth)] };
    if (r < 0.75) return { type: 'orderedList', attrs: { start: pick([1, 3, 10]) }, content: [item(depth), item(depth)] };
    if (r < 0.82) return { type: 'taskList', content: [item(depth, 'taskItem'), item(depth, 'taskItem')] };
    if (r < 0.88) return { type: 'horizontalRule' };
    const aligns = [pick([null, 'left']), pick([null, 'center', 'right'])];
    return { type: 'table', content: [cells('tableHeader', aligns), cells('tableCell', aligns)] };
  }

  return () => docFromJSON({ type: 'doc', content: [block(0), block(0), block(0)] });
}

function firstDifference(a: PMNode, b: PMNode): string {
  for (let i = 0; i < Math.max(a.childCount, b.childCount); i++) {
    const left = a.maybeChild(i);
    const right = b.maybeChild(i);
    if (!left || !right || !left.eq(right)) return `block ${i}: ${JSON.stringify(left?.toJSON())} became ${JSON.stringify(right?.toJSON())}`;
  }
  return 'no difference';
}

describe('random editor documents survive Markdown', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: 300 documents read back identical`, () => {
      const next = generator(seed);
      for (let n = 0; n < 300; n++) {
        const doc = next();
        const markdown = docToMarkdown(doc);
        const back = markdownToDoc(markdown);
        if (!back.eq(doc)) expect.fail(`document ${n}\n${markdown}\n${firstDifference(doc, back)}`);
        expect(docToMarkdown(back)).toBe(markdown);
      }
    });
  }
});
