/**
 * Suggestions in a doc body (docs/SUGGESTIONS.md): proposed insertions and
 * deletions held in the body itself as the marks `suggestInsert` and
 * `suggestDelete` (schema.ts), so they sync live, work offline and survive
 * concurrent edits like any other text.
 *
 * In the Y document a mark on text is a Y.XmlText formatting attribute named
 * after the mark, its value the mark's attrs (y-prosemirror's encoding). The
 * writers here edit the Y.XmlText directly (format, insert with attributes,
 * delete) rather than replacing blocks, so a person typing in the same
 * paragraph at the same time keeps every keystroke and the suggestion keeps
 * its marks.
 *
 * Two readings of a body matter: as it is (marks and all), and as if every
 * open suggestion were rejected, which is what `GET /doc` shows and what a
 * suggested change is computed against. The rule for whole blocks is the same
 * everywhere (views here, deciding in the Y document): a block whose inline
 * content is all going away (every character marked by what is being
 * resolved, at least one character, no inline atom) goes with its text,
 * unless its parent would then break the schema; then it stays, emptied.
 *
 * Inline atoms (mention, image, hard break) are Y.XmlElements beside the
 * Y.XmlText in y-prosemirror's encoding and keep no marks, so they cannot be
 * suggested in or out: see `insertableInline`.
 *
 * Browser-safe: Yjs, y-prosemirror and prosemirror-model only.
 */
import * as Y from 'yjs';
import { updateYFragment, yXmlFragmentToProsemirrorJSON } from 'y-prosemirror';
import { Fragment, Mark, type Node as PMNode, type NodeType } from 'prosemirror-model';
import { docSchema, SUGGESTION_MARKS, type SuggestionMarkName } from './schema.js';
import { bodyFragment, readDocBody } from './body.js';
import { nodesFromJSONLenient } from './json.js';
import { matchSequences } from './block-diff.js';
import { inlineNodeText } from './text.js';

export type SuggestionAuthor = { principalType: 'user' | 'agent'; id: string; name: string };
export type SuggestionStamp = { id: string; author: SuggestionAuthor; at: string /* ISO */ };

/** The attrs of a suggestion mark (schema.ts), as stored in the Y.XmlText attribute. */
export type SuggestionMarkAttrs = { id: string; authorType: 'user' | 'agent'; authorId: string; authorName: string; at: string };

export type DocSuggestionView = { id: string; author: SuggestionAuthor; at: string; inserted: string; removed: string; before: string; after: string };

const INSERT: SuggestionMarkName = 'suggestInsert';
const DELETE: SuggestionMarkName = 'suggestDelete';
/** Characters of context on each side in `docSuggestions`. */
const CONTEXT_CHARS = 80;

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

function isSuggestionMarkName(name: string): name is SuggestionMarkName {
  return (SUGGESTION_MARKS as readonly string[]).includes(name);
}

// y-prosemirror suffixes the attribute of a mark that may overlap itself with a hash of the mark
// (`name--xxxxxxxx`); ours exclude themselves, but a peer's binding decides what it writes.
const HASHED_MARK_ATTR = /(.*)(--[a-zA-Z0-9+/=]{8})$/;
function markNameOfAttr(key: string): string {
  return HASHED_MARK_ATTR.exec(key)?.[1] ?? key;
}

// ============================================================ resolving

/** What becomes of marked content when suggestions are resolved: it stays a suggestion, turns plain, or goes. */
type Fate = 'open' | 'plain' | 'gone';
type Decider = (kind: SuggestionMarkName, id: unknown) => Fate;

const REJECT_ALL: Decider = (kind) => (kind === INSERT ? 'gone' : 'plain');
const ACCEPT_ALL: Decider = (kind) => (kind === INSERT ? 'plain' : 'gone');

function decideOne(id: string, decision: 'accept' | 'reject'): Decider {
  return (kind, markId) => {
    if (markId !== id) return 'open';
    return (decision === 'accept') === (kind === INSERT) ? 'plain' : 'gone';
  };
}

/** Suggestion marks found on a piece of content: the attrs of each, by mark name. Both at once only after concurrent edits. */
type SuggestionAttrs = { [INSERT]?: Record<string, unknown>; [DELETE]?: Record<string, unknown> };

type ContentFate = { gone: boolean; plain: SuggestionMarkName[] };

