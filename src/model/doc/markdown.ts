/**
 * Markdown <-> ProseMirror for doc bodies (CommonMark + GFM tables, task
 * lists and strikethrough; mentions as `[@label](mention:kind/id)`; open
 * suggestions out as CriticMarkup `{++inserted++}` / `{--removed--}`, never in).
 * What survives a round trip, and what does not, is in docs/MARKDOWN.md.
 *
 * Browser-safe: markdown-it, prosemirror-markdown and prosemirror-model only.
 */
import MarkdownItFactory from 'markdown-it';
import type { MarkdownIt, Token } from 'markdown-it';
import { MarkdownParser, MarkdownSerializer, MarkdownSerializerState, type ParseSpec } from 'prosemirror-markdown';
import { Fragment, type Mark, type Node as PMNode } from 'prosemirror-model';
import { docSchema, CELL_ALIGNMENTS, type CellAlignment } from './schema.js';
import { formatMentionHref, inlineTokensText, trellisMarkdownRules } from './markdown-rules.js';
import {
  escapeClosingHashes,
  escapeInfoString,
  escapeInline,
  encodeTrailingWhitespace,
  escapeText,
  linkDestination,
  linkTitle,
} from './markdown-escape.js';
import { encodeFirstCharacter, settleDelimiterRun, type RunKinds } from './markdown-flanking.js';

export { docToText } from './text.js';
export { docFromJSON, DocValidationError } from './json.js';

// ================================================================= parsing

function createTokenizer(): MarkdownIt {
  // `default` = CommonMark + GFM tables + strikethrough. Raw HTML stays text:
  // the schema has no HTML node, and agents' `<tags>` must not vanish.
  const md = new MarkdownItFactory('default', { html: false, linkify: false, typographer: false });
  // Keep destinations as written (after unescaping) instead of percent-encoding
  // them: `href` is data, and renderers encode on output. validateLink still
  // drops javascript:, vbscript:, file: and data: links.
  md.normalizeLink = (url) => url;
  md.normalizeLinkText = (text) => text;
  trellisMarkdownRules(md);
  return md;
}

function cellAlignment(tok: Token): CellAlignment | null {
  const match = /text-align:\s*(\w+)/.exec(String(tok.attrGet('style') ?? ''));
  return match && (CELL_ALIGNMENTS as readonly string[]).includes(match[1]) ? (match[1] as CellAlignment) : null;
}

function fenceLanguage(tok: Token, md: MarkdownIt): string | null {
  const info = md.utils.unescapeAll(tok.info).trim();
  return info === '' ? null : info;
}

function buildParser(): MarkdownParser {
  const md = createTokenizer();
  const specs: Record<string, ParseSpec> = {
    paragraph: { block: 'paragraph' },
    heading: { block: 'heading', getAttrs: (tok) => ({ level: Number(tok.tag.slice(1)) }) },
    blockquote: { block: 'blockquote' },
    bullet_list: { block: 'bulletList' },
    ordered_list: { block: 'orderedList', getAttrs: (tok) => ({ start: Number(tok.attrGet('start') ?? 1) }) },
    list_item: { block: 'listItem' },
    task_list: { block: 'taskList' },
    task_item: { block: 'taskItem', getAttrs: (tok) => ({ checked: tok.meta?.checked === true }) },
    code_block: { block: 'codeBlock', noCloseToken: true },
    fence: { block: 'codeBlock', getAttrs: (tok) => ({ language: fenceLanguage(tok, md) }), noCloseToken: true },
    hr: { node: 'horizontalRule' },
    table: { block: 'table' },
    thead: { ignore: true },
    tbody: { ignore: true },
    tr: { block: 'tableRow' },
    th: { block: 'tableHeader', getAttrs: (tok) => ({ align: cellAlignment(tok) }) },
    td: { block: 'tableCell', getAttrs: (tok) => ({ align: cellAlignment(tok) }) },
    image: {
      node: 'image',
      getAttrs: (tok) => ({
        src: String(tok.attrGet('src') ?? ''),
        title: tok.attrGet('title') || null,
        alt: inlineTokensText(tok.children ?? []) || null,
      }),
    },
    hardbreak: { node: 'hardBreak' },
    mention: { node: 'mention', getAttrs: (tok) => tok.meta },
    em: { mark: 'italic' },
    strong: { mark: 'bold' },
    s: { mark: 'strike' },
    link: { mark: 'link', getAttrs: (tok) => ({ href: String(tok.attrGet('href') ?? ''), title: tok.attrGet('title') || null }) },
    code_inline: { mark: 'code', noCloseToken: true },
  };
  return new MarkdownParser(docSchema, md, specs);
}

