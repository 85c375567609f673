import { describe, expect, it } from 'vitest';
import spec from 'commonmark-spec';
import { docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';
import { runFidelity, sectionRate, UNCLAIMED_SECTIONS } from './fidelity.js';

/**
 * Measured pass rates rounded down to the percent (CommonMark 0.31.2 spec,
 * commonmark.js renderer). Raise a number when a change improves it; a drop
 * is a regression. Why the rest fail is in docs/MARKDOWN.md.
 */
const MIN_SECTION_RATE: Record<string, number> = {
  Tabs: 100,
  'Backslash escapes': 92,
  'Entity and numeric character references': 94,
  Precedence: 100,
  'Thematic breaks': 100,
  'ATX headings': 100,
  'Setext headings': 100,
  'Indented code blocks': 91,
  'Fenced code blocks': 100,
  'Link reference definitions': 96,
  Paragraphs: 100,
  'Blank lines': 100,
  'Block quotes': 100,
  'List items': 100,
  Lists: 61,
  Inlines: 100,
  'Code spans': 95,
  'Emphasis and strong emphasis': 83,
  Links: 93,
  Images: 100,
  Autolinks: 100,
  'Hard line breaks': 86,
  'Soft line breaks': 100,
  'Textual content': 100,
};
const MIN_CLAIMED_RATE = 92;
const MIN_OVERALL_RATE = 84;

const { results, sections } = runFidelity();

describe('CommonMark round trip (Markdown -> ProseMirror -> Markdown, compared as HTML)', () => {
  it('reads every spec example', () => {
    expect(spec.tests.length).toBeGreaterThan(600);
    expect(results).toHaveLength(spec.tests.length);
  });

  it('has a threshold for every claimed section of the spec', () => {
    const claimed = sections.map((s) => s.section).filter((name) => !UNCLAIMED_SECTIONS.has(name));
    expect(Object.keys(MIN_SECTION_RATE).sort()).toEqual([...claimed].sort());
  });

  for (const section of sections.filter((s) => !UNCLAIMED_SECTIONS.has(s.section))) {
    it(`${section.section}: at least ${MIN_SECTION_RATE[section.section]}% survive`, () => {
      const rate = sectionRate(section);
      expect(rate, `failing examples: ${section.failed.join(', ')}`).toBeGreaterThanOrEqual(MIN_SECTION_RATE[section.section] ?? 100);
    });
  }

  it(`claimed sections together: at least ${MIN_CLAIMED_RATE}%`, () => {
    const claimed = sections.filter((s) => !UNCLAIMED_SECTIONS.has(s.section));
    const passed = claimed.reduce((n, s) => n + s.passed, 0);
    const total = claimed.reduce((n, s) => n + s.total, 0);
    expect(sectionRate({ passed, total })).toBeGreaterThanOrEqual(MIN_CLAIMED_RATE);
  });

  it(`all examples, raw HTML included: at least ${MIN_OVERALL_RATE}%`, () => {
    const passed = results.filter((r) => r.passed).length;
    expect(sectionRate({ passed, total: results.length })).toBeGreaterThanOrEqual(MIN_OVERALL_RATE);
  });

  it('serializing is a fixed point: Markdown we wrote reads back to the same Markdown', () => {
    const unstable = results
      .filter((r) => docToMarkdown(markdownToDoc(r.roundTripped)) !== r.roundTripped)
      .map((r) => r.example.number);
    expect(unstable).toEqual([]);
  });
});
