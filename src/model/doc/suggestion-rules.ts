/**
 * The marks of doc suggestions and the rules that resolve them
 * (docs/SUGGESTIONS.md; the functions the server calls are re-exported by
 * suggestions.ts).
 *
 * In the Y document a mark on text is a Y.XmlText formatting attribute named
 * after the mark, its value the mark's attrs (y-prosemirror's encoding).
 *
 * Two readings of a body matter: as it is (marks and all), and as if every
 * open suggestion were rejected, which is what `GET /doc` shows and what a
 * suggested change is computed against. The rule for whole blocks is the same
 * everywhere (the readings here, deciding in the Y document): a block whose
 * inline content is all going away (every character marked by what is being
 * resolved, at least one character, no inline atom) goes with its text,
 * unless it is a table cell (`isStructural`) or its parent would then break
 * the schema; then it stays, emptied.
 *
 * Browser-safe: Yjs, y-prosemirror and prosemirror-model only.
 */
import * as Y from 'yjs';
import { yXmlFragmentToProsemirrorJSON } from 'y-prosemirror';
import { Fragment, type Mark, type Node as PMNode, type NodeType } from 'prosemirror-model';
import { docSchema, SUGGESTION_MARKS, type SuggestionMarkName } from './schema.js';
import { bodyFragment } from './body.js';
import { nodesFromJSONLenient } from './json.js';

export type SuggestionAuthor = { principalType: 'user' | 'agent'; id: string; name: string };
export type SuggestionStamp = { id: string; author: SuggestionAuthor; at: string /* ISO */ };

/** The attrs of a suggestion mark (schema.ts), as stored in the Y.XmlText attribute. */
export type SuggestionMarkAttrs = { id: string; authorType: 'user' | 'agent'; authorId: string; authorName: string; at: string };

export const INSERT: SuggestionMarkName = 'suggestInsert';
export const DELETE: SuggestionMarkName = 'suggestDelete';

export function suggestionMarkAttrs(stamp: SuggestionStamp): SuggestionMarkAttrs {
  return { id: stamp.id, authorType: stamp.author.principalType, authorId: stamp.author.id, authorName: stamp.author.name, at: stamp.at };
}

/** The stamp a mark's attrs name, or null when they are not a well-formed suggestion (a peer may write anything). */
export function stampFromMarkAttrs(attrs: unknown): SuggestionStamp | null {
  if (typeof attrs !== 'object' || attrs === null) return null;
  const a = attrs as Record<string, unknown>;
  if (typeof a.id !== 'string' || a.id === '' || typeof a.authorId !== 'string') return null;
  return {
    id: a.id,
    author: { principalType: a.authorType === 'agent' ? 'agent' : 'user', id: a.authorId, name: typeof a.authorName === 'string' ? a.authorName : '' },
    at: typeof a.at === 'string' ? a.at : '',
  };
}

export function isSuggestionMarkName(name: string): name is SuggestionMarkName {
  return (SUGGESTION_MARKS as readonly string[]).includes(name);
}

// y-prosemirror suffixes the attribute of a mark that may overlap itself with a hash of the mark
// (`name--xxxxxxxx`); ours exclude themselves, but a peer's binding decides what it writes.
const HASHED_MARK_ATTR = /(.*)(--[a-zA-Z0-9+/=]{8})$/;
export function markNameOfAttr(key: string): string {
  return HASHED_MARK_ATTR.exec(key)?.[1] ?? key;
}

// ============================================================ resolving

/** What becomes of marked content when suggestions are resolved: it stays a suggestion, turns plain, or goes. */
type Fate = 'open' | 'plain' | 'gone';
export type Decider = (kind: SuggestionMarkName, id: unknown) => Fate;

export const REJECT_ALL: Decider = (kind) => (kind === INSERT ? 'gone' : 'plain');
export const ACCEPT_ALL: Decider = (kind) => (kind === INSERT ? 'plain' : 'gone');