function contentFate(marks: SuggestionAttrs, decide: Decider): ContentFate {
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

function suggestionAttrsOfMarks(marks: readonly Mark[]): SuggestionAttrs {
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
function removedChildren(parent: NodeType | null, children: readonly ChildShape[]): boolean[] {
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
function blockGone(node: PMNode, decide: Decider): boolean {
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

function resolveNode(node: PMNode, decide: Decider): PMNode {
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

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook;
type YParent = Y.XmlFragment | Y.XmlElement;
type TextRun = { insert: string | object; attributes?: Record<string, unknown> };

function nodeTypeNamed(name: string): NodeType | null {
  return Object.prototype.hasOwnProperty.call(docSchema.nodes, name) ? docSchema.nodes[name] : null;
}

function runLength(run: TextRun): number {
  return typeof run.insert === 'string' ? run.insert.length : 1;
}

/** The suggestion attributes of a text run, with the attribute key each is stored under. */
function suggestionAttrsOfRun(attributes: Record<string, unknown> | undefined): { marks: SuggestionAttrs; keys: Partial<Record<SuggestionMarkName, string>> } {
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
 * blocks rejected) are removed. One transaction with `origin`. False, and
 * nothing written, when no mark with that id is in the body.
 */
export function decideDocSuggestion(ydoc: Y.Doc, id: string, decision: 'accept' | 'reject', origin: unknown): boolean {
  const fragment = bodyFragment(ydoc);
  if (!yHasSuggestion(fragment, id)) return false;
  ydoc.transact(() => resolveYParent(fragment, docSchema.topNodeType, decideOne(id, decision)), origin);
  return true;
}

// ========================================================== suggesting

type SuggestContext = { ydoc: Y.Doc; attrs: SuggestionMarkAttrs; insertMark: Mark; wrote: boolean };

function suggestContext(ydoc: Y.Doc, stamp: SuggestionStamp): SuggestContext {
  const attrs = suggestionMarkAttrs(stamp);
  return { ydoc, attrs, insertMark: docSchema.marks.suggestInsert.create(attrs), wrote: false };
}

// y-prosemirror's BindingMetadata with no known mapping (as in body.ts).
function emptyMeta() {
  return { mapping: new Map(), isOMark: new Map() };
}

/**
 * The inline content a suggestion can insert in place of `node`: marked text.
 * Atoms keep no marks in the Y encoding, so a hard break becomes a space and a
 * mention its `@label` text; an image is left out.
 */
function insertableInline(node: PMNode): PMNode | null {
  if (node.isText) return node;
  if (node.type.name === 'hardBreak') return docSchema.text(' ', node.marks);
  if (node.type.name === 'mention') return docSchema.text(`@${String(node.attrs.label ?? '')}`, node.marks);
  return null;
}

function markedText(node: PMNode, mark: Mark): PMNode {
  const marks = node.marks.filter((m) => !isSuggestionMarkName(m.type.name));
  return node.mark(mark.addToSet(marks));
}

/** A new block as a suggestion inserts it: every text marked, atoms as in `insertableInline`. */
function markedBlock(node: PMNode, mark: Mark): PMNode {
  if (node.isTextblock) {
    const children: PMNode[] = [];
    node.forEach((child) => {
      const text = insertableInline(child);
      if (text) children.push(markedText(text, mark));
    });
    return node.copy(Fragment.fromArray(children));
  }
  if (node.isLeaf) return node;
  const children: PMNode[] = [];
  node.forEach((child) => children.push(markedBlock(child, mark)));
  return node.copy(Fragment.fromArray(children));
}

function hasText(node: PMNode): boolean {
  let found = false;
  node.descendants((child) => {
    if (child.isText) found = true;
    return !found;
  });
  return found;
}

/**
 * Inserts `node` as a suggested block after `anchor` (null: first), in
 * y-prosemirror's encoding as body.ts does. A block with no text to mark (a
 * rule, an empty paragraph, a paragraph of images) cannot be a suggestion
 * and is left out. Returns the new anchor.
 */
function insertSuggestedBlock(ctx: SuggestContext, parent: YParent, anchor: YChild | null, node: PMNode): YChild | null {
  const block = markedBlock(node, ctx.insertMark);
  if (!hasText(block)) return anchor;
  const element = new Y.XmlElement(block.type.name);
  parent.insertAfter(anchor as Y.XmlElement | null, [element]);
  updateYFragment(ctx.ydoc, element, block, emptyMeta());
  ctx.wrote = true;
  return element;
}

/** Marks every character of a Y subtree that is in the rejected view and not yet suggested away as deleted. */
function markSubtreeDeleted(ctx: SuggestContext, child: YChild): void {
  if (child instanceof Y.XmlText) {
    let offset = 0;
    for (const run of child.toDelta() as TextRun[]) {
      const length = runLength(run);
      const { marks } = suggestionAttrsOfRun(run.attributes);
      if (!marks[INSERT] && !marks[DELETE]) {
        child.format(offset, length, { [DELETE]: ctx.attrs });
        ctx.wrote = true;
      }
      offset += length;
    }
  } else if (child instanceof Y.XmlElement) {
    for (const grandchild of child.toArray()) markSubtreeDeleted(ctx, grandchild);
  }
}

function hasInline(node: PMNode | null): boolean {
  if (!node) return false;
  let found = false;
  node.descendants((child) => {
    if (child.isInline) found = true;
    return !found;
  });
  return found;
}

/**
 * The empty textblocks that may be filled with suggested text. Filled, such a
 * block is all suggested text, which the block-removal rule takes out of the
 * rejected view; so it is filled only where the view reads the same: when it
 * is all the doc holds (an empty doc reads as one empty paragraph), or when
 * its parent cannot do without it, keeps other text (so the parent does not
 * go instead) and removes the same other children as before. Elsewhere the
 * new block goes after it.
 */
function fillableBlocks(
  type: NodeType,
  raw: ReadonlyArray<PMNode | null>,
  removed: readonly boolean[],
  olds: readonly OldBlock[],
  rawIndex: ReadonlyMap<OldBlock, number>,
): Set<OldBlock> {
  const fillable = new Set<OldBlock>();
  for (const old of olds) {
    if (!old.node?.isTextblock || old.node.childCount > 0) continue;
    if (type === docSchema.topNodeType) {
      if (olds.length === 1) fillable.add(old);
      continue;
    }
    if (!olds.some((other) => other !== old && hasInline(other.node))) continue;
    const i = rawIndex.get(old)!;
    const after = removedChildren(
      type,
      raw.map((node, j) => ({ type: node?.type ?? null, gone: j === i || (node !== null && blockGone(node, REJECT_ALL)) })),
    );
    if (after.every((r, j) => (j === i ? !r : r === removed[j]))) fillable.add(old);
  }
  return fillable;
}

/** A block as the lenient reader builds it (body.ts `blockOfYChild`), or null when it is not one block of our schema. */
function nodeOfYElement(child: YChild): PMNode | null {
  if (!(child instanceof Y.XmlElement)) return null;
  const content = (yXmlFragmentToProsemirrorJSON(child).content as unknown[]).flat();
  const nodes = nodesFromJSONLenient({ type: child.nodeName, attrs: child.getAttributes(), content });
  return nodes.length === 1 ? nodes[0] : null;
}

type OldBlock = { y: YChild; node: PMNode | null };

/**
 * Makes the rejected view of `parent`'s children read as `targets`:
 * children equal to a target (longest common subsequence) are left alone;
 * between them, blocks are paired by position, a pair of the same markup is
 * diffed inside, anything else is suggested away or suggested in. Blocks the
 * rejected view leaves out (open insertions of whole blocks) are not touched.
 */
function suggestChildren(ctx: SuggestContext, parent: YParent, type: NodeType, targets: readonly PMNode[]): void {
  const ychildren = parent.toArray();
  const raw = ychildren.map(nodeOfYElement);
  const removed = removedChildren(
    type,
    raw.map((node) => ({ type: node?.type ?? null, gone: node !== null && blockGone(node, REJECT_ALL) })),
  );
  const olds: OldBlock[] = [];
  const rawIndex = new Map<OldBlock, number>();
  ychildren.forEach((y, i) => {
    if (removed[i]) return;
    const old = { y, node: raw[i] && resolveNode(raw[i]!, REJECT_ALL) };
    olds.push(old);
    rawIndex.set(old, i);
  });
  const fillable = fillableBlocks(type, raw, removed, olds, rawIndex);
  const kept = matchSequences(olds, targets, (old, next) => old.node !== null && old.node.eq(next));
  let anchor: YChild | null = null;
  let oldFrom = 0;
  let newFrom = 0;
  for (const [oldAt, newAt] of [...kept, [olds.length, targets.length] as const]) {
    anchor = suggestStretch(ctx, parent, olds.slice(oldFrom, oldAt), targets.slice(newFrom, newAt), anchor, fillable);
    if (oldAt < olds.length) anchor = olds[oldAt].y;
    oldFrom = oldAt + 1;
    newFrom = newAt + 1;
  }
}

function suggestStretch(
  ctx: SuggestContext,
  parent: YParent,
  olds: readonly OldBlock[],
  targets: readonly PMNode[],
  anchor: YChild | null,
  fillable: ReadonlySet<OldBlock>,
): YChild | null {
  for (let k = 0; k < Math.max(olds.length, targets.length); k++) {
    const old = olds[k] as OldBlock | undefined;
    const next = targets[k] as PMNode | undefined;
    const pairable =
      old?.node && next && old.y instanceof Y.XmlElement && !next.isLeaf && old.node.hasMarkup(next.type, next.attrs, next.marks) &&
      (!old.node.isTextblock || old.node.childCount > 0 || fillable.has(old));
    if (pairable) {
      if (next!.isTextblock) suggestInline(ctx, old!.y as Y.XmlElement, next!);
      else suggestChildren(ctx, old!.y as Y.XmlElement, next!.type, next!.content.content);
      anchor = old!.y;
      continue;
    }
    if (old) {
      markSubtreeDeleted(ctx, old.y);
      anchor = old.y;
    }
    if (next) anchor = insertSuggestedBlock(ctx, parent, anchor, next);
  }
  return anchor;
}

// ------------------------------------------------------------- inline diff

/** One character (code point) or inline atom of a textblock. */
type Unit = { text: string; marksKey: string; atomKey: string | null };
type OldUnit = Unit & { y: Y.XmlText | Y.XmlElement; offset: number; deleted: boolean };
type NewUnit = Unit & { node: PMNode };
type Token = { key: string; from: number; to: number };

function marksKeyOf(marks: readonly Mark[]): string {
  return JSON.stringify(marks.filter((m) => !isSuggestionMarkName(m.type.name)).map((m) => m.toJSON()));
}

/** The marks a run's attributes stand for, built as the lenient reader builds them. */
function marksOfAttributes(attributes: Record<string, unknown> | undefined): Mark[] {
  const marks: Mark[] = [];
  for (const [key, value] of Object.entries(attributes ?? {})) {
    const name = markNameOfAttr(key);
    if (isSuggestionMarkName(name) || !Object.prototype.hasOwnProperty.call(docSchema.marks, name)) continue;
    try {
      marks.push(docSchema.marks[name].create(typeof value === 'object' ? (value as Record<string, unknown>) : null));
    } catch {
      // A peer's malformed mark is not ours to compare; it only makes the text differ.
    }
  }
  return Mark.setFrom(marks) as Mark[];
}

function atomKeyOf(node: PMNode): string {
  return JSON.stringify({ type: node.type.name, attrs: node.attrs });
}

function oldUnitsOf(block: Y.XmlElement): OldUnit[] {
  const units: OldUnit[] = [];
  for (const child of block.toArray()) {
    if (child instanceof Y.XmlText) {
      let offset = 0;
      for (const run of child.toDelta() as TextRun[]) {
        const length = runLength(run);
        const { marks } = suggestionAttrsOfRun(run.attributes);
        // Open insertions are not in the rejected view the target is compared with.
        if (!marks[INSERT] && typeof run.insert === 'string') {
          const marksKey = marksKeyOf(marksOfAttributes(run.attributes));
          let at = offset;
          for (const ch of run.insert) {
            units.push({ text: ch, marksKey, atomKey: null, y: child, offset: at, deleted: marks[DELETE] !== undefined });
            at += ch.length;
          }
        }
        offset += length;
      }
    } else if (child instanceof Y.XmlElement) {
      const node = nodesFromJSONLenient({ type: child.nodeName, attrs: child.getAttributes() })[0];
      const atomKey = node?.isInline ? atomKeyOf(node) : `unknown:${child.nodeName}`;
      units.push({ text: '', marksKey: '', atomKey, y: child, offset: 0, deleted: false });
    }
  }
  return units;
}

function newUnitsOf(block: PMNode): NewUnit[] {
  const units: NewUnit[] = [];
  block.forEach((child) => {
    if (child.isText) {
      const marksKey = marksKeyOf(child.marks);
      for (const ch of child.text ?? '') units.push({ text: ch, marksKey, atomKey: null, node: child });
    } else {
      units.push({ text: '', marksKey: '', atomKey: atomKeyOf(child), node: child });
    }
  });
  return units;
}

const WORD = /[\p{L}\p{N}\p{M}_]/u;
const SPACE = /\s/u;

function charClass(ch: string): 'word' | 'space' | 'other' {
  if (WORD.test(ch)) return 'word';
  if (SPACE.test(ch)) return 'space';
  return 'other';
}

/** Words, runs of whitespace, single other characters and atoms, each with one set of marks. */
function tokenize(units: readonly Unit[]): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < units.length) {
    const unit = units[i];
    if (unit.atomKey !== null) {
      tokens.push({ key: `\u0002${unit.atomKey}`, from: i, to: i + 1 });
      i++;
      continue;
    }
    const cls = charClass(unit.text);
    let j = i + 1;
    if (cls !== 'other') {
      while (j < units.length && units[j].atomKey === null && units[j].marksKey === unit.marksKey && charClass(units[j].text) === cls) j++;
    }
    let text = '';
    for (let k = i; k < j; k++) text += units[k].text;
    tokens.push({ key: `${unit.marksKey}\u0001${text}`, from: i, to: j });
    i = j;
  }
  return tokens;
}

/** Where text goes to sit right after `anchor` (null: at the start of the block), creating a Y.XmlText when no text is there. */
function textPositionAfter(block: Y.XmlElement, anchor: OldUnit | null): { text: Y.XmlText; offset: number } {
  if (anchor && anchor.atomKey === null) return { text: anchor.y as Y.XmlText, offset: anchor.offset + anchor.text.length };
  const before = anchor ? (anchor.y as Y.XmlElement) : null;
  const next = before ? before.nextSibling : block.firstChild;
  if (next instanceof Y.XmlText) return { text: next, offset: 0 };
  // Only where no text neighbours it: y-prosemirror merges adjacent Y.XmlTexts when it reads them.
  const text = new Y.XmlText();
  block.insertAfter(before, [text]);
  return { text, offset: 0 };
}

/** The y-prosemirror attributes of marked inserted text. */
function attributesOf(marks: readonly Mark[], attrs: SuggestionMarkAttrs): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const mark of marks) if (!isSuggestionMarkName(mark.type.name)) out[mark.type.name] = mark.attrs;
  out[INSERT] = attrs;
  return out;
}

function suggestInsertedUnits(ctx: SuggestContext, block: Y.XmlElement, anchor: OldUnit | null, units: readonly NewUnit[]): void {
  const pieces: Array<{ text: string; marks: readonly Mark[] }> = [];
  for (const unit of units) {
    const node = unit.atomKey === null ? unit.node : insertableInline(unit.node);
    if (!node) continue;
    const text = unit.atomKey === null ? unit.text : (node.text ?? '');
    const last = pieces[pieces.length - 1];
    if (last && Mark.sameSet(last.marks, node.marks)) last.text += text;
    else pieces.push({ text, marks: node.marks });
  }
  if (pieces.length === 0) return;
  const position = textPositionAfter(block, anchor);
  let offset = position.offset;
  for (const piece of pieces) {
    position.text.insert(offset, piece.text, attributesOf(piece.marks, ctx.attrs));
    offset += piece.text.length;
  }
  ctx.wrote = true;
}

function suggestDeletedUnits(ctx: SuggestContext, units: readonly OldUnit[]): void {
  // Runs of consecutive characters in one Y.XmlText, formatted in one call each.
  let i = 0;
  while (i < units.length) {
    const unit = units[i];
    if (unit.atomKey !== null || unit.deleted) {
      i++;
      continue;
    }
    let end = unit.offset + unit.text.length;
    let j = i + 1;
    while (j < units.length && units[j].y === unit.y && !units[j].deleted && units[j].atomKey === null && units[j].offset === end) {
      end += units[j].text.length;
      j++;
    }
    (unit.y as Y.XmlText).format(unit.offset, end - unit.offset, { [DELETE]: ctx.attrs });
    ctx.wrote = true;
    i = j;
  }
}

/**
 * Diffs one textblock word by word against the target: unchanged tokens stay,
 * removed ones are marked deleted, new ones inserted marked, after the last
 * removed token (or the token before). Stretches are edited right to left so
 * the offsets read before stay valid.
 */
function suggestInline(ctx: SuggestContext, block: Y.XmlElement, target: PMNode): void {
  const olds = oldUnitsOf(block);
  const news = newUnitsOf(target);
  const oldTokens = tokenize(olds);
  const newTokens = tokenize(news);
  const kept = matchSequences(oldTokens, newTokens, (a, b) => a.key === b.key);
  const stretches: Array<{ oldFrom: number; oldTo: number; newFrom: number; newTo: number }> = [];
  let oldFrom = 0;
  let newFrom = 0;
  for (const [oldAt, newAt] of [...kept, [oldTokens.length, newTokens.length] as const]) {
    if (oldAt > oldFrom || newAt > newFrom) stretches.push({ oldFrom, oldTo: oldAt, newFrom, newTo: newAt });
    oldFrom = oldAt + 1;
    newFrom = newAt + 1;
  }
  const unitAt = (tokens: readonly Token[], index: number, edge: 'from' | 'to') => (index < tokens.length ? tokens[index][edge] : tokens.length ? tokens[tokens.length - 1].to : 0);
  for (const s of stretches.reverse()) {
    const oldUnitFrom = s.oldFrom < oldTokens.length ? oldTokens[s.oldFrom].from : olds.length;
    const oldUnitTo = s.oldTo > s.oldFrom ? oldTokens[s.oldTo - 1].to : oldUnitFrom;
    const newUnitFrom = unitAt(newTokens, s.newFrom, 'from');
    const newUnitTo = s.newTo > s.newFrom ? newTokens[s.newTo - 1].to : newUnitFrom;
    const anchor = oldUnitTo > 0 ? olds[oldUnitTo - 1] : null;
    if (newUnitTo > newUnitFrom) suggestInsertedUnits(ctx, block, anchor, news.slice(newUnitFrom, newUnitTo));
    if (oldUnitTo > oldUnitFrom) suggestDeletedUnits(ctx, olds.slice(oldUnitFrom, oldUnitTo));
  }
}

/**
 * PUT /doc?mode=suggest: proposes making the body equal to `target`,
 * compared with the body as if every open suggestion were rejected (what
 * GET /doc shows). Suggested deletions are suggestDelete marks on the
 * existing text, insertions new text marked suggestInsert, both with the
 * stamp. One Y transaction with `origin`. Returns false (and writes nothing)
 * when there is no difference it can express.
 *
 * What it cannot express is left as it is (docs/SUGGESTIONS.md): text
 * another suggestion already deletes stays that suggestion's; inline atoms
 * are not removed, and inserted ones become text or are left out
 * (`insertableInline`); a block with no text (rule, empty paragraph) is
 * neither added nor removed; a changed block attribute (heading level, task
 * checked, list start) is a removal of the old block and an insertion of the
 * new one; a change of formatting alone is a removal and an insertion of the
 * same words.
 */
export function suggestDocReplace(ydoc: Y.Doc, target: PMNode, stamp: SuggestionStamp, origin: unknown): boolean {
  if (target.type !== docSchema.topNodeType) throw new TypeError(`suggestDocReplace expects a doc node, got ${target.type.name}`);
  if (withSuggestionsRejected(readDocBody(ydoc)).eq(target)) return false;
  const ctx = suggestContext(ydoc, stamp);
  ydoc.transact(() => suggestChildren(ctx, bodyFragment(ydoc), docSchema.topNodeType, target.content.content), origin);
  return ctx.wrote;
}

/**
 * POST /doc/sections?mode=suggest: appends blocks whose text is all marked
 * suggestInsert, in one transaction with `origin`. A block with no text
 * cannot be suggested and is left out. Returns the number of blocks appended.
 */
export function suggestDocAppend(ydoc: Y.Doc, blocks: readonly PMNode[], stamp: SuggestionStamp, origin: unknown): number {
  if (blocks.some((n) => !n.isBlock)) throw new TypeError('suggestDocAppend expects block nodes');
  const ctx = suggestContext(ydoc, stamp);
  const insertable = blocks.filter((block) => hasText(markedBlock(block, ctx.insertMark)));
  if (insertable.length === 0) return 0;
  const fragment = bodyFragment(ydoc);
  ydoc.transact(() => {
    let anchor = (fragment.length > 0 ? fragment.get(fragment.length - 1) : null) as YChild | null;
    for (const block of insertable) anchor = insertSuggestedBlock(ctx, fragment, anchor, block);
  }, origin);
  return insertable.length;
}

// ============================================================== listing

type ViewDraft = { stamp: SuggestionStamp; inserted: string[]; removed: string[]; start: number; end: number; last: Record<SuggestionMarkName, string> };

/** Up to `count` code points from the end (`fromEnd`) or the start of `text`. */
function clip(text: string, count: number, fromEnd: boolean): string {
  const points = Array.from(text);
  return (fromEnd ? points.slice(-count) : points.slice(0, count)).join('');
}

/**
 * Open suggestions in document order, with up to 80 characters of plain text
 * before and after (the text as if suggestions were rejected; blocks are
 * separated by a newline). `inserted` and `removed` join the suggestion's
 * pieces: with a newline between blocks, ` … ` between pieces of one block.
 */
export function docSuggestions(body: PMNode): DocSuggestionView[] {
  if (!hasSuggestions(body)) return [];
  const drafts = new Map<string, ViewDraft>();
  let plain = '';
  let blockNumber = 0;
  const addPiece = (draft: ViewDraft, kind: SuggestionMarkName, text: string, where: string) => {
    const pieces = kind === INSERT ? draft.inserted : draft.removed;
    const previous = draft.last[kind];
    if (pieces.length > 0 && previous === where) pieces[pieces.length - 1] += text;
    else if (pieces.length > 0) pieces.push(`${previous.split(':')[0] === where.split(':')[0] ? ' … ' : '\n'}${text}`);
    else pieces.push(text);
  };
  body.descendants((block) => {
    if (!block.isTextblock) return true;
    blockNumber++;
    let blockStarted = false;
    const appendPlain = (text: string) => {
      if (text === '') return;
      if (!blockStarted && plain !== '') plain += '\n';
      blockStarted = true;
      plain += text;
    };
    block.forEach((child, _offset, index) => {
      if (!child.isText) {
        appendPlain(inlineNodeText(child));
        return;
      }
      const marks = suggestionAttrsOfMarks(child.marks);
      const kind = marks[INSERT] ? INSERT : marks[DELETE] ? DELETE : null;
      const stamp = kind ? stampFromMarkAttrs(marks[kind]) : null;
      const start = plain.length + (kind !== INSERT && !blockStarted && plain !== '' ? 1 : 0);
      if (kind !== INSERT) appendPlain(child.text ?? '');
      if (!kind || !stamp) return;
      let draft = drafts.get(stamp.id);
      if (!draft) {
        draft = { stamp, inserted: [], removed: [], start, end: plain.length, last: { suggestInsert: '', suggestDelete: '' } };
        drafts.set(stamp.id, draft);
      }
      // Pieces of one block join when they touch: the key says block and the index the next piece would have.
      addPiece(draft, kind, child.text ?? '', `${blockNumber}:${index}`);
      draft.last[kind] = `${blockNumber}:${index + 1}`;
      draft.start = Math.min(draft.start, start);
      draft.end = Math.max(draft.end, plain.length);
    });
    return false;
  });
  return [...drafts.values()].map((d) => ({
    id: d.stamp.id,
    author: d.stamp.author,
    at: d.stamp.at,
    inserted: d.inserted.join(''),
    removed: d.removed.join(''),
    before: clip(plain.slice(0, d.start), CONTEXT_CHARS, true),
    after: clip(plain.slice(d.end), CONTEXT_CHARS, false),
  }));
}

// ===================================================== the observer's view

/** Every item the transaction created (as in src/sync/doc-delta.ts, which the model may not import). */
function forEachNewItem(transaction: Y.Transaction, visit: (item: Y.Item) => void): void {
  transaction.afterState.forEach((after, client) => {
    const before = transaction.beforeState.get(client) ?? 0;
    if (after <= before) return;
    const structs = transaction.doc.store.clients.get(client);
    if (!structs) return;
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
      const struct = structs[i];
      if (struct.id.clock >= after) break;
      if (struct instanceof Y.Item) visit(struct);
    }
  });
}

