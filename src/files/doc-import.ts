import mammoth from 'mammoth';
import { DOMParser as PMDOMParser } from 'prosemirror-model';
import { docSchema } from '../model/doc/schema';
import { UnreadableFileError, type DocxImages, type ParsedImport } from './doc-parsed';
import { DOCX_STYLES } from './doc-docx';
import { sanitizeHtmlForImport } from './sanitize';

/**
 * Files turned into doc bodies: HTML (sanitised as html surfaces are, then
 * read by the schema's own parse rules) and Word files (mammoth turns them
 * into HTML, which then goes the same way). What the doc model cannot hold
 * is counted and said in `warnings`: underline, colours, superscripts,
 * media, what the sanitiser removed, Word's own remarks. Images keep their
 * `src` here (a `data:` URL, a Word file's `docx-image:N`, a path or a
 * URL); the caller stores them (src/domain/doc-io.ts).
 */

/** Elements the sanitiser takes out of every page that are not content anyone loses. */
const HARMLESS_REMOVALS = new Set(['<remove>', '<html>', '<head>', '<body>', '<meta>', '<title>', '<#comment>', '<link>']);

const UNDERLINED = new Set(['U', 'INS']);
const SCRIPT_POSITION = new Set(['SUP', 'SUB']);
const COLOURED = new Set(['MARK', 'FONT']);
const MEDIA = new Set(['VIDEO', 'AUDIO', 'IFRAME', 'EMBED', 'OBJECT', 'CANVAS', 'SVG', 'MATH']);

/** Counts what the doc model has no place for, as one warning per kind, in one walk over the elements (a selector per kind walked a long page a dozen times). */
function lossesIn(root: HTMLElement): string[] {
  let underlined = 0;
  let scripted = 0;
  let coloured = 0;
  let media = 0;
  let styled = 0;
  const walker = root.ownerDocument.createTreeWalker(root, 1 /* NodeFilter.SHOW_ELEMENT */);
  for (let node = walker.nextNode() as Element | null; node; node = walker.nextNode() as Element | null) {
    const tag = node.tagName.toUpperCase();
    const style = node.getAttribute('style') ?? '';
    if (UNDERLINED.has(tag) || /text-decoration[^;]*underline/i.test(style)) underlined += 1;
    if (SCRIPT_POSITION.has(tag)) scripted += 1;
    if (COLOURED.has(tag) || /(^|;)\s*(color|background(-color)?)\s*:/i.test(style)) coloured += 1;
    if (MEDIA.has(tag)) media += 1;
    if (tag === 'STYLE' || /font-(size|family)/i.test(style)) styled += 1;
  }
  const losses: Array<[number, string]> = [
    [underlined, 'underlined text is kept without its underline'],
    [scripted, 'superscript and subscript are kept as plain text'],
    [coloured, 'text colours and highlighting are not kept'],
    [media, 'embedded media (video, audio, frames, drawings, formulas) is not kept'],
    [styled, 'fonts, sizes and page styling are not kept'],
  ];
  return losses.filter(([n]) => n > 0).map(([n, text]) => `${n} × ${text}`);
}

