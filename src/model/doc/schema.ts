/**
 * The ProseMirror schema of doc surface bodies (CommonMark + GFM).
 *
 * Node and mark names, attribute names and content expressions follow Tiptap's
 * StarterKit, TaskList/TaskItem, Image, Mention and Table extensions, because a
 * Tiptap editor opens the same Y.XmlFragment and y-prosemirror copies names and
 * attributes verbatim. Content expressions are never looser than Tiptap's: a
 * document we write must be one a Tiptap editor accepts.
 *
 * Where we deliberately differ from stock Tiptap (a browser editor must be
 * configured to match; see docs/MARKDOWN.md):
 * - `image` is inline (Tiptap `Image.configure({ inline: true })`), as in Markdown;
 * - `taskItem` may nest blocks (Tiptap `TaskItem.configure({ nested: true })`);
 * - `code` does not exclude other marks, so `[`x`](url)` keeps both marks;
 * - `mention` carries `kind` besides `id`/`label`;
 * - `link` has `title`; `tableCell`/`tableHeader` have `align` for GFM column alignment.
 *
 * Browser-safe: depends on prosemirror-model only.
 */
import { Schema, type AttributeSpec, type DOMOutputSpec, type Node as PMNode, type NodeSpec, type MarkSpec } from 'prosemirror-model';

export const MENTION_KINDS = ['user', 'agent'] as const;
export type MentionKind = (typeof MENTION_KINDS)[number];

export const CELL_ALIGNMENTS = ['left', 'center', 'right'] as const;
export type CellAlignment = (typeof CELL_ALIGNMENTS)[number];

// Attribute validators run in Node.check()/createChecked() and in docFromJSON;
// y-prosemirror builds nodes with create(), so a browser never trips on them.
// Required attributes still get a null default: y-prosemirror deletes a Y element
// whose node cannot be created, so a peer that omits one must not cost content.
function fail(message: string): never {
  throw new RangeError(message);
}

function integerIn(min: number, max: number) {
  return (value: unknown): void => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      fail(`expected an integer from ${min} to ${max}`);
    }
  };
}

function stringValue(value: unknown): void {
  if (typeof value !== 'string') fail('expected a string');
}

function nullableString(value: unknown): void {
  if (value !== null && typeof value !== 'string') fail('expected a string or null');
}

function booleanValue(value: unknown): void {
  if (typeof value !== 'boolean') fail('expected a boolean');
}

function oneOf(values: readonly string[], nullable: boolean) {
  return (value: unknown): void => {
    if (nullable && value === null) return;
    if (typeof value !== 'string' || !values.includes(value)) {
      fail(`expected one of ${values.join(', ')}${nullable ? ' or null' : ''}`);
    }
  };
}

function columnWidths(value: unknown): void {
  if (value === null) return;
  const ok = Array.isArray(value) && value.every((w) => typeof w === 'number' && Number.isFinite(w) && w >= 0);
  if (!ok) fail('expected an array of widths or null');
}

function alignFromStyle(dom: HTMLElement): CellAlignment | null {
  const align = dom.style?.textAlign;
  return (CELL_ALIGNMENTS as readonly string[]).includes(align) ? (align as CellAlignment) : null;
}

function parseColwidth(dom: HTMLElement): number[] | null {
  const raw = dom.getAttribute('data-colwidth');
  if (!raw) return null;
  const widths = raw.split(',').map((w) => Number.parseInt(w, 10));
  return widths.every((w) => Number.isFinite(w)) ? widths : null;
}

// Same attribute set as Tiptap's TableCell/TableHeader (prosemirror-tables names) plus `align`.
const cellAttrs: Record<string, AttributeSpec> = {
  colspan: { default: 1, validate: integerIn(1, 1000) },
  rowspan: { default: 1, validate: integerIn(1, 65534) },
  colwidth: { default: null, validate: columnWidths },
  align: { default: null, validate: oneOf(CELL_ALIGNMENTS, true) },
};

function cellParseAttrs(dom: HTMLElement) {
  return {
    colspan: Number(dom.getAttribute('colspan') || 1),
    rowspan: Number(dom.getAttribute('rowspan') || 1),
    colwidth: parseColwidth(dom),
    align: alignFromStyle(dom),
  };
}

function cellDOMAttrs(node: PMNode): Record<string, string> {
  const attrs: Record<string, string> = {};
  if (node.attrs.colspan !== 1) attrs.colspan = String(node.attrs.colspan);
  if (node.attrs.rowspan !== 1) attrs.rowspan = String(node.attrs.rowspan);
  if (node.attrs.colwidth) attrs['data-colwidth'] = (node.attrs.colwidth as number[]).join(',');
  if (node.attrs.align) attrs.style = `text-align: ${node.attrs.align}`;
  return attrs;
}

