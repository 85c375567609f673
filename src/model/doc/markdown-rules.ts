/**
 * markdown-it core rules that reshape the token stream into what the doc
 * schema can hold. They run after inline parsing, so they see final tokens.
 */
import type { MarkdownIt, StateCore, Token } from 'markdown-it';
import { MENTION_KINDS, type MentionKind } from './schema.js';

/** Mention links: `[@Ada](mention:user/u_123)`. */
export const MENTION_SCHEME = 'mention:';

export interface MentionTarget {
  kind: MentionKind;
  id: string;
}

// encodeURIComponent leaves `(`, `)` and friends, which would end a link destination.
function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function formatMentionHref(kind: string, id: string): string {
  return `${MENTION_SCHEME}${encodePathSegment(kind)}/${encodePathSegment(id)}`;
}

export function parseMentionHref(href: string | null): MentionTarget | null {
  if (!href || !href.startsWith(MENTION_SCHEME)) return null;
  const match = /^([a-z]+)\/(.+)$/.exec(href.slice(MENTION_SCHEME.length));
  if (!match || !(MENTION_KINDS as readonly string[]).includes(match[1])) return null;
  try {
    return { kind: match[1] as MentionKind, id: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}

/** Plain text of inline tokens, as CommonMark flattens an image description. */
export function inlineTokensText(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      if (t.type === 'text' || t.type === 'code_inline') return t.content;
      if (t.type === 'softbreak' || t.type === 'hardbreak') return '\n';
      if (t.type === 'image') return inlineTokensText(t.children ?? []);
      return '';
    })
    .join('');
}

// ---------------------------------------------------------------- mentions

function closingLinkIndex(children: readonly Token[], openIndex: number): number {
  for (let i = openIndex + 1; i < children.length; i++) {
    if (children[i].type === 'link_close') return i;
  }
  return children.length - 1;
}

function collapseMentionLinks(state: StateCore, children: Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < children.length; i++) {
    const tok = children[i];
    const href = tok.type === 'link_open' && tok.markup !== 'autolink' ? tok.attrGet('href') : null;
    const target = typeof href === 'string' ? parseMentionHref(href) : null;
    if (!target) {
      out.push(tok);
      continue;
    }
    const close = closingLinkIndex(children, i);
    const mention = new state.Token('mention', '', 0);
    mention.meta = { ...target, label: inlineTokensText(children.slice(i + 1, close)).replace(/^@/, '') };
    out.push(mention);
    i = close;
  }
  return out;
}

function mentionRule(state: StateCore): void {
  for (const tok of state.tokens) {
    if (tok.type === 'inline' && tok.children) tok.children = collapseMentionLinks(state, tok.children);
  }
}

// ---------------------------------------------------------------- task lists

const CHECKBOX = /^\[([ xX])\](?:[ \t]+|$)/;

/** `true`/`false` for a GFM task item (`- [x] ...`), `null` for a plain item. */
function itemCheckbox(tokens: readonly Token[], itemOpen: number): boolean | null {
  const para = tokens[itemOpen + 1];
  const inline = tokens[itemOpen + 2];
  const first = inline?.children?.[0];
  if (para?.type !== 'paragraph_open' || inline?.type !== 'inline' || first?.type !== 'text') return null;
  const match = CHECKBOX.exec(first.content);
  return match ? match[1] !== ' ' : null;
}

function stripCheckbox(tokens: readonly Token[], itemOpen: number): void {
  const inline = tokens[itemOpen + 2];
  const first = inline.children![0];
  first.content = first.content.replace(CHECKBOX, '');
  inline.content = inline.content.replace(CHECKBOX, '');
}

interface ListItemSpan {
  open: number;
  close: number;
  checked: boolean | null;
}

function listItemSpans(tokens: readonly Token[], listOpen: number): { items: ListItemSpan[]; listClose: number } {
  const level = tokens[listOpen].level;
  const items: ListItemSpan[] = [];
  let i = listOpen + 1;
  for (; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok.level !== level + 1 && tok.level !== level) continue;
    if (tok.type === 'bullet_list_close' && tok.level === level) break;
    if (tok.type === 'list_item_open') items.push({ open: i, close: i, checked: itemCheckbox(tokens, i) });
    if (tok.type === 'list_item_close') items[items.length - 1].close = i;
  }
  return { items, listClose: i };
}

function retype(state: StateCore, like: Token, type: string): Token {
  const tok = new state.Token(type, like.tag, like.nesting);
  Object.assign(tok, { level: like.level, markup: like.markup, block: like.block, map: like.map, attrs: like.attrs });
  return tok;
}

/** Groups consecutive items by task/non-task; a mixed GFM list becomes several lists. */
function runsOfItems(items: ListItemSpan[]): ListItemSpan[][] {
  const runs: ListItemSpan[][] = [];
  for (const item of items) {
    const last = runs[runs.length - 1];
    if (last && (last[0].checked === null) === (item.checked === null)) last.push(item);
    else runs.push([item]);
  }
  return runs;
}

function rebuildAsTaskLists(state: StateCore, tokens: Token[], listOpen: number, items: ListItemSpan[], listClose: number): Token[] {
  const out: Token[] = [];
  for (const run of runsOfItems(items)) {
    const isTask = run[0].checked !== null;
    out.push(isTask ? retype(state, tokens[listOpen], 'task_list_open') : tokens[listOpen]);
    for (const item of run) {
      if (isTask) stripCheckbox(tokens, item.open);
      const body = tokens.slice(item.open + 1, item.close);
      if (!isTask) {
        out.push(tokens[item.open], ...body, tokens[item.close]);
        continue;
      }
      const open = retype(state, tokens[item.open], 'task_item_open');
      open.meta = { checked: item.checked };
      out.push(open, ...body, retype(state, tokens[item.close], 'task_item_close'));
    }
    out.push(isTask ? retype(state, tokens[listClose], 'task_list_close') : retype(state, tokens[listClose], 'bullet_list_close'));
  }
  return out;
}

function taskListRule(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].type !== 'bullet_list_open') continue;
    const { items, listClose } = listItemSpans(tokens, i);
    if (items.every((item) => item.checked === null)) continue;
    const replacement = rebuildAsTaskLists(state, tokens, i, items, listClose);
    tokens.splice(i, listClose - i + 1, ...replacement);
  }
}

// ---------------------------------------------------------------- tables

/** GFM cells hold inline content; Tiptap cells hold blocks, so wrap it in a paragraph. */
function tableCellParagraphRule(state: StateCore): void {
  const out: Token[] = [];
  for (const tok of state.tokens) {
    out.push(tok);
    if (tok.type === 'th_open' || tok.type === 'td_open') {
      const open = new state.Token('paragraph_open', 'p', 1);
      open.level = tok.level + 1;
      out.push(open);
    } else if (tok.type === 'th_close' || tok.type === 'td_close') {
      const close = new state.Token('paragraph_close', 'p', -1);
      close.level = tok.level + 1;
      out.splice(out.length - 1, 0, close);
    }
  }
  state.tokens = out;
}

/** Installs the rules; order matters only in that all run after inline parsing. */
export function trellisMarkdownRules(md: MarkdownIt): void {
  md.core.ruler.push('trellis_table_cells', tableCellParagraphRule);
  md.core.ruler.push('trellis_task_lists', taskListRule);
  md.core.ruler.push('trellis_mentions', mentionRule);
}