function decideOne(id: string, decision: 'accept' | 'reject'): Decider {
  return (kind, markId) => {
    if (markId !== id) return 'open';
    return (decision === 'accept') === (kind === INSERT) ? 'plain' : 'gone';
  };
}

/** Suggestion marks found on a piece of content: the attrs of each, by mark name. Both at once only after concurrent edits. */
export type SuggestionAttrs = { [INSERT]?: Record<string, unknown>; [DELETE]?: Record<string, unknown> };

type ContentFate = { gone: boolean; plain: SuggestionMarkName[] };

export function contentFate(marks: SuggestionAttrs, decide: Decider): ContentFate {
  let gone = false;
  const plain: SuggestionMarkName[] = [];
  for (const kind of SUGGESTION_MARKS) {
    const attrs = marks[kind];
    if (!attrs) continue;
    const fate = decide(kind, attrs.id);
    if (fate === 'gone') gone = true;
    else if (fate === 'plain') plain.push(kind);
  }
  return { gone, plain };
}

export function suggestionAttrsOfMarks(marks: readonly Mark[]): SuggestionAttrs {
  const out: SuggestionAttrs = {};
  for (const mark of marks) if (isSuggestionMarkName(mark.type.name)) out[mark.type.name] = mark.attrs;
  return out;
}

type ChildShape = { type: NodeType | null; gone: boolean };

/**
 * Which children go with their content: every child that is all going away,
 * when what stays is still valid content of the parent (the doc may end up
 * empty: it reads as one empty paragraph); else none, and they stay emptied.
 */
export function removedChildren(parent: NodeType | null, children: readonly ChildShape[]): boolean[] {
  const removed = children.map((c) => c.gone);
  if (!removed.includes(true)) return removed;
  // An unknown node is unwrapped by the reader, so the parent's content cannot be checked.
  if (parent === null || parent === docSchema.topNodeType || children.some((c) => c.type === null)) return removed;
  let match = parent.contentMatch;
  for (const child of children) {
    if (child.gone) continue;
    const next = match.matchType(child.type!);
    if (!next) return children.map(() => false);
    match = next;
  }
  return match.validEnd ? removed : children.map(() => false);
}

type InlineTally = { any: boolean; allGone: boolean };

function tallyNode(node: PMNode, decide: Decider, tally: InlineTally): void {
  if (node.isText) {
    tally.any = true;
    if (!contentFate(suggestionAttrsOfMarks(node.marks), decide).gone) tally.allGone = false;
  } else if (node.isInline) {
    tally.any = true;
    tally.allGone = false;
  } else {
    node.forEach((child) => tallyNode(child, decide, tally));
  }
}

/**
 * Table cells never go with their content: a row must keep its shape (GFM has
 * no ragged tables), and an empty cell someone fills with suggested text
 * existed before. A whole suggested row or table still goes.
 */
function isStructural(type: NodeType | null): boolean {
  return type === docSchema.nodes.tableCell || type === docSchema.nodes.tableHeader;
}

/** Whether a block goes with its content: it has inline content and all of it goes. */
export function blockGone(node: PMNode, decide: Decider): boolean {
  if (isStructural(node.type)) return false;
  const tally = { any: false, allGone: true };
  tallyNode(node, decide, tally);
  return tally.any && tally.allGone;
}

function resolveTextblock(node: PMNode, decide: Decider): PMNode {
  let changed = false;
  const out: PMNode[] = [];
  node.forEach((child) => {
    if (!child.isText) {
      out.push(child);
      return;
    }
    const fate = contentFate(suggestionAttrsOfMarks(child.marks), decide);
    if (fate.gone) {
      changed = true;
    } else if (fate.plain.length > 0) {
      changed = true;
      out.push(child.mark(child.marks.filter((m) => !fate.plain.includes(m.type.name as SuggestionMarkName))));
    } else {
      out.push(child);
    }
  });
  return changed ? node.copy(Fragment.fromArray(out)) : node;
}