const parser = buildParser();

/** Parses CommonMark + GFM into a doc node of `docSchema`. */
export function markdownToDoc(markdown: string): PMNode {
  return parser.parse(markdown);
}

// ============================================================= serializing

// Fields prosemirror-markdown keeps on its state but does not declare.
type SerializerState = MarkdownSerializerState & {
  atBlockStart: boolean;
  inAutolink?: boolean;
  inTightList: boolean;
  closed: PMNode | null;
  out: string;
  flushClose(size?: number): void;
};
type NodeSerializer = (state: SerializerState, node: PMNode, parent: PMNode, index: number) => void;

const BULLET_LIKE = new Set(['bulletList', 'taskList']);
const ORDERED = new Set(['orderedList']);
/** Marks written with `*`/`~` delimiter runs, subject to CommonMark's flanking rules. */
const DELIMITED_MARKS = new Set(['bold', 'italic', 'strike']);

/**
 * Adjacent lists of the same kind would merge on reparse, so every other one
 * switches marker (`-`/`*`, `.`/`)`), the way CommonMark separates lists.
 */
function alternates(parent: PMNode, index: number, kinds: Set<string>): boolean {
  let run = 0;
  for (let i = index - 1; i >= 0 && kinds.has(parent.child(i).type.name); i--) run++;
  return run % 2 === 1;
}

/** Whether nothing but hard breaks follows: whitespace there would be stripped on reparse. */
function endsLine(parent: PMNode, index: number): boolean {
  for (let i = index + 1; i < parent.childCount; i++) {
    if (parent.child(i).type.name !== 'hardBreak') return false;
  }
  return true;
}

/**
 * See markdown-flanking.ts. Skipped at the start of a block, where the output
 * still ends with the previous block (not yet closed off by a newline).
 */
function settle(state: SerializerState, upcoming: string | undefined, parent: PMNode, index: number): boolean {
  if (state.atBlockStart || state.closed) return false;
  return settleDelimiterRun(state, upcoming, runKinds(parent, index));
}

function isDelimited(mark: Mark): boolean {
  return DELIMITED_MARKS.has(mark.type.name);
}

/** Whether emphasis opens and/or closes between inline nodes `index - 1` and `index`. */
function runKinds(parent: PMNode, index: number): RunKinds {
  const prev = parent.maybeChild(index - 1);
  const node = parent.child(index);
  return {
    opens: node.marks.some((m) => isDelimited(m) && !(prev && m.isInSet(prev.marks))),
    closes: prev !== null && prev.marks.some((m) => isDelimited(m) && !m.isInSet(node.marks)),
  };
}

/**
 * A `!` right before `[` would turn a link or mention into an image.
 * prosemirror-markdown checks this itself but misreads `\\!` (an escaped
 * backslash, then `!`) as an escaped `!`, so count the backslashes here.
 */
function escapeTrailingBang(state: SerializerState): void {
  if (!state.out.endsWith('!') || state.closed) return;
  let backslashes = 0;
  while (state.out[state.out.length - 2 - backslashes] === '\\') backslashes++;
  if (backslashes % 2 === 0) state.out = `${state.out.slice(0, -1)}\\!`;
}

function followsHardBreak(parent: PMNode, index: number): boolean {
  return index > 0 && parent.child(index - 1).type.name === 'hardBreak';
}