/** The suggestion attribute values in effect at `item` in its Y.XmlText: the nearest live format item of each key to its left. */
function suggestionValuesAt(item: Y.Item): unknown[] {
  const seen = new Set<string>();
  const values: unknown[] = [];
  for (let n = item.left; n !== null && seen.size < SUGGESTION_MARKS.length; n = n.left) {
    if (n.deleted || !(n.content instanceof Y.ContentFormat)) continue;
    const name = markNameOfAttr(n.content.key);
    if (!isSuggestionMarkName(name) || seen.has(name)) continue;
    seen.add(name);
    if (n.content.value !== null) values.push(n.content.value);
  }
  return values;
}

/**
 * The stamps of suggestions this transaction marked (new ids, or ids
 * extended), for the observer, which records suggestion.created once per id.
 * Reads only the transaction's own items: a format item that sets a
 * suggestion attribute, or new text inside such a range (a person typing in
 * suggesting mode extends their range without a new format item). The
 * second costs a walk to the nearest format item on the left. Call it in
 * `afterTransaction`, before Yjs merges and garbage-collects the structs.
 */
export function suggestionStampsIn(transaction: Y.Transaction): SuggestionStamp[] {
  const found = new Map<string, SuggestionStamp>();
  const note = (value: unknown) => {
    const stamp = stampFromMarkAttrs(value);
    if (stamp && !found.has(stamp.id)) found.set(stamp.id, stamp);
  };
  forEachNewItem(transaction, (item) => {
    if (item.deleted) return;
    const content = item.content;
    if (content instanceof Y.ContentFormat) {
      if (isSuggestionMarkName(markNameOfAttr(content.key))) note(content.value);
    } else if (content instanceof Y.ContentString && item.parent instanceof Y.XmlText) {
      for (const value of suggestionValuesAt(item)) note(value);
    }
  });
  return [...found.values()];
}