const nodes: Record<string, NodeSpec> = {
  doc: { content: 'block+' },
  paragraph: {
    content: 'inline*',
    group: 'block',
    parseDOM: [{ tag: 'p' }],
    toDOM: () => ['p', 0],
  },
  heading: {
    attrs: { level: { default: 1, validate: integerIn(1, 6) } },
    content: 'inline*',
    group: 'block',
    defining: true,
    parseDOM: [1, 2, 3, 4, 5, 6].map((level) => ({ tag: `h${level}`, attrs: { level } })),
    toDOM: (node) => [`h${node.attrs.level}`, 0],
  },
  blockquote: {
    content: 'block+',
    group: 'block',
    defining: true,
    parseDOM: [{ tag: 'blockquote' }],
    toDOM: () => ['blockquote', 0],
  },
  bulletList: {
    content: 'listItem+',
    group: 'block list',
    parseDOM: [{ tag: 'ul' }],
    toDOM: () => ['ul', 0],
  },
  orderedList: {
    attrs: { start: { default: 1, validate: integerIn(0, 999_999_999) } },
    content: 'listItem+',
    group: 'block list',
    parseDOM: [{ tag: 'ol', getAttrs: (dom) => ({ start: dom.hasAttribute('start') ? Number(dom.getAttribute('start')) : 1 }) }],
    toDOM: (node) => ['ol', node.attrs.start === 1 ? {} : { start: node.attrs.start }, 0],
  },
  listItem: {
    content: 'paragraph block*',
    defining: true,
    parseDOM: [{ tag: 'li' }],
    toDOM: () => ['li', 0],
  },
  taskList: {
    content: 'taskItem+',
    group: 'block list',
    // Listed before bulletList's `ul` rule by priority so task lists are not read as bullets.
    parseDOM: [{ tag: 'ul[data-type="taskList"]', priority: 51 }],
    toDOM: () => ['ul', { 'data-type': 'taskList' }, 0],
  },
  taskItem: {
    attrs: { checked: { default: false, validate: booleanValue } },
    content: 'paragraph block*',
    defining: true,
    parseDOM: [
      {
        tag: 'li[data-type="taskItem"]',
        priority: 51,
        getAttrs: (dom) => ({ checked: dom.getAttribute('data-checked') === 'true' }),
      },
    ],
    toDOM: (node) => ['li', { 'data-type': 'taskItem', 'data-checked': String(node.attrs.checked) }, 0],
  },
  codeBlock: {
    attrs: { language: { default: null, validate: nullableString } },
    content: 'text*',
    // Only suggestions: code keeps no formatting, but a change to it can still be proposed.
    marks: 'suggestInsert suggestDelete',
    group: 'block',
    code: true,
    defining: true,
    parseDOM: [
      {
        tag: 'pre',
        preserveWhitespace: 'full',
        getAttrs: (dom) => {
          const cls = dom.querySelector('code')?.className ?? '';
          const match = /(?:^|\s)language-(\S+)/.exec(cls);
          return { language: match ? match[1] : null };
        },
      },
    ],
    toDOM: (node): DOMOutputSpec => [
      'pre',
      ['code', node.attrs.language ? { class: `language-${String(node.attrs.language).split(/\s/)[0]}` } : {}, 0],
    ],
  },
  horizontalRule: {
    group: 'block',
    parseDOM: [{ tag: 'hr' }],
    toDOM: () => ['hr'],
  },
  table: {
    content: 'tableRow+',
    group: 'block',
    isolating: true,
    tableRole: 'table',
    parseDOM: [{ tag: 'table' }],
    toDOM: () => ['table', ['tbody', 0]],
  },
  tableRow: {
    content: '(tableCell | tableHeader)*',
    tableRole: 'row',
    parseDOM: [{ tag: 'tr' }],
    toDOM: () => ['tr', 0],
  },
  tableHeader: {
    attrs: cellAttrs,
    content: 'block+',
    isolating: true,
    tableRole: 'header_cell',
    parseDOM: [{ tag: 'th', getAttrs: cellParseAttrs }],
    toDOM: (node) => ['th', cellDOMAttrs(node), 0],
  },
  tableCell: {
    attrs: cellAttrs,
    content: 'block+',
    isolating: true,
    tableRole: 'cell',
    parseDOM: [{ tag: 'td', getAttrs: cellParseAttrs }],
    toDOM: (node) => ['td', cellDOMAttrs(node), 0],
  },
  text: { group: 'inline' },
  hardBreak: {
    inline: true,
    group: 'inline',
    selectable: false,
    parseDOM: [{ tag: 'br' }],
    toDOM: () => ['br'],
  },
  image: {
    inline: true,
    group: 'inline',
    draggable: true,
    attrs: {
      src: { default: null, validate: stringValue },
      alt: { default: null, validate: nullableString },
      title: { default: null, validate: nullableString },
    },
    parseDOM: [
      {
        tag: 'img[src]',
        getAttrs: (dom) => ({ src: dom.getAttribute('src'), alt: dom.getAttribute('alt'), title: dom.getAttribute('title') }),
      },
    ],
    toDOM: (node) => ['img', { src: node.attrs.src, alt: node.attrs.alt, title: node.attrs.title }],
  },
  mention: {
    inline: true,
    group: 'inline',
    atom: true,
    selectable: false,
    attrs: {
      kind: { default: 'user', validate: oneOf(MENTION_KINDS, false) },
      id: { default: null, validate: stringValue },
      label: { default: null, validate: stringValue },
    },
    leafText: (node) => `@${node.attrs.label}`,
    parseDOM: [
      {
        tag: 'span[data-type="mention"]',
        getAttrs: (dom) => ({
          kind: dom.getAttribute('data-kind') ?? 'user',
          id: dom.getAttribute('data-id') ?? '',
          label: dom.getAttribute('data-label') ?? '',
        }),
      },
    ],
    toDOM: (node) => [
      'span',
      { 'data-type': 'mention', 'data-kind': node.attrs.kind, 'data-id': node.attrs.id, 'data-label': node.attrs.label },
      `@${node.attrs.label}`,
    ],
  },
};