function hasHardBreak(node: PMNode): boolean {
  let found = false;
  node.forEach((child) => {
    if (child.type.name === 'hardBreak') found = true;
  });
  return found;
}

function usesSetext(heading: PMNode): boolean {
  return heading.attrs.level <= 2 && hasHardBreak(heading);
}

const serializeText: NodeSerializer = (state, node, parent, index) => {
  const text = node.text ?? '';
  if (state.inAutolink) {
    state.text(text, false);
    return;
  }
  let out = escapeText(text, state.atBlockStart || followsHardBreak(parent, index));
  if (parent.type.name === 'heading' && index === parent.childCount - 1 && !usesSetext(parent)) {
    out = escapeClosingHashes(out);
  }
  if (endsLine(parent, index)) out = encodeTrailingWhitespace(out);
  if (out !== '' && settle(state, String.fromCodePoint(out.codePointAt(0)!), parent, index)) out = encodeFirstCharacter(out);
  state.text(out, false);
};

const serializeHardBreak: NodeSerializer = (state, node, parent, index) => {
  // A trailing hard break cannot be written in Markdown; drop it.
  for (let i = index + 1; i < parent.childCount; i++) {
    if (parent.child(i).type !== node.type) {
      const inAtxHeading = parent.type.name === 'heading' && !usesSetext(parent);
      if (!inAtxHeading) settle(state, '\\', parent, index);
      state.write(inAtxHeading ? ' ' : '\\\n');
      return;
    }
  }
};

const serializeHeading: NodeSerializer = (state, node) => {
  if (usesSetext(node)) {
    state.renderInline(node);
    state.ensureNewLine();
    state.write(node.attrs.level === 1 ? '===' : '---');
  } else {
    state.write(`${'#'.repeat(node.attrs.level)} `);
    state.renderInline(node);
  }
  state.closeBlock(node);
};

