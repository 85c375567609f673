/**
 * CommonMark round-trip fidelity: Markdown -> ProseMirror -> Markdown for
 * every spec example, judged by rendering both Markdown texts to HTML with the
 * reference implementation (commonmark.js).
 *
 * Run directly (`npx tsx test/docs/fidelity.ts`) to print the table that
 * docs/MARKDOWN.md reproduces.
 */
import { pathToFileURL } from 'node:url';
import spec, { type SpecExample } from 'commonmark-spec';
import { HtmlRenderer, Parser } from 'commonmark';
import { docToMarkdown, markdownToDoc } from '../../src/model/doc/markdown.js';

/** Sections about raw HTML: the schema has no HTML node, so raw HTML is kept as text. */
export const UNCLAIMED_SECTIONS = new Set(['HTML blocks', 'Raw HTML']);

const reader = new Parser();
const writer = new HtmlRenderer();

function renderHtml(markdown: string): string {
  return writer.render(reader.parse(markdown));
}

/**
 * A soft line break renders as "\n" and our paragraphs hold it as a space;
 * browsers render both the same, so newlines outside <pre> compare as spaces.
 * Nothing else is normalised.
 */
export function normalizeHtml(html: string): string {
  return html
    .split(/(<pre[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\n/g, ' ')))
    .join('')
    .trim();
}

export interface ExampleResult {
  example: SpecExample;
  roundTripped: string;
  passed: boolean;
}

export function roundTripExample(example: SpecExample): ExampleResult {
  const roundTripped = docToMarkdown(markdownToDoc(example.markdown));
  const passed = normalizeHtml(renderHtml(roundTripped)) === normalizeHtml(renderHtml(example.markdown));
  return { example, roundTripped, passed };
}

export interface SectionResult {
  section: string;
  passed: number;
  total: number;
  failed: number[];
}

export function sectionRate(s: Pick<SectionResult, 'passed' | 'total'>): number {
  return (100 * s.passed) / s.total;
}

export function runFidelity(): { results: ExampleResult[]; sections: SectionResult[] } {
  const results = spec.tests.map(roundTripExample);
  const bySection = new Map<string, SectionResult>();
  for (const r of results) {
    const s = bySection.get(r.example.section) ?? { section: r.example.section, passed: 0, total: 0, failed: [] };
    s.total++;
    if (r.passed) s.passed++;
    else s.failed.push(r.example.number);
    bySection.set(r.example.section, s);
  }
  return { results, sections: [...bySection.values()] };
}

function printReport(): void {
  const { results, sections } = runFidelity();
  const passed = results.filter((r) => r.passed).length;
  const claimed = sections.filter((s) => !UNCLAIMED_SECTIONS.has(s.section));
  const claimedTotals = claimed.reduce((a, s) => ({ passed: a.passed + s.passed, total: a.total + s.total }), { passed: 0, total: 0 });
  console.log(`overall ${passed}/${results.length} (${sectionRate({ passed, total: results.length }).toFixed(1)}%)`);
  console.log(`claimed ${claimedTotals.passed}/${claimedTotals.total} (${sectionRate(claimedTotals).toFixed(1)}%)`);
  console.log('| Section | Passed | Rate | Failing examples |\n|---|---|---|---|');
  for (const s of sections) {
    const mark = UNCLAIMED_SECTIONS.has(s.section) ? ' (not claimed)' : '';
    console.log(`| ${s.section}${mark} | ${s.passed}/${s.total} | ${sectionRate(s).toFixed(1)}% | ${s.failed.join(', ')} |`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) printReport();
