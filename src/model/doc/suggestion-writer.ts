/**
 * Writing suggestions into a doc's Y document (docs/SUGGESTIONS.md): the
 * difference between the body as `GET /doc` shows it (every open suggestion
 * rejected) and a target, as `suggestDelete` marks on existing text and new
 * text marked `suggestInsert`. The Y.XmlText is edited directly (format,
 * insert with attributes) rather than blocks replaced, so a person typing in
 * the same paragraph at the same time keeps every keystroke and the
 * suggestion keeps its marks.
 *
 * Inline atoms (mention, image, hard break) are Y.XmlElements beside the
 * Y.XmlText in y-prosemirror's encoding and keep no marks, so they cannot be
 * suggested in or out: see `insertableInline`.
 *
 * Browser-safe: Yjs, y-prosemirror and prosemirror-model only.
 */
import * as Y from 'yjs';
import { updateYFragment } from 'y-prosemirror';
import { Fragment, Mark, type Node as PMNode, type NodeType } from 'prosemirror-model';
import { docSchema } from './schema.js';
import { bodyFragment, readDocBody } from './body.js';
import { nodesFromJSONLenient } from './json.js';
import { matchSequences } from './block-diff.js';
import {
  blockGone,
  DELETE,
  hasInline,
  INSERT,
  isSuggestionMarkName,
  markNameOfAttr,
  marksKeyOf,
  nodeOfYElement,
  REJECT_ALL,
  removedChildren,
  resolveNode,
  runLength,
  suggestionAttrsOfRun,
  suggestionMarkAttrs,
  withSuggestionsRejected,
  type SuggestionMarkAttrs,
  type SuggestionStamp,
  type TextRun,
  type YChild,
  type YParent,
} from './suggestion-rules.js';

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
