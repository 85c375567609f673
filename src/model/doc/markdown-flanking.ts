/**
 * Keeps emphasis delimiters (`*`, `**`, `~~`) valid next to punctuation.
 *
 * CommonMark lets a delimiter run open only if it is not followed by
 * punctuation or is preceded by whitespace or punctuation, and close only in
 * the mirror case. So `foo` + bold `(bar)` naively written `foo**(bar)**`
 * stays literal text, and so does bold `Note:` + `The` as `**Note:**The`;
 * editors produce such text easily. When a run sits between a letter and a
 * punctuation mark, the letter is written as a character reference
 * (`fo&#111;**(bar)**`, `**Note:**&#84;he`): a reference ends in `;`, which
 * counts as punctuation, so the run is valid both ways, and it reads back as
 * the same letter. remark's serializer uses the same trick.
 *
 * The check runs on the output itself, just before whatever follows a run is
 * written, so it sees exactly the delimiters prosemirror-markdown emitted.
 */

const PUNCTUATION = /[\p{P}\p{S}]/u;
const WHITESPACE = /\s/u;
const DELIMITER_CHARS = new Set(['*', '~']);

export function characterReference(ch: string): string {
  return `&#${ch.codePointAt(0)};`;
}

function isWordLike(ch: string | undefined): boolean {
  return ch !== undefined && !PUNCTUATION.test(ch) && !WHITESPACE.test(ch);
}

/** Start index of the unescaped `*`/`~` run ending the output, or -1. */
function trailingRunStart(out: string): number {
  let start = out.length;
  while (start > 0 && DELIMITER_CHARS.has(out[start - 1])) start--;
  if (start === out.length) return -1;
  let backslashes = 0;
  while (start - backslashes - 1 >= 0 && out[start - backslashes - 1] === '\\') backslashes++;
  // An odd number of backslashes escapes the run's first character.
  if (backslashes % 2 === 1) start++;
  return start < out.length ? start : -1;
}

/** The code point ending at `end` (exclusive), surrogate pairs included. */
function codePointBefore(out: string, end: number): { ch: string; start: number } | null {
  if (end <= 0) return null;
  const low = out.charCodeAt(end - 1);
  const isPair = low >= 0xdc00 && low <= 0xdfff && end >= 2 && out.charCodeAt(end - 2) >= 0xd800 && out.charCodeAt(end - 2) <= 0xdbff;
  const start = isPair ? end - 2 : end - 1;
  return { ch: out.slice(start, end), start };
}

/** What the delimiters just written do: open emphasis, close it, or both (a merged run). */
export interface RunKinds {
  opens: boolean;
  closes: boolean;
}

/**
 * Called right before `upcoming` (the next character to be written) is
 * appended to `state.out`. If the output ends with an opening run preceded by
 * a letter and `upcoming` is punctuation, the letter is rewritten as a
 * reference. Returns true when a closing run follows punctuation and
 * `upcoming` is a letter: the caller must then write `upcoming` as a reference.
 */
export function settleDelimiterRun(state: { out: string }, upcoming: string | undefined, kinds: RunKinds): boolean {
  const runStart = trailingRunStart(state.out);
  if (runStart < 0 || upcoming === undefined) return false;
  // A run the document structure does not explain is a mark closed and reopened.
  const { opens, closes } = kinds.opens || kinds.closes ? kinds : { opens: true, closes: true };
  const before = codePointBefore(state.out, runStart);
  if (opens && before && isWordLike(before.ch) && PUNCTUATION.test(upcoming)) {
    encodeBackwards(state, before.start, before.ch);
    return false;
  }
  return closes && before !== null && PUNCTUATION.test(before.ch) && isWordLike(upcoming);
}

/**
 * Rewrites the letter at `start` as a reference. If that letter itself follows
 * a run (`~~é~~` with one letter inside), that run is now followed by
 * punctuation, so the letter before it may need the same treatment.
 */
function encodeBackwards(state: { out: string }, start: number, ch: string): void {
  const rest = state.out.slice(start + ch.length);
  let head = state.out.slice(0, start);
  const runStart = trailingRunStart(head);
  const before = runStart >= 0 ? codePointBefore(head, runStart) : null;
  if (before && isWordLike(before.ch)) {
    const inner = { out: head };
    encodeBackwards(inner, before.start, before.ch);
    head = inner.out;
  }
  state.out = head + characterReference(ch) + rest;
}

/** Writes the first character of `text` as a reference. */
export function encodeFirstCharacter(text: string): string {
  const first = String.fromCodePoint(text.codePointAt(0)!);
  return characterReference(first) + text.slice(first.length);
}
