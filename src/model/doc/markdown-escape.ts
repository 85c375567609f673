/**
 * Backslash-escaping of plain text for CommonMark output.
 *
 * prosemirror-markdown's own `esc` misses `<`, entity-like `&`, ordered-list
 * markers with `)`, setext underlines and intraword `_` next to `_`, so text
 * written by an editor could come back as HTML, a list or emphasis. This escapes
 * exactly what can change meaning and leaves ordinary punctuation readable.
 */

const ALWAYS = new Set(['\\', '`', '*', '[', ']', '~']);
const WORD_CHAR = /[\p{L}\p{N}]/u;
const ENTITY_LIKE = /^&(?:#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)/;
// `<` followed by one of these may open raw HTML or an autolink.
const TAG_START = /[A-Za-z/!?]/;

function isIntraword(text: string, i: number): boolean {
  const before = text[i - 1];
  const after = text[i + 1];
  return before !== undefined && after !== undefined && WORD_CHAR.test(before) && WORD_CHAR.test(after);
}

function needsEscape(text: string, i: number): boolean {
  const ch = text[i];
  if (ALWAYS.has(ch)) return true;
  // An underscore between two letters can neither open nor close emphasis.
  if (ch === '_') return !isIntraword(text, i);
  if (ch === '<') return TAG_START.test(text[i + 1] ?? '');
  if (ch === '&') return ENTITY_LIKE.test(text.slice(i));
  return false;
}

/** Escapes characters that would start inline syntax anywhere in a line. */
export function escapeInline(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (needsEscape(text, i)) out += '\\';
    out += text[i];
  }
  return out;
}

// Block syntax recognised at the start of a line (after the container prefix).
const LINE_START_RULES: Array<[RegExp, string]> = [
  [/^(#{1,6})(?=[ \t]|$)/, '\\$1'],
  [/^>/, '\\>'],
  [/^([-+])(?=[ \t]|$)/, '\\$1'],
  [/^(-+[ \t]*)$/, '\\$1'],
  [/^(=+[ \t]*)$/, '\\$1'],
  [/^(\d{1,9})([.)])(?=[ \t]|$)/, '$1\\$2'],
];

/**
 * Escapes a line that starts a block or follows a hard break: leading
 * whitespace would be stripped or turn the block into indented code, so it
 * becomes character references; and
 * `#`, `>`, `-`, `+`, `1.`/`1)`, `===`/`---` would start another block.
 */
export function escapeLineStart(escapedLine: string): string {
  let line = escapedLine.replace(/^\s+/, (ws) => [...ws].map((ch) => `&#${ch.codePointAt(0)};`).join(''));
  for (const [pattern, replacement] of LINE_START_RULES) {
    if (pattern.test(line)) {
      line = line.replace(pattern, replacement);
      break;
    }
  }
  return line;
}

/**
 * Escapes a run of text for a paragraph or heading. A newline character in
 * the text is not a line break of the document (that is `hardBreak`), and a
 * soft break would read back as a space, so it stays a character reference.
 */
export function escapeText(text: string, atLineStart: boolean): string {
  const escaped = escapeInline(text).replace(/[\r\n]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return atLineStart ? escapeLineStart(escaped) : escaped;
}

/** A trailing `#` run in an ATX heading would be read as its closing sequence. */
export function escapeClosingHashes(escapedText: string): string {
  return escapedText.replace(/(^|[ \t])(#+)([ \t]*)$/, '$1\\$2$3');
}

/** Escapes a fenced code block's info string (markdown-it unescapes it on parse). */
export function escapeInfoString(info: string): string {
  return info.replace(/\\/g, '\\\\').replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&');
}

/** Formats a link or image destination so any URL survives a reparse. */
export function linkDestination(href: string): string {
  if (href === '' || /[\s<>]/.test(href) || /[\u0000-\u001f]/.test(href)) {
    return `<${href.replace(/[\\<>]/g, '\\$&').replace(/\n/g, '%0A')}>`;
  }
  return href.replace(/[\\()]/g, '\\$&');
}

/** Formats a link title in double quotes. */
export function linkTitle(title: string | null | undefined): string {
  if (!title) return '';
  return ` "${title.replace(/[\\"]/g, '\\$&')}"`;
}

/** Whitespace at the end of a line is stripped on reparse, so it is written as references. */
export function encodeTrailingWhitespace(escaped: string): string {
  return escaped.replace(/\s+$/u, (ws) => [...ws].map((ch) => `&#${ch.codePointAt(0)};`).join(''));
}