function longestRun(text: string, char: string): number {
  let longest = 0;
  let current = 0;
  for (const ch of text) {
    current = ch === char ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return longest;
}

/**
 * A code block's text, with its suggestions in CriticMarkup: Markdown has no
 * markup inside code, so the markers are literal there, as in CriticMarkup.
 */
function codeBlockText(node: PMNode): string {
  let text = '';
  node.forEach((child) => {
    const t = child.text ?? '';
    if (docSchema.marks.suggestInsert.isInSet(child.marks)) text += `{++${t}++}`;
    else if (docSchema.marks.suggestDelete.isInSet(child.marks)) text += `{--${t}--}`;
    else text += t;
  });
  return text;
}

const serializeCodeBlock: NodeSerializer = (state, node) => {
  const text = codeBlockText(node);
  const info: string = node.attrs.language ?? '';
  // A backtick in the info string is only allowed in a tilde fence.
  const char = info.includes('`') ? '~' : '`';
  const fence = char.repeat(Math.max(3, longestRun(text, char) + 1));
  state.write(`${fence}${escapeInfoString(info)}\n`);
  // Writing an empty string would still emit the container prefix and add a line.
  if (text !== '') state.text(text, false);
  state.ensureNewLine();
  state.write(fence);
  state.closeBlock(node);
};

const serializeBulletList: NodeSerializer = (state, node, parent, index) => {
  const marker = alternates(parent, index, BULLET_LIKE) ? '*' : '-';
  renderList(state, node, '  ', () => `${marker} `);
};

const serializeOrderedList: NodeSerializer = (state, node, parent, index) => {
  const start: number = node.attrs.start ?? 1;
  const delimiter = alternates(parent, index, ORDERED) ? ')' : '.';
  const width = String(start + node.childCount - 1).length;
  renderList(state, node, ' '.repeat(width + 2), (i) => `${String(start + i).padStart(width, ' ')}${delimiter} `);
};

function isEmptyParagraph(node: PMNode | null): boolean {
  return node !== null && node.type.name === 'paragraph' && node.childCount === 0;
}

/**
 * Whether `next` can directly follow `prev` inside a list item without a
 * blank line, keeping the list tight: it must interrupt a paragraph and must
 * not be read as its continuation (a paragraph would merge, `---` would make a
 * setext heading, a list starting at 2 cannot interrupt). Code blocks count as
 * loose: an indented one always needs a blank line, and in the CommonMark
 * examples (docs/MARKDOWN.md) items holding code are mostly loose.
 */
function canFollowTightly(prev: PMNode, next: PMNode): boolean {
  switch (next.type.name) {
    case 'paragraph':
      // Only after blocks that end themselves; otherwise it would continue them.
      return ['heading', 'horizontalRule'].includes(prev.type.name);
    case 'blockquote':
      return true;
    case 'heading':
      return !usesSetext(next);
    case 'bulletList':
    case 'taskList':
      return !isEmptyParagraph(next.firstChild?.firstChild ?? null) && !BULLET_LIKE.has(prev.type.name);
    case 'orderedList':
      return next.attrs.start === 1 && !isEmptyParagraph(next.firstChild?.firstChild ?? null) && prev.type.name !== 'orderedList';
    default:
      return false;
  }
}

/**
 * Tiptap items must start with a paragraph, so an item that starts with
 * another block (`- # Title`, `- ```code`) holds an empty paragraph first;
 * skipping it puts that block on the marker line. A task item keeps it: its
 * checkbox is the start of that paragraph.
 */
function firstRenderedBlock(item: PMNode): number {
  return item.type.name === 'listItem' && isEmptyParagraph(item.firstChild) && item.childCount > 1 ? 1 : 0;
}

function itemIsTight(item: PMNode): boolean {
  for (let i = firstRenderedBlock(item) + 1; i < item.childCount; i++) {
    if (!canFollowTightly(item.child(i - 1), item.child(i))) return false;
  }
  return true;
}

function renderItemContent(state: SerializerState, item: PMNode): void {
  const start = firstRenderedBlock(item);
  for (let i = start; i < item.childCount; i++) {
    if (i > start && state.inTightList) state.flushClose(1);
    state.render(item.child(i), item, i);
  }
}

/**
 * The schema has no tight/loose flag (Tiptap has none), so a list is written
 * tight whenever every item can be, and loose (blank lines everywhere) when
 * some item needs a blank line anyway, e.g. two paragraphs in one item.
 */
function renderList(state: SerializerState, node: PMNode, indent: string, marker: (i: number) => string): void {
  let tight = true;
  node.forEach((item) => {
    tight &&= itemIsTight(item);
  });
  const saved = state.options.tightLists;
  state.options.tightLists = tight;
  state.renderList(node, indent, marker);
  state.options.tightLists = saved;
}

const serializeBlockquote: NodeSerializer = (state, node) => {
  // Blocks in a quote are separated normally even when the quote sits in a
  // tight list item (prosemirror-markdown would join a nested list to the
  // paragraph before it, and `3.` cannot interrupt a paragraph).
  const inTightList = state.inTightList;
  state.inTightList = false;
  state.wrapBlock('> ', null, node, () => state.renderContent(node));
  state.inTightList = inTightList;
};

const serializeTaskItem: NodeSerializer = (state, node) => {
  state.write(node.attrs.checked ? '[x] ' : '[ ] ');
  renderItemContent(state, node);
};

const serializeHorizontalRule: NodeSerializer = (state, node, parent, index) => {
  // On a list marker line `- ---` is itself a thematic break, not an item holding one.
  const onMarkerLine = parent.type.name === 'listItem' && index === 1 && isEmptyParagraph(parent.firstChild);
  state.write(onMarkerLine ? '***' : '---');
  state.closeBlock(node);
};

const serializeImage: NodeSerializer = (state, node, parent, index) => {
  const alt = escapeInline((node.attrs.alt ?? '').replace(/\n+/g, ' '));
  settle(state, '!', parent, index);
  state.write(`![${alt}](${linkDestination(node.attrs.src ?? '')}${linkTitle(node.attrs.title)})`);
};

const serializeMention: NodeSerializer = (state, node, parent, index) => {
  const label = escapeInline(String(node.attrs.label ?? '').replace(/\n+/g, ' '));
  settle(state, '[', parent, index);
  escapeTrailingBang(state);
  state.text(`[@${label}](${formatMentionHref(node.attrs.kind, node.attrs.id ?? '')})`, false);
};

// ------------------------------------------------------------------ tables

function textblocksOf(node: PMNode): PMNode[] {
  if (node.isTextblock) return [node];
  const blocks: PMNode[] = [];
  node.forEach((child) => blocks.push(...textblocksOf(child)));
  return blocks;
}

/** A GFM cell is one line of inline Markdown; blocks in a cell are joined by spaces. */
function cellMarkdown(cell: PMNode): string {
  const parts = textblocksOf(cell).map((block) => {
    const inline =
      block.type.name === 'codeBlock'
        ? block.textContent
          ? [docSchema.text(codeBlockText(block).replace(/\n/g, ' '), [docSchema.marks.code.create()])]
          : []
        : block.content;
    const doc = docSchema.node('doc', null, [docSchema.node('paragraph', null, inline)]);
    return cellSerializer.serialize(doc).trim();
  });
  return parts
    .filter((p) => p !== '')
    .join(' ')
    .replace(/\n/g, ' ')
    .replace(/\|/g, '\\|');
}

interface GfmCell {
  text: string;
  align: CellAlignment | null;
}

function rowCells(row: PMNode): GfmCell[] {
  const cells: GfmCell[] = [];
  row.forEach((cell) => {
    cells.push({ text: cellMarkdown(cell), align: cell.attrs.align ?? null });
    // GFM has no spans: a spanned cell keeps its column count with empty cells.
    for (let i = 1; i < (cell.attrs.colspan ?? 1); i++) cells.push({ text: '', align: cell.attrs.align ?? null });
  });
  return cells;
}

function delimiterCell(align: CellAlignment | null): string {
  if (align === 'left') return ':--';
  if (align === 'right') return '--:';
  if (align === 'center') return ':-:';
  return '---';
}

function rowLine(cells: GfmCell[], width: number): string {
  const texts = Array.from({ length: width }, (_, i) => cells[i]?.text ?? '');
  return `| ${texts.join(' | ')} |`;
}

const serializeTable: NodeSerializer = (state, node) => {
  const rows: GfmCell[][] = [];
  node.forEach((row) => rows.push(rowCells(row)));
  const width = Math.max(1, ...rows.map((r) => r.length));
  const header = rows[0] ?? [];
  const delimiters = Array.from({ length: width }, (_, i) => delimiterCell(header[i]?.align ?? null));
  const lines = [rowLine(header, width), `| ${delimiters.join(' | ')} |`, ...rows.slice(1).map((r) => rowLine(r, width))];
  for (const line of lines) {
    state.write(line);
    state.ensureNewLine();
  }
  state.closeBlock(node);
};

// ------------------------------------------------------------------- marks

function codeSpanText(node: PMNode | undefined): string {
  return node?.isText ? (node.text ?? '') : '';
}

/** Backtick fence and padding that make a code span read back verbatim. */
function codeSpanDelimiters(text: string): { ticks: string; pad: string } {
  const ticks = '`'.repeat(longestRun(text, '`') + 1);
  // CommonMark strips one space from each side when both are spaces and the span is not blank.
  const stripsSpaces = text.length >= 2 && text.startsWith(' ') && text.endsWith(' ') && /[^ ]/.test(text);
  const pad = text.startsWith('`') || text.endsWith('`') || stripsSpaces ? ' ' : '';
  return { ticks, pad };
}

function isAutolink(mark: Mark, parent: PMNode, index: number): boolean {
  const href: string = mark.attrs.href ?? '';
  if (mark.attrs.title || !/^[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>\\]*$/.test(href)) return false;
  const content = parent.child(index);
  if (!content.isText || content.text !== href || content.marks[content.marks.length - 1] !== mark) return false;
  return index === parent.childCount - 1 || !mark.isInSet(parent.child(index + 1).marks);
}

// Suggestions (docs/SUGGESTIONS.md) are written as CriticMarkup, which
// Markdown readers show as literal text; markdownToDoc does not parse it back.
// They open first and close last (schema rank), so they wrap other marks.
const marks = {
  suggestInsert: { open: '{++', close: '++}', mixable: false },
  suggestDelete: { open: '{--', close: '--}', mixable: false },
  link: {
    open(state: MarkdownSerializerState, mark: Mark, parent: PMNode, index: number) {
      const s = state as SerializerState;
      s.inAutolink = isAutolink(mark, parent, index);
      settle(s, s.inAutolink ? '<' : '[', parent, index);
      if (!s.inAutolink) escapeTrailingBang(s);
      return s.inAutolink ? '<' : '[';
    },
    close(state: MarkdownSerializerState, mark: Mark) {
      const s = state as SerializerState;
      const wasAutolink = s.inAutolink;
      s.inAutolink = undefined;
      return wasAutolink ? '>' : `](${linkDestination(mark.attrs.href ?? '')}${linkTitle(mark.attrs.title)})`;
    },
    mixable: true,
  },
  bold: { open: '**', close: '**', mixable: true, expelEnclosingWhitespace: true },
  italic: { open: '*', close: '*', mixable: true, expelEnclosingWhitespace: true },
  strike: { open: '~~', close: '~~', mixable: true, expelEnclosingWhitespace: true },
  code: {
    open(state: MarkdownSerializerState, _mark: Mark, parent: PMNode, index: number) {
      settle(state as SerializerState, '`', parent, index);
      const { ticks, pad } = codeSpanDelimiters(codeSpanText(parent.maybeChild(index) ?? undefined));
      return ticks + pad;
    },
    close(_state: MarkdownSerializerState, _mark: Mark, parent: PMNode, index: number) {
      const { ticks, pad } = codeSpanDelimiters(codeSpanText(parent.maybeChild(index - 1) ?? undefined));
      return pad + ticks;
    },
    escape: false,
  },
};

function nodeSerializers(hardBreak: NodeSerializer): Record<string, NodeSerializer> {
  return {
    doc: (state, node) => state.renderContent(node),
    paragraph: (state, node) => {
      state.renderInline(node);
      state.closeBlock(node);
    },
    heading: serializeHeading,
    blockquote: serializeBlockquote,
    bulletList: serializeBulletList,
    orderedList: serializeOrderedList,
    listItem: renderItemContent,
    taskList: (state, node, parent, index) => serializeBulletList(state, node, parent, index),
    taskItem: serializeTaskItem,
    codeBlock: serializeCodeBlock,
    horizontalRule: serializeHorizontalRule,
    table: serializeTable,
    text: serializeText,
    hardBreak,
    image: serializeImage,
    mention: serializeMention,
  };
}

type SerializerNodes = ConstructorParameters<typeof MarkdownSerializer>[0];

const serializer = new MarkdownSerializer(nodeSerializers(serializeHardBreak) as SerializerNodes, marks, {
  hardBreakNodeName: 'hardBreak',
});

// GFM table cells are a single line, so a hard break in a cell becomes a space.
const cellSerializer = new MarkdownSerializer(
  nodeSerializers((state) => state.write(' ')) as SerializerNodes,
  marks,
  { hardBreakNodeName: 'hardBreak' },
);

function isBlankText(node: PMNode | null): boolean {
  return node !== null && node.isText && (node.text ?? '').trim() === '';
}

/**
 * Emphasis on whitespace alone cannot be written (CommonMark delimiters may
 * not enclose only whitespace, and prosemirror-markdown then leaves a
 * delimiter dangling), so it is dropped unless both neighbours carry it.
 */
function withoutBlankEmphasis(textblock: PMNode): PMNode {
  let changed = false;
  const children: PMNode[] = [];
  textblock.forEach((child, _offset, i) => {
    if (!isBlankText(child)) {
      children.push(child);
      return;
    }
    const prev = textblock.maybeChild(i - 1);
    const next = textblock.maybeChild(i + 1);
    const marks = child.marks.filter(
      (m) => !DELIMITED_MARKS.has(m.type.name) || (prev !== null && m.isInSet(prev.marks) && next !== null && m.isInSet(next.marks)),
    );
    changed ||= marks.length !== child.marks.length;
    children.push(child.mark(marks));
  });
  return changed ? textblock.copy(Fragment.fromArray(children)) : textblock;
}

/** How many inline nodes from `index` on carry `mark`. */
function markExtent(textblock: PMNode, index: number, mark: Mark): number {
  let end = index;
  while (end < textblock.childCount && mark.isInSet(textblock.child(end).marks)) end++;
  return end - index;
}

/**
 * prosemirror-markdown opens a node's marks in array order (schema rank), so
 * bold+italic text followed by italic text came out as `***a*** *b*`. Opening
 * the mark that lasts longer first nests them: `***a** b*`. Code stays
 * innermost, as its content is not escaped. TextNode.mark keeps the given
 * order (Mark.setFrom would sort it back).
 */
function withMarksOrderedByExtent(textblock: PMNode): PMNode {
  let changed = false;
  const children: PMNode[] = [];
  textblock.forEach((child, _offset, i) => {
    const rank = (m: Mark) => child.marks.indexOf(m);
    const ordered = [...child.marks].sort((a, b) => {
      if (a.type.name === 'code' || b.type.name === 'code') return a.type.name === 'code' ? 1 : -1;
      return markExtent(textblock, i, b) - markExtent(textblock, i, a) || rank(a) - rank(b);
    });
    const same = ordered.every((m, k) => m === child.marks[k]);
    changed ||= !same;
    children.push(same ? child : child.mark(ordered));
  });
  return changed ? textblock.copy(Fragment.fromArray(children)) : textblock;
}

function normalizeForMarkdown(node: PMNode): PMNode {
  if (node.isTextblock) return withMarksOrderedByExtent(withoutBlankEmphasis(node));
  if (node.isLeaf) return node;
  const children: PMNode[] = [];
  let changed = false;
  node.forEach((child) => {
    const normalized = normalizeForMarkdown(child);
    changed ||= normalized !== child;
    children.push(normalized);
  });
  return changed ? node.copy(Fragment.fromArray(children)) : node;
}

// The serializer and our escaping read the last characters of `state.out`,
// and V8 copies a string built by `+=` in full on such a read: one growing
// `out` made serializing quadratic (a 1 MB doc took 18 s). Top-level blocks
// are rendered into a short `out` that is moved to `chunks` between blocks,
// keeping a tail for the checks that look back (separators, escapes).
const OUT_TAIL = 256;

function serializeInChunks(container: PMNode): string {
  // The constructor is @internal in the typings; serializer.serialize() calls it the same way.
  const State = MarkdownSerializerState as unknown as new (nodes: unknown, marks: unknown, options: object) => SerializerState;
  const state = new State(serializer.nodes, serializer.marks, { ...serializer.options, tightLists: true });
  const chunks: string[] = [];
  container.forEach((child, _offset, index) => {
    state.render(child, container, index);
    if (state.out.length > 4 * OUT_TAIL) {
      chunks.push(state.out.slice(0, -OUT_TAIL));
      state.out = state.out.slice(-OUT_TAIL);
    }
  });
  chunks.push(state.out);
  return chunks.join('');
}

/** Serializes a doc (or any block container) to CommonMark + GFM. */
export function docToMarkdown(node: PMNode): string {
  const out = serializeInChunks(normalizeForMarkdown(node)).replace(/^\n+/, '');
  return out === '' ? '' : `${out.replace(/\n*$/, '')}\n`;
}
