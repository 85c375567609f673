/**
 * The sections of a live doc body (./text.ts `docSections`, the search
 * projection) without reading the whole body for every change. Each
 * top-level block's part of the sections is kept with its Y element; a
 * transaction forgets the parts of the top-level blocks it changed, so a
 * write reads only those blocks again (reading a 1 MB body whole held the
 * serving thread for 0.6 s under load, on every REST write of it).
 *
 * A change made elsewhere on a copy of the document's state (a doc import,
 * computed in a conversion thread: ./body-state.ts) may bring the parts of
 * the body it makes, in its transaction's meta under `BODY_SECTION_PARTS`;
 * they are taken only when the live document was exactly that copy's state
 * (`bodyMark`, `unchangedSince`), so the blocks' parts are the ones the
 * copy read. Browser-safe.
 */
import type * as Y from 'yjs';
import { blocksOfYChild, bodyFragment } from './body.js';
import { sectionPart, sectionsOfParts, type DocSection, type SectionPart } from './text.js';

/** A transaction's meta key: the section parts of every top-level block of the body the transaction leaves, in order. */
export const BODY_SECTION_PARTS = 'trellis.bodySectionParts';

/** Per top-level block (its Y element): its part of the sections, as last read. */
const partsOfBlock = new WeakMap<object, SectionPart[]>();
/** Per watched document: the transactions seen since it was first read here. */
const watched = new WeakMap<Y.Doc, { transactions: number }>();
/** Transactions whose changed blocks have been forgotten (the listener and an explicit call may both meet one). */
const settled = new WeakSet<Y.Transaction>();

function watch(ydoc: Y.Doc): { transactions: number } {
  let seen = watched.get(ydoc);
  if (!seen) {
    const counter = { transactions: 0 };
    seen = counter;
    watched.set(ydoc, counter);
    // Registered before any block of this document has a part kept: every later change is settled.
    ydoc.on('afterTransaction', (transaction: Y.Transaction) => {
      counter.transactions += 1;
      settle(ydoc, transaction);
    });
  }
  return seen;
}

/** The top-level block of the body that holds `type`, or null (the body itself, or another root). */
function topLevelBlock(type: Y.AbstractType<Y.YEvent<any>>, fragment: Y.XmlFragment): Y.AbstractType<Y.YEvent<any>> | null {
  let at = type;
  for (;;) {
    const parent = at.parent;
    if (parent === null) return null;
    if (parent === fragment) return at;
    at = parent;
  }
}

/** Forgets the parts of the blocks `transaction` changed, then takes the ones it brought (meta), once per transaction. */
function settle(ydoc: Y.Doc, transaction: Y.Transaction) {
  if (settled.has(transaction)) return;
  settled.add(transaction);
  const fragment = bodyFragment(ydoc);
  for (const type of transaction.changed.keys()) {
    const block = topLevelBlock(type, fragment);
    if (block) partsOfBlock.delete(block);
  }
  const brought = transaction.meta.get(BODY_SECTION_PARTS) as SectionPart[][] | undefined;
  if (brought && brought.length === fragment.length) fragment.toArray().forEach((block, i) => partsOfBlock.set(block, brought[i]!));
}

function partsOf(block: Y.XmlElement | Y.XmlText | Y.XmlHook): SectionPart[] {
  let parts = partsOfBlock.get(block);
  if (!parts) {
    parts = blocksOfYChild(block).map(sectionPart);
    partsOfBlock.set(block, parts);
  }
  return parts;
}

/**
 * The body's sections, as `docSections(readDocBody(ydoc))` gives them,
 * reading only the top-level blocks changed since they were last read.
 * Inside an `afterTransaction` handler, pass the transaction: its changes
 * may not have been settled yet.
 */
export function bodySections(ydoc: Y.Doc, transaction?: Y.Transaction): DocSection[] {
  watch(ydoc);
  if (transaction) settle(ydoc, transaction);
  const parts: SectionPart[] = [];
  for (const block of bodyFragment(ydoc).toArray()) for (const part of partsOf(block)) parts.push(part);
  return sectionsOfParts(parts);
}

/**
 * Takes in a transaction's changes without reading the sections: for a
 * caller that reads them later (a projection reads under its lock), so the
 * parts a doc import brought in the transaction's meta are still taken.
 * Inside an `afterTransaction` handler.
 */
export function settleBodySections(ydoc: Y.Doc, transaction: Y.Transaction): void {
  watch(ydoc);
  settle(ydoc, transaction);
}

/** Each top-level block's section parts, in order: what a change computed on a copy of the state hands over (`BODY_SECTION_PARTS`). */
export function bodySectionParts(ydoc: Y.Doc): SectionPart[][] {
  return bodyFragment(ydoc)
    .toArray()
    .map((block) => blocksOfYChild(block).map(sectionPart));
}

/** Where a live document stands now, to tell later whether anything changed it since (`unchangedSince`). */
export type BodyMark = { fragment: Y.XmlFragment; transactions: number };

export function bodyMark(ydoc: Y.Doc): BodyMark {
  return { fragment: bodyFragment(ydoc), transactions: watch(ydoc).transactions };
}

/** Whether no transaction ran on the document since `mark`, and its state was not swapped (a rebuild gives it new types). */
export function unchangedSince(ydoc: Y.Doc, mark: BodyMark): boolean {
  return bodyFragment(ydoc) === mark.fragment && watch(ydoc).transactions === mark.transactions;
}
