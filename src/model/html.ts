/**
 * The html surface's Y document: one Y.Text named `html` holding the page's
 * (sanitised) HTML source. This is the only module that names that root.
 *
 * A replace edits only the stretch between the common prefix and suffix of
 * the old and new source, so a peer typing elsewhere in the source keeps its
 * edit and its cursor.
 */
import * as Y from 'yjs';

export const HTML_FIELD = 'html';

function htmlText(ydoc: Y.Doc): Y.Text {
  return ydoc.getText(HTML_FIELD);
}

export function readHtml(ydoc: Y.Doc): string {
  return htmlText(ydoc).toString();
}

/** Makes the source equal to `html` in one transaction with `origin`; returns whether anything changed. */
export function replaceHtml(ydoc: Y.Doc, html: string, origin: unknown): boolean {
  const text = htmlText(ydoc);
  const old = text.toString();
  if (old === html) return false;
  let start = 0;
  const max = Math.min(old.length, html.length);
  while (start < max && old.charCodeAt(start) === html.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && old.charCodeAt(old.length - 1 - end) === html.charCodeAt(html.length - 1 - end)) end++;
  // Never split a surrogate pair: Y.Text counts UTF-16 units like JavaScript does, but a half pair is garbage to every reader.
  if (start > 0 && isHighSurrogate(old.charCodeAt(start - 1))) start--;
  if (end > 0 && isLowSurrogate(old.charCodeAt(old.length - end))) end--;
  ydoc.transact(() => {
    const removed = old.length - start - end;
    if (removed > 0) text.delete(start, removed);
    const inserted = html.slice(start, html.length - end);
    if (inserted) text.insert(start, inserted);
  }, origin);
  return true;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