function removalWarning(removed: string[]): string[] {
  const counts = new Map<string, number>();
  for (const name of removed) if (!HARMLESS_REMOVALS.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  if (counts.size === 0) return [];
  const list = [...counts].map(([name, n]) => (n > 1 ? `${name} (${n})` : name)).join(', ');
  return [`removed as unsafe: ${list}`];
}

/** `<a href="mention:kind/id">@label</a>` (what the Word export writes for a mention) becomes the mention again. */
function mentionsBack(root: HTMLElement) {
  for (const link of root.querySelectorAll<HTMLAnchorElement>('a[href^="mention:"]')) {
    const match = /^mention:([^/]+)\/(.+)$/.exec(link.getAttribute('href') ?? '');
    const kind = match ? decodeURIComponent(match[1]!) : '';
    if (!match || (kind !== 'user' && kind !== 'agent')) continue;
    const span = root.ownerDocument.createElement('span');
    span.setAttribute('data-type', 'mention');
    span.setAttribute('data-kind', kind);
    span.setAttribute('data-id', decodeURIComponent(match[2]!));
    span.setAttribute('data-label', (link.textContent ?? '').replace(/^@/, ''));
    link.replaceWith(span);
  }
}

/** Reads sanitised HTML into a doc with the schema's parse rules; `prepare` may reshape the DOM first. */
function readHtml(source: string, prepare?: (root: HTMLElement) => void): ParsedImport {
  const { body: root, removed } = sanitizeHtmlForImport(source);
  prepare?.(root);
  mentionsBack(root);
  const warnings = [...removalWarning(removed), ...lossesIn(root)];
  const doc = PMDOMParser.fromSchema(docSchema).parse(root);
  return { doc, warnings };
}

export function htmlToDoc(source: string): ParsedImport {
  return readHtml(source);
}

/** Word's styles that have no HTML element by default, mapped to what the doc holds (the Word export writes them). */
const DOCX_STYLE_MAP = [
  `p[style-name='${DOCX_STYLES.codeBlock}'] => pre:separator('\\n')`,
  `r[style-name='${DOCX_STYLES.code}'] => code`,
  `p[style-name='${DOCX_STYLES.quote}'] => blockquote > p:fresh`,
  `p[style-name='Intense Quote'] => blockquote > p:fresh`,
  `p[style-name='${DOCX_STYLES.rule}'] => hr`,
  `p[style-name='Title'] => h1:fresh`,
  `p[style-name='Subtitle'] => h2:fresh`,
  'u => u',
  'strike => s',
];

/**
 * Footnote and endnote markers become their number as text (`[1]`), the
 * notes stay as the numbered list Word's converter puts at the end, without
 * their back links; a bullet list whose items all start with a ballot box
 * (what the Word export writes for a task list) becomes a task list.
 */
function reshapeWordHtml(root: HTMLElement) {
  for (const back of root.querySelectorAll('a[href^="#footnote-ref-"], a[href^="#endnote-ref-"]')) back.remove();
  for (const marker of root.querySelectorAll('a[href^="#footnote-"], a[href^="#endnote-"]')) {
    const holder = marker.parentElement?.tagName === 'SUP' ? marker.parentElement : marker;
    holder.replaceWith(root.ownerDocument.createTextNode(marker.textContent ?? ''));
  }
  for (const list of root.querySelectorAll('ul')) {
    const items = [...list.children].filter((child) => child.tagName === 'LI');
    if (items.length === 0 || !items.every((item) => /^[☐☒☑]\s?/.test(item.textContent ?? ''))) continue;
    list.setAttribute('data-type', 'taskList');
    for (const item of items) {
      const checked = /^[☒☑]/.test(item.textContent ?? '');
      item.setAttribute('data-type', 'taskItem');
      item.setAttribute('data-checked', String(checked));
      stripLeadingBox(item);
    }
  }
}

function stripLeadingBox(item: Element) {
  const walker = item.ownerDocument.createTreeWalker(item, 4 /* NodeFilter.SHOW_TEXT */);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent) continue;
    node.textContent = node.textContent.replace(/^[☐☒☑]\s?/, '');
    return;
  }
}

/** The remarks of Word's converter worth a person's attention, deduplicated. */
function wordWarnings(messages: Array<{ type: string; message: string }>): string[] {
  const seen = new Set<string>();
  for (const { message } of messages) {
    // Styles we do not map only lose their look, which the loss report already covers for what matters.
    if (/^Unrecognised (paragraph|run) style/.test(message)) continue;
    seen.add(`Word: ${message}`);
  }
  return [...seen];
}

/** A Word file (.docx) as a doc; its images come back in `images`. Bytes that are not a Word file throw UnreadableFileError. */
export async function docxToDoc(bytes: Buffer): Promise<ParsedImport & { images: DocxImages }> {
  const images: DocxImages = new Map();
  let result: Awaited<ReturnType<typeof mammoth.convertToHtml>>;
  try {
    result = await mammoth.convertToHtml(
      { buffer: bytes },
      {
        styleMap: DOCX_STYLE_MAP,
        externalFileAccess: false,
        convertImage: mammoth.images.imgElement(async (image) => {
          const src = `docx-image:${images.size}`;
          images.set(src, { contentType: image.contentType, read: () => image.readAsBuffer() });
          return { src };
        }),
      },
    );
  } catch (error) {
    throw new UnreadableFileError(`This is not a Word file that can be read (${error instanceof Error ? error.message.split('\n')[0] : 'unknown error'}).`);
  }
  const parsed = readHtml(result.value, reshapeWordHtml);
  return { ...parsed, warnings: [...wordWarnings(result.messages), ...parsed.warnings], images };
}