/** The principal kinds a suggestion's author can be (src/model/schemas/common.ts `Principal`). */
export const SUGGESTION_AUTHOR_TYPES = ['user', 'agent'] as const;

/**
 * Suggested insertions and deletions (docs/SUGGESTIONS.md): the text stays in
 * the body, marked, until someone with the editor role accepts or rejects it.
 * Each mark names its suggestion (`id`), its author and the time; a
 * suggestion's insertions and deletions share the id. Not inclusive: text a
 * person types next to a suggestion is theirs, not the suggester's. No
 * parseDOM: pasted HTML never forges someone's suggestion.
 */
const suggestionAttrs: Record<string, AttributeSpec> = {
  id: { default: null, validate: stringValue },
  authorType: { default: 'user', validate: oneOf(SUGGESTION_AUTHOR_TYPES, false) },
  authorId: { default: null, validate: stringValue },
  authorName: { default: '', validate: stringValue },
  at: { default: null, validate: stringValue },
};

function suggestionDOMAttrs(kind: 'insert' | 'delete', attrs: Record<string, unknown>): Record<string, string> {
  return {
    'data-suggestion': kind,
    'data-suggestion-id': String(attrs.id),
    'data-author-type': String(attrs.authorType),
    'data-author-id': String(attrs.authorId),
    title: `Suggested by ${String(attrs.authorName)}`,
  };
}

export const SUGGESTION_MARKS = ['suggestInsert', 'suggestDelete'] as const;
export type SuggestionMarkName = (typeof SUGGESTION_MARKS)[number];

// Mark order is precedence: suggestions outermost (a suggestion wraps whatever
// formatting its text has), then link (Tiptap gives it priority 1000), code
// innermost (prosemirror-markdown requires non-escaping marks last).
const marks: Record<string, MarkSpec> = {
  suggestInsert: {
    attrs: suggestionAttrs,
    inclusive: false,
    excludes: 'suggestInsert suggestDelete',
    toDOM: (mark) => ['ins', suggestionDOMAttrs('insert', mark.attrs), 0],
  },
  suggestDelete: {
    attrs: suggestionAttrs,
    inclusive: false,
    excludes: 'suggestInsert suggestDelete',
    toDOM: (mark) => ['del', suggestionDOMAttrs('delete', mark.attrs), 0],
  },
  link: {
    attrs: {
      href: { default: null, validate: stringValue },
      title: { default: null, validate: nullableString },
    },
    inclusive: false,
    parseDOM: [{ tag: 'a[href]', getAttrs: (dom) => ({ href: dom.getAttribute('href'), title: dom.getAttribute('title') }) }],
    toDOM: (mark) => ['a', { href: mark.attrs.href, title: mark.attrs.title }, 0],
  },
  bold: {
    parseDOM: [{ tag: 'strong' }, { tag: 'b' }, { style: 'font-weight=bold' }],
    toDOM: () => ['strong', 0],
  },
  italic: {
    parseDOM: [{ tag: 'em' }, { tag: 'i' }, { style: 'font-style=italic' }],
    toDOM: () => ['em', 0],
  },
  strike: {
    parseDOM: [{ tag: 's' }, { tag: 'del' }, { tag: 'strike' }, { style: 'text-decoration=line-through' }],
    toDOM: () => ['s', 0],
  },
  code: {
    code: true,
    parseDOM: [{ tag: 'code' }],
    toDOM: () => ['code', 0],
  },
};

export const docSchema = new Schema({ nodes, marks });

export type DocSchema = typeof docSchema;
