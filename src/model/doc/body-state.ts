/**
 * A doc body handled away from its live document, as its encoded Y state
 * (`Y.encodeStateAsUpdate`, cheap to take and to send to another thread):
 * read from the state, and a replacement of the body computed on a copy
 * made from the state, as the one Y update that makes the change. The live
 * document then only applies that update; turning a large body between Y
 * and ProseMirror, the costly part, happens wherever these run (a
 * conversion thread). Browser-safe.
 */
import * as Y from 'yjs';
import type { Node as PMNode } from 'prosemirror-model';
import { bodyFragment, readDocBody, replaceDocBody } from './body.js';
import { keepOpenSuggestions } from './keep-suggestions.js';
import { bodySectionParts } from './body-sections.js';
import type { SectionPart } from './text.js';

function docOfState(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, state);
  return doc;
}

/** The body a document's state holds. */
export function bodyOfState(state: Uint8Array): PMNode {
  return readDocBody(docOfState(state));
}

/**
 * The update that makes the body of a document whose state is `state`
 * equal to `target`, as a plain write does (`replaceDoc`): blocks that
 * stay are untouched and open suggestions the target leaves alone stay
 * open. Null when nothing changes. The update's items are a fresh client
 * id's (the copy's), so applying it to the live document merges like any
 * peer's edit made on that state. With it, the section parts of the body
 * it makes (./body-sections.ts), so that the live document, if it is still
 * at `state`, need not read the body it gets to project its sections.
 */
export function bodyReplacement(state: Uint8Array, target: PMNode): { update: Uint8Array; sectionParts: SectionPart[][] } | null {
  const doc = docOfState(state);
  let update: Uint8Array | null = null;
  doc.on('update', (made: Uint8Array) => (update = made));
  const origin = { bodyReplacement: true };
  replaceDocBody(doc, keepOpenSuggestions(readDocBody(doc), target), origin);
  return update ? { update, sectionParts: bodySectionParts(doc) } : null;
}

/** Whether a live document already holds everything it held at `stateVector` (`Y.encodeStateVector`): an update made on that state then applies whole. */
export function holdsState(doc: Y.Doc, stateVector: Uint8Array): boolean {
  for (const [client, clock] of Y.decodeStateVector(stateVector)) {
    if (Y.getState(doc.store, client) < clock) return false;
  }
  return true;
}

/** The sources of the images a document's body shows, read from its Y tree (no ProseMirror node is built). */
export function bodyImageSources(doc: Y.Doc): string[] {
  const sources = new Set<string>();
  for (const type of bodyFragment(doc).createTreeWalker((node) => node instanceof Y.XmlElement && node.nodeName === 'image')) {
    const src = (type as Y.XmlElement).getAttribute('src');
    if (src) sources.add(String(src));
  }
  return [...sources];
}