// ============================================== suggest-only connections

/**
 * The body as the suggest-only check compares it: blocks with no inline content
 * (an empty paragraph, list item, quote or cell) left out. A suggesting editor
 * adds them (Enter) before the first suggested character is typed into them,
 * and a block filled only with suggested text reads as absent once
 * suggestions are rejected, so they are not a change of text either way.
 */
function withoutEmptyBlocks(node: PMNode): PMNode {
  if (node.isTextblock || node.isLeaf) return node;
  const out: PMNode[] = [];
  node.forEach((child) => {
    if (!child.isLeaf && !hasInline(child)) return;
    out.push(withoutEmptyBlocks(child));
  });
  return node.copy(Fragment.fromArray(out));
}

/** What a suggestion consists of: its marked text as runs of one formatting each (so another edit splitting a run does not count), and its marks' attrs. */
type Signature = { authors: Set<string>; inserted: Array<[string, string]>; removed: Array<[string, string]>; attrs: Set<string> };

function authorKey(attrs: Record<string, unknown>): string {
  return `${String(attrs.authorType)}:${String(attrs.authorId)}`;
}

function signatures(body: PMNode): Map<string, Signature> {
  const out = new Map<string, Signature>();
  body.descendants((node) => {
    if (!node.isText) return true;
    const marks = suggestionAttrsOfMarks(node.marks);
    for (const kind of SUGGESTION_MARKS) {
      const attrs = marks[kind];
      if (!attrs) continue;
      const id = String(attrs.id);
      let sig = out.get(id);
      if (!sig) out.set(id, (sig = { authors: new Set(), inserted: [], removed: [], attrs: new Set() }));
      sig.authors.add(authorKey(attrs));
      sig.attrs.add(JSON.stringify(attrs));
      const runs = kind === INSERT ? sig.inserted : sig.removed;
      const key = marksKeyOf(node.marks);
      const last = runs[runs.length - 1];
      if (last && last[0] === key) last[1] += node.text;
      else runs.push([key, node.text ?? '']);
    }
    return false;
  });
  return out;
}