export function resolveNode(node: PMNode, decide: Decider): PMNode {
  if (node.isTextblock) return resolveTextblock(node, decide);
  if (node.isLeaf) return node;
  const children = node.content.content;
  const removed = removedChildren(
    node.type,
    children.map((c) => ({ type: c.type, gone: blockGone(c, decide) })),
  );
  let changed = false;
  const out: PMNode[] = [];
  children.forEach((child, i) => {
    if (removed[i]) {
      changed = true;
      return;
    }
    const resolved = resolveNode(child, decide);
    changed ||= resolved !== child;
    out.push(resolved);
  });
  if (!changed) return node;
  if (out.length === 0 && node.type === docSchema.topNodeType) out.push(docSchema.nodes.paragraph.create());
  return node.copy(Fragment.fromArray(out));
}

/** Whether the body holds any suggestion mark. */
export function hasSuggestions(body: PMNode): boolean {
  let found = false;
  body.descendants((node) => {
    if (found) return false;
    if (node.isText && node.marks.some((m) => isSuggestionMarkName(m.type.name))) found = true;
    return !found;
  });
  return found;
}

/** The body with every suggestion rejected (what GET /doc returns by default). */
export function withSuggestionsRejected(body: PMNode): PMNode {
  return hasSuggestions(body) ? resolveNode(body, REJECT_ALL) : body;
}

/** The body with every suggestion accepted. */
export function withSuggestionsAccepted(body: PMNode): PMNode {
  return hasSuggestions(body) ? resolveNode(body, ACCEPT_ALL) : body;
}

/** The body with one suggestion decided and the others left open, as `decideDocSuggestion` leaves the Y document. */
export function withSuggestionDecided(body: PMNode, id: string, decision: 'accept' | 'reject'): PMNode {
  return resolveNode(body, decideOne(id, decision));
}

// ======================================================== the Y document

export type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook;
export type YParent = Y.XmlFragment | Y.XmlElement;
export type TextRun = { insert: string | object; attributes?: Record<string, unknown> };

export function nodeTypeNamed(name: string): NodeType | null {
  return Object.prototype.hasOwnProperty.call(docSchema.nodes, name) ? docSchema.nodes[name] : null;
}

export function runLength(run: TextRun): number {
  return typeof run.insert === 'string' ? run.insert.length : 1;
}

/** The suggestion attributes of a text run, with the attribute key each is stored under. */
export function suggestionAttrsOfRun(attributes: Record<string, unknown> | undefined): { marks: SuggestionAttrs; keys: Partial<Record<SuggestionMarkName, string>> } {
  const marks: SuggestionAttrs = {};
  const keys: Partial<Record<SuggestionMarkName, string>> = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    const name = markNameOfAttr(key);
    if (!isSuggestionMarkName(name) || typeof value !== 'object' || value === null) continue;
    marks[name] = value as Record<string, unknown>;
    keys[name] = key;
  }
  return { marks, keys };
}

function tallyY(child: YChild, decide: Decider, tally: InlineTally): void {
  if (child instanceof Y.XmlText) {
    for (const run of child.toDelta() as TextRun[]) {
      tally.any = true;
      if (!contentFate(suggestionAttrsOfRun(run.attributes).marks, decide).gone) tally.allGone = false;
    }
  } else if (child instanceof Y.XmlElement) {
    const type = nodeTypeNamed(child.nodeName);
    if (type?.isInline) {
      tally.any = true;
      tally.allGone = false;
    } else {
      for (const grandchild of child.toArray()) tallyY(grandchild, decide, tally);
    }
  }
}

function yBlockGone(child: YChild, decide: Decider): boolean {
  if (child instanceof Y.XmlElement && isStructural(nodeTypeNamed(child.nodeName))) return false;
  const tally = { any: false, allGone: true };
  tallyY(child, decide, tally);
  return tally.any && tally.allGone;
}

