import * as Y from 'yjs';
import { checkSuggestionOnlyChange } from '../model/doc/suggestions';
import type { ParsedDocumentName } from '../model/document-names';
import { checkTableSuggestionOnlyUpdate } from '../model/table/suggestions';

/**
 * Whether an update from a connection that may only suggest (a suggest-only
 * key, a commenter) changes nothing but its own suggestions
 * (docs/SUGGESTIONS.md). A doc body is compared before and after the update
 * on copies, so a refused update never touches the live document.
 * Returns the reason for a refusal, or null.
 */
export function suggestionOnlyRefusal(
  document: ParsedDocumentName,
  live: Y.Doc,
  update: Uint8Array,
  author: { principalType: 'user' | 'agent'; id: string },
): string | null {
  if (document.kind === 'html') return 'html pages take no suggestions';
  // A table document holds every sheet of the workspace: it is checked in proportion to the update, never copied.
  if (document.kind === 'tables') return checkTableSuggestionOnlyUpdate(live, update, author);
  const state = Y.encodeStateAsUpdate(live);
  const before = new Y.Doc({ gc: false });
  Y.applyUpdate(before, state);
  const after = new Y.Doc({ gc: false });
  Y.applyUpdate(after, state);
  Y.applyUpdate(after, update);
  try {
    return checkSuggestionOnlyChange(before, after, author);
  } finally {
    before.destroy();
    after.destroy();
  }
}