function sameSignature(a: Signature | undefined, b: Signature | undefined): boolean {
  if (!a || !b) return a === b;
  const same = (x: Array<[string, string]>, y: Array<[string, string]>) => x.length === y.length && x.every(([key, text], i) => y[i][0] === key && y[i][1] === text);
  return same(a.inserted, b.inserted) && same(a.removed, b.removed) && a.attrs.size === b.attrs.size && [...a.attrs].every((x) => b.attrs.has(x));
}

/**
 * For a sync connection limited to suggesting: null when the change from
 * `before` to `after` only adds, extends or withdraws suggestions of
 * `author` (the body with all suggestions rejected is unchanged, blocks
 * with no text aside (`withoutEmptyBlocks`); every other author's suggestions are unchanged; every
 * new suggestion mark names `author`), else a short reason. Reads both
 * bodies whole: it is meant for the few connections that are limited.
 */
export function checkSuggestionOnlyChange(before: Y.Doc, after: Y.Doc, author: { principalType: 'user' | 'agent'; id: string }): string | null {
  const oldBody = readDocBody(before);
  const newBody = readDocBody(after);
  if (!withoutEmptyBlocks(withSuggestionsRejected(oldBody)).eq(withoutEmptyBlocks(withSuggestionsRejected(newBody)))) {
    return 'the change edits the document itself; only suggestions may be added or withdrawn';
  }
  const own = `${author.principalType}:${author.id}`;
  const oldSigs = signatures(oldBody);
  const newSigs = signatures(newBody);
  for (const id of new Set([...oldSigs.keys(), ...newSigs.keys()])) {
    const was = oldSigs.get(id);
    const is = newSigs.get(id);
    const onlyOwn = [...(was?.authors ?? []), ...(is?.authors ?? [])].every((a) => a === own);
    if (onlyOwn || sameSignature(was, is)) continue;
    return was ? 'the change alters a suggestion by someone else' : 'a new suggestion must name the connection\'s own principal as its author';
  }
  return null;
}