/** Resolves the marked runs of one Y.XmlText, right to left so offsets stay valid. */
function resolveYText(text: Y.XmlText, decide: Decider): void {
  const edits: Array<{ offset: number; length: number; fate: ContentFate; keys: Partial<Record<SuggestionMarkName, string>> }> = [];
  let offset = 0;
  for (const run of text.toDelta() as TextRun[]) {
    const length = runLength(run);
    const { marks, keys } = suggestionAttrsOfRun(run.attributes);
    const fate = contentFate(marks, decide);
    if (fate.gone || fate.plain.length > 0) edits.push({ offset, length, fate, keys });
    offset += length;
  }
  for (const edit of edits.reverse()) {
    if (edit.fate.gone) {
      text.delete(edit.offset, edit.length);
    } else {
      const cleared: Record<string, null> = {};
      for (const kind of edit.fate.plain) cleared[edit.keys[kind]!] = null;
      text.format(edit.offset, edit.length, cleared);
    }
  }
}

function resolveYParent(parent: YParent, type: NodeType | null, decide: Decider): void {
  const children = parent.toArray();
  const removed =
    type?.isTextblock === true
      ? children.map(() => false)
      : removedChildren(
          type,
          children.map((c) => ({
            type: c instanceof Y.XmlElement ? nodeTypeNamed(c.nodeName) : null,
            gone: c instanceof Y.XmlElement && yBlockGone(c, decide),
          })),
        );
  for (let i = children.length - 1; i >= 0; i--) {
    const child = children[i];
    if (removed[i]) parent.delete(i, 1);
    else if (child instanceof Y.XmlText) resolveYText(child, decide);
    else if (child instanceof Y.XmlElement) {
      const childType = nodeTypeNamed(child.nodeName);
      if (!childType?.isInline) resolveYParent(child, childType, decide);
    }
  }
}

function yHasSuggestion(parent: YParent, id: string): boolean {
  for (const child of parent.toArray()) {
    if (child instanceof Y.XmlText) {
      for (const run of child.toDelta() as TextRun[]) {
        const { marks } = suggestionAttrsOfRun(run.attributes);
        if (marks[INSERT]?.id === id || marks[DELETE]?.id === id) return true;
      }
    } else if (child instanceof Y.XmlElement && yHasSuggestion(child, id)) {
      return true;
    }
  }
  return false;
}

/**
 * Accept: inserted text loses its mark, deleted text is removed; reject: the
 * reverse. Blocks left empty that the suggestion created (all their text
 * marked with it: a deletion of whole blocks accepted, an insertion of whole
 * blocks rejected; never a table cell) are removed. One transaction with `origin`. False, and
 * nothing written, when no mark with that id is in the body.
 */
export function decideDocSuggestion(ydoc: Y.Doc, id: string, decision: 'accept' | 'reject', origin: unknown): boolean {
  const fragment = bodyFragment(ydoc);
  if (!yHasSuggestion(fragment, id)) return false;
  ydoc.transact(() => resolveYParent(fragment, docSchema.topNodeType, decideOne(id, decision)), origin);
  return true;
}

// ================================================================ shared

/** Whether a node holds any inline content (text or atom). */
export function hasInline(node: PMNode | null): boolean {
  if (!node) return false;
  let found = false;
  node.descendants((child) => {
    if (child.isInline) found = true;
    return !found;
  });
  return found;
}

/** A comparable key of a text's formatting, suggestions left out. */
export function marksKeyOf(marks: readonly Mark[]): string {
  return JSON.stringify(marks.filter((m) => !isSuggestionMarkName(m.type.name)).map((m) => m.toJSON()));
}

/** A block as the lenient reader builds it (body.ts `blockOfYChild`), or null when it is not one block of our schema. */
export function nodeOfYElement(child: YChild): PMNode | null {
  if (!(child instanceof Y.XmlElement)) return null;
  const content = (yXmlFragmentToProsemirrorJSON(child).content as unknown[]).flat();
  const nodes = nodesFromJSONLenient({ type: child.nodeName, attrs: child.getAttributes(), content });
  return nodes.length === 1 ? nodes[0] : null;
}
