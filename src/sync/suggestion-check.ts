import * as Y from 'yjs';
import { checkSuggestionOnlyChange } from '../model/doc/suggestions';
import type { ParsedDocumentName } from '../model/document-names';
import { checkTableSuggestionOnlyChange } from '../model/table/suggestions';

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
  if (document.kind === 'html') return 'html pages take no suggestions';
  const state = Y.encodeStateAsUpdate(live);
  const before = new Y.Doc({ gc: false });
  Y.applyUpdate(before, state);
  const after = new Y.Doc({ gc: false });
  Y.applyUpdate(after, state);
  Y.applyUpdate(after, update);
  try {
    return document.kind === 'tables' ? checkTableSuggestionOnlyChange(before, after, author, update) : checkSuggestionOnlyChange(before, after, author);
  } finally {
    before.destroy();
    after.destroy();
  }
}
